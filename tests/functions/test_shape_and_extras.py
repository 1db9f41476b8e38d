"""Reshaping helpers (meshgrid, tile, repeat, reverse, ravel, unravel, shape) and the small
math extras (hypot, log10, safe_sqrt, ...), against NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Array3f

small = st.lists(st.integers(-50, 50), min_size=0, max_size=9)


@given(st.lists(small.filter(len), min_size=2, max_size=3), st.sampled_from(["xy", "ij"]))
def test_meshgrid_matches_numpy(vals, indexing):
    arrays = [Float(np.array(v, np.float32)) for v in vals]
    ref = np.meshgrid(*[np.array(v, np.float32) for v in vals], indexing=indexing)
    out = fj.meshgrid(*arrays, indexing=indexing)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        np.testing.assert_array_equal(o.numpy(), r.ravel())


@given(small, st.integers(0, 4))
def test_tile_repeat_reverse_match_numpy(v, count):
    a = np.array(v, np.int64).astype(np.float32)
    x = Float(a)
    np.testing.assert_array_equal(fj.tile(x, count).numpy(), np.tile(a, count))
    np.testing.assert_array_equal(fj.repeat(x, count).numpy(), np.repeat(a, count))
    np.testing.assert_array_equal(fj.reverse(x).numpy(), a[::-1])


def test_ravel_unravel_round_trip():
    v = Array3f([1, 2], [3, 4], [5, 6])
    r = fj.ravel(v)
    np.testing.assert_array_equal(r.numpy(), [1, 3, 5, 2, 4, 6])
    back = fj.unravel(Array3f, r)
    np.testing.assert_array_equal(back.numpy(), v.numpy())
    assert fj.shape(v) == (3, 2) and fj.shape(r) == (6,)
    with pytest.raises(ValueError, match="multiple of 3"):
        fj.unravel(Array3f, Float([1, 2, 3, 4]))
    assert fj.unravel(Float, r) is r        # a 1-D type: the array itself (Dr.Jit)


def test_math_extras():
    a = np.array([3.0, -0.0, 1e-3, 5.0], np.float32)
    b = np.array([4.0, 2.0, 7.0, -12.0], np.float32)
    np.testing.assert_allclose(fj.hypot(Float(a), Float(b)).numpy(), np.hypot(a, b), rtol=1e-6)
    np.testing.assert_allclose(fj.log10(Float([1e-3, 1.0, 1e3, 12345.0])).numpy(),
                               np.log10([1e-3, 1.0, 1e3, 12345.0]), rtol=3e-7)
    assert fj.safe_sqrt(Float([-1e-7, 4.0])).numpy().tolist() == [0.0, 2.0]
    assert not np.isnan(fj.safe_acos(Float([1.0000001, -1.0000001])).numpy()).any()
    assert not np.isnan(fj.safe_asin(Float([1.0000001])).numpy()).any()
    np.testing.assert_allclose(fj.rad2deg(fj.deg2rad(Float([30.0, 90.0]))).numpy(), [30, 90], rtol=1e-6)
    np.testing.assert_array_equal(fj.power(Float([2.0, 3.0]), 2).numpy(), [4, 9])


@pytest.mark.parametrize("fn", [fj.tile, fj.repeat])
def test_tile_and_repeat_reject_negative_and_float_counts(fn):
    x = Float([1, 2])
    for bad in (-1, -3):
        with pytest.raises(ValueError, match="must be >= 0"):
            fn(x, bad)                          # returned [] before
        with pytest.raises(ValueError):
            fn(Float(), bad)
    for bad in (2.0, 2.5):
        with pytest.raises(TypeError, match="must be an int"):
            fn(x, bad)                          # tile(x, 2.5) gave [1, 2, 1, 2, 1]
    assert len(fn(x, 0)) == 0 and len(fn(x, np.int64(2))) == 4


def test_tile_repeat_reverse_of_static_vectors_and_sequences_follow_drjit():
    v = Array3f([1, 2], [3, 4], [5, 6])
    np.testing.assert_array_equal(fj.tile(v, 2).numpy(), np.tile(v.numpy(), 2))
    np.testing.assert_array_equal(fj.repeat(v, 2).numpy(), np.repeat(v.numpy(), 2, axis=1))
    np.testing.assert_array_equal(fj.reverse(v).numpy(), v.numpy()[::-1])      # the components
    assert fj.reverse([1, 2, 3]) == [3, 2, 1]
    with pytest.raises(ValueError, match="axis=0"):
        fj.reverse(Float([1, 2]), axis=1)


def test_ravel_and_unravel_orders_follow_drjit():
    v = Array3f([1, 2], [3, 4], [5, 6])
    np.testing.assert_array_equal(fj.ravel(v, "C").numpy(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(fj.ravel(v, "F").numpy(), [1, 3, 5, 2, 4, 6])
    np.testing.assert_array_equal(fj.unravel(Array3f, Float([1, 2, 3, 4, 5, 6]), "C").numpy(), v.numpy())
    np.testing.assert_array_equal(fj.unravel(Array3f, fj.ravel(v, "A")).numpy(), v.numpy())
    with pytest.raises(ValueError, match="'order'"):
        fj.ravel(v, "X")


def test_meshgrid_of_one_array_returns_it_and_shape_of_a_ragged_vector_raises():
    x = Float([1, 2])
    assert fj.meshgrid(x) is x              # Dr.Jit: the array, not a 1-tuple
    with pytest.raises(ValueError, match="ragged"):
        fj.shape(Array3f(Float([1, 2]), Float([1, 2, 3]), Float([1])))
    assert fj.shape(Array3f(Float([1, 2]), Float([1]), 0)) == (3, 2)


def test_shape_of_python_sequences_follows_drjit():
    # Dr.Jit 1.5 measured: the length, then one size per axis (size 1 broadcasts);
    # more ragged cases: tests/functions/test_shape_ragged.py
    from frostjit.llvm import Array3f as A3, Float as F
    assert fj.shape([1, 2, 3]) == (3,) and fj.shape((1.0, 2.0)) == (2,) and fj.shape([]) == (0,)
    assert fj.shape([[1, 2], [3, 4]]) == (2, 2) and fj.shape([[1, 2], [3]]) == (2, 2)
    assert fj.shape([F(1, 2), F(3)]) == (2, 2) and fj.shape([A3(1, 2, 3)]) == (1, 3, 1)
    with pytest.raises(ValueError, match="ragged"):
        fj.shape([1, [2]])
    with pytest.raises(TypeError, match="got NoneType"):
        fj.shape(None)
