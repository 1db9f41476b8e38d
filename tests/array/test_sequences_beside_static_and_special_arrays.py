"""Python sequences beside static arrays (JIT and scalar backend), complex numbers and in select():
converted to the other operand's type (Dr.Jit), entry k with component k of a static array, a float
entry making the sequence a float array."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S


def values(x):
    return np.asarray(x.numpy()).ravel().tolist()


@settings(max_examples=25)
@given(entries=st.lists(st.integers(-100, 100), min_size=3, max_size=3),
       op=st.sampled_from(["__add__", "__sub__", "__mul__", "__radd__", "__rsub__"]))
def test_a_tuple_operand_of_a_1d_array_is_an_array_of_its_type(entries, op):
    x = L.Float(10, 100, 1000)
    got = getattr(x, op)(tuple(entries))
    expected = getattr(x, op)(L.Float(entries))
    assert type(got) is L.Float and values(got) == values(expected)


@pytest.mark.parametrize("cls", [L.Array3f, S.Array3f])
def test_entry_k_of_a_sequence_goes_with_component_k(cls):
    x = cls(10, 100, 1000)
    for seq in ((1, 2, 3), [1, 2, 3], (fj.value_t(cls)(1), fj.value_t(cls)(2), fj.value_t(cls)(3))):
        assert values(x + seq) == [11, 102, 1003]
        assert values(seq + x) == [11, 102, 1003]
    with pytest.raises(TypeError):
        x + (1, 2)


def test_nested_arrays_line_sequences_up_with_their_outer_dimension():
    m = L.Array22f(L.Array2f(1, 2), L.Array2f(3, 4))
    assert values(m * (10, 100)) == [10, 20, 300, 400]
    assert values(m + ((1, 2), (3, 4))) == [2, 4, 6, 8]


@pytest.mark.parametrize("make", [lambda: L.Int(1, 2, 3), lambda: L.Array3i(1, 2, 3)])
def test_a_float_in_the_sequence_makes_the_result_float(make):
    r = make() + (1.5, 2, 3)
    assert fj.is_float_v(type(r))
    assert values(r) == [2.5, 4, 6]
    r = S.Array3i(1) + (1, 2.5, 3)
    assert type(r) is S.Array3f and values(r) == [2, 3.5, 4]


def test_complex_numbers_take_a_pair_as_real_and_imaginary_parts():
    z = L.Complex2f(1, 2)
    assert (values((z + (1, 2)).real), values((z + (1, 2)).imag)) == ([2], [4])
    p = z * (1, 2)                  # (1 + 2i)^2
    assert (values(p.real), values(p.imag)) == ([-3], [4])


def test_select_converts_a_sequence_to_the_other_branchs_type():
    r = fj.select(L.Bool(True, False), L.Array3f(1, 2, 3), (3, 2, 1))
    assert type(r) is L.Array3f
    assert r.numpy().tolist() == [[1, 3], [2, 2], [3, 1]]
    # two sequences stay a PyTree
    assert fj.select(L.Bool(True), (L.Float(1), 2), (L.Float(5), 2))[1] == 2


def test_a_sequence_is_no_matrix_product_operand():
    with pytest.raises(TypeError, match="unsupported operand"):
        L.Matrix2f(1) @ ((1, 2), (3, 4))
    with pytest.raises(TypeError, match="unsupported operand"):
        [1, 2] @ L.Matrix2f(1)


def test_a_sequence_in_the_middle_of_a_three_operand_op_lines_up_too():
    x = L.Array3f(1, 2, 3)
    assert values(fj.fma(x, (1, 2, 3), x)) == [2, 6, 12]       # was three lanes per component


def test_select_promotes_a_sequence_branch_by_its_numbers():
    r = fj.select(L.Bool(True, False), L.Array3i(1, 2, 3), (1.5, 2, 3))
    assert type(r) is L.Array3f and r.numpy().tolist() == [[1, 1.5], [2, 2], [3, 3]]    # 1.5 was truncated
    r = fj.select(L.Bool(False, True), L.Int(1, 2), [2.5, 7])
    assert type(r) is L.Float and r.numpy().tolist() == [2.5, 2]
