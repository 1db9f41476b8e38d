"""Large pool buffers start on a 2 MiB boundary with transparent huge pages asked for (memory.py)."""
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float

pytestmark = [pytest.mark.llvm_only("the LLVM backend's caching allocator"),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise(MADV_HUGEPAGE) is Linux's")]

MIB = 1 << 20


def _huge_rule(nbytes: int) -> bool:
    span = -(-nbytes // (2 * MIB)) * (2 * MIB)
    return nbytes >= 2 * MIB and (span - nbytes) * 8 <= nbytes


@settings(max_examples=25, deadline=None)
@given(st.one_of(st.integers(2, 4 * MIB), st.sampled_from([2 * MIB, 2 * MIB + 4, 4_000_000, 4 * MIB, 10 * MIB,
                                                           16 * MIB + 4])))
def test_fresh_buffers_are_aligned_by_size_and_whole(nbytes):
    from frostjit.backend.llvm import memory
    memory.pool.trim()
    raw, ptr = memory.pool.acquire_raw(nbytes)
    assert raw.nbytes == nbytes and raw.ctypes.data == ptr and ptr % memory.ALIGN == 0
    if _huge_rule(nbytes):
        assert ptr % (2 * MIB) == 0
    raw[:] = 7                               # every byte of it is ours
    raw[-1] = 1
    assert int(raw[0]) == 7 and int(raw[-1]) == 1
    memory.pool.release(raw, ptr)
    again, ptr2 = memory.pool.acquire_raw(nbytes)
    assert ptr2 == ptr and int(again[0]) == 7      # (pooled and reused as before)
    memory.pool.trim()


def test_a_1e6_lane_result_is_on_huge_pages_and_exact():
    fj.flush_malloc_cache()
    x = fj.arange(Float, 1_000_000) * 2.0 + 1.0
    fj.eval(x)
    assert x._node.value.ptr % (2 * MIB) == 0
    np.testing.assert_array_equal(x.numpy(), np.arange(1_000_000, dtype=np.float32) * 2 + 1)
    small = fj.arange(Float, 1000) + 1.0
    fj.eval(small)
    assert small._node.value.ptr % 64 == 0
