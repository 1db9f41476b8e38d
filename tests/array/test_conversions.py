"""Construction from Python and NumPy scalars never narrows silently (Dr.Jit, NumPy 2).

A Python int outside an integer type's range raises ``OverflowError`` (also a
``TypeError``, Dr.Jit's exception) on every constructor path; floats truncate
toward zero and must then fit; NumPy *arrays* convert like ``astype`` (a C
cast), as Dr.Jit does.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.errors import ConversionOverflowError
from frostjit.llvm import Float, Float64, UInt32, Int32, Int64, UInt64, Array3u

INT_TYPES = {"Int32": (Int32, np.int32), "UInt32": (UInt32, np.uint32), "Int64": (Int64, np.int64),
             "UInt64": (UInt64, np.uint64)}
PATHS = {
    "scalar": lambda T, v: T(v),
    "list": lambda T, v: T([v]),
    "varargs": lambda T, v: T(0, v),
    "numpy scalar": lambda T, v: T(np.array(v, dtype=object).item()),
    "full": lambda T, v: fj.full(T, v, 3),
    "opaque": lambda T, v: fj.opaque(T, v, 3),
}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("tname", list(INT_TYPES))
def test_out_of_range_python_int_raises_overflow_error_on_every_constructor_path(tname, path):
    T, dt = INT_TYPES[tname]
    info = np.iinfo(dt)
    for bad in (info.max + 1, info.min - 1, 2**40 if info.max < 2**40 else 2**70):
        with pytest.raises(OverflowError, match=rf"{bad}.*out of range for {tname}"):
            PATHS[path](T, bad)
        with pytest.raises(TypeError):          # Dr.Jit's exception type
            PATHS[path](T, bad)
    assert PATHS[path](T, info.max).numpy()[-1] == info.max
    assert PATHS[path](T, info.min).numpy()[-1] == info.min


def test_uint32_of_2_to_the_40_raises_like_numpy():
    with pytest.raises(OverflowError):
        np.uint32(2**40)
    with pytest.raises(ConversionOverflowError, match="1099511627776 is out of range for UInt32"):
        UInt32(2**40)
    with pytest.raises(ConversionOverflowError):
        UInt32(np.int64(2**40))         # NumPy scalars are scalars, not arrays
    with pytest.raises(ConversionOverflowError):
        Array3u(-1)


@given(st.sampled_from(list(INT_TYPES)), st.integers(-2**70, 2**70))
def test_python_int_conversion_agrees_with_numpy_2(tname, v):
    T, dt = INT_TYPES[tname]
    try:
        ref = np.array([v], dtype=dt)
    except OverflowError:
        with pytest.raises(OverflowError):
            T([v])
        with pytest.raises(OverflowError):
            T(v)
        return
    np.testing.assert_array_equal(T([v]).numpy(), ref)
    np.testing.assert_array_equal(T(v).numpy(), ref)


def test_float_to_integer_truncates_toward_zero_and_must_then_fit():
    assert Int32(1.5)[0] == 1 and Int32(-1.5)[0] == -1 and UInt32(2.9)[0] == 2
    np.testing.assert_array_equal(Int64([1.5, -2.5]).numpy(), [1, -2])
    for bad in (-1.5, 1e20, 4294967296.0):
        with pytest.raises(OverflowError, match="out of range for UInt32"):
            UInt32(bad)
        with pytest.raises(OverflowError):
            UInt32([bad])
    with pytest.raises(OverflowError, match="inf"):
        Int32(float("inf"))
    with pytest.raises(ValueError, match="NaN"):
        Int32(float("nan"))
    with pytest.raises(ValueError, match="NaN"):
        UInt32([float("nan")])


def test_float_constructors_round_to_infinity_beyond_their_range_without_warning(recwarn):
    assert Float(1e40)[0] == np.inf and Float([-1e40])[0] == -np.inf
    assert Float(2**200)[0] == np.inf
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]
    with pytest.raises(OverflowError, match="too large for Float64"):
        Float64(2**1100)


def test_numpy_arrays_convert_like_astype_as_in_drjit():
    # Dr.Jit casts NumPy arrays element-wise like C (and NumPy's astype): no range check.
    np.testing.assert_array_equal(UInt32(np.array([-1, 2**40 + 3], np.int64)).numpy(), [4294967295, 3])
    np.testing.assert_array_equal(Int32(np.array([1.5, -1.5])).numpy(), [1, -1])


def test_arithmetic_with_python_ints_keeps_wrapping_semantics():
    # Operands of arithmetic are not constructors: ints that fit 32 bits wrap into the type.
    np.testing.assert_array_equal((UInt32(5, 6) + (-1)).numpy(), [4, 5])
    assert (UInt32(5) + 2**40).Type.name == "Int64"


def test_asarray_follows_the_numpy_2_copy_protocol_over_a_shared_view():
    # Dr.Jit 1.5 (LLVM): np.asarray(x) and copy=False share the buffer, copy=True copies; a
    # dtype conversion copies, so with copy=False it raises (as NumPy's own arrays do).
    x = Float([1, 2, 3])
    assert np.shares_memory(np.asarray(x, copy=False), np.asarray(x))
    assert not np.shares_memory(np.asarray(x, copy=True), np.asarray(x))
    assert not np.shares_memory(np.array(x), np.asarray(x))      # np.array copies by default
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(x, dtype=np.float64, copy=False)
    np.testing.assert_array_equal(np.asarray(Array3u(1, 2, 3), copy=False), [[1], [2], [3]])
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), [1, 2, 3])
    np.testing.assert_array_equal(np.from_dlpack(x), [1, 2, 3])
