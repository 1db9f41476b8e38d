"""Vectorized math library: IR contract, accuracy in ULP, special values.

Each (dtype, width) compiles one module holding every function under test behind a tiny
``k_<name>(ptr in0, ptr in1, ptr out0, ptr out1, i64 n)`` loop (module-scoped fixtures).
float32 results are compared with NumPy's float64 functions; float64 results with NumPy too
(bounds one ULP looser, since NumPy's own result is rounded) and, on small samples, with mpmath.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostjit.backend.llvm.vmath import SUPPORTED, accuracy_of, math_function
from frostjit.trace.dtypes import Float32, Float64
from frostjit.backend.llvm.vmath.accuracy import NUMPY_REF, Kernels, mp_reference, sample, ulp_error

pytestmark = pytest.mark.llvm_only("the LLVM backend's vectorized math library (its accuracy)")

ALL = sorted(SUPPORTED)
SOME = ["sin", "cos", "sincos", "tan", "exp", "log", "atan2", "pow"]

# Documented bounds (the op table's accuracy, docs/math_accuracy.md) over the ranges of
# accuracy.sample(); measured maxima are a little lower.  float64 bounds are against mpmath;
# NumPy comparisons add one ULP.
BOUND = {scalar: {name: accuracy_of(name).of(vt).ulp for name in ALL}
         for scalar, vt in (("float", Float32), ("double", Float64))}


@pytest.fixture(scope="module")
def kernels():
    cache = {}

    def get(scalar, width):
        key = (scalar, width)
        if key not in cache:
            cache[key] = Kernels(ALL if width == 16 else SOME, scalar, width)
        return cache[key]

    return get


# ---------------------------------------------------------------------------------------------
# IR contract
# ---------------------------------------------------------------------------------------------

def test_math_function_is_memoized():
    assert math_function("sin", "float", 16) is math_function("sin", "float", 16)


def test_symbol_and_signature_follow_the_contract():
    fn = math_function("sin", "float", 16)
    assert fn.symbol == "fj_sin_v16f32"
    assert "define internal <16 x float> @fj_sin_v16f32(<16 x float> %x0) alwaysinline {" in fn.ir
    assert (fn.arity, fn.results) == (1, 1)
    assert math_function("atan2", "double", 8).arity == 2
    assert math_function("exp", "double", 1).symbol == "fj_exp_f64"


def test_width_one_uses_scalar_types():
    ir = math_function("log", "float", 1).ir
    assert "<1 x" not in ir and "define internal float @fj_log_f32(float %x0)" in ir


def test_sincos_returns_a_literal_struct():
    fn = math_function("sincos", "double", 4)
    assert fn.results == 2
    assert "define internal { <4 x double>, <4 x double> } @fj_sincos_v4f64" in fn.ir


@pytest.mark.parametrize("name", ALL)
def test_only_vectorizable_intrinsics_are_called(name):
    fn = math_function(name, "float", 16)
    allowed = ("fma", "fabs", "rint", "floor", "sqrt", "copysign", "vector.reduce.or")
    helpers = set(fn.definitions) - {fn.symbol}
    for line in fn.ir.splitlines():
        if " call " in line:
            callee = line.split("@", 1)[1].split("(", 1)[0]
            # calls go to vectorizable intrinsics or to the function's own (vector) helpers
            assert callee in helpers or (callee.startswith("llvm.") and callee[5:].rsplit(".", 1)[0] in allowed), line
    for decl in fn.declarations:
        assert decl.startswith("declare ")
    assert fn.symbol in fn.definitions and all(h.startswith("fj_") for h in helpers)


def test_unknown_arguments_are_rejected_with_the_reason():
    with pytest.raises(ValueError, match="unknown function 'sqrt'"):
        math_function("sqrt", "float", 16)
    with pytest.raises(ValueError, match="width"):
        math_function("sin", "float", 3)


def test_all_functions_fit_in_one_module(kernels):
    k = kernels("double", 16)
    assert k.ir.count("define internal") == len(ALL)


# ---------------------------------------------------------------------------------------------
# Accuracy
# ---------------------------------------------------------------------------------------------

def _check(k, name, scalar, n, seed, reference):
    rng = np.random.default_rng(seed)
    x, y, _ = sample(name, scalar, rng, n)
    dt = np.float32 if scalar == "float" else np.float64
    x = x.astype(dt)
    y = None if y is None else y.astype(dt)
    outs = k(name, x, y)
    pairs = zip(("sin", "cos"), outs) if name == "sincos" else [(name, outs)]
    for nm, out in pairs:
        bound = BOUND[scalar][name]
        if reference == "mpmath":
            ref = mp_reference(nm, x, y)
        else:
            args = (x.astype(np.float64),) + (() if y is None else (y.astype(np.float64),))
            ref = NUMPY_REF[nm](*args)
            bound += 1 if scalar == "double" else 0
        err = ulp_error(out, ref, scalar)
        if reference != "mpmath" and (err > bound).any():
            # NumPy's float64 functions are not correctly rounded either (its cbrt is 2.5 ULP off
            # on some CPUs): lanes over the bound are judged against mpmath instead.
            over = np.flatnonzero(err > bound)
            exact = mp_reference(nm, x[over], None if y is None else y[over])
            err[over] = ulp_error(out[over], exact, scalar)
        worst = int(np.argmax(err))
        assert err[worst] <= bound, (
            f"{nm} {scalar}: {err[worst]:.2f} ULP at x={x[worst]!r}"
            + ("" if y is None else f", y={y[worst]!r}") + f": got {out[worst]!r}")


@pytest.mark.parametrize("name", ALL)
def test_float32_error_bound_at_width_16(kernels, name):
    _check(kernels("float", 16), name, "float", 100_000, 11, "numpy")


@pytest.mark.parametrize("name", ALL)
def test_float64_error_bound_at_width_16(kernels, name):
    _check(kernels("double", 16), name, "double", 50_000, 12, "numpy")


@pytest.mark.parametrize("name", ALL)
def test_float64_error_bound_against_mpmath(kernels, name):
    _check(kernels("double", 16), name, "double", 400, 13, "mpmath")


@pytest.mark.parametrize("width", [1, 8])
@pytest.mark.parametrize("scalar", ["float", "double"])
@pytest.mark.parametrize("name", SOME)
def test_other_widths_match_the_bound(kernels, scalar, width, name):
    _check(kernels(scalar, width), name, scalar, 4096, 14, "numpy")


def test_float32_sin_cos_large_arguments_use_the_float64_reduction(kernels):
    k = kernels("float", 16)
    rng = np.random.default_rng(5)
    x = np.exp(rng.uniform(np.log(1e4), np.log(2.0**43), 50_000)).astype(np.float32)
    x[::2] *= -1
    for name in ("sin", "cos"):
        assert ulp_error(k(name, x), NUMPY_REF[name](x.astype(np.float64)), "float").max() <= 2


def test_float32_log_of_every_binade_including_subnormals(kernels):
    k = kernels("float", 16)
    x = np.ldexp(np.float32(1.2345678), np.arange(-149, 128)).astype(np.float32)
    x = np.concatenate([x, np.nextafter(x, np.float32(0))])
    x = x[x > 0]
    for name in ("log", "log2"):
        assert ulp_error(k(name, x), NUMPY_REF[name](x.astype(np.float64)), "float").max() <= BOUND["float"][name]


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite32, min_size=16, max_size=16))
def test_float32_exp_log_atan_hold_their_bound_on_arbitrary_floats(kernels, values):
    k = kernels("float", 16)
    x = np.array(values, np.float32)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        checks = {"exp": np.exp(xd), "atan": np.arctan(xd), "tanh": np.tanh(xd), "erf": NUMPY_REF["erf"](xd),
                  "log": np.log(np.abs(xd)), "cbrt": np.cbrt(xd)}
    for name, ref in checks.items():
        arg = np.abs(x) if name == "log" else x
        assert ulp_error(k(name, arg), ref, "float").max() <= BOUND["float"][name], (name, values)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, width=32), min_size=16, max_size=16))
def test_float32_sin_holds_its_bound_on_arbitrary_floats(kernels, values):
    k = kernels("float", 16)
    x = np.array(values, np.float32)
    assert ulp_error(k("sin", x), np.sin(x.astype(np.float64)), "float").max() <= 2


# ---------------------------------------------------------------------------------------------
# Special values (C99 Annex F)
# ---------------------------------------------------------------------------------------------

inf, nan = math.inf, math.nan
SPECIAL = {
    "sin": [(0.0, 0.0), (-0.0, -0.0), (inf, nan), (-inf, nan), (nan, nan)],
    "cos": [(0.0, 1.0), (inf, nan), (nan, nan)],
    "tan": [(-0.0, -0.0), (inf, nan), (nan, nan)],
    "exp": [(-inf, 0.0), (inf, inf), (1000.0, inf), (-1000.0, 0.0), (0.0, 1.0), (nan, nan)],
    "exp2": [(-inf, 0.0), (inf, inf), (-1074.0, 5e-324), (10.0, 1024.0), (nan, nan)],
    "expm1": [(-0.0, -0.0), (-inf, -1.0), (inf, inf), (nan, nan)],
    "log": [(0.0, -inf), (-0.0, -inf), (-1.0, nan), (inf, inf), (-inf, nan), (1.0, 0.0), (nan, nan)],
    "log2": [(0.0, -inf), (-1.0, nan), (inf, inf), (8.0, 3.0), (5e-324, -1074.0), (nan, nan)],
    "asin": [(-0.0, -0.0), (1.0, math.pi / 2), (1.5, nan), (-inf, nan), (nan, nan)],
    "acos": [(1.0, 0.0), (-1.0, math.pi), (2.0, nan), (nan, nan)],
    "atan": [(inf, math.pi / 2), (-inf, -math.pi / 2), (-0.0, -0.0), (nan, nan)],
    "sinh": [(-0.0, -0.0), (inf, inf), (-inf, -inf), (1000.0, inf), (nan, nan)],
    "cosh": [(0.0, 1.0), (-inf, inf), (-1000.0, inf), (nan, nan)],
    "tanh": [(-0.0, -0.0), (inf, 1.0), (-inf, -1.0), (50.0, 1.0), (nan, nan)],
    "erf": [(-0.0, -0.0), (inf, 1.0), (-inf, -1.0), (10.0, 1.0), (nan, nan)],
    "cbrt": [(-0.0, -0.0), (-inf, -inf), (-27.0, -3.0), (nan, nan)],
}
SPECIAL2 = {
    "atan2": [((0.0, 0.0), 0.0), ((-0.0, 0.0), -0.0), ((0.0, -0.0), math.pi), ((-0.0, -0.0), -math.pi),
              ((1.0, 0.0), math.pi / 2), ((-1.0, -0.0), -math.pi / 2), ((inf, inf), math.pi / 4),
              ((inf, -inf), 3 * math.pi / 4), ((-inf, -inf), -3 * math.pi / 4), ((1.0, -inf), math.pi),
              ((-1.0, inf), -0.0), ((nan, 1.0), nan), ((1.0, nan), nan)],
    "pow": [((nan, 0.0), 1.0), ((1.0, nan), 1.0), ((nan, 1.0), nan), ((2.0, nan), nan),
            ((0.0, -3.0), inf), ((-0.0, -3.0), -inf), ((-0.0, -2.0), inf), ((-0.0, -0.5), inf),
            ((0.0, 3.0), 0.0), ((-0.0, 3.0), -0.0), ((-0.0, 2.0), 0.0), ((-0.0, -inf), inf), ((0.0, inf), 0.0),
            ((-1.0, inf), 1.0), ((-1.0, -inf), 1.0), ((0.5, -inf), inf), ((2.0, -inf), 0.0),
            ((0.5, inf), 0.0), ((-2.0, inf), inf), ((-inf, -3.0), -0.0), ((-inf, -2.0), 0.0),
            ((-inf, 3.0), -inf), ((-inf, 2.5), inf), ((inf, -1.0), 0.0), ((inf, 0.5), inf),
            ((-2.0, 0.5), nan), ((-2.0, 3.0), -8.0), ((-2.0, 2.0), 4.0), ((2.0, 2000.0), inf),
            ((2.0, -2000.0), 0.0), ((10.0, -320.0), 1e-320)],
}


def _same(got, want, scalar):
    dt = np.float32 if scalar == "float" else np.float64
    want = dt(want)
    if np.isnan(want):
        return bool(np.isnan(got))
    if want == 0:
        return got == 0 and np.signbit(got) == np.signbit(want)
    return bool(ulp_error(np.array([got]), np.array([float(want)]), scalar)[0] <= 1)


@pytest.mark.parametrize("scalar", ["float", "double"])
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_values_of_unary_functions(kernels, scalar, name):
    cases = SPECIAL[name]
    if scalar == "float":
        cases = [(x, w) for x, w in cases if x != 5e-324 and w != 5e-324]
    k = kernels(scalar, 16)
    got = k(name, np.array([x for x, _ in cases] * 16)[:16 * (len(cases) // 16 + 1)])
    for i, (x, want) in enumerate(cases):
        assert _same(got[i], want, scalar), f"{name}({x}) = {got[i]!r}, expected {want!r}"


@pytest.mark.parametrize("scalar", ["float", "double"])
@pytest.mark.parametrize("name", sorted(SPECIAL2))
def test_special_values_of_binary_functions(kernels, scalar, name):
    cases = SPECIAL2[name]
    if scalar == "float":
        cases = [c for c in cases if c[1] != 1e-320]
    k = kernels(scalar, 16)
    got = k(name, np.array([a for (a, _), _ in cases]), np.array([b for (_, b), _ in cases]))
    for i, ((a, b), want) in enumerate(cases):
        assert _same(got[i], want, scalar), f"{name}({a}, {b}) = {got[i]!r}, expected {want!r}"


@pytest.mark.parametrize("scalar", ["float", "double"])
def test_sincos_matches_sin_and_cos(kernels, scalar):
    k = kernels(scalar, 16)
    x = np.linspace(-100, 100, 4096)
    s, c = k("sincos", x)
    np.testing.assert_array_equal(s, k("sin", x))
    np.testing.assert_array_equal(c, k("cos", x))
