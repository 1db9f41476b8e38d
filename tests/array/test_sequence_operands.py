"""A list or tuple operand of an arithmetic operator is converted to the array type (Dr.Jit).

``Float + (1, 2)``, ``(1, 2, 3) + Array3f`` and ``Array3i + [1, 2.5, 3]`` (an ``Array3f``) used
to raise ``TypeError: unsupported operand type tuple``.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm, scalar

finite = st.floats(-1e3, 1e3, allow_nan=False, width=32)


@given(st.lists(finite, min_size=1, max_size=20), st.data())
def test_flat_plus_sequence_matches_numpy(xs, data):
    ys = data.draw(st.lists(finite, min_size=len(xs), max_size=len(xs)))
    a = llvm.Float(xs)
    expected = np.float32(xs) + np.float32(ys)
    np.testing.assert_array_equal((a + ys).numpy(), expected)
    np.testing.assert_array_equal((tuple(ys) + a).numpy(), expected)


@pytest.mark.parametrize("cls", [llvm.Array3f, llvm.Array3u, llvm.ArrayXf, scalar.Array3f, scalar.Array3i])
def test_static_array_with_list_and_tuple_operands(cls):
    a = cls(1, 2, 3)
    assert fj.all(a + (1, 2, 3) == cls(2, 4, 6), axis=None)
    assert fj.all([1, 2, 3] + a == cls(2, 4, 6), axis=None)
    assert fj.all(a * [1, 2, 3] == cls(1, 4, 9), axis=None)
    assert fj.all(a == [1, 2, 3], axis=None)


def test_python_float_in_a_sequence_promotes_an_integer_array():
    r = llvm.Array3i(1, 2, 3) + [1, 2.5, 3]
    assert type(r) is llvm.Array3f and fj.all(r == llvm.Array3f(2, 4.5, 6), axis=None)
    r = llvm.Int(1, 2) + [0.5, 1]
    assert type(r) is llvm.Float and r.numpy().tolist() == [1.5, 3]


def test_sequence_of_arrays_as_static_array_operand():
    f = llvm.Float(1.5, 2.5)
    r = llvm.Array2f(1, 2) + (f, 2)
    np.testing.assert_array_equal(r.numpy(), [[2.5, 3.5], [4, 4]])


def test_sequence_of_the_wrong_length_raises():
    with pytest.raises(TypeError):
        llvm.Array3f(1, 2, 3) + (1, 2)
    with pytest.raises(ValueError):
        llvm.Float(1, 2) + [1, 2, 3]
