"""``fj.slice_index`` takes the scalar backend's index types and raises Dr.Jit's classes.

``slice_index(scalar.ArrayXu, ...)`` raised ``TypeError`` (only JIT types were accepted); an
index out of bounds, too many indices and a string index are ``RuntimeError`` in Dr.Jit 1.5
(here also the ``IndexError``/``TypeError`` NumPy raises).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("cls", [scalar.ArrayXu, llvm.UInt])
@pytest.mark.parametrize("shape, indices", [
    ((10,), (5,)), ((10,), (slice(100, 0, -2),)), ((10,), (None, [0, 2, 4], None)), ((10,), ()),
    ((3, 7), ([0], slice(0, 7, 3))), ((3, 7), (slice(None), [2])), ((3, 4, 5), (slice(None), [0], slice(None))),
    ((2, 3, 4, 5), (1, slice(None), 2, slice(None))), ((3, 7), (None, ..., None, 1, None)),
])
def test_slice_index_matches_numpy(cls, shape, indices):
    idx = tuple(cls(k) if isinstance(k, list) else k for k in indices)
    out_shape, index = fj.slice_index(dtype=cls, shape=shape, indices=idx)
    ref = np.arange(int(np.prod(shape))).reshape(shape)[tuple(np.array(k) if isinstance(k, list) else k
                                                             for k in indices)]
    assert out_shape == ref.shape
    np.testing.assert_array_equal(np.array(index).ravel(), ref.ravel())


@pytest.mark.parametrize("cls", [scalar.ArrayXu, llvm.UInt])
def test_slice_index_errors_are_runtime_errors(cls):
    with pytest.raises(RuntimeError, match="index 20 is out of bounds for axis 0 with size 10"):
        fj.slice_index(dtype=cls, shape=(10,), indices=(20,))
    with pytest.raises(RuntimeError, match="too many indices"):
        fj.slice_index(dtype=cls, shape=(10,), indices=(2, 3))
    with pytest.raises(RuntimeError, match='unsupported type "str" in slice'):
        fj.slice_index(dtype=cls, shape=(10,), indices=("foo",))
    with pytest.raises(TypeError):
        fj.slice_index(dtype=int, shape=(1,), indices=(0,))


@pytest.mark.parametrize("cls", [scalar.ArrayXi, llvm.Int, llvm.UInt64, llvm.Float])
def test_slice_index_takes_only_unsigned_32_bit_types(cls):
    # Dr.Jit 1.5 (side by side, session r15): "dtype must be a dynamically sized unsigned 32 bit
    # Dr.Jit array" for Int32 and the scalar ArrayXi too (frostjit took them before r15)
    with pytest.raises(TypeError, match="unsigned 32 bit"):
        fj.slice_index(dtype=cls, shape=(10,), indices=(slice(0, 10, 3),))
