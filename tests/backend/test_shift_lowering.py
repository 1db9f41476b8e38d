"""Variable shifts: Dr.Jit's results for every count, from one guard in the generated code.

A shift by the bit width or more gives 0 (``shl``, unsigned ``shr``) or the sign fill (signed
``shr``); a negative signed count is a huge unsigned one.  The LLVM lowering selects on the result
only (the shift's poison for large counts never reaches the chosen value), so x86 emits one
variable shift instruction per register: PCG32's output permutation shifts by a per-lane amount.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm.codegen import generate_ir
from frostjit.llvm import Int32, Int64, UInt32, UInt64
from frostjit.schedule.kernel import build_kernel

TYPES = {"UInt32": (UInt32, np.uint32), "Int32": (Int32, np.int32),
         "UInt64": (UInt64, np.uint64), "Int64": (Int64, np.int64)}


def _expected(a, b, left, dt):
    """Dr.Jit's shift, written out lane by lane with Python ints."""
    bits = np.dtype(dt).itemsize * 8
    out = []
    for x, c in zip(a.tolist(), b.tolist()):
        c &= (1 << bits) - 1                  # the count as unsigned
        if c >= bits:
            out.append(0 if left or x >= 0 else -1)
        elif left:
            out.append(x << c)
        else:
            out.append(x >> c if np.dtype(dt).kind == "i" else (x % (1 << bits)) >> c)
    return np.array([v % (1 << bits) for v in out], dtype=np.uint64).astype(dt)


@settings(max_examples=25)
@given(name=st.sampled_from(sorted(TYPES)), left=st.booleans(), n=st.sampled_from([1, 7, 1000]),
       seed=st.integers(0, 2**32 - 1))
def test_variable_shifts_by_any_count_match_drjit(name, left, n, seed):
    T, dt = TYPES[name]
    bits = np.dtype(dt).itemsize * 8
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    b = rng.integers(-3 if info.min < 0 else 0, 2 * bits + 3, n).astype(dt)
    got = (T(a) << T(b)) if left else (T(a) >> T(b))
    np.testing.assert_array_equal(got.numpy(), _expected(a, b, left, dt))


@pytest.mark.llvm_only("the LLVM backend's IR text")
@pytest.mark.parametrize("name", sorted(TYPES))
@pytest.mark.parametrize("left", [True, False])
def test_a_variable_shift_is_guarded_by_one_select(name, left):
    T, _ = TYPES[name]
    x, k = fj.arange(T, 10), fj.arange(T, 10) * 3
    z = (x << k) if left else (x >> k)
    ir = generate_ir(build_kernel([z._node], []), current_backend().width)
    body = ir[ir.index("%full"):ir.index("latch:")]
    assert body.count(" select ") == 1
