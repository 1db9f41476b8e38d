"""Complex numbers: arithmetic and functions against NumPy's complex128 (hypothesis), AD against
finite differences (float64), frozen == plain, NumPy and DLPack conversion, printing."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
from type_helpers import WIDTHS, assert_same, check_gradient

FUNCTIONS = {
    "exp": (fj.exp, np.exp), "log": (fj.log, np.log), "sqrt": (fj.sqrt, np.sqrt), "sin": (fj.sin, np.sin),
    "cos": (fj.cos, np.cos), "tan": (fj.tan, np.tan), "sinh": (fj.sinh, np.sinh), "cosh": (fj.cosh, np.cosh),
    "tanh": (fj.tanh, np.tanh), "asin": (fj.asin, np.arcsin), "acos": (fj.acos, np.arccos),
    "atan": (fj.atan, np.arctan), "rcp": (fj.rcp, lambda z: 1 / z), "rsqrt": (fj.rsqrt, lambda z: 1 / np.sqrt(z)),
    "exp2": (fj.exp2, np.exp2), "log2": (fj.log2, np.log2), "abs": (fj.abs, np.abs),
    "conj": (fj.conj, np.conj), "arg": (fj.arg, np.angle), "real": (fj.real, np.real), "imag": (fj.imag, np.imag),
}


def _complex(z: np.ndarray):
    return T.Complex2f64(T.Float64(z.real.copy()), T.Float64(z.imag.copy()))


def _values(x) -> np.ndarray:
    a = x.numpy()
    return a if a.dtype.kind == "c" else a.astype(np.complex128)


# (|z|^2 of a part below ~1e-150 underflows: 1/z is then inf, in Dr.Jit's formula too)
_parts = st.floats(-4, 4, allow_nan=False, allow_infinity=False).filter(lambda v: v == 0 or abs(v) > 1e-3)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=10, deadline=None)
@given(data=st.lists(st.tuples(_parts, _parts), min_size=1, max_size=40))
def test_complex_function_matches_numpy(name, data):
    z = np.array([complex(a, b) for a, b in data])
    f, ref = FUNCTIONS[name]
    with np.errstate(all="ignore"):     # log(0), 1 / 0
        got, want = _values(f(_complex(z))), ref(z).astype(np.complex128)
    # away from the branch cuts (on them the sign of a zero part decides)
    cut = (np.abs(z.imag) < 1e-9) | (np.abs(z.real) < 1e-9)
    np.testing.assert_allclose(got[~cut], want[~cut], rtol=1e-11, atol=1e-11)


@settings(max_examples=20, deadline=None)
@given(a=st.lists(st.tuples(_parts, _parts), min_size=1, max_size=30), b=st.tuples(_parts, _parts),
       k=st.integers(-3, 4))
def test_complex_arithmetic_matches_numpy(a, b, k):
    za = np.array([complex(x, y) for x, y in a])
    zb = complex(*b)
    x = _complex(za)
    w = T.Complex2f64(zb.real, zb.imag)
    with np.errstate(all="ignore"):
        cases = [(x * w, za * zb), (x + w, za + zb), (x - 1.5, za - 1.5), (2 * x, 2 * za), (x * x, za * za),
                 (x ** k, za ** k), (fj.fma(x, w, x), za * zb + za)]
        if zb != 0:     # (exp(w log z): 0 ** w is NaN, as in Dr.Jit; NumPy gives 1 for 0 ** 0)
            cases.append((x ** w, np.where(za == 0, np.nan, za ** zb)))
    for got, want in cases:
        ok = np.isfinite(want)
        np.testing.assert_allclose(_values(got)[ok], want[ok], rtol=1e-9, atol=1e-10)
    if zb != 0:
        np.testing.assert_allclose(_values(x / w), za / zb, rtol=1e-12)


def test_numpy_conversion_and_printing_follow_drjit():
    z = T.Complex2f(T.Float(1, 0, 0, 1.5), T.Float(2, 1, 0, -2.25))
    a = z.numpy()
    assert a.dtype == np.complex64 and a.shape == (4,)
    assert repr(T.Complex2f(1, 2)) == "[1+2j]"
    assert repr(T.Complex2f(0, -1)) == "[-1j]" and repr(T.Complex2f(5)) == "[5]"
    back = T.Complex2f(a)
    np.testing.assert_array_equal(back.numpy(), a)
    np.testing.assert_array_equal(np.from_dlpack(z), a)
    with pytest.raises(TypeError, match="inequality"):
        z < z


_NAN = -float("nan")         # (the sign bit set, as x86 makes 0/0)


@pytest.mark.parametrize("make, want", [
    # Dr.Jit 1.5.0's strings, recorded side by side (session r16): a NaN term is "+nan" whatever
    # its sign bit (frostjit printed "-nan-nanj" for rcp(Complex2f(0, 0)))
    (lambda: fj.scalar.Complex2f(1, _NAN), "1+nanj"),
    (lambda: fj.scalar.Complex2f(_NAN, 1), "nan+1j"),
    (lambda: fj.scalar.Complex2f(_NAN, _NAN), "nan+nanj"),
    (lambda: fj.scalar.Quaternion4f(_NAN, 1, _NAN, 1), "nani+1j+nank+1"),
    (lambda: fj.scalar.Quaternion4f(1, 1, 1, _NAN), "1i+1j+1k+nan"),
    (lambda: T.Complex2f(1, _NAN), "[1+nanj]"),
    (lambda: T.Quaternion4f(_NAN, _NAN, _NAN, _NAN), "[nani+nanj+nank+nan]"),
    (lambda: fj.rcp(T.Complex2f(0, 0)), "[nan+nanj]"),
    (lambda: fj.scalar.Complex2f(-float("inf"), -1), "-inf-1j"),
])
def test_nan_terms_print_as_drjit(make, want):
    assert str(make()) == want


@pytest.mark.parametrize("cls", ["Complex2f", "Complex2f64"])
@pytest.mark.parametrize("re, im", [(1, float("nan")), (1, float("inf")), (-float("inf"), 2),
                                    (float("nan"), -float("inf")), (3, 4)])
def test_scalar_complex_numpy_keeps_each_part(cls, re, im):
    # The scalar backend built re + 1j * im: an infinite or NaN imaginary part made the real
    # part NaN (1j * inf is nan + inf j).  Dr.Jit 1.5.0: array(1.+nanj), array(1.+infj), ...
    a = getattr(fj.scalar, cls)(re, im).numpy()
    assert a.shape == () and a.dtype == (np.complex128 if cls.endswith("64") else np.complex64)
    np.testing.assert_array_equal([a.real, a.imag], [re, im])
    np.testing.assert_array_equal(getattr(T, cls)(re, im).numpy(), [a])      # (as the LLVM backend's)


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_complex_function_equals_plain_calls(width):
    def f(z, w):
        return z * w / (z + 1), fj.exp(z), fj.abs(w), fj.conj(z) ** 2

    frozen = fj.freeze(f)
    rng = np.random.default_rng(width)
    for n in (width, width + 2):
        z = T.Complex2f(T.Float(rng.standard_normal(n)), T.Float(rng.standard_normal(n)))
        w = T.Complex2f(T.Float(rng.standard_normal(n)), T.Float(rng.standard_normal(n)))
        got, want = frozen(z, w), f(z, w)
        assert [type(x) for x in got] == [type(x) for x in want]
        assert_same(got, want)


def test_complex_gradients_match_finite_differences():
    rng = np.random.default_rng(4)
    z = AD.Complex2f64(AD.Float64(rng.uniform(0.5, 2, 5)), AD.Float64(rng.uniform(-2, 2, 5)))
    w = AD.Complex2f64(AD.Float64(rng.uniform(0.5, 2, 5)), AD.Float64(rng.uniform(-2, 2, 5)))
    check_gradient(lambda a, b: a * b, (z, w))
    check_gradient(lambda a, b: a / b, (z, w))
    for f in (fj.exp, fj.log, fj.sqrt, fj.sin, fj.tanh, fj.abs, fj.arg):
        check_gradient(f, (z,), rtol=1e-5)
    check_gradient(lambda a, b: a ** b, (z, w), rtol=1e-5)
