"""Errors a ported Dr.Jit program catches by Dr.Jit's class are also that class.

Each of these derives from the exception frostjit raised before and from Dr.Jit's
(``frostjit.errors``): a missing component is an ``AttributeError`` and a ``RuntimeError``,
static arrays of different sizes a ``TypeError`` and a ``RuntimeError`` ("Incompatible
arguments"), a ``shape=`` that does not fit the type a ``ValueError`` and a ``RuntimeError``.
"""
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("mod", [llvm, scalar])
def test_static_arrays_of_different_sizes_are_incompatible_arguments(mod):
    for exc in (RuntimeError, TypeError):
        with pytest.raises(exc, match="Incompatible arguments"):
            mod.Array3f(1, 2, 3) + mod.Array4f(1, 2, 3, 4)
        with pytest.raises(exc, match="Incompatible arguments"):
            mod.Array3f(1, 2, 3) + mod.Complex2f(1, 2)


def test_dynamic_arrays_of_different_sizes_are_still_a_value_error():
    with pytest.raises(ValueError):
        llvm.ArrayXf(1, 2, 3) + llvm.ArrayXf(1, 2)


@pytest.mark.parametrize("cls", [llvm.Array3f, scalar.Array3f, llvm.Array2i])
def test_missing_component_is_a_runtime_and_attribute_error(cls):
    v = cls(1, 2, 3) if len(cls()) == 3 else cls(1, 2)
    with pytest.raises(RuntimeError, match="does not have a 'w' component"):
        v.w = 4
    with pytest.raises(AttributeError):
        v.w
    assert not hasattr(v, "w") and getattr(v, "w", None) is None


@pytest.mark.parametrize("make", [
    lambda: fj.zeros(llvm.Float, (100, 200)),
    lambda: fj.zeros(llvm.Array3f, (100, 3)),
    lambda: fj.zeros(llvm.Matrix3f, (3, 4, 100)),
    lambda: fj.empty(llvm.Float, [100, 200]),
    lambda: fj.full(llvm.Array3f, 5, (100, 3)),
])
def test_shape_that_does_not_fit_the_type_is_a_runtime_error(make):
    with pytest.raises(RuntimeError, match='the provided "shape" and "dtype" parameters are incompatible'):
        make()
    with pytest.raises(ValueError):
        make()
