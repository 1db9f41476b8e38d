"""Matrix views: packing into Dr.Jit's CPU layout, slicing, unpacking."""
import numpy as np
import pytest

import frostjit.nn as nn
from frostjit.llvm.ad import TensorXf, Float


def mats():
    A = TensorXf(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = TensorXf(np.arange(3, dtype=np.float32) + 100)
    C = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3) + 50)
    return A, b, C


@pytest.mark.parametrize("layout", ["inference", "training"])
def test_pack_is_tightly_packed_row_major_as_drjit_llvm(layout):
    # Dr.Jit 1.5 (LLVM), measured: offsets 0, 12, 15, a 21-element buffer, vectors row-major.
    A, b, C = mats()
    Av, bv, Cv = nn.pack(A, b, C, layout=layout)
    assert Av.buffer is bv.buffer is Cv.buffer
    assert np.asarray(Av.buffer.numpy()).tolist() == list(range(12)) + [100, 101, 102] + list(range(50, 56))
    assert (Av.offset, Av.stride, Av.shape, Av.size, Av.layout) == (0, 4, (3, 4), 12, layout)
    assert (bv.offset, bv.stride, bv.shape, bv.size, bv.layout) == (12, 1, (3, 1), 3, "row_major")
    assert (Cv.offset, Cv.shape, Cv.layout) == (15, (2, 3), layout)
    np.testing.assert_array_equal(np.asarray(Cv), np.asarray(C.numpy()))
    assert Av.T.transpose and Av.T.shape == (3, 4)


def test_pack_keeps_pytree_structure_and_rejects_bad_layouts():
    A, b, C = mats()
    out = nn.pack([A, {"q": C}])
    assert isinstance(out, list) and isinstance(out[1], dict)
    assert out[1]["q"].offset == 12
    with pytest.raises(ValueError, match="layout"):
        nn.pack(A, layout="row_major")


def test_optimal_layouts_cannot_be_sliced_row_major_views_can():
    A, _, _ = mats()
    with pytest.raises(RuntimeError, match="not permitted"):
        nn.pack(A)[1:, :]
    v = nn.view(A)
    s = v[1:, 1:3]          # Dr.Jit: shape (2, 2), stride 4, offset 5, size 6
    assert (s.shape, s.stride, s.offset, s.size, s.layout) == ((2, 2), 4, 5, 6, "row_major")
    assert (v[1].offset, v[1].shape, v[0:2].size) == (4, (1, 4), 8)
    np.testing.assert_array_equal(np.asarray(s), np.arange(12).reshape(3, 4)[1:, 1:3])
    with pytest.raises(RuntimeError, match="contiguous"):
        v[:, ::2]


def test_pack_of_view_slices_copies_the_blocks():
    A, _, _ = mats()
    v = nn.view(A)
    top, bottom = nn.pack(v[0:1, :], v[1:3, 1:])
    np.testing.assert_array_equal(np.asarray(top), np.arange(4).reshape(1, 4))
    np.testing.assert_array_equal(np.asarray(bottom), np.arange(12).reshape(3, 4)[1:, 1:])
    assert bottom.offset == 4 and bottom.stride == 3


def test_unpack_gives_row_major_views_into_a_new_buffer():
    A, b, _ = mats()
    Av, bv = nn.pack(A, b, layout="training")
    ua, ub = nn.unpack(Av, bv)
    assert ua.layout == ub.layout == "row_major" and ua.buffer is ub.buffer and ua.buffer is not Av.buffer
    assert np.asarray(ua.buffer.numpy()).tolist() == list(range(12)) + [100, 101, 102]


def test_view_of_vectors_and_errors():
    v = nn.view(Float(1, 2, 3))
    assert (v.shape, v.stride, v.layout) == ((3, 1), 1, "row_major")
    with pytest.raises(TypeError, match="tensor or 1-D array"):
        nn.view([1, 2])
