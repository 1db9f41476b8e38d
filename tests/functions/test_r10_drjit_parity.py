"""Dr.Jit 1.5 parity fixes of session r10 (each checked side by side with Dr.Jit in a separate
process, tools/side_by_side.py; the expected values below are Dr.Jit's outputs):

* ``copysign`` of two integer operands is an integer (``abs(a)`` with the sign of ``b``);
* ``count`` of a JIT static array that is not a mask counts its nonzero components, lane by
  lane (NaN not counted), in the value's float type (``UInt32`` for integers);
* ``reshape`` returns another library's array (NumPy, torch) as it is, and converts a NumPy
  array to a tensor type.
Differential tests against NumPy (hypothesis) beside the fixed examples."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import (Array2f, Array3f, Array3i, Array3u, Float, Int, Int64, Matrix2f, TensorXf, TensorXi,
                           UInt)

I32 = st.integers(-2**31, 2**31 - 1)


# -- copysign ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,want_type,want", [
    (Int(1, -2, 3), Int(-1, 1, -5), Int, [-1, 2, -3]),
    (UInt(1, 2), UInt(3, 4), UInt, [1, 2]),
    (Int(1, -2, 3), Int(0, 0, 0), Int, [1, 2, 3]),
    (Int(1, -2, 3), -1, Int, [-1, -2, -3]),
    (-4, Int(1, -2, 3), Int, [4, -4, 4]),
    (Int64(1, -2, 3), Int64(-1, 1, -5), Int64, [-1, 2, -3]),
    (Int(1, -2, 3), Int64(-1, 1, -5), Int64, [-1, 2, -3]),
    (UInt(1, 2, 3), Int(-1, 1, -5), UInt, [1, 2, 3]),
    (Int(1, -2, 3), UInt(1, 1, 5), UInt, [1, 4294967294, 3]),
    (Int(-2**31, 5), Int(1, -1), Int, [-2**31, -5]),
    (Int(1, -2, 3), Float(-1, 1, -5), Float, [-1, 2, -3]),
])
def test_copysign_of_integers_is_an_integer(a, b, want_type, want):
    r = fj.copysign(a, b)
    assert type(r) is want_type and r.numpy().tolist() == want


def test_copysign_of_integer_tensors():
    a = TensorXi(np.array([[1, -2], [3, 4]], dtype=np.int32))
    b = TensorXi(np.array([[-1, 1], [1, -1]], dtype=np.int32))
    r = fj.copysign(a, b)
    assert type(r) is TensorXi and r.numpy().tolist() == [[-1, 2], [3, -4]]


@given(st.lists(st.tuples(I32, I32), min_size=0, max_size=40))
def test_copysign_of_integers_matches_numpy(pairs):
    a = np.array([p[0] for p in pairs], dtype=np.int32)
    b = np.array([p[1] for p in pairs], dtype=np.int32)
    want = np.where(b < 0, -np.abs(a), np.abs(a))          # (int32 wraps: -(-2**31) is -2**31)
    r = fj.copysign(Int(a), Int(b))
    assert type(r) is Int and np.array_equal(r.numpy(), want)


def test_copysign_of_integers_frozen_equals_plain():
    fn = fj.freeze(lambda a, b: fj.copysign(a, b))
    for n in (0, 1, 7, 1000):
        a, b = Int(np.arange(n, dtype=np.int32) - 3), Int(3 - np.arange(n, dtype=np.int32))
        assert np.array_equal(fn(a, b).numpy(), fj.copysign(a, b).numpy())


# -- count ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,axis,want_type,want", [
    (Array3f([1, 0], [0, 0], [2, 3]), ..., Float, [2, 1]),
    (Array3f([5, 0], [0, 0], [2, 3]), 0, Float, [2, 1]),
    (Array3f([-2, 0.5], [float("nan"), -0.0], [0, 3]), ..., Float, [1, 2]),
    (Array3i([5, 0], [0, 0], [2, -3]), ..., UInt, [2, 1]),
    (Array3f([5, 0], [0, 0], [2, 3]), None, Float, [3]),
    (Array2f([0, 0], [0, 7]), ..., Float, [0, 1]),
    (Matrix2f(1, 0, 0, 2), ..., Array2f, [[1, 1]]),
])
def test_count_of_a_static_array_counts_nonzeros(value, axis, want_type, want):
    r = fj.count(value, axis=axis)
    assert type(r) is want_type
    assert np.asarray(r.numpy()).reshape(-1).tolist() == np.asarray(want, dtype=np.float64).reshape(-1).tolist()


def test_count_of_a_flat_array_or_another_axis_still_needs_a_mask():
    # (Dr.Jit 1.5 raises for these too)
    with pytest.raises(TypeError):
        fj.count(Float(1, 0, 2))
    with pytest.raises(TypeError):
        fj.count(Array3f([1, 0], [0, 0], [2, 3]), axis=1)


@given(st.lists(st.tuples(*[st.sampled_from([0.0, -0.0, 1.5, -2.0, float("nan"), float("inf")])] * 3),
                min_size=0, max_size=30))
def test_count_of_a_static_array_matches_numpy(rows):
    comps = np.array(rows, dtype=np.float32).reshape(-1, 3).T
    want = np.sum((comps > 0) | (comps < 0), axis=0)
    r = fj.count(Array3f(*[Float(c) for c in comps]))
    assert type(r) is Float and r.numpy().tolist() == want.astype(np.float32).tolist()
    ints = [((c > 0) | (c < 0)).astype(np.uint32) * 7 for c in comps]       # an integer array: != 0
    u = fj.count(Array3u(*[UInt(c) for c in ints]))
    assert type(u) is UInt and u.numpy().tolist() == want.tolist()


# -- reshape ----------------------------------------------------------------------------------------
def test_reshape_returns_a_numpy_array_as_it_is():
    a = np.arange(6, dtype=np.float32)
    assert fj.reshape(np.ndarray, a, (2, 3)) is a
    assert fj.reshape(np.ndarray, a, (4, 2)) is a           # whatever the shape (Dr.Jit)
    assert fj.reshape(a, (3, 2)) is a
    assert fj.reshape(int, 5, (2,)) == 5
    with pytest.raises(RuntimeError):                       # a bad order is checked
        fj.reshape(np.ndarray, a, (3, 2), order="Q")
    with pytest.raises(RuntimeError):                       # dtype and the value's type disagree
        fj.reshape(np.ndarray, 5.0, (3, 2))
    with pytest.raises(RuntimeError):
        fj.reshape(np.ndarray, np.ma.masked_array(np.arange(6.0)), (3, 2))


def test_reshape_converts_a_numpy_array_to_a_tensor_type():
    a = np.arange(6, dtype=np.float32)
    t = fj.reshape(TensorXf, a, (3, 2))
    assert type(t) is TensorXf and t.shape == (3, 2) and t.numpy().tolist() == a.reshape(3, 2).tolist()


def test_reshape_returns_a_torch_tensor_as_it_is():
    torch = pytest.importorskip("torch")
    a = torch.arange(6.0)
    assert fj.reshape(a, (3, 2)) is a
    assert fj.reshape(torch.Tensor, a, (3, 2)) is a
