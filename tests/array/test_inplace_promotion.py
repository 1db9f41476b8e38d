"""In-place operators whose result has another type bind the name to the new value (Dr.Jit).

``a += b`` keeps ``a`` the same object when ``a + b`` has ``a``'s type; when it has another
(``Int += 1.5`` is a ``Float``), Dr.Jit returns the new value and leaves the old object as it
was.  frostjit used to convert the result back to ``a``'s type (``Int(1) += 1.5`` gave 2).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("width", [1, 7, 1000])
def test_flat_inplace_add_of_float_to_int_gives_float(width):
    a = llvm.Int(np.arange(width, dtype=np.int32))
    old = a
    a += 1.5
    assert a is not old and type(a) is llvm.Float
    np.testing.assert_array_equal(a.numpy(), np.arange(width) + 1.5)
    np.testing.assert_array_equal(old.numpy(), np.arange(width))     # the old object is untouched


@pytest.mark.parametrize("cls, other, expected", [
    (llvm.Array3i, 1.5, llvm.Array3f),
    (llvm.Array3i, llvm.Float(2.5), llvm.Array3f),
    (scalar.Array3i, 1.5, scalar.Array3f),
    (llvm.ArrayXi, 0.5, llvm.ArrayXf),
])
def test_static_inplace_add_that_promotes_returns_the_promoted_array(cls, other, expected):
    a = cls(1, 2, 3)
    old = a
    a += other
    assert a is not old and type(a) is expected
    np.testing.assert_allclose(np.array(a).ravel(), (np.array([1, 2, 3]) + np.array(other)).ravel())
    assert fj.all(old == cls(1, 2, 3), axis=None)


def test_inplace_of_the_same_type_still_updates_the_object():
    a = llvm.Array3f(1, 2, 3)
    old = a
    a += llvm.Array3i(1)
    assert a is old and fj.all(a == llvm.Array3f(2, 3, 4))


def test_tensor_inplace_add_that_promotes_returns_a_float_tensor():
    a = llvm.TensorXi([1, 2])
    old = a
    a += 1.5
    assert a is not old and type(a) is llvm.TensorXf
    np.testing.assert_array_equal(a.numpy(), [2.5, 3.5])
    np.testing.assert_array_equal(old.numpy(), [1, 2])
