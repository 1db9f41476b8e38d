"""Element-wise operations on tensors broadcast as in NumPy (differential tests)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, TensorXb, TensorXf, TensorXf64, TensorXi, TensorXu

from tensor_strategies import shapes, tensor, values

OPS = {"add": (lambda a, b: a + b), "sub": (lambda a, b: a - b), "mul": (lambda a, b: a * b),
       "lt": (lambda a, b: a < b), "eq": (lambda a, b: a == b), "max": None}


@st.composite
def two_shapes(draw):
    out = draw(shapes(0, 4, 0, 4))
    a = tuple(1 if draw(st.booleans()) else d for d in out[len(out) - draw(st.integers(0, len(out))):])
    b = tuple(1 if draw(st.booleans()) else d for d in out[len(out) - draw(st.integers(0, len(out))):])
    return a, b


@given(two_shapes(), st.sampled_from(sorted(OPS)), st.sampled_from([np.float32, np.int32, np.float64]))
def test_binary_operations_broadcast_like_numpy(ab, op, dtype):
    sa, sb = ab
    a, b = values(sa, dtype, 1), values(sb, dtype, 2)
    ta, tb = tensor(a), tensor(b)
    if op == "max":
        got, want = fj.maximum(ta, tb), np.maximum(a, b)
    else:
        got, want = OPS[op](ta, tb), OPS[op](a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@given(two_shapes())
def test_select_and_fma_broadcast_three_operands(ab):
    sa, sb = ab
    a, b = values(sa, np.float32, 3), values(sb, np.float32, 4)
    c = values(sb[1:] if sb else (), np.float32, 5)
    got = fj.fma(tensor(a), tensor(b), tensor(c))
    np.testing.assert_array_equal(got.numpy(), (a * b + c).astype(np.float32))
    got = fj.select(tensor(a) > 0, tensor(b), tensor(c))
    np.testing.assert_array_equal(got.numpy(), np.where(a > 0, b, c))


def test_incompatible_shapes_raise_naming_both():
    with pytest.raises(ValueError, match=r"incompatible shapes: \(2, 3\) and \(3, 2\)"):
        TensorXf(np.zeros((2, 3), np.float32)) + TensorXf(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="incompatible"):
        TensorXf(np.zeros((2, 3), np.float32)) + Float(1, 2, 3, 4, 5, 6)


def test_scalars_arrays_and_numpy_operands():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = TensorXf(a)
    np.testing.assert_array_equal((t + 1).numpy(), a + 1)
    np.testing.assert_array_equal((1.5 * t).numpy(), 1.5 * a)
    np.testing.assert_array_equal((t + Float(1, 2, 3)).numpy(), a + [1, 2, 3])    # a 1-D array is (n,)
    np.testing.assert_array_equal((Float(1, 2, 3) * t).numpy(), a * [1, 2, 3])
    np.testing.assert_array_equal((t + Float(10)).numpy(), a + 10)
    r = np.array([1, 2, 3], np.float32) - t                                       # NumPy defers to the tensor
    assert isinstance(r, TensorXf)
    np.testing.assert_array_equal(r.numpy(), [1, 2, 3] - a)
    np.testing.assert_array_equal((-t).numpy(), -a)
    np.testing.assert_array_equal(abs(-t).numpy(), a)
    np.testing.assert_array_equal((t ** 2).numpy(), a ** 2)


def test_type_promotion_follows_the_flat_arrays():
    ti = TensorXi(np.arange(3, dtype=np.int32))
    assert isinstance(ti + 1.5, TensorXf)
    assert isinstance(ti / 2.0, TensorXf)
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for /"):
        ti / 2                                              # Dr.Jit's '/' takes floats only
    assert isinstance(TensorXf([1.0]) + TensorXf64([1.0]), TensorXf64)
    assert isinstance(ti > 1, TensorXb)
    assert isinstance(TensorXu([1]) + 1, TensorXu)
    np.testing.assert_array_equal((TensorXi(np.array([-3, 5], np.int32)) // 2).numpy(), [-1, 2])   # C's, as Dr.Jit
    np.testing.assert_array_equal((~(ti > 0)).numpy(), [True, False, False])


def test_in_place_operators_keep_the_shape_and_do_not_change_views():
    t = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = fj.reshape(t, (3, 2))
    same = t
    t += TensorXf([1, 1, 1])
    assert same is t
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3) + 1)
    np.testing.assert_array_equal(view.numpy(), np.arange(6).reshape(3, 2))
    with pytest.raises(ValueError, match="cannot change the shape"):
        t *= TensorXf(np.ones((2, 2, 3), np.float32))


MATH = ["sin", "cos", "exp", "log", "sqrt", "abs", "floor", "tanh", "rcp", "cbrt"]


@pytest.mark.parametrize("name", MATH)
def test_math_functions_apply_elementwise(name):
    a = np.linspace(0.1, 3, 12, dtype=np.float32).reshape(3, 4)
    got = getattr(fj, name)(TensorXf(a))
    ref = {"rcp": lambda x: 1 / x}.get(name, getattr(np, name, None))
    assert isinstance(got, TensorXf) and got.shape == (3, 4)
    np.testing.assert_allclose(got.numpy(), ref(a.astype(np.float64)), rtol=2e-6)


def test_more_math_on_tensors():
    a = np.array([[-2.0, -0.5, 0.0, 0.5, 2.0]], np.float32)
    t = TensorXf(a)
    np.testing.assert_array_equal(fj.sign(t).numpy(), np.where(a >= 0, 1, -1).astype(a.dtype))   # Dr.Jit: sign(0) = 1
    np.testing.assert_array_equal(fj.clip(t, -1, 1).numpy(), np.clip(a, -1, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(fj.isnan(t / 0.0).numpy(), np.isnan(a / np.float32(0)))
    np.testing.assert_allclose(fj.atan2(t, t + 3).numpy(), np.arctan2(a, a + 3), rtol=1e-6)
    np.testing.assert_allclose(fj.hypot(t, 2 * t).numpy(), np.hypot(a, 2 * a), rtol=1e-6)
    np.testing.assert_allclose(fj.lerp(t, 2 * t, 0.25).numpy(), a + 0.25 * a, rtol=1e-6)
    np.testing.assert_allclose(fj.safe_sqrt(t).numpy(), np.sqrt(np.maximum(a, 0)))
    bits = fj.reinterpret_array(TensorXi, t)
    assert bits.shape == (1, 5)
    np.testing.assert_array_equal(bits.numpy(), a.view(np.int32))


# Every bit operator of integer tensors (the shifts were missing: `TensorXi >> 1` raised
# TypeError, as only `__shl__`/`__shr__` were defined), broadcast, reflected and in place.
BIT_OPS = {"and": (lambda a, b: a & b), "or": (lambda a, b: a | b), "xor": (lambda a, b: a ^ b),
           "lshift": (lambda a, b: a << b), "rshift": (lambda a, b: a >> b)}


@given(two_shapes(), st.sampled_from(sorted(BIT_OPS)), st.sampled_from([np.int32, np.uint32, np.int64]))
def test_integer_bit_operators_broadcast_like_numpy(ab, op, dtype):
    sa, sb = ab
    a = values(sa, dtype, 1)
    b = np.abs(values(sb, dtype, 2)) % 8       # shift counts below the width
    got, want = BIT_OPS[op](tensor(a), tensor(b)), BIT_OPS[op](a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_integer_shifts_with_numbers_reflected_and_in_place():
    a = np.array([[-7, 5], [3, -2]], np.int32)
    t = TensorXi(a)
    np.testing.assert_array_equal((t >> 1).numpy(), a >> 1)
    np.testing.assert_array_equal((t << 2).numpy(), a << 2)
    np.testing.assert_array_equal((1 << TensorXu(np.array([1, 2], np.uint32))).numpy(), [2, 4])
    np.testing.assert_array_equal((~t).numpy(), ~a)
    u = TensorXu(np.array([1, 2, 3, 4], np.uint32))
    alias = u
    u <<= 3
    u >>= 1
    np.testing.assert_array_equal(u.numpy(), [4, 8, 12, 16])
    assert alias is u
    with pytest.raises(TypeError):
        TensorXf(np.ones(2, np.float32)) >> 1
