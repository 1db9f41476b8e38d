"""Element-wise functions on the argument types a Dr.Jit program passes them (found side by side
with Dr.Jit 1.5, session r9): integer interpolation, complex/quaternion predicates and roots."""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm


@pytest.mark.parametrize("t", [0.0, 0.25, 0.5, 1.0])
def test_lerp_of_unsigned_integers_promotes_before_negating(t):
    # -a of a UInt32 wrapped before the promotion to float: lerp(UInt32(3), UInt32(3), 0.5) gave 2**31
    a = np.array([0, 1, 3, 5, 2**31, 2**32 - 1, 12345], np.uint32)
    b = np.array([7, 0, 3, 2**32 - 1, 2**31, 0, 54321], np.uint32)
    got = fj.lerp(llvm.UInt32(a), llvm.UInt32(b), t)
    assert type(got) is llvm.Float
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want = a32.astype(np.float64) + (b32.astype(np.float64) - a32) * t
    np.testing.assert_allclose(got.numpy(), want.astype(np.float32), rtol=2e-6)


@pytest.mark.parametrize("cls", [llvm.UInt32, llvm.UInt64, llvm.Int32, llvm.Float, llvm.Float64])
def test_lerp_of_equal_endpoints_is_the_endpoint(cls):
    a = cls(3, 5)
    np.testing.assert_array_equal(fj.lerp(a, a, 0.5).numpy(), [3, 5])
    np.testing.assert_array_equal(fj.lerp(a, 11, llvm.Float(0, 1)).numpy(), [3, 11])


def test_isinf_and_isfinite_of_complex_numbers_and_quaternions_are_one_mask():
    # per number from its magnitude (Dr.Jit: abs(z) == inf / abs(z) < inf); they were per part
    z = llvm.Complex2f(llvm.Float(np.inf, 1, np.nan, 2), llvm.Float(0, -np.inf, 1, 3))
    assert type(fj.isinf(z)) is llvm.Bool
    assert fj.isinf(z).numpy().tolist() == [True, True, False, False]
    assert fj.isfinite(z).numpy().tolist() == [False, False, False, True]
    assert np.asarray(fj.isnan(z)).tolist() == [[False, False, True, False], [False, False, False, False]]
    q = llvm.Quaternion4f(1, llvm.Float(2, np.nan), 3, llvm.Float(4, np.inf))
    assert fj.isinf(q).numpy().tolist() == [False, False]      # (NaN magnitude: neither)
    assert fj.isfinite(q).numpy().tolist() == [True, False]


def _quat_numpy(q):
    return np.asarray(q, np.float64)      # (x, y, z, w) by lanes


def test_quaternion_exp2_and_log2_are_quaternion_functions():
    # they were computed per component (log2 of 2 + 1i + ... gave 1 + 0i ...)
    q = llvm.Quaternion4f(1, llvm.Float(2, -0.5), 3, llvm.Float(4, 0.1))
    ln2 = np.log(2.0)
    np.testing.assert_allclose(_quat_numpy(fj.log2(q)), _quat_numpy(fj.log(q)) / ln2, rtol=2e-6)
    np.testing.assert_allclose(_quat_numpy(fj.exp2(q)), _quat_numpy(fj.exp(q * ln2)), rtol=2e-6)
    # exp2 and log2 invert each other
    np.testing.assert_allclose(_quat_numpy(fj.exp2(fj.log2(q))), _quat_numpy(q), rtol=2e-5, atol=2e-6)


def test_safe_sqrt_asin_acos_of_complex_numbers_clamp_each_part():
    # Dr.Jit: sqrt(maximum(z, 0)) and asin(clip(z, -1, 1)), a bound b meaning b + 0i (they were
    # real sqrt/asin per part)
    re, im = np.array([1, -2, 0, 0.5], np.float32), np.array([3, 0.5, 0, -0.3], np.float32)
    z = llvm.Complex2f(llvm.Float(re), llvm.Float(im))
    want = np.sqrt(np.maximum(re, 0) + 1j * np.maximum(im, 0))
    got = np.asarray(fj.safe_sqrt(z))              # (a complex NumPy array)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    got = np.asarray(fj.safe_asin(z))
    np.testing.assert_allclose(got, np.arcsin(np.clip(re, -1, 1)), rtol=2e-6, atol=1e-7)
    got = np.asarray(fj.safe_acos(z))
    np.testing.assert_allclose(got, np.arccos(np.clip(re, -1, 1)), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("fn, value", [(fj.zeros_like, 0), (fj.ones_like, 1)])
def test_like_of_a_dynamic_array_keeps_its_rows_and_width(fn, value):
    # zeros_like(ArrayXf) made one row of the width (Dr.Jit: every row)
    a = llvm.ArrayXf(llvm.Float(1, 2), llvm.Float(3, 4), llvm.Float(5, 6))
    r = fn(a)
    assert type(r) is llvm.ArrayXf and fj.shape(r) == fj.shape(a) == (3, 2)
    assert np.asarray(r).tolist() == [[value] * 2] * 3
    frozen = fj.freeze(lambda x: fn(x) + x)
    for w in (2, 1, 5):
        x = llvm.ArrayXf(fj.arange(llvm.Float, w), fj.full(llvm.Float, 7, w))
        assert np.asarray(frozen(x)).tolist() == np.asarray(fn(x) + x).tolist()


def test_select_with_a_number_beside_a_complex_quaternion_or_matrix_converts_it_as_the_type():
    # the number is x + 0i / x times the identity (Dr.Jit); it filled every part (1+1i, all-ones)
    off = llvm.Bool(False, True)
    z = fj.select(off, llvm.Complex2f(1, 2), 2.5)
    np.testing.assert_array_equal(np.asarray(z), [2.5, 1 + 2j])
    q = fj.select(off, llvm.Quaternion4f(1, 2, 3, 4), llvm.Float(7, 8))
    np.testing.assert_array_equal(np.asarray(q), [[0, 1], [0, 2], [0, 3], [7, 4]])
    m = fj.select(llvm.Bool(False), llvm.Matrix2f(1, 2, 3, 4), 3)
    np.testing.assert_array_equal(np.asarray(m).reshape(2, 2), [[3, 0], [0, 3]])
    m = fj.select(llvm.Bool(True), 5, llvm.Matrix2f(1, 2, 3, 4))
    np.testing.assert_array_equal(np.asarray(m).reshape(2, 2), [[5, 0], [0, 5]])


def test_min_max_of_python_numbers_mixing_ints_and_floats_give_a_float():
    # Dr.Jit compares them as floats: min([1.5, -2]) is -2.0 (was the int -2)
    assert fj.min([1.5, -2]) == -2.0 and type(fj.min([1.5, -2])) is float
    assert type(fj.max([float("nan"), 2])) is float
    assert fj.max([1, 2]) == 2 and type(fj.max([1, 2])) is int
