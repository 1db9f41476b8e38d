"""NumPy-style indexing of tensors, reading and assignment (differential tests against NumPy)."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Int32, TensorXb, TensorXf, TensorXi, UInt32

from tensor_strategies import basic_keys, shapes, tensor, values


def _numpy_or_error(a, key):
    try:
        return a[key], None
    except (IndexError, ValueError) as e:
        return None, e


@given(st.data())
def test_basic_indexing_matches_numpy(data):
    shape = data.draw(shapes(0, 4, 0, 5))
    key = data.draw(basic_keys(shape))
    a = values(shape, np.float32)
    want, err = _numpy_or_error(a, key)
    assume(err is None)
    got = tensor(a)[key]
    assert got.shape == np.shape(want), (shape, key)
    np.testing.assert_array_equal(got.numpy(), want)


@st.composite
def advanced_keys(draw, shape):
    """Keys mixing index arrays (UInt32/Int32 arrays, lists, tensors; negative entries) with
    ints and slices, as NumPy's advanced indexing takes them."""
    items = []
    n_idx = draw(st.integers(1, 3))
    for d in shape:
        kind = draw(st.sampled_from(["array", "slice", "int"]))
        if d == 0:
            kind = "slice"
        if kind == "array":
            n = draw(st.integers(0, 4)) if n_idx else 1
            idx = draw(st.lists(st.integers(-d, d - 1), min_size=n, max_size=n))
            form = draw(st.sampled_from(["uint", "int", "list", "tensor"]))
            if form == "uint":
                items.append((UInt32([i % d for i in idx]), np.array([i % d for i in idx], np.int64)))
            elif form == "int":
                items.append((Int32(idx), np.array(idx, np.int64)))
            elif form == "list":
                items.append((idx, np.array(idx, np.int64)))
            else:
                items.append((TensorXi(np.array(idx, np.int32)), np.array(idx, np.int64)))
        elif kind == "slice":
            s = slice(draw(st.none() | st.integers(-d, d)), None, draw(st.sampled_from([None, 2, -1])))
            items.append((s, s))
        else:
            i = draw(st.integers(-d, d - 1))
            items.append((i, i))
    if not items:
        return (), ()
    return tuple(k for k, _ in items), tuple(k for _, k in items)


@given(st.data())
def test_advanced_indexing_matches_numpy(data):
    shape = data.draw(shapes(1, 3, 1, 4))
    key, np_key = data.draw(advanced_keys(shape))
    a = values(shape, np.int32)
    want, err = _numpy_or_error(a, np_key)
    assume(err is None)
    got = tensor(a)[key]
    assert got.shape == np.shape(want), (shape, np_key)
    np.testing.assert_array_equal(got.numpy(), want)


@given(st.data())
def test_assignment_matches_numpy(data):
    shape = data.draw(shapes(1, 3, 0, 4))
    key = data.draw(basic_keys(shape))
    a = values(shape, np.float32)
    sel, err = _numpy_or_error(a, key)
    assume(err is None)
    sel_shape = np.shape(sel)
    vshape = tuple(1 if data.draw(st.booleans()) else d for d in sel_shape[len(sel_shape) - data.draw(
        st.integers(0, len(sel_shape))):])
    v = values(vshape, np.float32, seed=7) + 100
    want = a.copy()
    want[key] = v
    t = tensor(a)
    t[key] = tensor(v) if vshape else float(v)
    np.testing.assert_array_equal(t.numpy(), want)


@given(st.data())
def test_assignment_through_index_arrays_matches_numpy(data):
    shape = data.draw(shapes(1, 3, 1, 4))
    key, np_key = data.draw(advanced_keys(shape))
    a = values(shape, np.float32)
    sel, err = _numpy_or_error(a, np_key)
    assume(err is None)
    # NumPy writes duplicates in order; frostjit's scatter leaves their winner unspecified
    flat = np.arange(a.size).reshape(a.shape)[np_key]
    assume(len(np.unique(flat)) == flat.size)
    want = a.copy()
    want[np_key] = -1
    t = tensor(a)
    t[key] = -1.0
    np.testing.assert_array_equal(t.numpy(), want)


def test_drjit_examples():
    # The results drjit 1.5 gives for these (side by side), which are NumPy's.
    t = TensorXf(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert t[1, 2, 3].shape == () and t[1, 2, 3].item() == 23          # a 0-d tensor, not a scalar
    np.testing.assert_array_equal(t[UInt32(1, 0), UInt32(2, 0)].numpy(), [[20, 21, 22, 23], [0, 1, 2, 3]])
    np.testing.assert_array_equal(t[:, UInt32(1, 0), UInt32(2, 0)].numpy(), [[6, 0], [18, 12]])
    np.testing.assert_array_equal(t[UInt32(1, 0), :, UInt32(2, 0)].numpy(), [[14, 18, 22], [0, 4, 8]])
    assert t[Int32(-1)].shape == (1, 3, 4)
    assert t[:, None, ::2].shape == (2, 1, 2, 4)
    assert t[10:20].shape == (0, 3, 4)
    assert t[fj.newaxis, ..., fj.newaxis].shape == (1, 2, 3, 4, 1)


def test_index_errors_follow_numpy():
    t = TensorXf(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 2"):
        t[5]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    # A Bool tensor key is Dr.Jit's masked-assignment idiom (t[mask] = v, t[mask] += v): reading
    # t[mask] gives t's value (not NumPy's selected elements, whose count depends on the data).
    assert t[TensorXb(np.ones((2, 3), bool))].numpy().tolist() == t.numpy().tolist()
    with pytest.raises(TypeError, match="unsupported index type"):
        t[1.5]
    with pytest.raises(TypeError, match="integer"):
        t[Float(0)]


def test_out_of_bounds_index_arrays_read_zero_or_raise_in_debug_mode():
    t = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(t[:, UInt32(1, 5)].numpy(), [[1, 0], [4, 0]])
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        with pytest.raises(IndexError, match="index 5 is out of bounds for an axis of size 3"):
            t[:, UInt32(1, 5)]


def test_assignment_writes_only_this_tensor():
    t = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    u = fj.reshape(t, (6,))           # shares the value, not the array object
    v = t
    t[0, 0] = 9
    assert v.numpy()[0, 0] == 9 and u.numpy()[0] == 0
    t[:, 1] = Float(7, 8)
    np.testing.assert_array_equal(t.numpy(), [[9, 7, 2], [3, 8, 5]])
    t[...] = TensorXi(np.array([1, 2, 3], np.int32))        # converted to the tensor's type
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match="cannot assign a value of shape"):
        t[0] = TensorXf(np.ones((2, 3), np.float32))


def test_iteration_and_split_views():
    t = TensorXf(np.arange(6, dtype=np.float32).reshape(3, 2))
    rows = list(t)
    assert len(rows) == 3 and rows[2].numpy().tolist() == [4, 5]


@pytest.mark.parametrize("shape, key", [
    ((1, 1, 1), (np.array([0, 0, 0]), np.array([0]), slice(1, None))),    # a one-element index array
    ((1, 1, 1), (np.array([0]), np.array([0, 0, 0]), slice(1, None))),    # beside an empty slice axis
    ((1, 1, 1), (np.array([0]), np.array([0]), slice(1, None))),           # (hypothesis found them)
    ((1, 1, 1), (np.array([0, 0]), np.array([0]), slice(0, None))),
    ((1, 1), ([0], slice(1, None))),
    ((1, 1), (np.array([0]), slice(1, None))),
])
def test_one_element_index_arrays_beside_an_empty_slice_select_nothing_as_in_numpy(shape, key):
    a = np.zeros(shape, np.float32)
    got = TensorXf(a)[key]
    assert got.shape == a[key].shape
    np.testing.assert_array_equal(got.numpy(), a[key])
