"""A NaN literal keeps its sign and payload, as in Dr.Jit 1.5 (checked side by side: a literal
``-nan`` selected or added gives ``0xffc00000``, a Float64 payload ``0x7ff0000000000123`` is kept
when selected and quieted to ``0x7ff8000000000123`` by an addition).  ``float.hex`` writes every NaN
as ``'nan'``, so kernel, plan and literal caches keyed by it reused the first NaN's kernel (r14)."""
import struct

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Bool, Float, Float64

NANS = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000123, 0xFFF4000000000001]


def _nan(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _bits(a: np.ndarray) -> list:
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64).tolist()


@pytest.mark.parametrize("T, dtype", [(Float, np.float32), (Float64, np.float64)])
def test_nan_literals_of_each_sign_and_payload_keep_their_bits_in_cached_kernels(T, dtype):
    m = Bool([True, False, True])
    x = T([1.0, 2.0, 3.0])
    for order in (NANS, NANS[::-1]):             # each NaN after the others' kernels are cached
        for b in order:
            v = _nan(b)
            want = np.array([v], dtype)          # (NumPy's conversion keeps the sign, quiets, and
            got = fj.select(m, x, T(v)).numpy()  # truncates a float64 payload to float32's bits)
            assert _bits(got)[1] == _bits(want)[0], hex(b)
            got = (x * 0.0 + T(v)).numpy()       # an arithmetic result: sign kept, quieted
            assert np.signbit(got).all() == np.signbit(want)[0], hex(b)
            assert np.isnan(got).all()


def test_two_nans_of_opposite_signs_in_one_kernel_stay_two_literals():
    m = Bool([True, False])
    r = fj.select(m, Float64(_nan(NANS[0])), Float64(_nan(NANS[1])))
    assert _bits(r.numpy()) == [NANS[0], NANS[1]]
