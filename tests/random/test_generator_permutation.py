"""Generator.permutation (Dr.Jit 1.5): a permutation of arange(n), a shuffled 1-D array, a
tensor shuffled along an axis; the order is Dr.Jit's for the same seed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.errors import AxisError
from frostjit.llvm import Array3f, Float, Int32, TensorXf, UInt32


def test_permutation_of_a_type_is_drjits_order_for_the_same_seed():
    # measured with Dr.Jit 1.5: dr.rng(seed=42).permutation(UInt32, 10)
    p = fj.rng(seed=42).permutation(UInt32, 10)
    assert type(p) is UInt32
    assert p.numpy().tolist() == [3, 0, 7, 2, 8, 5, 1, 9, 6, 4]
    # any static or tensor type picks the backend only
    assert fj.rng(seed=42).permutation(Array3f, 10).numpy().tolist() == p.numpy().tolist()


@given(seed=st.integers(0, 2**32), n=st.sampled_from([0, 1, 2, 7, 1000]))
def test_permutation_holds_every_index_once_and_follows_the_random_keys(seed, n):
    p = fj.rng(seed=seed).permutation(UInt32, n).numpy()
    assert sorted(p.tolist()) == list(range(n))
    if n > 1:
        keys = fj.rng(seed=seed).random(Float, n).numpy()
        np.testing.assert_array_equal(p, np.argsort(keys, kind="stable"))


def test_permutation_of_an_array_shuffles_a_copy():
    x = Int32(10, 20, 30, 40, 50, 60, 70, 80)
    y = fj.rng(seed=7).permutation(x)
    assert type(y) is Int32
    # measured with Dr.Jit 1.5 (a Float of the same values: the same order)
    assert y.numpy().tolist() == [10, 80, 50, 70, 20, 60, 30, 40]
    assert x.numpy().tolist() == [10, 20, 30, 40, 50, 60, 70, 80]
    assert fj.rng(seed=7).permutation(Int32(5)).numpy().tolist() == [5]


@pytest.mark.parametrize("shape,axis", [((4, 3), 0), ((4, 3), 1), ((4, 3), -1), ((2, 3, 4), 1), ((3, 5, 2), 2)])
def test_permutation_of_a_tensor_keeps_each_slice_whole(shape, axis):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    r = fj.rng(seed=3).permutation(TensorXf(a), axis=axis)
    assert r.shape == shape
    perm = fj.rng(seed=3).permutation(UInt32, shape[axis]).numpy()
    np.testing.assert_array_equal(r.numpy(), np.take(a, perm, axis=axis))


def test_permutation_refuses_bad_arguments():
    g = fj.rng()
    with pytest.raises(ValueError, match="'n' must be >= 0"):
        g.permutation(UInt32, -1)
    with pytest.raises(TypeError, match="'n' must be an int"):
        g.permutation(UInt32, 2.5)
    with pytest.raises(AxisError, match="out of bounds"):
        g.permutation(TensorXf(np.zeros((2, 2), np.float32)), axis=2)
    with pytest.raises(AxisError):
        g.permutation(Float(1, 2), axis=1)
    with pytest.raises(TypeError, match="first argument"):
        g.permutation([1, 2, 3])
