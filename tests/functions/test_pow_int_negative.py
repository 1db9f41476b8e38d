"""Integer ``**`` with negative exponents: ``1 / a ** -b`` truncated toward zero.

Dr.Jit 1.5 refuses integer powers with negative (or array) exponents; frostjit computes
them, and then the answer must be the integer one: 1 for base 1, +-1 for base -1 (by the
exponent's parity), 0 for every other base (0 included, where the quotient is undefined).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


def _expected(a: int, b: int, bits: int) -> int:
    if b >= 0:
        r = pow(a, b, 1 << bits)
        return r - (1 << bits) if r >= 1 << (bits - 1) else r
    if a == 1:
        return 1
    if a == -1:
        return -1 if b % 2 else 1
    return 0


BASES = list(range(-5, 6)) + [2**31 - 1, -2**31]
EXPONENTS = list(range(-6, 7)) + [-2**31, 2**31 - 1]


@pytest.mark.parametrize("cls,bits", [(llvm.Int, 32), (llvm.Int64, 64)])
def test_array_powers_are_the_integer_ones(cls, bits):
    a = np.repeat(BASES, len(EXPONENTS))
    b = np.tile(EXPONENTS, len(BASES))
    want = [_expected(int(x), int(y), bits) for x, y in zip(a, b)]
    got = cls(a) ** cls(b)
    assert np.array(got).tolist() == want
    # folded at trace time (literal operands) and computed in a kernel (opaque ones) agree
    for x, y in [(1, -3), (-1, -3), (-1, -4), (2, -1), (0, -2), (-3, -1)]:
        folded = cls(x) ** cls(y)
        kernel = fj.opaque(cls, x, 5) ** fj.opaque(cls, y, 5)
        assert np.array(folded).tolist() == [_expected(x, y, bits)]
        assert np.array(kernel).tolist() == [_expected(x, y, bits)] * 5


def test_scalar_backend_agrees():
    for x in range(-3, 4):
        for y in range(-3, 4):
            assert (scalar.Array1i(x) ** scalar.Array1i(y))[0] == _expected(x, y, 32), (x, y)
