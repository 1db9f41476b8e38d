"""Integer bit operations: ``popcnt``, ``lzcnt``, ``tzcnt``, ``brev``, ``log2i``, ``mul_hi``, ``mul_wide``.

On arrays they are op-table operations (every integer type: 8, 32 and 64 bits, signed and
unsigned) or compositions of them.  On Python ints they follow Dr.Jit 1.5, which treats a
Python int as a 32-bit unsigned value (``popcnt``, ``lzcnt``, ...; a negative int or one of
2**32 or more raises ``TypeError``) or, for the products, as a 32-bit signed value if both
operands fit one and unsigned otherwise.
"""
from __future__ import annotations

import numpy as np

from ..array.flat import ArrayBase, apply
from ..array.vector import VectorBase, apply_vector
from ..array.meta import VarType
from ..trace.dtypes import Int32, UInt32
from ..trace.optable import OPS
from ..traits import replace_type_t

_U32 = 1 << 32


def _python_int(name: str, x) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"frostjit.{name}(): expects an integer array or a Python int, got {type(x).__name__}")
    if not 0 <= int(x) < _U32:
        raise TypeError(f"frostjit.{name}(): a Python int is taken as a 32-bit unsigned value; "
                        f"{int(x)} is outside [0, 2**32)")
    return int(x)


def _tensor_map(op, x):
    return x._fj_map(lambda a: apply(op, a), x, who=f"frostjit.{op}()")


def _unary_int(op: str, x):
    if isinstance(x, ArrayBase):
        return apply(op, x)
    if isinstance(x, VectorBase):
        return apply_vector(op, x)
    if getattr(type(x), "IsTensor", False):
        return _tensor_map(op, x)
    v = np.array([_python_int(op, x)], np.uint32)
    return int(OPS[op].numpy(UInt32, v)[0])


def popcnt(x):
    """The number of set bits of each element (two's complement bits for signed types).

    Parameters
    ----------
    x : integer array, static vector, tensor or int

    Returns
    -------
    Same type as ``x``.

    Examples
    --------
    >>> fj.popcnt(UInt32(0, 7, 0xFFFFFFFF))
    [0, 3, 32]
    """
    return _unary_int("popcnt", x)


def lzcnt(x):
    """The number of leading zero bits of each element; the bit width for 0 (well defined)."""
    return _unary_int("lzcnt", x)


def tzcnt(x):
    """The number of trailing zero bits of each element; the bit width for 0 (well defined)."""
    return _unary_int("tzcnt", x)


def brev(x):
    """Each element with its bits in reverse order (bit 0 becomes the top bit)."""
    return _unary_int("brev", x)


def log2i(x):
    """``floor(log2(x))`` of each element: ``bits - 1 - lzcnt(x)``, wrapping for 0 (``-1`` for
    signed types, the largest value for unsigned ones, as Dr.Jit); a negative signed value
    gives ``bits - 1``.

    Examples
    --------
    >>> fj.log2i(UInt32(1, 8, 100))
    [0, 3, 6]
    """
    if isinstance(x, (ArrayBase, VectorBase)) or getattr(type(x), "IsTensor", False):
        return (x.Type.bits - 1) - lzcnt(x)
    return 31 - lzcnt(x)


def _product_operands(name, a, b):
    """Two Python ints as Dr.Jit reads them: Int32 if both fit, else UInt32."""
    for v in (a, b):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"frostjit.{name}(): expects integer arrays or Python ints, got {type(v).__name__}")
    a, b = int(a), int(b)
    if all(-(1 << 31) <= v < (1 << 31) for v in (a, b)):
        return a, b, True
    if all(0 <= v < _U32 for v in (a, b)):
        return a, b, False
    raise TypeError(f"frostjit.{name}(): Python ints are taken as 32-bit values; got {a} and {b}")


def mul_hi(a, b):
    """The high half of the double-width product ``a * b`` of each pair of elements.

    Signed for signed types.  Every integer type (Dr.Jit 1.5 takes only 32-bit ones); two
    Python ints are 32-bit values (see the module docstring).

    Examples
    --------
    >>> fj.mul_hi(UInt32(0xFFFFFFFF), UInt32(2))
    [1]
    """
    if not isinstance(a, (ArrayBase, VectorBase)) and not isinstance(b, (ArrayBase, VectorBase)) \
            and not getattr(type(a), "IsTensor", False) and not getattr(type(b), "IsTensor", False):
        x, y, signed = _product_operands("mul_hi", a, b)
        return (x * y) >> 32
    if isinstance(a, VectorBase) or isinstance(b, VectorBase):
        return apply_vector("mul_hi", a, b)
    if getattr(type(a), "IsTensor", False) or getattr(type(b), "IsTensor", False):
        t = a if getattr(type(a), "IsTensor", False) else b
        return t._fj_map(lambda x, y: apply("mul_hi", x, y), a, b, who="frostjit.mul_hi()")
    return apply("mul_hi", a, b)


_WIDE = {Int32: VarType.Int64, UInt32: VarType.UInt64}


def mul_wide(a, b):
    """The full 64-bit product of 32-bit integers: ``Int64(a) * Int64(b)`` (``UInt64`` for
    ``UInt32``), of arrays or static vectors.

    Raises
    ------
    TypeError
        For other element types (as Dr.Jit 1.5).

    Examples
    --------
    >>> fj.mul_wide(UInt32(0xFFFFFFFF), UInt32(2))
    [8589934590]
    """
    if not isinstance(a, (ArrayBase, VectorBase)) and not isinstance(b, (ArrayBase, VectorBase)):
        x, y, _ = _product_operands("mul_wide", a, b)
        return x * y
    arr = a if isinstance(a, (ArrayBase, VectorBase)) else b
    wide = _WIDE.get(arr.Type)
    if wide is None:
        raise TypeError(f"frostjit.mul_wide(): takes 32-bit integer arrays (Int32, UInt32), got {type(arr).__name__}")
    cls = replace_type_t(type(arr), wide)
    return cls(a) * cls(b)
