"""Transcendental functions through the public API: error bounds against float64 NumPy.

The bounds (in ULP of the result type) are the ones documented in
docs/math_accuracy.md, checked over wide ranges and at awkward sizes.
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, Array3f

try:
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover
    _erf = np.vectorize(math.erf)

# name -> (fj function, float64 reference, argument range, max ULP float32)
CASES = {
    "sin": (fj.sin, np.sin, (-1e4, 1e4), 2),
    "cos": (fj.cos, np.cos, (-1e4, 1e4), 2),
    "tan": (fj.tan, np.tan, (-1e3, 1e3), 4),
    "exp": (fj.exp, np.exp, (-87, 88), 2),
    "exp2": (fj.exp2, np.exp2, (-126, 127), 2),
    "log": (fj.log, np.log, (1e-30, 1e30), 2),
    "log2": (fj.log2, np.log2, (1e-30, 1e30), 2),
    "asin": (fj.asin, np.arcsin, (-1, 1), 3),
    "acos": (fj.acos, np.arccos, (-1, 1), 3),
    "atan": (fj.atan, np.arctan, (-1e6, 1e6), 3),
    "sinh": (fj.sinh, np.sinh, (-80, 80), 3),
    "cosh": (fj.cosh, np.cosh, (-80, 80), 3),
    "tanh": (fj.tanh, np.tanh, (-20, 20), 3),
    "erf": (fj.erf, _erf, (-6, 6), 4),
}


def ulp_error(got: np.ndarray, ref64: np.ndarray, dtype) -> np.ndarray:
    ref = ref64.astype(dtype)
    spacing = np.spacing(np.abs(ref).astype(dtype)).astype(np.float64)
    spacing = np.maximum(spacing, np.finfo(dtype).smallest_subnormal)
    return np.abs(got.astype(np.float64) - ref64) / spacing


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [1, 17, 100_003])
def test_float32_error_bound(name, size):
    f, ref, (lo, hi), bound = CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    if lo > 0:
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), size)).astype(np.float32)
    else:
        x = rng.uniform(lo, hi, size).astype(np.float32)
    got = f(Float(x)).numpy()
    err = ulp_error(got, ref(x.astype(np.float64)), np.float32)
    assert err.max() <= bound, f"{name}: {err.max():.2f} ULP at x={x[err.argmax()]!r}"


@pytest.mark.parametrize("name", ["sin", "cos", "exp", "log", "tanh", "atan"])
def test_float64_error_bound(name):
    f, ref, (lo, hi), _ = CASES[name]
    rng = np.random.default_rng(7)
    x = (np.exp(rng.uniform(np.log(lo), np.log(hi), 5001)) if lo > 0 else rng.uniform(lo, hi, 5001))
    got = f(Float64(x)).numpy()
    err = ulp_error(got, ref(x), np.float64)
    # NumPy's float64 reference itself carries up to ~1 ULP of error.
    assert err.max() <= 4, f"{name}: {err.max():.2f} ULP"


@given(st.floats(-1e4, 1e4, width=32), st.floats(-1e4, 1e4, width=32))
def test_atan2_and_pow(y, x):
    got = fj.atan2(Float([y]), Float([x])).numpy()[0]
    ref = math.atan2(y, x)
    assert abs(got - ref) <= 4 * np.spacing(np.float32(abs(ref))) + 1e-37
    if x > 0:
        e = float(np.float32(y / 1e3))
        got = (Float([x]) ** Float([e])).numpy()[0]
        with np.errstate(all="ignore"):
            ref = float(np.power(np.float64(x), np.float64(e)))   # inf instead of OverflowError
        if np.isfinite(ref) and abs(ref) < 1e38 and abs(ref) > 1e-37:
            assert abs(got - ref) <= 4 * np.spacing(np.float32(abs(ref)))


def test_special_values():
    x = Float([np.nan, np.inf, -np.inf, 0.0, -0.0])
    r = fj.sin(x).numpy()
    assert np.isnan(r[:3]).all() and r[3] == 0 and np.signbit(r[4])
    assert fj.exp(Float([-np.inf, np.inf, 1000])).numpy().tolist() == [0.0, np.inf, np.inf]
    lg = fj.log(Float([0.0, -1.0, np.inf])).numpy()
    assert lg[0] == -np.inf and np.isnan(lg[1]) and lg[2] == np.inf
    assert fj.tanh(Float([np.inf, -np.inf])).numpy().tolist() == [1.0, -1.0]
    assert fj.erf(Float([np.inf, -np.inf])).numpy().tolist() == [1.0, -1.0]


def test_python_scalars_and_vectors():
    assert fj.sin(0.5) == pytest.approx(math.sin(0.5))
    v = fj.cos(Array3f(0.0, 1.0, 2.0))
    assert isinstance(v, Array3f)
    np.testing.assert_allclose(v.numpy()[:, 0], np.cos([0.0, 1.0, 2.0]), rtol=1e-6)
    s, c = fj.sincos(Float([0.25, 1.5]))
    np.testing.assert_allclose(s.numpy(), np.sin([0.25, 1.5]), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), np.cos([0.25, 1.5]), rtol=1e-6)


@pytest.mark.llvm_only("reads the LLVM IR")
def test_transcendentals_are_vectorized_not_libm_calls():
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.eval(fj.sin(Float([1.0, 2.0])) + fj.exp(Float([1.0, 2.0])) + fj.log(Float([1.0, 2.0])))
        (entry,) = fj.kernel_history()
    ir = entry["ir"]
    for libm in ("@sinf", "@expf", "@logf", "@llvm.sin.", "@llvm.exp.", "@llvm.log."):
        assert libm not in ir
    assert "x float>" in ir


@pytest.mark.parametrize("T,dt", [(Float, np.float32), (Float64, np.float64)])
def test_sign_is_drjits_one_for_zeros_and_minus_one_for_nan(T, dt):
    # Dr.Jit 1.5: sign(x) = 1 if x >= 0 else -1 (no 0, unlike numpy.sign), in x's type
    a = np.array([-0.0, 0.0, np.nan, -np.nan, -3, 2, -np.inf, np.inf], dt)
    r = fj.sign(T(a))
    assert type(r) is T
    np.testing.assert_array_equal(r.numpy().view(np.uint8), np.where(a >= 0, 1, -1).astype(dt).view(np.uint8))


# -- Python numbers: double precision with IEEE special values, as Dr.Jit (measured 1.5) --------

@pytest.mark.parametrize("call,want", [
    (lambda: fj.log(0.0), -math.inf), (lambda: fj.log(-1.0), math.nan), (lambda: fj.log2(0.0), -math.inf),
    (lambda: fj.sqrt(-1.0), math.nan), (lambda: fj.exp(1000.0), math.inf), (lambda: fj.exp2(2000.0), math.inf),
    (lambda: fj.sinh(1000.0), math.inf), (lambda: fj.cosh(-1000.0), math.inf), (lambda: fj.rcp(0.0), math.inf),
    (lambda: fj.rcp(-0.0), -math.inf), (lambda: fj.rsqrt(0.0), math.inf), (lambda: fj.rsqrt(-1.0), math.nan),
    (lambda: fj.asin(2.0), math.nan), (lambda: fj.acos(2.0), math.nan), (lambda: fj.sin(math.inf), math.nan),
])
def test_math_of_python_numbers_gives_ieee_special_values_like_drjit(call, want):
    """math.log(0.0) and friends raise ValueError/OverflowError; Dr.Jit returns -inf, NaN, inf."""
    got = call()
    assert isinstance(got, float)
    assert (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want))


@pytest.mark.parametrize("f,x,want", [(fj.floor, 2.5, 2.0), (fj.floor, -0.5, -1.0), (fj.ceil, -0.5, -0.0),
                                      (fj.trunc, -2.5, -2.0), (fj.round, 2.5, 2.0), (fj.floor, 3, 3.0),
                                      (fj.floor, math.inf, math.inf)])
def test_rounding_python_numbers_gives_floats_like_drjit(f, x, want):
    """math.floor returns an int (and raises for inf); dr.floor(2.5) is 2.0 and dr.floor(3) is 3.0."""
    got = f(x)
    assert type(got) is float and got == want and math.copysign(1, got) == math.copysign(1, want)


def test_fma_of_python_numbers_rounds_once_like_drjit():
    assert fj.fma(0.1, 10.0, -1.0) == 5.551115123125783e-17      # a * b + c would give 0.0
    assert fj.fma(3, 4, 5) == 17 and type(fj.fma(3, 4, 5)) is int
    assert fj.fma(1e308, 10.0, -math.inf) == -math.inf            # the exact product is finite


def test_power_of_python_numbers_is_a_real_ieee_result_like_drjit():
    assert fj.power(2, 3) == 8.0 and type(fj.power(2, 3)) is float
    assert math.isnan(fj.power(-8.0, 1 / 3))                      # not Python's complex number
    assert fj.power(2.0, 2000.0) == math.inf                      # not OverflowError


def test_copysign_of_python_ints_stays_an_int_like_drjit():
    assert fj.copysign(3, -1) == -3 and type(fj.copysign(3, -1)) is int
    assert fj.copysign(2.0, -0.0) == -2.0


def test_minimum_maximum_of_python_zeros_order_negative_zero_first():
    """As fj.minimum on arrays (IEEE 754-2019); Dr.Jit's Python-number versions return the second
    operand on ties (a documented difference)."""
    for a, b in ((0.0, -0.0), (-0.0, 0.0)):
        assert math.copysign(1, fj.minimum(a, b)) == -1
        assert math.copysign(1, fj.maximum(a, b)) == 1
