"""Tensor construction and broadcasting errors as in Dr.Jit 1.5.

Regressions of a side-by-side run: ``TensorXf(array=..., shape=...)`` (Dr.Jit's keyword) was
refused; ``TensorXf(shape=(3, 4))`` without values made an empty tensor; a JIT ``Matrix3f``
raised ``AttributeError`` (its nested components could not be flattened); a wrong number of
entries, a ragged list, incompatible shapes and a static-vector operand raised ``ValueError``/
``TypeError`` alone where Dr.Jit raises ``TypeError``/``RuntimeError``.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("cls", [llvm.TensorXf, llvm.TensorXi, scalar.TensorXf])
def test_array_keyword_and_shape(cls):
    ta = fj.array_t(cls)
    v = cls(array=ta(1, 2, 3, 4, 5, 6, 7, 8), shape=(2, 4))
    assert v.shape == (2, 4) and v.numpy().tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]]
    with pytest.raises(TypeError, match=r"Input array has the wrong number of entries \(got 4, expected 8\)"):
        cls(ta(1, 2, 3, 4), (2, 4))
    with pytest.raises(TypeError, match="Input array must be specified"):
        cls(shape=(3, 4))
    with pytest.raises(TypeError, match="ragged input"):
        cls([[1, 2, 3, 4], [5, 6, 7, 8], 5])


@pytest.mark.parametrize("width", [1, 7])
def test_tensor_of_a_jit_matrix_has_its_static_shape_then_the_width(width):
    rng = np.random.default_rng(width)
    ref = rng.random((3, 3, width)).astype(np.float32)
    m = llvm.Matrix3f(ref)
    t = llvm.TensorXf(m)
    assert t.shape == (3, 3, width)
    np.testing.assert_array_equal(t.numpy(), ref)


def test_ravel_of_a_nested_static_array_in_c_and_fortran_order():
    ref = np.arange(18, dtype=np.float32).reshape(3, 3, 2)
    m = llvm.Matrix3f(ref)
    np.testing.assert_array_equal(fj.ravel(m, order="C").numpy(), ref.ravel(order="C"))
    np.testing.assert_array_equal(fj.ravel(m).numpy(), ref.ravel(order="F"))


@pytest.mark.parametrize("a_shape, b_shape", [((2,), (3,)), ((3, 2), (2, 3)), ((3, 2), (3,))])
def test_incompatible_shapes_raise_runtime_error_naming_them(a_shape, b_shape):
    with pytest.raises(RuntimeError, match=rf"operands have incompatible shapes: {re_tuple(a_shape)} and "
                                           rf"{re_tuple(b_shape)}\."):
        fj.zeros(llvm.TensorXf, a_shape) + fj.zeros(llvm.TensorXf, b_shape)


def test_tensor_and_static_vector_are_incompatible_arguments():
    with pytest.raises(RuntimeError, match="Incompatible arguments"):
        llvm.TensorXf(1) + llvm.Array3f(1, 2, 3)


def re_tuple(shape):
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")
