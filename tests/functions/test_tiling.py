"""fj.tile / fj.repeat as Dr.Jit 1.5 (numpy.tile / numpy.repeat): tuple reps, tensors along axes,
per-element counts, identity for 1, PyTrees; differential against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Int32, TensorXf, UInt32


@given(n=st.sampled_from([1, 7, 1000]), reps=st.one_of(st.integers(0, 3), st.tuples(st.integers(0, 3)),
                                                       st.tuples(st.integers(0, 3), st.integers(1, 3))))
def test_tile_of_a_1d_array_matches_numpy(n, reps):
    a = np.arange(n, dtype=np.float32)
    r = fj.tile(Float(a), reps)
    want = np.tile(a, reps)
    assert tuple(r.shape) == want.shape
    np.testing.assert_array_equal(np.asarray(r.numpy()), want)


@pytest.mark.parametrize("shape", [(2, 3), (1, 4), (2, 1, 3)])
@pytest.mark.parametrize("reps", [2, (2, 1), (2, 2), (2, 1, 2), (1, 0, 3), (3,)])
def test_tile_of_a_tensor_matches_numpy(shape, reps):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    r = fj.tile(TensorXf(a), reps)
    want = np.tile(a, reps)
    assert r.shape == want.shape
    np.testing.assert_array_equal(r.numpy(), want)


@given(n=st.sampled_from([1, 7, 1000]), data=st.data())
def test_repeat_with_per_element_counts_matches_numpy(n, data):
    counts = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.uint32)
    a = np.arange(n, dtype=np.int32) * 10
    r = fj.repeat(Int32(a), UInt32(counts))
    np.testing.assert_array_equal(r.numpy(), np.repeat(a, counts))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("repeats", [2, "counts"])
def test_repeat_of_a_tensor_along_an_axis_matches_numpy(axis, repeats):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    if repeats == "counts":
        n = a.size if axis is None else a.shape[axis]
        repeats = np.arange(n, dtype=np.uint32) % 3
        r = fj.repeat(TensorXf(a), UInt32(repeats), axis=axis)
    else:
        r = fj.repeat(TensorXf(a), repeats, axis=axis)
    want = np.repeat(a, repeats, axis=axis)
    assert r.shape == want.shape
    np.testing.assert_array_equal(r.numpy(), want)


def test_one_copy_returns_the_input_and_pytrees_recurse():
    x = Float(1, 2)
    assert fj.tile(x, 1) is x and fj.repeat(x, 1) is x and fj.tile(x, (1,)) is x
    y = fj.tile({"x": x, "y": Float(3, 4)}, 2)
    assert y["x"].numpy().tolist() == [1, 2, 1, 2] and y["y"].numpy().tolist() == [3, 4, 3, 4]
    z = fj.tile({"x": x}, (2, 3))
    assert fj.is_tensor_v(z["x"]) and z["x"].shape == (2, 6)
    assert [v.numpy().tolist() for v in fj.repeat([x, Float(3, 4)], 2)] == [[1, 1, 2, 2], [3, 3, 4, 4]]


def test_bad_counts_raise_as_drjit():
    x = Float(1, 2)
    with pytest.raises(ValueError):
        fj.tile(x, -1)
    with pytest.raises(ValueError):
        fj.repeat(x, -1)
    with pytest.raises(RuntimeError, match="does not match input size 2"):
        fj.repeat(x, UInt32(1, 2, 3))
    with pytest.raises(TypeError):
        fj.repeat(x, Float(1, 2))
