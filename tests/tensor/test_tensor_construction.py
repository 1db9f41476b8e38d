"""Tensor construction, shape and conversion (Dr.Jit's TensorXf API, compared with NumPy)."""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.llvm import Array3f, Float, TensorXb, TensorXf, TensorXf64, TensorXi, TensorXu, UInt32

from tensor_strategies import TENSOR_OF

ALL_TENSORS = sorted({cls for cls in TENSOR_OF.values()}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", ALL_TENSORS, ids=lambda c: c.__name__)
def test_every_element_type_round_trips_through_numpy(cls):
    dtype = cls._array_type._vt.np_dtype
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    t = cls(a)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and len(t) == 2
    assert t.numpy().dtype == dtype
    np.testing.assert_array_equal(t.numpy(), a)
    assert type(t.array) is cls._array_type
    assert fj.tensor_t(cls._array_type) is cls


def test_tensor_type_names_follow_drjit():
    names = {c.__name__ for c in ALL_TENSORS}
    assert names == {"TensorXf", "TensorXf64", "TensorXi", "TensorXu", "TensorXi64", "TensorXu64", "TensorXb"}
    assert llvm.ad.TensorXf is not TensorXf and llvm.ad.TensorXi is TensorXi
    assert fj.tensor_t(llvm.ad.Float) is llvm.ad.TensorXf
    assert fj.tensor_t(Array3f) is TensorXf and fj.tensor_t(TensorXf) is TensorXf and fj.tensor_t(3) is None


def test_construction_forms():
    assert TensorXf().shape == (0,)
    t = TensorXf(2.5)
    assert t.shape == () and t.ndim == 0 and t.item() == 2.5 and float(t) == 2.5
    assert TensorXf(Float(1, 2, 3)).shape == (3,)
    t = TensorXf(Float(1, 2, 3, 4, 5, 6), shape=(2, 3))
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [4, 5, 6]])
    t = TensorXf([[1, 2], [3, 4]])
    assert t.shape == (2, 2) and t.numpy().dtype == np.float32
    t = TensorXf(Array3f([1, 2], [3, 4], [5, 6]))
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4], [5, 6]])
    t = TensorXi(TensorXf(np.array([[1.7, -2.5]], np.float32)))
    np.testing.assert_array_equal(t.numpy(), [[1, -2]])
    assert TensorXf([1, 2, 3, 4], shape=(2, 2)).shape == (2, 2)
    assert TensorXb([True, False]).numpy().tolist() == [True, False]


def test_construction_errors_name_the_problem():
    with pytest.raises(ValueError, match="ragged"):
        TensorXf([[1, 2], [3]])
    with pytest.raises(ValueError, match="cannot give 4 elements the shape"):
        TensorXf(Float(1, 2, 3, 4), shape=(3, 2))
    with pytest.raises(ValueError, match=">= 0"):
        TensorXf(Float(1, 2, 3, 4), shape=(2, -1))
    with pytest.raises(TypeError, match="cannot construct"):
        TensorXf(object())
    with pytest.raises(OverflowError):
        TensorXu(-1)


def test_numpy_dlpack_views_and_copies():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = TensorXf(a)
    v = np.from_dlpack(t)
    assert v.shape == (3, 4)
    np.testing.assert_array_equal(v, a)
    assert np.shares_memory(v, np.from_dlpack(t.array))       # zero-copy
    assert np.shares_memory(t.numpy(), v)                      # .numpy() shares (Dr.Jit's LLVM)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.shares_memory(np.asarray(t, copy=False), v)
    assert not np.shares_memory(np.asarray(t, copy=True), v)
    t2 = TensorXf(v)                                           # a DLPack producer back in
    np.testing.assert_array_equal(t2.numpy(), a)


def test_jax_conversion():
    jnp = pytest.importorskip("jax.numpy")
    t = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    j = t.jax()
    assert j.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(j), t.numpy())
    np.testing.assert_array_equal(TensorXf(jnp.ones((2, 2))).numpy(), np.ones((2, 2)))


def test_torch_conversion_needs_torch():
    t = TensorXf(np.ones((2, 2), np.float32))
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            t.torch()
    else:
        assert tuple(t.torch().shape) == (2, 2)


def test_scalar_conversions_and_truth_value():
    assert int(TensorXi(np.array([[7]], np.int32))) == 7
    assert bool(TensorXb(True)) is True
    with pytest.raises(RuntimeError, match="one element"):
        TensorXf([1, 2]).item()
    with pytest.raises(TypeError, match="ambiguous"):
        bool(TensorXb([True, False]))
    with pytest.raises(TypeError, match="0-dimensional"):
        len(TensorXf(1.0))


def test_array_setter_checks_the_size():
    t = TensorXf(np.zeros((2, 2), np.float32))
    t.array = Float(1, 2, 3, 4)
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="expected 4 elements"):
        t.array = Float(1, 2)


def test_creation_with_shapes():
    np.testing.assert_array_equal(fj.zeros(TensorXf, (2, 3)).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(fj.ones(TensorXi, (2, 2)).numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(fj.full(TensorXf, 2.5, (3, 1)).numpy(), np.full((3, 1), 2.5))
    assert fj.zeros(TensorXf, 3).shape == (3,)
    assert fj.empty(TensorXf64, (2, 0, 4)).shape == (2, 0, 4)
    t = fj.opaque(TensorXf, 7, (2, 2))
    assert t.state == "evaluated"
    np.testing.assert_array_equal(fj.arange(TensorXi, 1, 7, 2).numpy(), [1, 3, 5])
    np.testing.assert_array_equal(fj.linspace(TensorXf, 0, 1, 5).numpy(), np.linspace(0, 1, 5, dtype=np.float32))
    with pytest.raises(ValueError, match=">= 0"):
        fj.zeros(TensorXf, (2, -3))
    with pytest.raises(TypeError, match="ints"):
        fj.zeros(TensorXf, (2, 1.5))


def test_printing_matches_drjit_layout():
    # The layouts below are what drjit 1.5 prints for the same tensors (checked side by side).
    assert str(TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))) == "[[0, 1, 2],\n [3, 4, 5]]"
    assert str(TensorXf(3.0)) == "3"
    assert str(TensorXf(np.arange(30, dtype=np.float32))) == "[0, 1, 2, .. 24 skipped .., 27, 28, 29]"
    assert repr(TensorXf(np.zeros((2, 0, 3), np.float32))) == "[[],\n []]"
    big = str(TensorXf(np.arange(2000, dtype=np.float32).reshape(40, 50)))
    assert big.splitlines()[0] == "[[0, 1, 2, .. 44 skipped .., 47, 48, 49],"
    assert big.splitlines()[3] == " .. 34 skipped ..,"
    three = str(TensorXf(np.arange(8, dtype=np.float32).reshape(2, 2, 2)))
    assert three == "[[[0, 1],\n  [2, 3]],\n [[4, 5],\n  [6, 7]]]"
    assert str(TensorXb(np.array([[True, False]]))) == "[[True, False]]"
    assert str(TensorXf(np.array([[0.1, np.nan, -0.0]], np.float32))) == "[[0.1, nan, -0]]"


def test_tensor_is_a_pytree_for_eval_and_width():
    t = TensorXf(np.ones((3, 4), np.float32)) * 2
    assert t.state == "unevaluated"
    fj.eval({"t": t})
    assert t.state == "evaluated"
    assert fj.width(t) == 12
    assert fj.shape(t) == (3, 4)
    leaves, treedef = fj.tree.flatten([t])
    assert len(leaves) == 1
    u = fj.tree.unflatten(treedef, [leaves[0] + 1])[0]
    assert u.shape == (3, 4) and u.numpy()[0, 0] == 3


def test_ravel_tile_repeat_reverse_follow_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = TensorXf(a)
    np.testing.assert_array_equal(fj.ravel(t).numpy(), a.ravel())
    np.testing.assert_array_equal(fj.tile(t, 2).numpy(), np.tile(a, 2))
    np.testing.assert_array_equal(fj.repeat(t, 2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(fj.reverse(t).numpy(), a[::-1])
    np.testing.assert_array_equal(fj.tile(TensorXf(2.0), 3).numpy(), np.tile(np.float32(2), 3))


def test_gather_and_scatter_reject_tensors_like_drjit():
    t = TensorXf(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="tensors are not supported"):
        fj.gather(TensorXf, t, UInt32(0))
    with pytest.raises(TypeError, match="tensors are not supported"):
        fj.scatter(t, 1.0, UInt32(0))
    fj.scatter(t.array, 5.0, UInt32(3))          # into the flat array: allowed (Dr.Jit too)
    assert t.numpy()[1, 1] == 5


def test_static_vector_operand_is_rejected():
    with pytest.raises(TypeError, match="static vector"):
        TensorXf([1, 2, 3]) + Array3f(1, 2, 3)
