"""Reductions as Dr.Jit 1.5's test_reduction exercises them: result types of static vectors'
lane reductions and scans, and the exception classes of refused operands and axes."""
from __future__ import annotations

import pytest

import frostjit as fj
import frostjit.scalar as S
from frostjit.errors import AxisError
from frostjit.llvm import Array1b, Array3b, Array3f, ArrayXf, Bool, Float, TensorXf


def test_lane_reduction_of_a_dynamic_vector_keeps_its_type():
    x = ArrayXf([1, 2, 3], [2, 3, 4], [3, 4, 5])
    r = fj.sum(x, axis=-1)
    assert type(r) is ArrayXf and [v[0] for v in r] == [6, 9, 12]
    assert type(fj.sum(Array3f([1, 2], [3, 4], [5, 6]), axis=1)) is Array3f


def test_scans_and_counts_of_a_dynamic_vector_keep_its_family():
    c = fj.cumsum(ArrayXf([1, 2], [3, 4]))
    assert type(c) is ArrayXf and c[1].numpy().tolist() == [4, 6]
    assert type(fj.prefix_sum(ArrayXf([1, 2], [3, 4]), axis=1)) is ArrayXf


def test_scalar_matrix_rows_reduce_to_an_array():
    r = fj.sum(S.Matrix2f([1, 2], [3, 4]), axis=1)
    assert type(r) is S.Array2f and list(r) == [3, 7]
    r = fj.sum(S.Matrix2f([1, 2], [3, 4]), axis=0)
    assert type(r) is S.Array2f and list(r) == [4, 6]


@pytest.mark.parametrize("value,axis", [(S.Matrix2f([1, 2], [3, 4]), 3), (S.Matrix2f([1, 2], [3, 4]), -3),
                                        (Float(1, 2), 1), (Array3f(1, 2, 3), 2), (TensorXf([[1, 2]]), 5)])
def test_out_of_bounds_axes_are_runtime_errors_as_in_drjit(value, axis):
    with pytest.raises(RuntimeError, match="out-of-bounds axis"):
        fj.sum(value, axis=axis)
    with pytest.raises(AxisError):
        fj.sum(value, axis=axis)


@pytest.mark.parametrize("call", [lambda: fj.sum(Bool(True, True)), lambda: fj.all(Float(1, 0)),
                                  lambda: fj.count(Float(1, 2)), lambda: fj.compress(Float(1)),
                                  lambda: fj.block_sum(Bool(True, False), 2),
                                  lambda: fj.reduce(fj.ReduceOp.And, Float(1, 2))])
def test_refused_operands_are_type_and_runtime_errors(call):
    with pytest.raises(TypeError):
        call()
    with pytest.raises(RuntimeError):
        call()


def test_all_of_a_sequence_with_a_string_names_the_operands_in_its_cause():
    with pytest.raises(RuntimeError) as info:
        fj.all((True, "hello"))
    assert "unsupported operand type(s)" in str(info.value.__cause__)


def test_truth_value_of_a_nested_mask_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="at most 1 dimension"):
        bool(Array1b(Bool(True)))
    with pytest.raises(TypeError):
        bool(Array3b(True, False, True))


@pytest.mark.parametrize("value", [Float(1, 2), Float(), TensorXf([1, 2, 3]), TensorXf([[1], [3]])])
def test_item_of_more_than_one_element_uses_drjits_wording(value):
    with pytest.raises(RuntimeError, match="can only convert arrays of length 1"):
        value.item()
    assert fj.sum(TensorXf([42])).item() == 42 and Float(42).item() == 42
