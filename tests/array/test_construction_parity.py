"""Array constructors take what Dr.Jit's take and refuse what they refuse.

Regressions from a side-by-side run with Dr.Jit 1.5: generators and other iterables were
refused (``Float(x for x in ...)``); ``Float(None, None)`` was ``[nan, nan]`` (NumPy reading
None as NaN) instead of a ``TypeError``; a JIT ``Array3f`` built from a scalar-backend
``Array3f(1, 2, 3)`` broadcast the whole array into every component (a 3x3 result).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("cls", [llvm.Float, llvm.UInt, llvm.ArrayXf, scalar.ArrayXf, llvm.TensorXf])
@pytest.mark.parametrize("width", [1, 7, 1000])
def test_construction_from_a_generator_equals_construction_from_a_list(cls, width):
    from_list = cls(list(range(width)))
    from_generator = cls(x for x in range(width))
    assert type(from_generator) is cls
    np.testing.assert_array_equal(np.array(from_generator), np.array(from_list))


def test_static_array_from_a_generator_and_iterator():
    assert fj.all(llvm.Array3f(x for x in (1, 2, 3)) == llvm.Array3f(1, 2, 3))
    assert fj.all(scalar.Array3f(iter([1, 2, 3])) == scalar.Array3f(1, 2, 3))
    with pytest.raises(TypeError, match=r"Input has the wrong size \(expected 3 elements, got 2\)"):
        llvm.Array3f(x for x in (1, 2))


@pytest.mark.parametrize("args", [(None, None), ([None, None],), ([1.0, "2"],)])
def test_non_numbers_in_a_sequence_are_refused(args):
    with pytest.raises(TypeError, match="Could not construct from sequence"):
        llvm.Float(*args)


@pytest.mark.parametrize("cls, n", [(llvm.Array3f, 3), (scalar.Array3f, 3), (llvm.Matrix2f, 2),
                                    (llvm.Complex2f, 2), (llvm.Quaternion4f, 4)])
def test_wrong_number_of_entries_names_expected_and_got(cls, n):
    msg = rf"Input has the wrong size \(expected {n} elements, got {n + 1}\)"
    with pytest.raises(TypeError, match=msg):
        cls(*([0] * (n + 1)))
    with pytest.raises(TypeError, match=msg):
        cls([0] * (n + 1))


@pytest.mark.parametrize("jit_cls, scalar_cls", [(llvm.Array3f, scalar.Array3f), (llvm.Array3f, scalar.Array3i),
                                                  (llvm.Matrix2f, scalar.Matrix2f), (llvm.ArrayXf, scalar.ArrayXf)])
def test_jit_array_from_a_scalar_backend_array_takes_its_components(jit_cls, scalar_cls):
    v = scalar_cls(*range(1, len(scalar_cls()) + 1)) if scalar_cls is not scalar.ArrayXf else scalar_cls(1, 2)
    out = jit_cls(v)
    np.testing.assert_array_equal(np.array(out).reshape(np.array(v).shape), np.array(v))


def test_numpy_array_of_the_wrong_shape_is_a_type_error_as_in_drjit():
    with pytest.raises(TypeError):
        llvm.Array3f(np.zeros((4, 2), dtype=np.float32))
    with pytest.raises(ValueError):         # (and still the ValueError it was)
        llvm.Array3f(np.zeros((4, 2), dtype=np.float32))
