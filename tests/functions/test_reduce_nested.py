"""Reductions with ``axis=None`` of nested static arrays (``Array22f``, ``Matrix3f``) reduce every entry.

``fj.sum(Array22f(...), axis=None)`` raised ``AttributeError: 'Array2f' object has no attribute
'_node'`` and ``fj.mean`` divided by the outer size and the width only.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm


@pytest.mark.parametrize("width", [1, 7, 1000])
@pytest.mark.parametrize("cls, dims", [(llvm.Array22f, (2, 2)), (llvm.Matrix3f, (3, 3)), (llvm.Array33f, (3, 3))])
def test_full_reductions_of_nested_arrays_match_numpy(cls, dims, width):
    ref = np.random.default_rng(width).random(dims + (width,)).astype(np.float32)
    v = cls(ref)
    np.testing.assert_allclose(fj.sum(v, axis=None).numpy(), [ref.sum(dtype=np.float64)], rtol=1e-5)
    np.testing.assert_array_equal(fj.max(v, axis=None).numpy(), [ref.max()])
    np.testing.assert_array_equal(fj.min(v, axis=None).numpy(), [ref.min()])
    np.testing.assert_allclose(fj.mean(v, axis=None).numpy(), [ref.mean(dtype=np.float64)], rtol=1e-5)


def test_count_and_all_of_a_nested_mask():
    m = llvm.Array22b([True, False], [True, True])
    assert fj.count(m, axis=None).numpy().tolist() == [3]
    assert fj.all(m, axis=None).numpy().tolist() == [False]
    assert fj.any(m, axis=None).numpy().tolist() == [True]


def _mixed_width_matrix():
    """A Matrix2f whose entries have widths 1 and 2 (``Matrix2f(1, 2, Float(3, 1), 4)``) and the
    NumPy array of its entries broadcast to the array's width, shape (2, 2, 2)."""
    m = llvm.Matrix2f(1, 2, llvm.Float(3, 1), 4)
    ref = np.array([[[1, 1], [2, 2]], [[3, 1], [4, 4]]], np.float32)
    return m, ref


AXES = [0, 1, 2, -1, (0, 1), (1, 2), (0, 2), (0, 1, 2), None]


@pytest.mark.parametrize("axis", AXES)
def test_nested_reductions_count_size_1_entries_once_per_lane(axis):
    # Dr.Jit reduces a static axis lane by lane, so size-1 entries broadcast to the whole array's
    # width: sum(Matrix2f(1, 2, Float(3, 1), 4), axis=None) is 18 (was 15: each row reduced alone).
    m, ref = _mixed_width_matrix()
    np_axis = tuple(range(3)) if axis is None else axis
    for fn, npfn in ((fj.sum, np.sum), (fj.prod, np.prod), (fj.max, np.max), (fj.min, np.min),
                     (fj.mean, np.mean)):
        got = np.asarray(fn(m, axis=axis)).reshape(-1)
        want = npfn(ref, axis=np_axis)
        if axis in (2, -1, (1, 2), (0, 2)):
            # the lane axis without the outer one: a size-1 entry is reduced over its own width
            # (Dr.Jit: sum(1) is 1), the mean divides by the whole width (below)
            continue
        np.testing.assert_allclose(got, np.asarray(want, np.float32).reshape(-1), rtol=1e-6, err_msg=fn.__name__)


def test_nested_array_inner_axis_and_lane_axis():
    # axis=1 of an Array22f raised AttributeError ('Array2f' object has no attribute '_node')
    a = llvm.Array22f(llvm.Array2f(1, llvm.Float(2, 3)), llvm.Array2f(5, 6))
    assert np.asarray(fj.sum(a, axis=1)).tolist() == [[3, 4], [11, 11]]
    assert np.asarray(fj.max(a, axis=1)).tolist() == [[2, 3], [6, 6]]
    assert np.asarray(fj.sum(a, axis=2)).reshape(-1).tolist() == [1, 5, 5, 6]
    # the mean divides by the whole array's width on the lane axis (Dr.Jit)
    assert np.asarray(fj.mean(a, axis=2)).reshape(-1).tolist() == [0.5, 2.5, 2.5, 3]
    assert np.asarray(fj.mean(llvm.Array3f(1, llvm.Float(2, 3), -1), axis=1)).reshape(-1).tolist() == [0.5, 2.5, -0.5]
    b = llvm.Array22b(llvm.Array2b(True, llvm.Bool(True, False)), llvm.Array2b(False, True))
    assert np.asarray(fj.count(b, axis=1)).tolist() == [[2, 1], [1, 1]]
    assert np.asarray(fj.all(b, axis=0)).tolist() == [[False, False], [True, False]]
    assert fj.count(b, axis=None).numpy().tolist() == [5]
