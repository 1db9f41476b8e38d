"""Review findings: Dr.Jit-suite behaviours of the frozen-function API."""
import frostjit as fj
from frostjit.llvm import Float

from freeze_helpers import F, same


def test_flush_kernel_cache_forces_a_retrace():
    # Dr.Jit test02_flush_kernel_cache: flushing the kernel cache drops the recordings.
    f = fj.freeze(lambda x, y: x + y)
    assert same(f(F(0, 1, 2), F(2, 1, 0)), F(2, 2, 2))
    assert f.n_recordings == 1
    fj.flush_kernel_cache()
    assert same(f(F(1, 2, 3), F(3, 2, 1)), F(4, 4, 4))
    assert f.n_recordings == 2 and f.n_cached_recordings == 1
    assert same(f(F(1, 2, 3, 4), F(1, 1, 1, 1)), F(2, 3, 4, 5))
    assert f.n_recordings == 2
