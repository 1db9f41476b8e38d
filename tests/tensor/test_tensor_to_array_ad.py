"""Converting a JIT tensor to a JIT array (``Float(t)``, ``Array3f(t)``, ``ArrayXf(t)``, with
``flip_axes``) keeps its derivatives, as Dr.Jit's conversion does.

Found in session r15 by Dr.Jit's ``test_tensor.py`` test14 (``Array3f(TensorXf(v))`` then
``forward_to``): the conversion read the tensor through NumPy, so the result had the right
values and no gradient (derivatives silently dropped).  Expected: values are NumPy's reshape
(``flip_axes``: its transpose), forward and reverse derivatives the same permutation of the
seeds.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Array2f, Array3f, ArrayXf, Float, TensorXf


def _convert(kind, t):
    if kind == "Float":
        return Float(t)
    if kind == "Array3f":
        return Array3f(t)
    if kind == "ArrayXf":
        return ArrayXf(t)
    return Array2f(t, flip_axes=True)


def _shape(kind, w):
    return {"Float": (w,), "Array3f": (3, w), "ArrayXf": (3, w), "flip": (w, 2)}[kind]


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(["Float", "Array3f", "ArrayXf", "flip"]), w=st.integers(1, 9),
       seed=st.integers(0, 2**31 - 1))
def test_conversion_keeps_forward_and_reverse_derivatives(kind, w, seed):
    rng = np.random.default_rng(seed)
    shape = _shape(kind, w)
    n = int(np.prod(shape))
    vals = rng.integers(-9, 9, n).astype(np.float32)
    ref = vals.reshape(shape).T if kind == "flip" else vals.reshape(shape)

    x = Float(vals)
    fj.enable_grad(x)
    y = _convert(kind, TensorXf(x, shape=shape))
    assert fj.grad_enabled(y)
    np.testing.assert_array_equal(np.asarray(y.numpy()).reshape(ref.shape), ref)

    seed_x = rng.integers(-9, 9, n).astype(np.float32)
    fj.set_grad(x, Float(seed_x))
    g = fj.forward_to(y)
    want = seed_x.reshape(shape).T if kind == "flip" else seed_x.reshape(shape)
    np.testing.assert_array_equal(np.asarray(g.numpy()).reshape(want.shape), want)

    x2 = Float(vals)
    fj.enable_grad(x2)
    y2 = _convert(kind, TensorXf(x2, shape=shape))
    cot = rng.integers(-9, 9, ref.size).astype(np.float32).reshape(ref.shape)
    fj.set_grad(y2, type(y2)(cot) if kind != "Float" else Float(cot))
    back = fj.backward_to(x2)
    want_b = cot.T.ravel() if kind == "flip" else cot.ravel()
    np.testing.assert_array_equal(back.numpy(), want_b)


def test_a_2d_tensor_is_not_a_1d_array():
    with pytest.raises(TypeError, match="dimensionality mismatch"):
        Float(TensorXf(fj.arange(Float, 6), shape=(3, 2)))
