"""A NumPy scalar (``np.float32(1.5)``, ``np.float64``, ``np.int32``, ``np.bool_``) or 0-d NumPy
array right of an array's operator: Dr.Jit 1.5 first converts it to an element of the array's type,
then its operator decides as for two arrays of that type (checked side by side, session r14).

So ``Int(3, 4) / np.float32(1.5)`` is ``Int / Int``, which Dr.Jit refuses, and NumPy computes
``[2, 2.67]`` (frostjit gave ``Float(3, 4)``: 1.5 truncated to 1); ``Int(3, 4) // np.float32(1.5)``
is ``Int // 1``; ``Bool(True, False) * np.array(2)`` is refused (NumPy's ``[2, 0]``) and
``Bool(True, False) == np.int32(2)`` compares with ``True``; the scalar backend's
``ArrayXi(3, 4) + np.float32(1.5)`` is ``ArrayXi(4, 5)``."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S
from frostjit.errors import ConversionOverflowError

OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
       "floordiv": operator.floordiv, "mod": operator.mod, "and": operator.and_, "or": operator.or_,
       "xor": operator.xor, "eq": operator.eq, "lt": operator.lt}
# (array values, element kind): signed integers, floats, masks, on the JIT and scalar backends
ARRAYS = [(L.Int, [3, -4, 7], "int"), (L.Float, [3, -4, 7.5], "float"), (L.Bool, [True, False, True], "bool"),
          (S.ArrayXi, [3, -4, 7], "int"), (S.ArrayXf, [3, -4, 7.5], "float"),
          (S.ArrayXb, [True, False, True], "bool"), (L.Array3i, [3, -4, 7], "int"), (S.Array3f, [3, -4, 7.5], "float")]
MAKERS = [np.float32, np.float64, np.int32, np.int64, lambda v: np.array(v), lambda v: np.array(v, np.float32)]


def refused(op: str, kind: str) -> bool:
    """Dr.Jit's refusals for two arrays of one element kind (frostjit.array.promotion)."""
    if kind == "bool":
        return op in ("add", "sub", "mul", "truediv", "floordiv", "mod")
    if kind == "int":
        return op == "truediv"
    return op in ("floordiv", "mod", "and", "or", "xor")


def converted(v, kind: str):
    """The NumPy value as an element of the array's type: a mask value, a truncated integer."""
    v = np.asarray(v).item()
    return bool(v) if kind == "bool" else int(v) if kind == "int" else float(v)


@settings(max_examples=60)
@given(array=st.sampled_from(ARRAYS), op=st.sampled_from(sorted(OPS)), make=st.sampled_from(MAKERS),
       value=st.sampled_from([1.5, 2.0, 2.5, 3.0, -2.5, 4.0]))
def test_a_numpy_element_operand_is_converted_to_the_arrays_type_first(array, op, make, value):
    cls, entries, kind = array
    if make in (np.int32, np.int64):
        value = float(int(value))
    v = make(value)
    a = cls(*entries)
    f = OPS[op]
    if refused(op, kind):
        # NumPy's reflected operator computes from the array's values (or raises as NumPy does)
        try:
            want = f(np.asarray(a), v)
        except TypeError:
            with pytest.raises(TypeError):
                f(a, v)
            return
        got = f(a, v)
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        assert np.array_equal(got, want)
        return
    # otherwise: the same operator with an array of the converted value
    c = converted(v, kind)
    want = f(a, cls(*([c] * len(entries))) if kind == "bool" else c)    # (a Python bool & Int: a mask)
    got = f(a, v)
    assert type(got) is type(want)
    assert np.array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("cls", [L.Int, S.ArrayXi, L.Array2i])
def test_integer_division_by_a_numpy_float_is_numpys(cls):
    a = cls(3, 4)
    r = a / np.float32(1.5)
    assert isinstance(r, np.ndarray) and np.allclose(r.ravel(), [2, 8 / 3])
    r = a / np.array(1.5)
    assert isinstance(r, np.ndarray) and np.allclose(r.ravel(), [2, 8 / 3])


@pytest.mark.parametrize("cls", [L.Bool, S.ArrayXb])
def test_masks_with_numpy_elements(cls):
    m = cls(True, False)
    r = m * np.array(2)
    assert isinstance(r, np.ndarray) and r.tolist() == [2, 0]
    assert np.asarray(m == np.int32(2)).tolist() == [True, False]
    assert np.asarray(m & np.float32(1.5)).tolist() == [True, False]
    assert type(m * 2) is not np.ndarray        # (a Python int still promotes: Int(2, 0))


@pytest.mark.parametrize("cls", [S.ArrayXi, S.Array3i, S.ArrayXu])
def test_scalar_backend_integer_arrays_keep_their_type(cls):
    r = cls(3, 4, 5) + np.float32(1.5)
    assert type(r) is cls and list(r) == [4, 5, 6]
    r = cls(3, 4, 5) * np.float64(2.5)
    assert type(r) is cls and list(r) == [6, 8, 10]


@pytest.mark.parametrize("v", [np.float64(-1.5), np.float32(1e20), np.float32(np.nan), np.array(-1.5)])
@pytest.mark.parametrize("cls", [L.UInt, S.ArrayXu, L.Array2u])
def test_a_numpy_float_no_unsigned_value_holds_raises(cls, v):
    with pytest.raises(ConversionOverflowError):
        cls(3, 4) + v
    assert list(fj.ravel(cls(3, 4) + np.float32(-0.5))) == [3, 4]      # (truncated to 0)
