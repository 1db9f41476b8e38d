"""Array types: construction, conversion, printing, promotion and error messages."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import (Float, Float32, Float64, Int, Int32, UInt, UInt32, Int64, UInt64, Bool,
                           Array2f, Array3f, Array4f, Array3u, Array3i, Array3b, Array3f64)


def test_aliases():
    assert Float is Float32 and Int is Int32 and UInt is UInt32


@pytest.mark.parametrize("T,dtype", [(Float, np.float32), (Float64, np.float64), (Int32, np.int32),
                                     (UInt32, np.uint32), (Int64, np.int64), (UInt64, np.uint64),
                                     (Bool, np.bool_)])
def test_construction_and_numpy_round_trip(T, dtype):
    a = np.array([1, 0, 3], dtype=dtype)
    for x in (T(a), T([1, 0, 3]), T(1, 0, 3), T(list(a))):
        out = x.numpy()
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, a)
        np.testing.assert_array_equal(np.asarray(x), a)
        assert len(x) == 3
    assert len(T()) == 0
    assert T(1).numpy().tolist() == [dtype(1)]


def test_casting_between_types():
    f = Float([1.7, -2.5, 3.0])
    np.testing.assert_array_equal(Int32(f).numpy(), [1, -2, 3])
    np.testing.assert_array_equal(UInt32(Float([1.7, 2.5])).numpy(), [1, 2])
    np.testing.assert_array_equal(Float(UInt32([1, 2])).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(Bool(Int32([0, 5])).numpy(), [False, True])
    np.testing.assert_array_equal(UInt32(Int32([-1])).numpy(), [2**32 - 1])
    np.testing.assert_array_equal(Float(np.array([1, 2], dtype=np.int64)).numpy(), [1, 2])


def test_reinterpret_array():
    u = fj.reinterpret_array(UInt32, Float([1.0]))
    assert u[0] == 0x3F800000
    f = fj.reinterpret_array(Float, UInt32([0x40000000]))
    assert f[0] == 2.0
    with pytest.raises(TypeError, match="bit widths"):
        fj.reinterpret_array(UInt64, Float([1.0]))


def test_printing_like_drjit():
    assert repr(Float([1, 2, 3])) == "[1, 2, 3]"
    assert str(Float([1.5, -0.25])) == "[1.5, -0.25]"
    assert repr(UInt32([7])) == "[7]"
    assert repr(Bool([True, False])) == "[True, False]"
    long = repr(fj.arange(Int32, 100))
    assert long == "[0, 1, 2, .. 94 skipped .., 97, 98, 99]"      # Dr.Jit 1.5's abbreviation


def test_element_access():
    x = fj.arange(Float, 5) * 2
    assert x[0] == 0 and x[4] == 8 and x[-1] == 8
    assert isinstance(x[1], float)
    assert isinstance(UInt32([3])[0], int)
    with pytest.raises(IndexError, match="size 5"):
        x[5]
    assert float(Float([2.5])) == 2.5 and int(Int32([3])) == 3
    assert bool(Bool([True]))
    with pytest.raises(RuntimeError, match="size"):
        float(Float([1, 2]))


def test_dlpack_round_trip():
    x = fj.arange(Float, 6) + 1
    a = np.from_dlpack(x)
    np.testing.assert_array_equal(a, [1, 2, 3, 4, 5, 6])


def test_type_promotion_follows_drjit():
    assert type(Int32([1]) + UInt32([1])) is UInt32
    assert type(UInt32([1]) + Float([1])) is Float
    assert type(Float([1]) + Float64([1])) is Float64
    assert type(Int32([1]) + Int64([1])) is Int64
    assert type(Int32([1]) + 1) is Int32
    assert type(Int32([1]) + 1.5) is Float
    assert type(Float([1]) + 1) is Float
    assert type(Float64([1]) + 1.5) is Float64
    assert type(Float([1]) < 2) is Bool
    assert type(Int32([3]) / 2.0) is Float
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for /"):
        Int32([7]) / Int32([2])         # Dr.Jit's '/' takes floats only
    r = fj.select(True, Int32([7]), 0) / Float([2])
    assert r[0] == 3.5
    assert type(Bool([True]) & Bool([False])) is Bool


def test_masking_with_bool():
    x = Float([1, 2, 3])
    m = Bool([True, False, True])
    np.testing.assert_array_equal((x & m).numpy(), [1, 0, 3])
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \|"):
        x | m           # (Dr.Jit's operators take float & mask only)


def test_size_mismatch_names_both_sizes():
    with pytest.raises(ValueError, match=r"3, 5"):
        Float([1, 2, 3]) + Float([1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match=r"2, 4"):
        fj.select(Bool([True, False]), Float([1, 2, 3, 4]), 0.0)


def test_broadcasting_size_one():
    np.testing.assert_array_equal((Float([1, 2, 3]) + Float([10])).numpy(), [11, 12, 13])
    np.testing.assert_array_equal((Float([10]) * fj.arange(Float, 3)).numpy(), [0, 10, 20])


def test_type_errors_name_the_types():
    with pytest.raises(TypeError, match="str"):
        Float([1]) + "a"
    with pytest.raises(TypeError, match=r"\bFloat\b"):
        Float([1.0]) << 1
    with pytest.raises(TypeError, match="Bool"):
        Bool([True]) + Bool([True])
    with pytest.raises(TypeError, match="Array3f"):
        Array3f(1, 2, 3) + Array2f(1, 2)
    with pytest.raises(TypeError, match="dict"):
        Float({"a": 1})
    with pytest.raises(TypeError, match="dtype"):
        fj.zeros(np.float32, 3)
    with pytest.raises(TypeError, match="Bool"):
        fj.select(Float([1.0]), 1.0, 2.0)


def test_static_vectors():
    v = Array3f(1, 2, 3)
    assert len(v) == 3
    assert v.x[0] == 1 and v.y[0] == 2 and v.z[0] == 3 and v[2][0] == 3
    v.y = Float([5])
    assert v[1][0] == 5
    w = v * 2 + Array3f(Float([1, 2]), 0, 0)
    np.testing.assert_array_equal(w.numpy(), [[3, 4], [10, 10], [6, 6]])
    assert type(Array3u(1, 2, 3) < 2) is Array3b
    assert type(Array3f(Array3i(1, 2, 3))) is Array3f
    assert type(Array3f64(1, 2, 3) + 1) is Array3f64
    a4 = Array4f(np.arange(8, dtype=np.float32).reshape(4, 2))
    assert a4.w[1] == 7
    with pytest.raises(AttributeError):
        Array2f(1, 2).z
    assert fj.width(Array3f(Float([1, 2, 3]), 0, 0)) == 3


def test_creation_functions():
    np.testing.assert_array_equal(fj.zeros(Float, 3).numpy(), [0, 0, 0])
    np.testing.assert_array_equal(fj.ones(Int32, 2).numpy(), [1, 1])
    np.testing.assert_array_equal(fj.full(Float, 2.5, 2).numpy(), [2.5, 2.5])
    assert len(fj.empty(Float, 7)) == 7
    np.testing.assert_array_equal(fj.arange(Int32, 5).numpy(), np.arange(5))
    np.testing.assert_array_equal(fj.arange(Int32, 2, 11, 3).numpy(), np.arange(2, 11, 3))
    np.testing.assert_array_equal(fj.arange(Float, -3, 3).numpy(), np.arange(-3, 3, dtype=np.float32))
    np.testing.assert_allclose(fj.linspace(Float, 0, 1, 11).numpy(), np.linspace(0, 1, 11), rtol=1e-6)
    np.testing.assert_allclose(fj.linspace(Float64, -2, 5, 7, endpoint=False).numpy(),
                               np.linspace(-2, 5, 7, endpoint=False))
    np.testing.assert_array_equal(fj.opaque(Float, 3.0, 4).numpy(), [3] * 4)
    z = fj.zeros(Array3f, 2)
    assert z.numpy().shape == (3, 2)
    with pytest.raises(ValueError, match=">= 0"):
        fj.zeros(Float, -1)


def test_width_and_eval_pytrees():
    a, b = fj.arange(Float, 4) + 1, fj.arange(Float, 4) * 2
    tree = {"a": [a, (b, None)], "n": 3}
    fj.eval(tree)
    assert a.state == fj.VarState.Evaluated and b.state == fj.VarState.Evaluated
    assert fj.width(tree) == 4
    assert fj.width(Float([1.0]), Float([1, 2, 3])) == 3
    with pytest.raises(ValueError):
        fj.width(Float([1, 2]), Float([1, 2, 3]))


def test_make_opaque_turns_literal_into_memory():
    x = fj.full(Float, 2.0, 3)
    assert x.state == fj.VarState.Literal
    fj.make_opaque(x)
    assert x.state == fj.VarState.Evaluated
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])


def test_inplace_operators_rebind():
    x = Float([1, 2])
    y = x
    x += 1
    assert x is y
    np.testing.assert_array_equal(x.numpy(), [2, 3])
    i = Int32([7])
    i //= 2
    assert type(i) is Int32 and i[0] == 3


def test_math_helpers():
    x = Float([-2.5, 0.0, 3.5, np.nan])
    np.testing.assert_array_equal(fj.sign(Float([-2.0, 0.0, 3.0])).numpy(), [-1, 1, 1])   # Dr.Jit: +1 at 0
    np.testing.assert_array_equal(fj.clip(Float([-1, 0.5, 2]), 0, 1).numpy(), [0, 0.5, 1])
    np.testing.assert_array_equal(fj.isnan(x).numpy(), [False, False, False, True])
    np.testing.assert_array_equal(fj.isfinite(Float([np.inf, 1])).numpy(), [False, True])
    np.testing.assert_array_equal(fj.isinf(Float([np.inf, 1])).numpy(), [True, False])
    np.testing.assert_allclose(fj.lerp(Float([0.0]), Float([10.0]), Float([0.25])).numpy(), [2.5])
    np.testing.assert_allclose(fj.rsqrt(Float([4.0])).numpy(), [0.5])
    np.testing.assert_allclose(fj.rcp(Float([4.0])).numpy(), [0.25])
    np.testing.assert_array_equal(fj.floor(Int32([3])).numpy(), [3])


def test_python_int_beyond_32_bits_promotes_instead_of_wrapping():
    # Dr.Jit types a Python int outside the 32-bit range as Int64; wrapping it silently is wrong.
    r = Int32([1, -1]) + 2**40
    assert type(r) is Int64 and r.numpy().tolist() == [2**40 + 1, 2**40 - 1]
    r = 2**40 * UInt32([3])
    assert type(r) is Int64 and r.numpy().tolist() == [3 * 2**40]
    assert type(fj.minimum(Int32([1]), 2**40)) is Int64
    # values that fit the array's bits (signed or unsigned) keep its type, as before
    assert type(UInt32([1]) * 0x9E3779B9) is UInt32 and (UInt32([1]) + -1).numpy().tolist() == [0]
    assert type(Int32([1]) & 0xFFFFFFFF) is Int32


def test_static_vector_dlpack_is_n_by_width():
    v = Array3f([1, 2], [3, 4], [5, 6])
    np.testing.assert_array_equal(np.from_dlpack(v), v.numpy())
    assert np.from_dlpack(v).shape == (3, 2)


def test_static_vector_reflected_shifts():
    np.testing.assert_array_equal((1 << Array3u(1, 2, 3)).numpy().ravel(), [2, 4, 8])
    np.testing.assert_array_equal((64 >> Array3u(1, 2, 3)).numpy().ravel(), [32, 16, 8])


def test_static_vector_numpy_with_ragged_or_empty_components():
    with pytest.raises(ValueError, match=r"2, 3"):
        Array3f(Float([1, 2]), Float([1, 2, 3]), 0).numpy()
    v = Array3f(Float(), 1, 2)          # size-1 components broadcast to the size-0 one
    assert v.shape == (3, 0) and v.numpy().shape == (3, 0)
    np.testing.assert_array_equal(Array3f(Float([1, 2]), 1, 0).numpy(), [[1, 2], [1, 1], [0, 0]])


def test_same_type_arithmetic_on_a_subclass_keeps_the_subclass():
    """``x * 2`` on a user subclass of Float is of that subclass (dispatch on return annotations
    relies on it); a comparison gives Bool; mixing with another type promotes to a frostjit type."""
    from frostjit.llvm import Float, Bool as B, Float64

    class Meters(Float):
        pass

    m = Meters([1.0, 2.0])
    for r in (m * 2, 2.0 * m, m + m, -m, fj.sin(m), fj.fma(m, m, 1.0), m ** 2, abs(m)):
        assert type(r) is Meters, type(r)
    assert type(m < 1) is B
    assert type(m + Float64([1.0, 2.0])) is Float64
