"""The element-wise operations of issue 11 at the public level: asinh, acosh, atanh, sincosh,
lgamma, erfinv, fmin, fmax, popcnt, lzcnt, tzcnt, brev, log2i, mul_hi, mul_wide.

The op-table tests (tests/trace/test_optable.py) check every kernel against the NumPy reference;
here: Dr.Jit 1.5's answers (recorded side by side with drjit), static vectors, Python numbers,
derivatives, frozen functions at several widths, and the errors for unsupported types.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import (Array2u, Array3f, Float, Float16, Float64, Int, Int8, Int64, UInt, UInt8,
                           UInt64)
from frostjit.llvm.ad import Float as FloatAD
from frostjit.trace.dtypes import Float64 as F64
from frostjit.trace.optable import OPS

nan, inf = math.nan, math.inf


def _same(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    ok = (got == want) | (np.isnan(got) & np.isnan(want))
    assert ok.all(), (got, want)


# -- Dr.Jit 1.5's answers (drjit.llvm, measured in a separate process) -------------------------------

def test_integer_bit_ops_give_drjits_values_for_every_width():
    v = [0, 1, 2, 3, 5, 64, 100]
    assert fj.popcnt(Int8(v)).numpy().tolist() == [0, 1, 1, 2, 2, 1, 3]
    assert fj.lzcnt(Int8(v)).numpy().tolist() == [8, 7, 6, 6, 5, 1, 1]
    assert fj.tzcnt(UInt8(v)).numpy().tolist() == [8, 0, 1, 0, 0, 6, 2]
    assert fj.brev(Int8(v)).numpy().tolist() == [0, -128, 64, -64, -96, 2, 38]
    assert fj.lzcnt(Int(v)).numpy().tolist() == [32, 31, 30, 30, 29, 25, 25]
    assert fj.tzcnt(Int(v)).numpy().tolist() == [32, 0, 1, 0, 0, 6, 2]
    assert fj.brev(UInt(v)).numpy().tolist() == [0, 2147483648, 1073741824, 3221225472, 2684354560, 33554432,
                                                  637534208]
    assert fj.lzcnt(Int64(v)).numpy().tolist() == [64, 63, 62, 62, 61, 57, 57]
    assert fj.brev(UInt64(v)).numpy().tolist()[1] == 2**63
    assert fj.popcnt(Int([-1, -2])).numpy().tolist() == [32, 31]
    assert fj.lzcnt(Int64([-1, -8])).numpy().tolist() == [0, 0]


def test_log2i_wraps_for_zero_as_drjit():
    assert fj.log2i(Int([0, 1, 2, 3, 5, 64, 100])).numpy().tolist() == [-1, 0, 1, 1, 2, 6, 6]
    assert fj.log2i(UInt([0, 1, 100])).numpy().tolist() == [2**32 - 1, 0, 6]
    assert fj.log2i(UInt8([0, 255])).numpy().tolist() == [255, 7]
    assert fj.log2i(UInt64([0])).numpy().tolist() == [2**64 - 1]


def test_mul_hi_and_mul_wide_give_drjits_values():
    a, b = Int([-1, -5, 2**31 - 1, -2**31]), Int([1, 3, 2**31 - 1, -2**31])
    assert fj.mul_hi(a, b).numpy().tolist() == [-1, -1, 1073741823, 1073741824]
    assert fj.mul_hi(UInt([2**32 - 1, 2**31]), UInt([2**32 - 1, 4])).numpy().tolist() == [4294967294, 2]
    w = fj.mul_wide(a, b)
    assert type(w) is Int64 and w.numpy().tolist() == [-1, -15, 4611686014132420609, 4611686018427387904]
    w = fj.mul_wide(UInt([2**32 - 1, 2**31]), UInt([2**32 - 1, 4]))
    assert type(w) is UInt64 and w.numpy().tolist() == [18446744065119617025, 8589934592]


def test_mul_hi_on_64_bit_integers_is_the_high_half_of_the_128_bit_product():
    rng = np.random.default_rng(3)
    a = rng.integers(-2**63, 2**63, 200, dtype=np.int64)
    b = rng.integers(-2**63, 2**63, 200, dtype=np.int64)
    want = [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]
    assert fj.mul_hi(Int64(a), Int64(b)).numpy().tolist() == want
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    assert fj.mul_hi(UInt64(ua), UInt64(ub)).numpy().tolist() == [(int(x) * int(y)) >> 64 for x, y in zip(ua, ub)]


def test_fmin_fmax_ignore_nan_and_keep_the_first_operand_on_a_tie():
    a = [nan, 1, nan, -0.0, 0.0, 2]
    b = [1, nan, nan, 0.0, -0.0, 3]
    for T in (Float, Float64):
        lo, hi = fj.fmin(T(a), T(b)).numpy(), fj.fmax(T(a), T(b)).numpy()
        _same(lo, [1, 1, nan, -0.0, 0.0, 2])
        _same(hi, [1, 1, nan, -0.0, 0.0, 3])
        assert list(np.signbit(lo[3:5])) == [True, False]
    assert fj.fmin(Int([1, 5]), Int([3, 2])).numpy().tolist() == [1, 2]
    _same(fj.fmin(Float([1, 2]), 1.5).numpy(), [1, 1.5])
    assert type(fj.fmin(Int([1, 2]), Float([1.5, 1.5]))) is Float


def test_fmin_fmax_on_python_numbers():
    assert fj.fmin(nan, 1.0) == 1.0 and fj.fmin(1.0, nan) == 1.0 and math.isnan(fj.fmax(nan, nan))
    assert fj.fmax(2, 3) == 3 and type(fj.fmax(2, 3)) is int


@pytest.mark.parametrize("T", [Float16, Float, Float64])
def test_inverse_hyperbolic_functions_give_drjits_special_values(T):
    _same(fj.asinh(T([0, -0.0, inf, -inf, nan])).numpy(), [0, -0.0, inf, -inf, nan])
    assert np.signbit(fj.asinh(T([-0.0])).numpy()[0])
    _same(fj.acosh(T([1, 0.5, inf, -1, nan])).numpy(), [0, nan, inf, nan, nan])
    _same(fj.atanh(T([0, -0.0, 1, -1, 2, nan])).numpy(), [0, -0.0, inf, -inf, nan, nan])
    _same(fj.lgamma(T([0, -0.0, 1, 2, -1, -2, nan, -inf])).numpy(), [inf, inf, 0, 0, inf, inf, nan, inf])
    _same(fj.erfinv(T([0, -0.0, 2, nan])).numpy(), [0, -0.0, nan, nan])


def test_values_match_drjit_to_its_printed_digits():
    x = Float([1, -1, 2, 0.5])
    np.testing.assert_allclose(fj.asinh(x).numpy()[:2], [0.881374, -0.881374], rtol=1e-5)
    np.testing.assert_allclose(fj.acosh(Float([2])).numpy(), [1.31696], rtol=1e-5)
    np.testing.assert_allclose(fj.atanh(Float([0.5])).numpy(), [0.549306], rtol=1e-5)
    np.testing.assert_allclose(fj.lgamma(Float([0.5, -0.5, 100, 3.5, -2.5])).numpy(),
                               [0.572365, 1.26551, 359.134, 1.20097, -0.0562437], rtol=1e-5)
    np.testing.assert_allclose(fj.erfinv(Float64([0.5, 0.99, 0.999999])).numpy(), [0.476936, 1.82139, 3.45891],
                               rtol=1e-5)
    s, c = fj.sincosh(Float([0, 1, -2]))
    np.testing.assert_allclose(s.numpy(), [0, 1.1752, -3.62686], rtol=1e-5)
    np.testing.assert_allclose(c.numpy(), [1, 1.54308, 3.7622], rtol=1e-5)


def test_erfinv_at_plus_minus_one_is_infinite_and_lgamma_of_inf_is_inf():
    """Deliberate differences: Dr.Jit 1.5 gives NaN for erfinv(+-1) and lgamma(+inf)."""
    _same(fj.erfinv(Float([1, -1])).numpy(), [inf, -inf])
    _same(fj.lgamma(Float([inf])).numpy(), [inf])
    assert fj.erfinv(1.0) == inf and fj.lgamma(inf) == inf


def test_erfinv_inverts_erf_far_into_the_tail():
    x = 1 - np.exp2(-np.arange(1, 53, dtype=np.float64))
    y = fj.erfinv(Float64(x)).numpy()
    want = OPS["erfinv"].numpy(F64, x)
    np.testing.assert_allclose(y, want, rtol=4e-16)
    np.testing.assert_allclose([math.erfc(v) for v in y], 1 - x, rtol=1e-14)


# -- Python numbers, static vectors, errors ---------------------------------------------------------

def test_python_ints_are_32_bit_unsigned_for_bit_ops_as_drjit():
    assert (fj.popcnt(7), fj.lzcnt(7), fj.tzcnt(7), fj.brev(7), fj.log2i(7)) == (3, 29, 0, 3758096384, 2)
    assert (fj.lzcnt(0), fj.tzcnt(0), fj.log2i(0), fj.popcnt(2**32 - 1)) == (32, 32, -1, 32)
    with pytest.raises(TypeError, match="-1"):
        fj.popcnt(-1)
    with pytest.raises(TypeError, match="4294967296"):
        fj.lzcnt(2**32)
    assert (fj.mul_hi(3, 5), fj.mul_hi(2**31, 4), fj.mul_hi(-1, 1)) == (0, 2, -1)
    assert (fj.mul_wide(2**31, 4), fj.mul_wide(-1, 1)) == (8589934592, -1)


def test_python_floats_follow_ieee_special_values():
    assert fj.asinh(1.0) == pytest.approx(0.8813735870195429)
    assert math.isnan(fj.acosh(0.5)) and fj.atanh(1.0) == inf
    assert fj.lgamma(0.0) == inf and fj.lgamma(-1.0) == inf
    assert fj.lgamma(0.5) == pytest.approx(0.5723649429247001, rel=1e-15)
    assert fj.erfinv(0.5) == pytest.approx(0.47693627620446987, rel=1e-15)
    assert fj.sincosh(1.0) == pytest.approx((1.1752011936438014, 1.5430806348152437))


def test_ops_apply_to_static_vectors_component_wise():
    v = fj.asinh(Array3f([1, 2], [3, 4], [5, 6]))
    assert type(v) is Array3f
    np.testing.assert_allclose(v.x.numpy(), np.arcsinh([1, 2]), rtol=1e-6)
    p = fj.popcnt(Array2u([3, 7], [0, 255]))
    assert type(p) is Array2u and p.y.numpy().tolist() == [0, 8]


def test_unsupported_types_raise_type_error_naming_the_type():
    with pytest.raises(TypeError, match=r"\(Float\)"):
        fj.popcnt(Float([1]))
    with pytest.raises(TypeError, match="Int64"):
        fj.mul_wide(Int64([1]), Int64([2]))
    with pytest.raises(TypeError, match="UInt8"):
        fj.mul_wide(UInt8([1]), UInt8([2]))


def test_integer_operands_of_float_functions_become_float32():
    r = fj.asinh(Int([1, 2]))
    assert type(r) is Float
    np.testing.assert_allclose(r.numpy(), np.arcsinh([1, 2]), rtol=1e-6)


# -- derivatives (Dr.Jit 1.5's values) -----------------------------------------------------------

@pytest.mark.parametrize("name,arg,want", [
    ("asinh", [1.5, 0.25], [0.5547, 0.970142]),
    ("acosh", [1.5, 3.0], [0.894427, 0.353553]),
    ("atanh", [0.75, 0.125], [2.28571, 1.01587]),
    ("lgamma", [1.5, 0.25, -2.5, 7.0], [0.0364898, -4.22745, 1.10316, 1.87278]),
    ("erfinv", [0.75, 0.125], [1.7175, 0.897261]),
])
def test_derivatives_match_drjit(name, arg, want):
    x = FloatAD(arg)
    fj.enable_grad(x)
    fj.backward(getattr(fj, name)(x))
    np.testing.assert_allclose(fj.grad(x).numpy(), want, rtol=2e-5)


def test_fmin_gradient_goes_to_the_operand_the_value_came_from():
    x, y = FloatAD([nan, 1, 2, 0.5]), FloatAD([1, nan, 2, 3])
    fj.enable_grad(x, y)
    fj.backward(fj.fmin(x, y))
    assert fj.grad(x).numpy().tolist() == [0, 1, 1, 1]
    assert fj.grad(y).numpy().tolist() == [1, 0, 0, 0]
    x, y = FloatAD([nan, 1, 2, 0.5]), FloatAD([1, nan, 2, 3])
    fj.enable_grad(x, y)
    fj.backward(fj.fmax(x, y))
    assert fj.grad(x).numpy().tolist() == [0, 1, 1, 0]
    assert fj.grad(y).numpy().tolist() == [1, 0, 0, 1]


# -- frozen functions: recorded once, replayed at new widths -------------------------------------------

def _program(x, k):
    s, c = fj.sincosh(x * 0.01)
    y = fj.asinh(x) + fj.acosh(fj.abs(x) + 1) + fj.atanh(x * 1e-3) + fj.lgamma(fj.abs(x) + 0.5)
    y = y + fj.erfinv(x * 1e-3) + fj.fmin(x, s) + fj.fmax(c, x)
    bits = fj.popcnt(k) + fj.lzcnt(k) + fj.tzcnt(k) + fj.brev(k) + fj.log2i(k | 1) + fj.mul_hi(k, k)
    return y, bits, fj.mul_wide(k, k)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_new_ops_inside_freeze_equal_plain_at_several_widths(seed):
    frozen = fj.freeze(_program)
    rng = np.random.default_rng(seed)
    for width in (1, 7, 1000, 100_003):
        xv = (rng.standard_normal(width) * 50).astype(np.float32)
        kv = rng.integers(0, 2**32, width, dtype=np.uint64).astype(np.uint32)
        want = _program(Float(xv), UInt(kv))
        got = frozen(Float(xv), UInt(kv))
        for g, w in zip(got, want):
            _same(g.numpy(), w.numpy())
