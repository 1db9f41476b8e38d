"""The NumPy reference semantics are exact where they say so (they are the spec other backends
and the generated tests compare with)."""
import math
from fractions import Fraction

import numpy as np
from hypothesis import given, strategies as st

from frostjit.trace import numpy_semantics as ns
from frostjit.trace.dtypes import Float32, Float64, Int32, UInt32


def _round_exact(q: Fraction, dtype) -> float:
    """``q`` rounded to nearest (ties to even) in ``dtype``, by comparing exact distances."""
    largest = Fraction(float(np.finfo(dtype).max))
    guess = dtype(float(q)) if abs(q) <= largest else dtype(largest if q > 0 else -largest)
    best = None
    with np.errstate(over="ignore"):
        candidates = (np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf)))
    for c in candidates:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        even = int(np.array(c).view(np.int32 if dtype is np.float32 else np.int64)) % 2 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, c)
    return float(best[1])


finite64 = st.floats(allow_nan=False, allow_infinity=False)
finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@given(finite64, finite64, finite64)
def test_float64_fma_reference_rounds_the_exact_result_once(a, b, c):
    got = float(ns.fma(Float64, np.array([a]), np.array([b]), np.array([c]))[0])
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        assert got == 0
        return
    largest = Fraction(float(np.finfo(np.float64).max))
    if abs(exact) > largest + Fraction(2) ** 970:      # rounds to infinity
        assert got == (math.inf if exact > 0 else -math.inf)
        return
    assert got == _round_exact(exact, np.float64), (a, b, c)


@given(finite32, finite32, finite32)
def test_float32_fma_reference_rounds_the_exact_result_once(a, b, c):
    got = float(ns.fma(Float32, *(np.array([v], np.float32) for v in (a, b, c)))[0])
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        assert got == 0
        return
    if abs(exact) >= Fraction(float(np.finfo(np.float32).max)) + Fraction(2) ** 103:
        assert got == (math.inf if exact > 0 else -math.inf)
        return
    assert got == _round_exact(exact, np.float32), (a, b, c)


def test_fma_reference_is_not_a_product_then_a_sum():
    assert ns.fma(Float64, np.array([0.1]), np.array([10.0]), np.array([-1.0]))[0] == 5.551115123125783e-17
    assert ns.fma(Float64, np.array([1e308]), np.array([10.0]), np.array([-np.inf]))[0] == -np.inf


def test_integer_division_by_zero_and_minus_one_wrap_as_documented():
    a = np.array([-2**31, 7, -7, 5], np.int32)
    b = np.array([-1, 0, 2, -1], np.int32)
    assert ns.floordiv(Int32, a, b).tolist() == [-2**31, 0, -3, -5]     # toward zero, as Dr.Jit (C)
    assert ns.mod(Int32, a, b).tolist() == [0, 0, -1, 0]                # the dividend's sign
    assert ns.shl(UInt32, np.array([1, 1], np.uint32), np.array([31, 32], np.uint32)).tolist() == [2**31, 0]


def test_minimum_orders_negative_zero_first_and_propagates_nan():
    a = np.array([0.0, -0.0, np.nan, 1.0])
    b = np.array([-0.0, 0.0, 1.0, np.nan])
    r = ns.minimum(Float64, a, b)
    assert np.signbit(r[:2]).all() and np.isnan(r[2:]).all()
    assert not np.signbit(ns.maximum(Float64, a, b)[:2]).any()
