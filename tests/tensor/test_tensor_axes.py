"""reshape, transpose, moveaxis, swapaxes, squeeze, expand_dims, concat, stack, split against NumPy."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, TensorXf, TensorXi
from frostjit.errors import AxisError

from tensor_strategies import shapes, tensor, values


@given(shapes(0, 4, 0, 4), st.data())
def test_reshape_with_minus_one_matches_numpy(shape, data):
    a = values(shape, np.int32)
    n = a.size
    dims = data.draw(st.lists(st.sampled_from([1, 2, 3, 4, 6]), max_size=3))
    known = int(np.prod(dims)) if dims else 1
    assume(known != 0 and n % known == 0)
    new = dims[:]
    new.insert(data.draw(st.integers(0, len(dims))), -1)
    got = fj.reshape(tensor(a), tuple(new))
    want = a.reshape(tuple(new))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_reshape_errors_and_forms():
    t = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert fj.reshape(t, -1).shape == (6,)
    assert fj.reshape(Float(1, 2, 3, 4), (2, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match="cannot infer -1"):
        fj.reshape(t, (4, -1))
    with pytest.raises(ValueError, match="cannot reshape 6 elements"):
        fj.reshape(t, (4, 2))
    with pytest.raises(ValueError, match="only one dimension can be -1"):
        fj.reshape(t, (-1, -1))
    with pytest.raises(ValueError, match="order"):
        fj.reshape(t, (3, 2), order="F")


@given(shapes(0, 4, 0, 4), st.randoms())
def test_transpose_matches_numpy(shape, rnd):
    a = values(shape, np.int32)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    np.testing.assert_array_equal(fj.transpose(tensor(a), tuple(perm)).numpy(), np.transpose(a, perm))
    np.testing.assert_array_equal(fj.transpose(tensor(a)).numpy(), a.T)
    if len(shape) == 2:
        np.testing.assert_array_equal(tensor(a).T.numpy(), a.T)
    else:                               # (Dr.Jit's .T is 2-D only; fj.transpose reverses any rank)
        with pytest.raises(TypeError, match="only defined for 2-D tensors"):
            tensor(a).T


@given(shapes(1, 4, 0, 4), st.data())
def test_moveaxis_swapaxes_match_numpy(shape, data):
    a = values(shape, np.float32)
    nd = len(shape)
    src = data.draw(st.integers(-nd, nd - 1))
    dst = data.draw(st.integers(-nd, nd - 1))
    np.testing.assert_array_equal(fj.moveaxis(tensor(a), src, dst).numpy(), np.moveaxis(a, src, dst))
    np.testing.assert_array_equal(fj.swapaxes(tensor(a), src, dst).numpy(), np.swapaxes(a, src, dst))


def test_moveaxis_of_several_axes_and_mT():
    a = values((2, 3, 4, 5), np.float32)
    np.testing.assert_array_equal(fj.moveaxis(tensor(a), (0, 1), (-1, 0)).numpy(), np.moveaxis(a, (0, 1), (-1, 0)))
    np.testing.assert_array_equal(tensor(a).mT.numpy(), np.swapaxes(a, -1, -2))
    with pytest.raises(ValueError, match="at least 2"):
        TensorXf([1, 2]).mT
    with pytest.raises(AxisError, match="out of bounds"):
        fj.swapaxes(tensor(a), 0, 4)
    with pytest.raises(ValueError, match="repeated axis"):
        fj.transpose(tensor(a), (0, 1, 2, 2))


def test_squeeze_and_expand_dims_match_numpy():
    a = values((1, 3, 1, 2), np.float32)
    t = tensor(a)
    assert fj.squeeze(t).shape == np.squeeze(a).shape
    assert fj.squeeze(t, 2).shape == np.squeeze(a, 2).shape
    assert fj.squeeze(t, (0, -2)).shape == np.squeeze(a, (0, -2)).shape
    with pytest.raises(ValueError, match="length 3"):
        fj.squeeze(t, 1)
    assert fj.expand_dims(t, (0, -1)).shape == np.expand_dims(a, (0, -1)).shape
    np.testing.assert_array_equal(fj.expand_dims(t, 2).numpy(), np.expand_dims(a, 2))


@given(shapes(1, 3, 0, 3), st.data())
def test_concat_and_stack_match_numpy(shape, data):
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    k = data.draw(st.integers(1, 4))
    parts = []
    for i in range(k):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(values(tuple(s), np.float32, seed=i))
    got = fj.concat([tensor(p) for p in parts], axis=axis)
    np.testing.assert_array_equal(got.numpy(), np.concatenate(parts, axis=axis))
    same = [values(shape, np.int32, seed=i) for i in range(k)]
    ax = data.draw(st.integers(-nd - 1, nd))
    np.testing.assert_array_equal(fj.stack([tensor(p) for p in same], axis=ax).numpy(), np.stack(same, axis=ax))


def test_concat_forms_and_errors():
    a = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    flat = fj.concat([a, a], axis=None)
    assert isinstance(flat, Float) and len(flat) == 12               # Dr.Jit: a 1-D array
    assert isinstance(fj.concat([Float(1, 2), Float(3)]), Float)
    np.testing.assert_array_equal(fj.stack([Float(1, 2), Float(3, 4)], axis=1).numpy(), [[1, 3], [2, 4]])
    with pytest.raises(ValueError, match="except along axis"):
        fj.concat([a, TensorXf(np.zeros((3, 3), np.float32))], axis=1)
    with pytest.raises(TypeError, match="one type"):
        fj.concat([a, TensorXi(np.zeros((2, 3), np.int32))])
    with pytest.raises(ValueError, match="one shape"):
        fj.stack([a, fj.reshape(a, (3, 2))])


@given(shapes(1, 3, 0, 6), st.data())
def test_split_matches_numpy(shape, data):
    a = values(shape, np.float32)
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    n = shape[axis]
    if data.draw(st.booleans()) and n:
        parts = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    else:
        parts = sorted(data.draw(st.lists(st.integers(-n - 1, n + 1), max_size=3)))
    got = fj.split(tensor(a), parts, axis=axis)
    want = np.split(a, parts, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def test_split_errors():
    with pytest.raises(ValueError, match="cannot be equally split into 2 parts"):
        fj.split(TensorXf(np.zeros(5, np.float32)), 2)
