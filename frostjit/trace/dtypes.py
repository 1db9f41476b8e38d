"""Scalar element types of JIT variables.

Each :class:`VarType` knows its NumPy dtype, whether it is a float / signed
integer, and its rank in Dr.Jit's promotion order
(Bool < Int32 < UInt32 < Int64 < UInt64 < Float32 < Float64).  Backends map a
``VarType`` to their own representation; the trace only ever uses these.
"""
from __future__ import annotations

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
Int32 = VarType("Int32", np.dtype(np.int32), 1, False, True, 4)
UInt32 = VarType("UInt32", np.dtype(np.uint32), 2, False, False, 4)
Int64 = VarType("Int64", np.dtype(np.int64), 3, False, True, 8)
UInt64 = VarType("UInt64", np.dtype(np.uint64), 4, False, False, 8)
Float32 = VarType("Float32", np.dtype(np.float32), 5, True, True, 4)
Float64 = VarType("Float64", np.dtype(np.float64), 6, True, True, 8)

ALL_TYPES = (Bool, Int32, UInt32, Int64, UInt64, Float32, Float64)
BY_NUMPY = {t.np_dtype: t for t in ALL_TYPES}


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
