"""hstack/vstack/row_stack/dstack/column_stack, array_split, take, take_interp, slice_index, and
fj.slice: Dr.Jit 1.5's answers (recorded side by side), NumPy differentials, frozen functions."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Float, Int, TensorXf, UInt

A = TensorXf([1, 2, 3, 4, 5, 6], shape=(2, 3))
B = TensorXf([7, 8, 9, 10, 11, 12], shape=(2, 3))


def _check(t, want):
    want = np.asarray(want)
    assert t.shape == want.shape, (t.shape, want.shape)
    assert t.numpy().tolist() == want.tolist()


def test_stacking_gives_drjits_shapes_and_values():
    a, b = A.numpy(), B.numpy()
    _check(fj.hstack([A, B]), np.hstack([a, b]))
    _check(fj.hstack([Float(1, 2), Float(3)]), [1, 2, 3])
    _check(fj.vstack([A, B]), np.vstack([a, b]))
    _check(fj.vstack([Float(1, 2), Float(3, 4)]), [[1, 2], [3, 4]])
    _check(fj.row_stack([Float(1, 2), Float(3, 4)]), [[1, 2], [3, 4]])
    _check(fj.dstack([A, B]), np.dstack([a, b]))
    _check(fj.dstack([Float(1, 2), Float(3, 4)]), np.dstack([[1, 2], [3, 4]]))
    _check(fj.column_stack([Float(1, 2), Float(3, 4)]), [[1, 3], [2, 4]])
    _check(fj.column_stack([A, B]), np.column_stack([a, b]))


def test_array_split_gives_the_extra_elements_to_the_first_parts():
    parts = fj.array_split(TensorXf([1, 2, 3, 4, 5, 6, 7]), 3)
    assert [p.numpy().tolist() for p in parts] == [[1, 2, 3], [4, 5], [6, 7]]
    parts = fj.array_split(A, 2, axis=1)
    assert [p.numpy().tolist() for p in parts] == [[[1, 2], [4, 5]], [[3], [6]]]
    with pytest.raises(TypeError, match="tensor"):
        fj.array_split(Float(1, 2, 3), 2)


def test_take_and_take_interp_give_drjits_values():
    _check(fj.take(A, 1), [4, 5, 6])
    _check(fj.take(A, 2, axis=1), [3, 6])
    _check(fj.take(A, UInt(1, 0, 1), axis=0), [[4, 5, 6], [1, 2, 3], [4, 5, 6]])
    _check(fj.take(A, UInt(2, 0), axis=1), [[3, 1], [6, 4]])
    _check(fj.take(A, -1), [4, 5, 6])                   # (Dr.Jit 1.5 rejects negative ints)
    _check(fj.take_interp(A, 0.5), [2.5, 3.5, 4.5])
    _check(fj.take_interp(A, 1.25, axis=1), [2.25, 5.25])
    _check(fj.take_interp(TensorXf([1, 2, 3]), Float(0.5, 1.75)), [1.5, 2.75])
    _check(fj.take_interp(A, Float(0.5, 1.5), axis=1), [[1.5, 2.5], [4.5, 5.5]])
    _check(fj.take_interp(A, Float(-1, 5), axis=1), [[1, 3], [4, 6]])     # clamped to the axis
    with pytest.raises(TypeError, match="tensor"):
        fj.take(Float(1, 2, 3), UInt(0))


def test_slice_index_gives_drjits_positions():
    shape, idx = fj.slice_index(UInt, (10, 1), (slice(0, 10, 2), 0))
    assert shape == (5,) and idx.numpy().tolist() == [0, 2, 4, 6, 8]
    shape, idx = fj.slice_index(UInt, (3, 4), (slice(None), slice(1, 3)))
    assert shape == (3, 2) and idx.numpy().tolist() == [1, 2, 5, 6, 9, 10]
    shape, idx = fj.slice_index(UInt, (3, 4), (..., None, 2))
    assert shape == (3, 1) and idx.numpy().tolist() == [2, 6, 10]
    shape, idx = fj.slice_index(UInt, (3, 4), (UInt(2, 0), UInt(1, 3)))
    assert shape == (2,) and idx.numpy().tolist() == [9, 3]
    shape, idx = fj.slice_index(UInt, (3, 4), (-1,))
    assert shape == (4,) and idx.numpy().tolist() == [8, 9, 10, 11]
    with pytest.raises(TypeError, match="unsigned 32 bit"):
        fj.slice_index(Float, (3,), (0,))


def test_slice_of_arrays_vectors_and_pytrees():
    assert fj.slice(Float(1, 2, 3), UInt(2, 0)).numpy().tolist() == [3, 1]
    assert fj.slice(Float(1, 2, 3), 1) == 2.0
    v = fj.slice(Array3f([1, 2], [3, 4], [5, 6]), UInt(1, 1, 0))
    assert type(v) is Array3f and [c.numpy().tolist() for c in v] == [[2, 2, 1], [4, 4, 3], [6, 6, 5]]
    v = fj.slice(Array3f([1, 2], [3, 4], [5, 6]), 1)
    assert type(v) is fj.scalar.Array3f and list(v) == [2, 4, 6]      # Dr.Jit: a drjit.scalar value
    tree = fj.slice({"a": Float(1, 2, 3), "b": 5, "c": (Int(4, 5, 6),)}, UInt(2))
    assert tree["a"].numpy().tolist() == [3] and tree["b"] == 5 and tree["c"][0].numpy().tolist() == [6]


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 5), cols=st.integers(1, 6), k=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_stacking_and_splitting_match_numpy(rows, cols, k, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((2, rows, cols)).astype(np.float32)
    ta, tb = TensorXf(a), TensorXf(b)
    for f in ("hstack", "vstack", "dstack", "column_stack"):
        _check(getattr(fj, f)([ta, tb]), getattr(np, f)([a, b]))
    for axis in (0, 1):
        got = fj.array_split(ta, k, axis=axis)
        want = np.array_split(a, k, axis=axis)
        assert [g.numpy().tolist() for g in got] == [w.tolist() for w in want]
        i = int(rng.integers(0, a.shape[axis]))
        _check(fj.take(ta, i, axis=axis), np.take(a, i, axis=axis))


def _program(x, t):
    return fj.hstack([t, t * 2]), fj.take(t, UInt(1, 0), axis=1), fj.slice(x, UInt(0)), fj.take_interp(t, 0.5, 1)


@pytest.mark.parametrize("width", [1, 7, 1000, 100_003])
def test_stacking_inside_freeze_equals_plain(width):
    frozen = fj.freeze(_program)
    for w in (width, 3, width):
        xv = np.arange(w, dtype=np.float32)
        t = TensorXf(np.arange(2 * w, dtype=np.float32).reshape(w, 2))
        want = _program(Float(xv), t)
        got = frozen(Float(xv), t)
        for g, wv in zip(got, want):
            assert g.numpy().tolist() == wv.numpy().tolist()


def test_take_with_a_size_1_index_array_removes_the_axis():
    # Dr.Jit treats a size-1 index array as a number: take(t, UInt32(1), axis=0) has shape (3,)
    # (was (1, 3)); a longer array replaces the axis
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = TensorXf(a)
    for axis in range(3):
        got = fj.take(t, UInt(1), axis=axis)
        np.testing.assert_array_equal(got.numpy(), np.take(a, 1, axis=axis))
        got = fj.take_interp(t, Float(0.5), axis=axis)
        want = 0.5 * (np.take(a, 0, axis=axis) + np.take(a, 1, axis=axis))
        np.testing.assert_array_equal(got.numpy(), want)
        assert fj.take(t, UInt(1, 0), axis=axis).shape == np.take(a, [1, 0], axis=axis).shape
    frozen = fj.freeze(lambda t, i: fj.take(t, i, axis=1))
    for n in (3, 5, 2):
        b = TensorXf(np.arange(2 * n, dtype=np.float32).reshape(2, n))
        np.testing.assert_array_equal(frozen(b, UInt(n - 1)).numpy(), fj.take(b, UInt(n - 1), axis=1).numpy())
