"""Reductions and prefix sums of tensors over any axis or tuple of axes, against NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.errors import AxisError
from frostjit.llvm import TensorXb, TensorXf, TensorXf64, TensorXi, TensorXu

from tensor_strategies import shapes, tensor, values


@st.composite
def axes_for(draw, nd):
    kind = draw(st.sampled_from(["int", "tuple", "none", "ellipsis", "empty"]))
    if kind == "int" and nd:
        return draw(st.integers(-nd, nd - 1))
    if kind == "tuple" and nd:
        return tuple(draw(st.sets(st.integers(0, nd - 1), min_size=1)))
    if kind == "empty":
        return ()
    return None if kind == "none" else ...


def _np_axis(axis):
    return None if axis is ... else axis


REDUCTIONS = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}


@given(shapes(0, 4, 0, 5), st.sampled_from(sorted(REDUCTIONS)), st.sampled_from([np.float32, np.int32, np.float64]),
       st.booleans(), st.data())
def test_reductions_over_axes_match_numpy(shape, name, dtype, keepdims, data):
    axis = data.draw(axes_for(len(shape)))
    a = values(shape, dtype) % 3 + 1 if name == "prod" else values(shape, dtype)
    ax = _np_axis(axis)
    if name in ("min", "max") and (a.size == 0 or (ax not in (None, ()) and 0 in
                                                   [shape[k] for k in np.atleast_1d(ax)])):
        # an empty reduction gives the identity (NumPy raises)
        ident = np.inf if name == "min" else -np.inf
        if np.dtype(dtype).kind == "i":
            ident = np.iinfo(dtype).max if name == "min" else np.iinfo(dtype).min
        want = np.full(np.sum(a, axis=ax, keepdims=keepdims).shape, ident, dtype)
    else:
        # in the array's type: an Int32 sum wraps around as in Dr.Jit (NumPy would widen to int64)
        want = REDUCTIONS[name](a, axis=ax, keepdims=keepdims, **({"dtype": dtype} if name in ("sum", "prod") else {}))
    got = getattr(fj, name)(tensor(a), axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want), (shape, axis)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@given(shapes(0, 4, 0, 5), st.booleans(), st.data())
def test_boolean_reductions_and_count_match_numpy(shape, keepdims, data):
    axis = data.draw(axes_for(len(shape)))
    m = values(shape, np.bool_)
    ax = _np_axis(axis)
    for name, ref in (("all", np.all), ("any", np.any), ("count", np.count_nonzero)):
        got = getattr(fj, name)(tensor(m), axis=axis, keepdims=keepdims)
        want = ref(m, axis=ax, keepdims=keepdims) if name != "count" or ax != () else m.astype(np.uint32)
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(fj.none(tensor(m), axis=axis).numpy(), ~np.any(m, axis=ax))


@given(shapes(1, 3, 1, 5), st.data())
def test_mean_matches_numpy(shape, data):
    axis = data.draw(axes_for(len(shape)))
    a = values(shape, np.float64)
    np.testing.assert_allclose(fj.mean(tensor(a), axis=axis).numpy(), np.mean(a, axis=_np_axis(axis)), rtol=1e-12)
    if axis != ():
        mi = fj.mean(TensorXi(a.astype(np.int32)), axis=axis)
        assert isinstance(mi, TensorXf)                   # integer input: a Float tensor


@pytest.mark.parametrize("n", [33, 34, 47, 100, 257, 4097, 70000])
@pytest.mark.parametrize("axis", [0, 1])
def test_long_axes_take_several_levels(n, axis):
    shape = (n, 3) if axis == 0 else (3, n)
    a = np.random.default_rng(n).standard_normal(shape)
    t = TensorXf64(a)
    np.testing.assert_allclose(fj.sum(t, axis=axis).numpy(), a.sum(axis), rtol=1e-10)
    np.testing.assert_array_equal(fj.max(t, axis=axis).numpy(), a.max(axis))
    np.testing.assert_array_equal(fj.min(t, axis=axis).numpy(), a.min(axis))


def test_min_max_ignore_nan_like_drjit():
    a = np.array([[np.nan, 1, 3], [np.nan, np.nan, np.nan]], np.float32)
    np.testing.assert_array_equal(fj.max(TensorXf(a), axis=1).numpy(), [3, -np.inf])
    np.testing.assert_array_equal(fj.min(TensorXf(a), axis=1).numpy(), [1, np.inf])
    np.testing.assert_array_equal(fj.min(TensorXf(a), axis=0).numpy(), [np.inf, 1, 3])


def test_default_axis_reduces_everything_as_drjit():
    t = TensorXf(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    s = fj.sum(t)
    assert s.shape == () and s.item() == 276
    assert fj.mean(t).item() == 11.5
    np.testing.assert_array_equal(fj.dot(t, t).numpy(), (t.numpy() ** 2).sum(0))   # dot: axis 0 (Dr.Jit)
    assert fj.squared_norm(t).shape == ()
    assert fj.sum(t, axis=()).shape == (2, 3, 4)


def test_axis_errors():
    t = TensorXf(np.zeros((2, 3), np.float32))
    with pytest.raises(AxisError, match="out of bounds"):
        fj.sum(t, axis=2)
    with pytest.raises(AxisError, match="0-dimensional"):
        fj.sum(TensorXf(1.0), axis=0)
    with pytest.raises(TypeError, match="Bool"):
        fj.sum(TensorXb(np.ones((2, 2), bool)), axis=0)
    with pytest.raises(TypeError, match="Bool"):
        fj.all(t, axis=0)
    with pytest.raises(ValueError, match="mode"):
        fj.sum(t, axis=0, mode="fast")


@given(shapes(1, 3, 0, 6), st.booleans(), st.booleans(), st.data())
def test_prefix_sums_along_an_axis_match_numpy(shape, reverse, exclusive, data):
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    a = values(shape, np.int32)
    x = np.flip(a, axis) if reverse else a
    incl = np.cumsum(x, axis=axis, dtype=np.int32)
    want = incl - x if exclusive else incl
    if reverse:
        want = np.flip(want, axis)
    f = fj.prefix_sum if exclusive else fj.cumsum
    np.testing.assert_array_equal(f(tensor(a), axis=axis, reverse=reverse).numpy(), want)


def test_prefix_sum_defaults_and_long_axes():
    t = TensorXf(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.testing.assert_array_equal(fj.prefix_sum(t).numpy(), np.concatenate([np.zeros((1, 3, 4)), t.numpy()[:1]]))
    a = np.random.default_rng(1).integers(0, 5, (3, 1000)).astype(np.uint32)
    np.testing.assert_array_equal(fj.cumsum(TensorXu(a), axis=1).numpy(), np.cumsum(a, axis=1))
    m = TensorXb(np.array([[True, False, True]]))
    np.testing.assert_array_equal(fj.cumsum(m, axis=1).numpy(), [[1, 1, 2]])     # masks count as UInt32
    with pytest.raises(TypeError, match="int or a tuple"):
        fj.cumsum(t, axis=None)


def test_prefix_sums_over_a_tuple_of_axes_scan_each_in_turn():
    # drjit 1.5 (side by side): cumsum over (0, 1) is a summed-area table; prefix_sum is exclusive
    # along each axis; () returns the input
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = TensorXf(a)
    np.testing.assert_array_equal(fj.cumsum(t, axis=(0, 1)).numpy(), [[0, 1, 3], [3, 8, 15]])
    np.testing.assert_array_equal(fj.prefix_sum(t, axis=(0, 1)).numpy(), [[0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(fj.prefix_sum(t, axis=()).numpy(), a)
    b = np.random.default_rng(2).integers(0, 9, (3, 4, 5)).astype(np.int32)
    want = np.cumsum(np.cumsum(b, axis=2), axis=0)
    np.testing.assert_array_equal(fj.cumsum(TensorXi(b), axis=(0, -1)).numpy(), want)


def test_count_of_a_whole_mask_tensor_counts_the_mask_itself():
    """``count(t)`` over every axis counts the mask's bytes (one reduction, no kernel casting the
    mask to ``UInt32`` first), plain and with ``keepdims``."""
    a = np.random.default_rng(3).random((33, 17)) < 0.5
    t = TensorXb(a)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        c = fj.count(t)
        history = fj.kernel_history()
    assert [e["type"] for e in history] == [fj.KernelType.Reduce]
    assert type(c) is TensorXu and c.shape == () and c.numpy() == a.sum()
    k = fj.count(t, axis=(0, 1), keepdims=True)
    assert k.shape == (1, 1) and k.numpy().tolist() == [[a.sum()]]
