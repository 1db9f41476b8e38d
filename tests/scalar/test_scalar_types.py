"""frostjit.scalar's names and types: Dr.Jit's drjit.scalar over Python numbers."""
from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as s
from frostjit.errors import ConversionOverflowError

NAMES = json.loads((Path(__file__).resolve().parents[2] / "tools" / "data" / "drjit_1_5_names.json")
                   .read_text())["modules"]["drjit.scalar"]
#: Dr.Jit's scalar names frostjit does not have yet (docs/types.md says why).
GAPS = ()


_GAP = pytest.mark.xfail(strict=True, reason="not built yet (docs/types.md)")


@pytest.mark.parametrize("name", [pytest.param(n, marks=_GAP) if any(fnmatch.fnmatchcase(n, p) for p in GAPS)
                                  else n for n in sorted(NAMES)])
def test_drjit_scalar_name_exists(name):
    assert hasattr(s, name)


def test_one_d_types_are_python_numbers():
    # Dr.Jit: drjit.scalar.Float is float, Int/UInt (every width) int, Bool bool.
    assert s.Float is s.Float16 is s.Float32 is s.Float64 is float
    for name in ("Int", "UInt", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64"):
        assert getattr(s, name) is int
    assert s.Bool is bool


@pytest.mark.parametrize("name, vt", [("Array3f", np.float32), ("Array3f16", np.float16), ("Array3f64", np.float64)])
def test_components_are_python_floats_rounded_to_the_element_type(name, vt):
    v = getattr(s, name)(1 / 3)
    assert type(v[0]) is float and type(v.x) is float and all(type(c) is float for c in v)
    assert v[0] == float(vt(np.float32(1 / 3)) if vt is np.float16 else vt(1 / 3))


def test_arithmetic_rounds_to_float32_per_operation():
    a = s.Array3f(1 / 3)
    assert (a * 3)[0] == 1.0                       # float32 product; in double: 1.0000000298...
    assert fj.dot(a, s.Array3f(3)) == 3.000000089406967   # dot: Python arithmetic on components (Dr.Jit)
    assert (s.Array2f16(1 / 3) * 3)[0] == 1.0


def test_integers_wrap_and_constructors_check_the_range():
    assert list(s.Array2i(2**31 - 1) + 1) == [-2**31] * 2
    assert list(s.Array2u8(250) + 10) == [4, 4]
    assert list(s.Array3i8(s.Array3i(200, 2, 3))) == [-56, 2, 3]    # a conversion wraps, as a cast
    with pytest.raises(ConversionOverflowError):
        s.Array3i8(300)
    with pytest.raises(ConversionOverflowError):
        s.Array2u8(1) + 300


def test_shape_meta_and_traits():
    assert s.Array3f(1, 2, 3).shape == (3,) and s.Array33f(1).shape == (3, 3)
    assert s.Matrix34f.__meta__.shape == (3, 3, 4)
    assert str(s.Array3f.__meta__) == "ArrayMeta[\n  type=float32,\n  is_vector=1,\n  shape=(3)\n]"
    assert fj.value_t(s.Array3f) is float and fj.value_t(s.Array33f) is s.Array3f
    assert fj.mask_t(s.Matrix2f) is s.Array22b and fj.float_array_t(s.Array3i) is s.Array3f
    assert not fj.is_jit_v(s.Array3f) and fj.backend_v(s.Array3f) is fj.JitBackend.Invalid
    assert fj.depth_v(s.Array3f) == 1 and fj.depth_v(s.Matrix2f) == 2 and fj.size_v(s.ArrayXf) == -1
    assert fj.width(s.Array3f(1, 2, 3)) == 3 and fj.shape(1.0) == ()


def test_functions_on_scalar_values_return_python_numbers():
    v = s.Array3f(3, 4, 0)
    for r in (fj.norm(v), fj.sum(v), fj.squared_norm(v), fj.max(v), fj.dot(v, v), fj.det(s.Matrix2f(1, 2, 3, 4))):
        assert type(r) is float
    assert fj.all(s.Array3b(True, True, True)) is True and fj.count(s.Array3b(True, False, True)) == 2
    assert type(fj.sqrt(2.0)) is float


def test_scalar_arrays_meeting_jit_arrays_become_jit_arrays():
    # Dr.Jit 1.5 promotes to the JIT backend; a scalar array converts entry by entry, like a
    # Python sequence (so it lines up with the outer dimension of a deeper JIT array)
    r = s.Array3i(1, 2, 3) + L.Float(1)
    assert type(r) is L.Array3f and r.numpy().ravel().tolist() == [2, 3, 4]
    r = L.Float(2) * s.Array3f(1, 2, 3)
    assert type(r) is L.Array3f and r.numpy().ravel().tolist() == [2, 4, 6]
    r = L.Array22f(L.Array2f(1, 2), L.Array2f(3, 4)) * s.Array2f(10, 100)
    assert type(r) is L.Array22f and r.numpy().ravel().tolist() == [10, 20, 300, 400]
    r = s.Complex2f(1, 2) + L.Float(1)
    assert type(r) is L.Complex2f and (r.real.numpy().tolist(), r.imag.numpy().tolist()) == ([2], [2])
    assert type(s.Complex2f64(0) + L.Complex2f(0)) is L.Complex2f64
    assert (s.Matrix2f(1) + L.Float(1)).numpy().ravel().tolist() == [2, 0, 0, 2]
    with pytest.raises(TypeError, match="backend"):
        s.Array3f(L.Float(1, 2))


@pytest.mark.parametrize("name", ["Array3f", "Array3i", "Matrix2f", "Complex2f", "Quaternion4f", "Array22f"])
def test_jit_arrays_built_from_scalar_arrays_keep_every_entry(name):
    value = getattr(s, name)(*range(1, 1 + {"Array3f": 3, "Array3i": 3, "Matrix2f": 4, "Complex2f": 2,
                                             "Quaternion4f": 4, "Array22f": 2}[name]))
    converted = getattr(L, name)(value)
    assert converted.numpy().ravel().tolist() == value.numpy().ravel().tolist()


def test_creation_ignores_the_width_and_arange_fills_arrayx():
    assert list(fj.zeros(s.Array3f, 5)) == [0.0] * 3
    assert fj.zeros(s.Float) == 0.0 and type(fj.ones(s.Int)) is int
    assert list(fj.arange(s.ArrayXi, 2, 8, 2)) == [2, 4, 6]
    assert list(fj.linspace(s.ArrayXf, 0, 1, 3)) == [0.0, 0.5, 1.0]
    assert fj.full(s.Matrix2f, 3).numpy().tolist() == [[3, 3], [3, 3]]


def test_matrix_to_quat_of_the_identity_divides_by_zero_in_unused_branches():
    # (the candidate quaternions that are not selected divide by 0: IEEE, not ZeroDivisionError)
    q = fj.matrix_to_quat(s.Matrix3f(1))
    assert list(q) == [0.0, 0.0, 0.0, 1.0]


def test_pytree_functions_walk_nested_scalar_arrays():
    # (the walker's fast path for static arrays of 1-D JIT arrays must not take them)
    m = s.Matrix3f(1, 2, 3, 4, 5, 6, 7, 8, 10)
    assert fj.detach(m).numpy().tolist() == m.numpy().tolist()
    assert fj.allclose(m, s.Matrix3f(m)) and fj.allclose(s.Array22f(1), [[1, 1], [1, 1]])
    fj.eval(s.Array33f(1), m)


def test_comparisons_of_special_scalar_types():
    # (complex / quaternion equality goes through the component-wise code at their depth)
    assert list(s.Complex2f(1, 2) == s.Complex2f(1, 2)) == [True, True]
    assert list(s.Quaternion4f(1, 2, 3, 4) != s.Quaternion4f(1, 2, 3, 5)) == [False, False, False, True]
    fj.assert_equal(s.Complex2f(1, 2), s.Complex2f(1, 2))


def test_scans_compress_and_meshgrid_on_arrayx():
    assert list(fj.prefix_sum(s.ArrayXf([1, 2, 3]))) == [0, 1, 3]
    assert list(fj.cumsum(s.Array3i(1, 2, 3), reverse=True)) == [6, 5, 3]
    assert list(fj.compress(s.ArrayXb([True, False, True]))) == [0, 2]
    x, y = fj.meshgrid(s.ArrayXf([1, 2]), s.ArrayXf([3, 4]))
    assert (list(x), list(y)) == ([1, 2, 1, 2], [3, 3, 4, 4])


def test_rotations_of_integer_angles_give_float_quaternions():
    assert type(fj.euler_to_quat(s.Array3i(1, 2, 3))) is s.Quaternion4f


def test_integer_division_rounds_toward_minus_infinity_unlike_jit_arrays():
    # Dr.Jit 1.5 measured: drjit.scalar.Array3i(-7, 7, -7) // 2 == [-4, 3, -4] and % 2 == [1, 1, 1],
    # while drjit.llvm.Int32(-7) // 2 == -3 (C's rule, frostjit.llvm's too).
    from frostjit import llvm, scalar
    a, b = scalar.Array3i(-7, 7, -7), scalar.Array3i(2, -2, -2)
    assert list(a // 2) == [-4, 3, -4] and list(a % 2) == [1, 1, 1]
    assert list(a // b) == [-4, -4, 3] and list(a % b) == [1, -1, -1]
    assert (llvm.Int32(-7) // 2).numpy().tolist() == [-3]


def test_dynamic_array_conversion_casts_like_a_static_one():
    # Dr.Jit 1.5: drjit.scalar.ArrayXu(ArrayXu64([2**40 + 5])) is [5] (a cast; it raised here).
    assert list(s.ArrayXu(s.ArrayXu64([2**40 + 5, 7]))) == [5, 7]
    assert list(s.ArrayXi(s.ArrayXf([-1.7, 2.5]))) == [-1, 2]
    assert list(s.ArrayXi8(s.ArrayXi([200]))) == [-56]
    with pytest.raises(ConversionOverflowError):
        s.ArrayXu8([300])                   # a Python number out of range still raises


def test_an_empty_dynamic_result_has_the_operation_type():
    # ArrayXi([]) < 0 is an ArrayXb (it was an ArrayXi: the result type was read from no component).
    assert type(s.ArrayXi([]) < 0) is s.ArrayXb and type(s.ArrayXi([]) + 1.5) is s.ArrayXf
    assert type(s.Array0f() < 1) is s.Array0b


@pytest.mark.parametrize("dtype, name", [(np.float64, "ArrayXf"), (np.int64, "ArrayXf"), (np.float64, "ArrayXf16"),
                                         (np.int32, "ArrayXf64"), (np.float32, "ArrayXf"), (np.uint8, "ArrayXu8"),
                                         (np.int64, "ArrayXi"), (np.bool_, "ArrayXb")])
def test_dynamic_array_from_numpy_converts_as_entry_by_entry(dtype, name):
    # (a whole 1-D NumPy array converts at once where no entry can fail the range check)
    rng = np.random.default_rng(1)
    v = rng.integers(0, 2, 500).astype(bool) if dtype is np.bool_ else (rng.standard_normal(500) * 1e5).astype(dtype)
    if dtype is np.int64 and name == "ArrayXf":
        v = np.concatenate([v, np.array([2**60 + 1, 2**53 + 1])])       # float32 of a wide int: one rounding
    cls = getattr(s, name)
    if name == "ArrayXi":
        v = v % 1000
    fast = list(cls(v))
    slow = [cls._elem(x.item()) for x in v]
    assert fast == slow and all(type(a) is type(b) for a, b in zip(fast, slow))
    with pytest.raises(ConversionOverflowError):
        s.ArrayXu8(np.array([1, 300]))              # a check that can fail stays entry by entry
    assert list(s.ArrayXf16(np.array([1e6]))) == [float("inf")]
