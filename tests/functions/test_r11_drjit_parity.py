"""Dr.Jit 1.5 parity fixes of session r11 (each checked side by side with Dr.Jit in a separate
process, tools/side_by_side.py; the expected values below are Dr.Jit's outputs):

* ``count`` of a tensor that is not a mask, along given axes: its nonzero entries (NaN not
  counted), ``TensorXf`` for a float tensor (the value's own type), ``TensorXu`` for 8/32-bit
  integers, the value's own type for 64-bit integers (also for static arrays: ``Array3i64``
  counts are ``Int64``);
* ``str(KernelType.JIT)`` is ``"KernelType.JIT"`` (it stays equal to ``"jit"``).
Differential tests against NumPy (hypothesis) beside the fixed examples."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import (Array3f, Array3i, Float, Int, Int64, TensorXb, TensorXf, TensorXf64, TensorXi,
                           TensorXi64, TensorXu, TensorXu64, UInt, UInt64)
from frostjit.llvm import Array3i64, Array3u64

M = np.array([[1, 0, 2], [0, 0, 3]])


@pytest.mark.parametrize("tensor,dtype,axis,want_type,want", [
    (TensorXf, np.float32, 0, TensorXf, [1, 0, 2]),
    (TensorXf, np.float32, 1, TensorXf, [2, 1]),
    (TensorXf, np.float32, -1, TensorXf, [2, 1]),
    (TensorXf64, np.float64, 0, TensorXf64, [1, 0, 2]),
    (TensorXi, np.int32, 0, TensorXu, [1, 0, 2]),
    (TensorXi64, np.int64, 1, TensorXi64, [2, 1]),
    (TensorXu64, np.uint64, 1, TensorXu64, [2, 1]),
])
def test_count_of_a_tensor_along_an_axis(tensor, dtype, axis, want_type, want):
    r = fj.count(tensor(M.astype(dtype)), axis=axis)
    assert type(r) is want_type and r.numpy().tolist() == want


def test_count_of_a_float_tensor_skips_nan_and_signed_zero():
    t = TensorXf(np.array([[np.nan, 0, 2], [0, -0.0, 3]], dtype=np.float32))
    assert fj.count(t, axis=0).numpy().tolist() == [0, 0, 2]
    t = TensorXf(np.array([[np.inf, 0, -np.inf], [0, -0.0, 3]], dtype=np.float32))
    assert fj.count(t, axis=1).numpy().tolist() == [2, 1]


def test_count_of_a_tensor_over_several_axes_and_keepdims():
    t = TensorXf(np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 3)
    r = fj.count(t, axis=0)
    assert r.shape == (3, 4) and r.numpy().tolist() == [[0, 2, 2, 0], [2, 2, 0, 2], [2, 0, 2, 2]]
    r = fj.count(t, axis=(0, 1))
    assert type(r) is TensorXf and r.numpy().tolist() == [4, 4, 4, 4]
    r = fj.count(TensorXf(M.astype(np.float32)), axis=0, keepdims=True)
    assert r.shape == (1, 3) and r.numpy().tolist() == [[1, 0, 2]]


def test_count_of_a_non_mask_tensor_over_every_axis_raises():
    t = TensorXf(M.astype(np.float32))
    for kw in ({}, {"axis": None}):
        with pytest.raises(RuntimeError):   # (Dr.Jit: "failed"; frostjit: ReductionTypeError, also a TypeError)
            fj.count(t, **kw)


def test_count_of_a_mask_tensor_is_unchanged():
    t = TensorXb(M.astype(bool))
    r = fj.count(t, axis=0)
    assert type(r) is TensorXu and r.numpy().tolist() == [1, 0, 2]


@pytest.mark.parametrize("value,want_type,want", [
    (lambda: Array3i64(Int64(1, 0), Int64(0, 0), Int64(2, 3)), Int64, [2, 1]),
    (lambda: Array3u64(UInt64(1, 0), UInt64(0, 0), UInt64(2, 3)), UInt64, [2, 1]),
    (lambda: Array3i(Int(1, 0), Int(0, 0), Int(2, 3)), UInt, [2, 1]),
    (lambda: Array3f(Float(1, 0), Float(0, 0), Float(2, 3)), Float, [2, 1]),
])
def test_count_of_a_static_array_in_dr_jits_types(value, want_type, want):
    r = fj.count(value())
    assert type(r) is want_type and r.numpy().tolist() == want


ROWS = st.integers(0, 5)
COLS = st.integers(1, 5)
ENTRY = st.sampled_from([0.0, -0.0, 1.0, -2.5, float("nan"), float("inf")])


@given(st.data(), ROWS, COLS, st.sampled_from([0, 1, -1, (0, 1)]), st.booleans())
def test_count_of_a_float_tensor_matches_numpy(data, rows, cols, axis, keepdims):
    a = np.array(data.draw(st.lists(ENTRY, min_size=rows * cols, max_size=rows * cols)),
                 dtype=np.float32).reshape(rows, cols)
    if rows == 0 and axis != 1 and axis != -1:
        return      # (Dr.Jit raises for an empty reduced axis; frostjit counts zero: docs/types.md)
    want = np.sum((a > 0) | (a < 0), axis=axis, keepdims=keepdims).astype(np.float32)
    r = fj.count(TensorXf(a), axis=axis, keepdims=keepdims)
    assert type(r) is TensorXf and r.shape == want.shape and np.array_equal(r.numpy(), want)


@given(st.data(), st.integers(1, 5), COLS, st.sampled_from([0, 1]))
def test_count_of_an_integer_tensor_matches_numpy(data, rows, cols, axis):
    a = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=rows * cols, max_size=rows * cols)),
                 dtype=np.int32).reshape(rows, cols)
    r = fj.count(TensorXi(a), axis=axis)
    assert type(r) is TensorXu and np.array_equal(r.numpy(), np.sum(a != 0, axis=axis))


def test_count_of_a_tensor_frozen_equals_plain():
    fn = fj.freeze(lambda t: fj.count(t, axis=0))
    for rows in (1, 2, 7, 3):
        t = TensorXf((np.arange(rows * 3, dtype=np.float32) % 3).reshape(rows, 3))
        assert np.array_equal(fn(t).numpy(), fj.count(t, axis=0).numpy())


def test_kernel_type_str_is_dr_jits():
    k = fj.KernelType.JIT
    assert str(k) == repr(k) == f"{k}" == "KernelType.JIT"
    assert k == "jit" and fj.KernelType("jit") is k
