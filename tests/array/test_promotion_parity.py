"""Operand promotion as Dr.Jit 1.5's test_promote exercises it: scalar-backend matrices beside
JIT ones, dynamic arrays of one component broadcasting against static ones (the dynamic
family wins), and the exception classes of unsupported operands."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S


def test_a_jit_matrix_beside_a_scalar_backend_matrix_is_a_jit_matrix():
    r = L.Matrix2f(1) + S.Matrix2f(2)
    assert type(r) is L.Matrix2f and np.asarray(r.numpy())[..., 0].tolist() == [[3, 0], [0, 3]]
    r = L.Matrix2f(1, 2, 3, 4) @ S.Matrix2f(1, 0, 0, 1)
    assert type(r) is L.Matrix2f and np.asarray(r.numpy())[..., 0].tolist() == [[1, 2], [3, 4]]
    assert type(S.Matrix2f(2) * L.Matrix2f(1)) is L.Matrix2f


@pytest.mark.parametrize("make", [lambda: L.Array3f(1, 2, 3) + L.ArrayXf(L.Float(1)),
                                  lambda: L.ArrayXf(L.Float(1)) + L.Array3f(1, 2, 3),
                                  lambda: fj.zeros(S.ArrayXf) + L.Array3f(1, 2, 3) + 1])
def test_a_one_component_dynamic_array_broadcasts_against_a_static_one(make):
    r = make()
    assert type(r) is L.ArrayXf and len(r) == 3
    np.testing.assert_array_equal(np.asarray(r.numpy()).reshape(-1), [2, 3, 4])


def test_static_and_dynamic_arrays_of_one_size_give_the_dynamic_type():
    r = L.Array3f(1, 2, 3) + L.ArrayXf(L.Float(1), L.Float(2), L.Float(3))
    assert type(r) is L.ArrayXf
    with pytest.raises(RuntimeError, match="Incompatible arguments"):
        L.ArrayXf(L.Float(1), L.Float(2)) + L.Array3f(1, 2, 3)


@pytest.mark.parametrize("call", [lambda: S.Array3i(1) + "asdf", lambda: L.Float(1) + "a",
                                  lambda: S.Array3i(1) + 2**100, lambda: L.Array3i(1) + 2**100])
def test_unsupported_operands_are_runtime_errors_as_in_drjit(call):
    with pytest.raises(RuntimeError):
        call()
    with pytest.raises(TypeError):
        call()
