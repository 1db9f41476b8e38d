"""``flip_axes=True`` between static arrays and tensors reverses the axes (Dr.Jit 1.5).

``TensorXf(Array3f of width n, flip_axes=True)`` has shape ``(n, 3)`` (lanes first) and
``Array3f(tensor, flip_axes=True)`` reads it back; the keyword was refused (``TypeError``).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("width", [1, 7, 1000])
def test_flip_axes_round_trip_of_a_vector(width):
    ref = np.random.default_rng(width).random((3, width)).astype(np.float32)
    x = llvm.Array3f(ref)
    t = llvm.TensorXf(x, flip_axes=True)
    assert t.shape == (width, 3)
    np.testing.assert_array_equal(t.numpy(), ref.T)
    assert fj.all(llvm.Array3f(t, flip_axes=True) == x, axis=None)
    assert llvm.TensorXf(x).shape == (3, width)         # without the flag: static sizes first


def test_flip_axes_of_a_nested_array_reverses_every_axis():
    ref = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    m = llvm.Matrix2f(ref)
    t = llvm.TensorXf(m, flip_axes=True)
    np.testing.assert_array_equal(t.numpy(), ref.transpose())
    assert fj.all(llvm.Matrix2f(t, flip_axes=True) == m, axis=None)


def test_flip_axes_on_the_scalar_backend():
    assert scalar.TensorXf(scalar.Array3f(1, 2, 3), flip_axes=True).shape == (3,)
