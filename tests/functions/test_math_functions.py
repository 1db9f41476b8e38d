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
def test_sign_matches_numpy_bit_for_bit_including_negative_zero(T, dt):
    a = np.array([-0.0, 0.0, np.nan, -np.nan, -3, 2, -np.inf, np.inf], dt)
    np.testing.assert_array_equal(fj.sign(T(a)).numpy().view(np.uint8), np.sign(a).view(np.uint8))
