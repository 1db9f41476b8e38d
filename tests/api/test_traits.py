"""Type traits (frostjit/traits.py) on every registered array class, and a new array family
plugging in by declaring ``__meta__`` (as the type zoo's classes do)."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm as L
import frostjit.llvm.ad as A
from frostjit.array import registry
from frostjit.array.meta import ArrayMeta, Dynamic, meta_of
from frostjit.trace import dtypes
from frostjit.trace.state import JitBackend

CLASSES = sorted({v for m in (L, A) for v in vars(m).values()
                  if isinstance(v, type) and meta_of(v) is not None}, key=lambda c: (c.__module__, c.__name__))


@pytest.mark.parametrize("T", CLASSES, ids=lambda c: f"{c.__module__.split('.', 1)[1]}.{c.__name__}")
def test_traits_are_consistent_for_every_class(T):
    m = T.__meta__
    assert fj.is_array_v(T) and isinstance(T, type) and issubclass(T, fj.ArrayBase)
    assert fj.replace_type_t(T, fj.type_v(T)) is T
    assert fj.detached_t(fj.diff_array_t(T)) is fj.detached_t(T)
    assert fj.is_diff_v(fj.diff_array_t(T)) == m.vt.is_float
    assert fj.type_v(fj.mask_t(T)) is fj.VarType.Bool and fj.depth_v(fj.mask_t(T)) == fj.depth_v(T)
    assert fj.depth_v(T) == len(m.shape) and fj.size_v(T) == (m.shape[0] if m.shape else 0)  # tensors: 0
    assert fj.leaf_t(T).__meta__.shape == (Dynamic,)
    assert fj.is_mask_v(T) + fj.is_integral_v(T) + fj.is_float_v(T) == 1
    assert fj.is_arithmetic_v(T) == (not fj.is_mask_v(T))
    assert fj.itemsize_v(T) == m.vt.itemsize
    if fj.depth_v(T) > 1:
        assert fj.value_t(T).__meta__.shape == m.shape[1:]
    else:
        assert fj.value_t(T) is {"Bool": bool}.get(m.vt.name, float if m.vt.is_float else int)
    # instances answer as their types (a conversion Dr.Jit refuses, e.g. float_array_t(Int8), raises
    # the same error for both)
    x = T()
    for trait in ("is_float_v", "depth_v", "size_v", "type_v", "mask_t", "value_t", "float_array_t"
                  if m.vt is not dtypes.Bool else "uint32_array_t"):
        assert _outcome(getattr(fj, trait), x) == _outcome(getattr(fj, trait), T), trait


def _outcome(trait, arg):
    """``trait(arg)``, or the type of the exception it raises."""
    try:
        return trait(arg)
    except (TypeError, RuntimeError) as e:
        return type(e)


def test_expr_t_is_the_type_of_the_sum():
    for a, b in [(L.Float, L.UInt32), (L.Array3u, L.Float), (L.Int64, L.UInt32), (A.Float, L.Float),
                 (L.Array3f, L.Float64), (L.Bool, 1), (L.UInt32, 2.5)]:
        x = a(1) if a is not L.Bool else a(True)
        y = b(1) if isinstance(b, type) and b is not L.Bool else b
        if a is L.Bool:
            assert fj.expr_t(a, b) is type(L.Int32(x) + y)
        else:
            assert fj.expr_t(a, b) is type(x + y), (a, b)
    with pytest.raises(TypeError, match="incompatible shapes"):
        fj.expr_t(L.Array3f, L.Array2f)
    with pytest.raises(TypeError, match="unsupported argument type str"):
        fj.expr_t(L.Float, "a")


def test_conversions_to_types_frostjit_lacks_raise_runtime_error_naming_them():
    with pytest.raises(RuntimeError, match="Int16"):
        fj.replace_type_t(L.Float, fj.VarType.Int16)
    with pytest.raises(RuntimeError, match=r"shape \(5, \*\)"):
        fj.replace_shape_t(L.Array4f, (5, -1))
    assert fj.tensor_t(L.Float) is L.TensorXf and fj.matrix_t(L.Array3i) is None
    assert fj.matrix_t(L.Array3f) is L.Matrix3f and fj.matrix_t(L.Complex2f) is None
    with pytest.raises(TypeError, match="1-byte float"):
        fj.float_array_t(L.Bool)
    with pytest.raises(TypeError, match="got None"):
        fj.is_float_v(None)
    assert fj.is_array_v(None) is False


def test_precision_limits_are_functions_of_float_types():
    assert fj.epsilon(L.Float) == 2.0 ** -24 and fj.epsilon(L.Array3f64(1)) == 2.0 ** -53
    assert fj.largest(L.Float) == float(np.finfo(np.float32).max)
    assert fj.smallest(L.Float64) == float(np.finfo(np.float64).tiny)
    assert fj.one_minus_epsilon(L.Float) == float(np.nextafter(np.float32(1), np.float32(0)))
    assert fj.recip_overflow(L.Float) == 2.0 ** -128
    with np.errstate(over="ignore"):
        assert np.isinf(np.float32(1) / np.float32(2.0 ** -128)) and np.isfinite(np.float32(1) / np.float32(2.0 ** -127))
    for bad in (L.UInt32, 1.0, "x", None):
        with pytest.raises(TypeError, match="floating-point"):
            fj.epsilon(bad)


def test_a_new_array_family_answers_every_trait_by_declaring_meta():
    """A family plugs in by declaring ``__meta__`` and registering, with no trait changes (as the
    type zoo's classes did); stand-ins of a size frostjit has no types of (5 x 5)."""
    class Matrix5f:
        __meta__ = ArrayMeta(dtypes.Float32, JitBackend.LLVM, is_matrix=True, shape=(5, 5, Dynamic))

    class Array55b:
        __meta__ = ArrayMeta(dtypes.Bool, JitBackend.LLVM, is_vector=True, shape=(5, 5, Dynamic))

    class Array55f:
        __meta__ = ArrayMeta(dtypes.Float32, JitBackend.LLVM, is_vector=True, shape=(5, 5, Dynamic))

    class Array5f:
        __meta__ = ArrayMeta(dtypes.Float32, JitBackend.LLVM, is_vector=True, shape=(5, Dynamic))

    added = [Matrix5f, Array55b, Array55f, Array5f]
    assert all(registry.find_type(cls.__meta__) is None for cls in added)
    try:
        for cls in added:
            registry.register_type(cls)
        assert issubclass(Matrix5f, fj.ArrayBase) and fj.is_matrix_v(Matrix5f) and fj.is_special_v(Matrix5f)
        assert fj.value_t(Matrix5f) is Array5f and fj.leaf_t(Matrix5f) is L.Float
        assert fj.mask_t(Matrix5f) is Array55b and fj.array_t(Matrix5f) is Array55f
        assert fj.matrix_t(Array5f) is Matrix5f and fj.matrix_t(Array55f) is Matrix5f
        assert fj.depth_v(Matrix5f) == 3 and fj.size_v(Matrix5f) == 5 and fj.epsilon(Matrix5f) == 2.0 ** -24
        assert fj.replace_shape_t(Array5f, (5, 5, -1), "matrix") is Matrix5f
        assert str(Matrix5f.__meta__) == ("ArrayMeta[\n  type=float32,\n  backend=llvm,\n  is_jit=1,\n"
                                          "  is_matrix=1,\n  shape=(5, 5, *)\n]")
    finally:
        for cls in added:
            registry._by_meta.pop(cls.__meta__, None)


def test_the_type_zoo_answers_the_traits_from_its_metadata():
    """The matrix, complex, quaternion, nested and dynamic classes declare ``__meta__`` (kind and
    static shape) and are registered by it."""
    assert fj.value_t(L.Matrix3f) is L.Array3f and fj.leaf_t(L.Matrix3f) is L.Float
    assert fj.mask_t(L.Matrix3f) is L.Array33b and fj.array_t(L.Matrix3f) is L.Array33f
    assert fj.matrix_t(L.Array3f) is L.Matrix3f and fj.matrix_t(L.Array33f) is L.Matrix3f
    assert fj.replace_shape_t(L.Array3f, (3, 3, -1), "matrix") is L.Matrix3f
    assert fj.depth_v(L.Matrix34f) == 4 and fj.value_t(L.Matrix34f) is L.Array34f
    assert fj.is_complex_v(L.Complex2f) and fj.value_t(L.Complex2f) is L.Float and fj.array_t(L.Complex2f) is L.Array2f
    assert fj.is_quaternion_v(L.ad.Quaternion4f) and fj.detached_t(L.ad.Quaternion4f) is L.Quaternion4f
    assert fj.size_v(L.ArrayXf) == Dynamic and fj.is_vector_v(L.ArrayXf) and fj.float16_array_t(L.Array3i) is L.Array3f16
