"""LLVM types and constants of frostjit's element types."""
from __future__ import annotations

import struct

from ....trace.dtypes import Bool, VarType


def scalar_type(vt: VarType) -> str:
    """LLVM type of one element of ``vt`` in registers."""
    if vt is Bool:
        return "i1"
    if vt.is_float:
        return _FLOAT_TYPES[vt.itemsize]
    return f"i{vt.bits}"


_FLOAT_TYPES = {2: "half", 4: "float", 8: "double"}


def memory_type(vt: VarType) -> str:
    """LLVM type of one element of ``vt`` in memory (Bool is a byte, like NumPy)."""
    return "i8" if vt is Bool else scalar_type(vt)


def suffix(t: str) -> str:
    """The intrinsic name suffix of LLVM scalar type ``t`` (``float`` -> ``f32``)."""
    return {"half": "f16", "float": "f32", "double": "f64"}.get(t, t)


def float_constant(value: float, vt: VarType) -> str:
    """Exact hexadecimal float constant (LLVM writes float, double and half constants as doubles;
    the value must be exact in ``vt``, which literals are: they are rounded when made)."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]


def scalar_constant(vt: VarType, value) -> str:
    if vt is Bool:
        return "true" if value else "false"
    if vt.is_float:
        return float_constant(value, vt)
    bits = vt.bits
    value = int(value) & ((1 << bits) - 1)
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    return str(value)
