"""Scalar element types of JIT variables.

Each :class:`VarType` knows its NumPy dtype, whether it is a float / signed
integer, and its rank in Dr.Jit 1.5's promotion order
(Bool < Int8 < UInt8 < Int32 < UInt32 < Int64 < UInt64 < Float16 < Float32 < Float64:
the order of Dr.Jit's ``VarType`` enumeration, whose larger member wins).
Backends map a ``VarType`` to their own representation; the trace only ever uses these.

``Float16`` is a storage format: its arithmetic is computed in ``Float32`` and rounded
to half precision after every operation (:attr:`VarType.compute`), as LLVM and Dr.Jit
do on CPUs without native half arithmetic.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class VarType:
    """An element type; compared and hashed by identity (there is one object per type)."""

    name: str            #: Dr.Jit name, e.g. ``"Float32"``
    np_dtype: np.dtype   #: storage dtype of a buffer of this type
    rank: int            #: position in the promotion order
    is_float: bool
    is_signed: bool
    itemsize: int        #: bytes per element in memory
    #: The type its arithmetic is computed in, when that is not the type itself
    #: (``Float16``: ``Float32``, rounded back after each operation); None otherwise.
    compute: "VarType | None" = None

    @property
    def is_integral(self) -> bool:
        return not self.is_float and self is not Bool

    @property
    def is_bool(self) -> bool:
        return self is Bool

    @property
    def bits(self) -> int:
        return 1 if self is Bool else 8 * self.itemsize

    def __repr__(self) -> str:
        return self.name


Bool = VarType("Bool", np.dtype(np.bool_), 0, False, False, 1)
Int8 = VarType("Int8", np.dtype(np.int8), 1, False, True, 1)
UInt8 = VarType("UInt8", np.dtype(np.uint8), 2, False, False, 1)
Int32 = VarType("Int32", np.dtype(np.int32), 3, False, True, 4)
UInt32 = VarType("UInt32", np.dtype(np.uint32), 4, False, False, 4)
Int64 = VarType("Int64", np.dtype(np.int64), 5, False, True, 8)
UInt64 = VarType("UInt64", np.dtype(np.uint64), 6, False, False, 8)
Float32 = VarType("Float32", np.dtype(np.float32), 8, True, True, 4)
Float16 = VarType("Float16", np.dtype(np.float16), 7, True, True, 2, compute=Float32)
Float64 = VarType("Float64", np.dtype(np.float64), 9, True, True, 8)

#: Every element type, in promotion order.
ALL_TYPES = (Bool, Int8, UInt8, Int32, UInt32, Int64, UInt64, Float16, Float32, Float64)
#: The float types, narrowest first.
FLOAT_TYPES = tuple(t for t in ALL_TYPES if t.is_float)
#: The integer types (not Bool), in promotion order.
INTEGER_TYPES = tuple(t for t in ALL_TYPES if t.is_integral)
BY_NUMPY = {t.np_dtype: t for t in ALL_TYPES}
BY_NAME = {t.name: t for t in ALL_TYPES}


def promote(a: VarType, b: VarType) -> VarType:
    """Dr.Jit's promotion rule: the type of higher rank wins."""
    return a if a.rank >= b.rank else b


def from_numpy_dtype(dtype) -> VarType:
    """The :class:`VarType` storing a NumPy dtype, or ``TypeError``."""
    dtype = np.dtype(dtype)
    t = BY_NUMPY.get(dtype)
    if t is None:
        raise TypeError(f"frostjit has no array type for NumPy dtype {dtype}")
    return t


def round_to(vt: VarType, value: float) -> float:
    """The Python float ``value`` rounded to float type ``vt`` as Dr.Jit rounds a Python
    number: to ``Float32`` directly, to ``Float16`` through ``Float32`` (two roundings, as
    Dr.Jit converts doubles to half), beyond the range to +-inf."""
    if vt.itemsize == 8:
        return float(value)
    with np.errstate(over="ignore"):
        v = np.float32(value)
        if vt.compute is not None:
            v = v.astype(vt.np_dtype)
    return float(v)


_PACK_D = struct.Struct("<d").pack


def float_bits(v: float) -> str:
    """``float.hex(v)``, except that a NaN is written with its sign and payload: ``float.hex``
    writes every NaN as ``'nan'``, but ``copysign``, ``struct`` and a kernel's literal see them
    (r14: a cached kernel or a recording of ``nan`` was reused for ``-nan``).  The exact identity
    of a float as a key part (``-0.0 == 0.0`` and ``NaN != NaN`` otherwise).  ``freeze/values.py``
    keeps its own copy: the read set's modules load without the rest of frostjit."""
    h = float.hex(v)
    return h if h != "nan" else "nan:" + _PACK_D(v).hex()


def float_of_bits(h: str) -> float:
    """The float :func:`float_bits` wrote."""
    return float.fromhex(h) if not h.startswith("nan:") else struct.unpack("<d", bytes.fromhex(h[4:]))[0]
