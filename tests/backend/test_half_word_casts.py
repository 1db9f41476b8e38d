"""64-bit integers cast to 32 bits: the low word, and the high word of ``x >> 32``, bit for bit.

With mask registers (AVX-512) the LLVM lowering takes the even words of a 64-bit vector for a
truncation and the odd words of ``x`` for a cast of ``x >> 32`` (``lowering._half_words``: the
texture's pair gathers and PCG32's output); other shift counts keep the shift.  NumPy gives
the expected bits (a cast keeps the low 32 bits; signed ``>>`` is arithmetic).
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

SRC = {"UInt64": (UInt64, np.uint64), "Int64": (Int64, np.int64)}
DST = {"UInt32": (UInt32, np.uint32), "Int32": (Int32, np.int32)}


def _words(seed: int, n: int, dt) -> np.ndarray:
    """``n`` 64-bit values with both words random, and the edge values among them."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    edges = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 0xFFFFFFFF00000000], dtype=np.uint64)
    a[:min(n, len(edges))] = edges[:n]
    return a.view(dt)


@settings(max_examples=30, deadline=None)
@given(src=st.sampled_from(sorted(SRC)), dst=st.sampled_from(sorted(DST)),
       shift=st.sampled_from([None, 32, 0, 31, 33]), n=st.sampled_from([1, 7, 33, 1000]),
       seed=st.integers(0, 2**32 - 1))
def test_casts_of_64_bit_words_match_numpy(src, dst, shift, n, seed):
    (svt, sdt), (dvt, ddt) = SRC[src], DST[dst]
    a = _words(seed, n, sdt)
    x = svt(a)
    y = x if shift is None else x >> shift
    got = dvt(y).numpy()
    ref = a if shift is None else a >> sdt(shift)
    np.testing.assert_array_equal(got, ref.astype(ddt))
    lo, hi = dvt(x), dvt(x >> 32)        # both words of one array in one kernel
    fj.eval(lo, hi)
    np.testing.assert_array_equal(lo.numpy(), a.astype(ddt))
    np.testing.assert_array_equal(hi.numpy(), (a >> sdt(32)).astype(ddt))


@pytest.mark.llvm_only("the LLVM backend's IR text")
def test_the_words_are_shuffles_with_mask_registers():
    x = fj.arange(UInt64, 64) * 0x100000001
    fj.eval(x)
    ir = generate_ir(build_kernel([UInt32(x >> 32)._node, Int32(x)._node], []), current_backend().width, True)
    body = ir[ir.index("%full"):ir.index("latch:")]
    assert "trunc <" not in body
    odd = ", ".join(f"i32 {2 * j + 1}" for j in range(current_backend().width))
    assert body.count(odd) == 1 and body.count("shufflevector <") == 2
