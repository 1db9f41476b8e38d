"""``v[i, j]`` reads and writes entry ``j`` of component ``i`` of a static or dynamic array (Dr.Jit).

It raised ``TypeError: ArrayXf indices must be integers or slices, not tuple``.
"""
import numpy as np
import pytest

from frostjit import llvm, scalar


@pytest.mark.parametrize("cls", [llvm.ArrayXf, llvm.Array3f, llvm.Array3i])
def test_tuple_index_reads_and_writes_component_entries(cls):
    v = cls([1, 2, 3], [4, 5, 6], [7, 8, 9])
    ref = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    for i, j in [(0, 0), (2, 1), (-1, -1), (1, -3)]:
        assert v[i, j] == ref[i, j]
    v[0, 0] = 8
    v[2, 1] = 9
    v[-1, -1] = 1
    ref[0, 0], ref[2, 1], ref[-1, -1] = 8, 9, 1
    np.testing.assert_array_equal(np.array(v), ref)


def test_tuple_index_of_scalar_matrix():
    m = scalar.Matrix3f(1, 2, 3, 4, 5, 6, 7, 8, 9)
    assert m[1, 2] == 6
    m[1, 2] = 0
    assert m[1, 2] == 0 and m[1][2] == 0


def test_too_many_indices_or_an_ellipsis_raise_type_error():
    v = llvm.ArrayXf([1, 2, 3], [4, 5, 6])
    with pytest.raises(TypeError, match="Item retrieval failed"):
        v[-1, -1, 3]
    with pytest.raises(TypeError):
        v[-1, ...]
