"""``select`` with a Python bool condition and an array operand selects as a mask would.

``fj.select(True, 1, ArrayXf(5, 6))`` is ``ArrayXf(1, 1)`` (Dr.Jit); frostjit returned the
Python int ``1``.  Without an array operand it still returns the chosen value as it is.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("cls", [scalar.ArrayXf, llvm.ArrayXf, llvm.Float, llvm.Array3f, llvm.TensorXf])
@pytest.mark.parametrize("condition", [True, False])
def test_python_condition_broadcasts_the_number_to_the_array_type(cls, condition):
    b = cls([5, 6]) if cls in (llvm.Float, llvm.TensorXf) else cls(5, 6) if cls is not llvm.Array3f else cls(5, 6, 7)
    r = fj.select(condition, 1, b)
    assert type(r) is cls
    expected = np.ones_like(np.array(b)) if condition else np.array(b)
    np.testing.assert_array_equal(np.array(r), expected)


def test_python_condition_without_arrays_returns_the_value():
    assert fj.select(True, "hello", "world") == "hello"
    assert fj.select(False, 1, 2.5) == 2.5


def test_python_condition_promotes_like_a_mask():
    r = fj.select(True, llvm.Int(1, 2), llvm.Float(2.5))
    assert type(r) is llvm.Float and r.numpy().tolist() == [1, 2]
