"""Memory operations as Dr.Jit 1.5's test_memop exercises them: ravel/unravel orders and
identities, nested unravel, packet gathers into ArrayXf, PyTree scatters of Python
sequences, slice, reshape keywords and errors, block reductions, fj.detail helpers."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.scalar as S
from frostjit.llvm import (Array2f, Array3f, Array3i, Array22f, ArrayXf, Bool, Float, Int32, Matrix2f,
                           TensorXf, UInt32)


def rows(v):
    return np.asarray(v.numpy()).tolist()


# -- ravel / unravel ---------------------------------------------------------------------------

def test_ravel_returns_flat_arrays_and_numbers_themselves():
    x = Float(1, 2, 3)
    assert fj.ravel(x) is x and fj.unravel(Float, x) is x
    assert fj.ravel(1.5, order="F") == 1.5 and type(fj.ravel(1.5)) is float
    v = S.ArrayXf(1, 2, 3)
    assert fj.ravel(v) is v


def test_scalar_nested_arrays_ravel_in_fortran_order_by_default():
    m = S.Array22f([1, 2], [3, 4])
    assert list(fj.ravel(m, order="C")) == [1, 2, 3, 4]
    assert list(fj.ravel(m, order="F")) == [1, 3, 2, 4] == list(fj.ravel(m))
    back = fj.unravel(S.Array22f, S.ArrayXf(1, 3, 2, 4), order="F")
    assert [list(r) for r in back] == [[1, 2], [3, 4]]
    assert list(fj.unravel(dtype=S.Array3f, array=S.ArrayXf(1, 2, 3), order="C")) == [1, 2, 3]


@pytest.mark.parametrize("dtype", [Matrix2f, Array22f])
@given(w=st.sampled_from([1, 7, 1000]), order=st.sampled_from(["A", "C", "F"]))
def test_nested_unravel_inverts_ravel(dtype, w, order):
    a = np.arange(4 * w, dtype=np.float32).reshape(2, 2, w)
    v = dtype(a)
    flat = fj.ravel(v, order=order)
    back = fj.unravel(dtype, flat, order=order)
    assert type(back) is dtype and fj.width(back) == w
    np.testing.assert_array_equal(back.numpy(), a)
    # C: entry (i, j) of lane l at (2i + j) w + l; F: at 4 l + i + 2 j (the first index fastest)
    want = a.reshape(-1) if order == "C" else a.transpose(2, 1, 0).reshape(-1)
    np.testing.assert_array_equal(flat.numpy(), want)


def test_nested_unravel_matches_drjit():
    # Dr.Jit 1.5: unravel(Matrix2f, Float(1, 2, 3, 4)) == [[1, 3], [2, 4]] (one lane)
    m = fj.unravel(Matrix2f, Float(1, 2, 3, 4))
    assert fj.width(m) == 1 and rows(m)[0][0][0] == 1 and [[r[0] for r in c] for c in rows(m)] == [[1, 3], [2, 4]]
    # another element type is converted
    assert type(fj.unravel(Array3f, Int32(1, 2, 3))) is Array3f


@pytest.mark.parametrize("call, error, match", [
    (lambda: fj.ravel(Array3f(), order="Q"), RuntimeError, "order parameter must equal"),
    (lambda: fj.ravel(Array3f([1, 2], [3, 4], [5, 6, 7])), RuntimeError, "ragged"),
    (lambda: fj.ravel(TensorXf([[1, 2]]), order="F"), RuntimeError, "F-style"),
    (lambda: fj.unravel(Array3f, Array3f(), order="C"), TypeError, "expected array of type"),
    (lambda: fj.unravel(Array3f, Float(), order="Q"), RuntimeError, "order parameter must equal"),
    (lambda: fj.unravel(Array3f, Float(1, 2, 3, 4)), RuntimeError, "not divisible"),
    (lambda: fj.unravel(ArrayXf, Float(1, 2, 3, 4)), TypeError, "only the last dimension"),
])
def test_ravel_unravel_errors_are_drjits_classes(call, error, match):
    with pytest.raises(error, match=match):
        call()
    with pytest.raises(ValueError if error is RuntimeError else TypeError):
        call()


# -- gather / scatter ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_packet_gather_into_arrayxf_reads_n_consecutive_elements(n):
    src = np.arange(64 * n, dtype=np.float32)
    i = np.array([3, 1, 0, 63], np.uint32)
    active = i != 1
    g = fj.gather(ArrayXf, Float(src), UInt32(i), Bool(active), shape=(n, 4))
    assert type(g) is ArrayXf and len(g) == n
    for k in range(n):
        np.testing.assert_array_equal(g[k].numpy(), np.where(active, src[i * n + k], 0))


def test_packet_gather_errors_are_runtime_errors():
    with pytest.raises(RuntimeError, match="incorrect dimension"):
        fj.gather(ArrayXf, Float(1, 2), UInt32(0), shape=(2,))
    with pytest.raises(RuntimeError, match="dynamic size"):
        fj.gather(ArrayXf, Float(1, 2), UInt32(0))
    with pytest.raises(TypeError, match="unsupported dtype"):
        fj.gather(str, Float(1, 2), UInt32(0))


def test_gather_of_an_arrayxf_source_gathers_every_component():
    v = ArrayXf(fj.arange(Float, 10), fj.arange(Float, 10) + 10)
    g = fj.gather(ArrayXf, v, UInt32(0, 5, 3), Bool(True, False, True))
    assert type(g) is ArrayXf and rows(g) == [[0, 0, 3], [10, 0, 13]]


def test_scatter_into_a_pytree_converts_python_sequences():
    x, y = fj.zeros(Float, 4), fj.zeros(Float, 4)
    fj.scatter((x, y), (1, [2, 3]), [1, 3])
    assert rows(x) == [0, 1, 0, 1] and rows(y) == [0, 2, 0, 3]

    @dataclass
    class Box:
        a: Float
    b = Box(fj.zeros(Float, 4))
    fj.scatter(b, Box(Float(1, 2)), (1, 0), (True, False))
    assert rows(b.a) == [0, 1, 0, 0]
    t = fj.zeros(Int32, 3)
    fj.scatter(t, [7, 8], UInt32(2, 0))
    assert rows(t) == [8, 0, 7]


# -- slice ----------------------------------------------------------------------------------------

def test_slice_by_int_gives_python_and_scalar_backend_values():
    assert fj.slice([Int32(1, 2, 3), Int32(3, 4, 5)], 2) == [3, 5]
    v = fj.slice(Array3i([1, 2], [3, 4], [5]), 1)
    assert type(v) is S.Array3i and list(v) == [2, 4, 5]
    assert fj.slice({"a": Float(1, 2)}, 1) == {"a": 2.0}


def test_slice_by_sequence_gathers_and_broadcasts_width_one_components():
    assert rows(fj.slice(Int32(1, 2, 3), [1, 2])) == [2, 3]
    v = fj.slice(Array3i([1, 2], [3, 4], [5]), [1, 0])
    assert type(v) is Array3i and rows(v) == [[2, 1], [4, 3], [5, 5]]


# -- reshape -------------------------------------------------------------------------------------

def test_reshape_takes_drjits_keywords_and_pytree_dtypes():
    value = fj.arange(TensorXf, 6)
    assert fj.reshape(dtype=TensorXf, value=value, shape=(3, -1)).shape == (3, 2)
    out = fj.reshape(dtype=dict, value={"a": (value,)}, shape=(3, -1))
    assert type(out) is dict and out["a"][0].shape == (3, 2)
    v = Array2f([1, 2, 3], [4, 5, 6])
    assert rows(fj.reshape(dtype=Array3f, value=v, shape=(3, -1), order="C")) == [[1, 2], [3, 4], [5, 6]]
    assert rows(fj.reshape(dtype=Array3f, value=v, shape=(3, -1), order="F")) == [[1, 5], [4, 3], [2, 6]]


def test_reshape_shrinks_each_component_of_a_vector():
    v = Array2f(fj.arange(Float, 10), fj.arange(Float, 10))
    s = fj.reshape(Array2f, v, 5, shrink=True)
    assert type(s) is Array2f and rows(s) == [[0, 1, 2, 3, 4]] * 2


@pytest.mark.parametrize("dtype", [TensorXf, Array3f])
@pytest.mark.parametrize("shape, match", [((-1, -1), "only a single 'shape' entry may be equal to -1"),
                                          ((4, -1), "cannot infer a compatible shape"),
                                          ((4, 5), r"mismatched array sizes \(input: 6, target: 20\)")])
def test_reshape_errors_are_runtime_errors_with_drjits_wording(dtype, shape, match):
    value = fj.arange(TensorXf, 6) if dtype is TensorXf else Array2f([1, 2, 3], [4, 5, 6])
    with pytest.raises(RuntimeError, match=match):
        fj.reshape(dtype=dtype, value=value, shape=shape)


# -- block reductions and detail ----------------------------------------------------------------

def test_detail_reduce_identity_and_can_scatter_reduce():
    ops = [fj.ReduceOp.Add, fj.ReduceOp.Mul, fj.ReduceOp.Min, fj.ReduceOp.Max, fj.ReduceOp.And, fj.ReduceOp.Or]
    assert [rows(fj.detail.reduce_identity(UInt32, op)) for op in ops] == \
        [[0], [1], [4294967295], [0], [4294967295], [0]]
    assert rows(fj.detail.reduce_identity(Float, fj.ReduceOp.Min, 3)) == [np.inf] * 3
    assert fj.detail.can_scatter_reduce(UInt32, fj.ReduceOp.And)
    assert not fj.detail.can_scatter_reduce(Float, fj.ReduceOp.Or)
    assert not fj.detail.can_scatter_reduce(Bool, fj.ReduceOp.Add)
    for op in ops[:4] + ([ops[4], ops[5]]):
        buf = fj.detail.reduce_identity(UInt32, op, 4)
        fj.scatter_reduce(op, buf, UInt32(5, 7, 3, 9, 11), UInt32(0, 0, 1, 3, 3))
        assert fj.width(buf) == 4


# -- Python sequences as index and mask --------------------------------------------------------

def test_a_list_index_works_where_the_index_is_scaled():
    x = Float(0, 1, 2, 3, 4, 5)
    g = fj.gather(Array3f, x, index=[1, 0])
    assert type(g) is Array3f and rows(g) == [[3, 0], [4, 1], [5, 2]]
    t = fj.zeros(Float, 6)
    fj.scatter(t, Array3f(1, 2, 3), [1])
    assert rows(t) == [0, 0, 0, 1, 2, 3]
    t = fj.zeros(Float, 6)
    fj.scatter_add(t, Array3f(1, 2, 3), (0, 1))
    assert rows(t) == [1, 2, 3, 1, 2, 3]


@pytest.mark.parametrize("op", ["exch", "cas", "inc"])
def test_atomics_honour_a_list_mask(op):
    # Dr.Jit 1.5: scatter_exch(UInt32(1, 2, 3), UInt32(7, 8), UInt32(0, 2), [True, False])
    # returns [1, 0] and leaves [7, 2, 3] (the list mask was read as all-true before)
    t = UInt32(1, 2, 3)
    if op == "exch":
        old = fj.scatter_exch(t, UInt32(7, 8), UInt32(0, 2), [True, False])
    elif op == "cas":
        old, _ = fj.scatter_cas(t, UInt32(1, 3), UInt32(7, 8), UInt32(0, 2), [True, False])
    else:
        old = fj.scatter_inc(t, UInt32(0, 2), [True, False])
    assert rows(old) == [1, 0]
    assert rows(t) == [7 if op != "inc" else 2, 2, 3]
    with pytest.raises(TypeError, match="'active'"):
        fj.scatter_inc(t, UInt32(0), "yes")
