"""Element types of the scalar backend: what a component of ``frostjit.scalar.Array3f`` is.

In Dr.Jit's scalar backend a component is a Python number (``Array3f(1)[0]`` is a
``float``), and the array's class says its element type (float32: the value is rounded to
float32 on the way in).  :class:`ScalarElement` subclasses are these element types for
the array families of :mod:`frostjit.array.families`: one per
:class:`~frostjit.trace.dtypes.VarType`, never instantiated (calling one converts a value to a
Python number of that type, as a constructor stores it).  The public 1-D names of
``frostjit.scalar`` (``Float``, ``UInt32``, ...) are Python's ``float``, ``int`` and ``bool``,
as in Dr.Jit.
"""
from __future__ import annotations

import numpy as np

from ..array.flat import ArrayBase
from ..trace import dtypes as dt
from ..trace import ops
from ..trace.state import JitBackend

#: The Python type of each element type's values (Dr.Jit's ``drjit.scalar.Float`` is ``float``).
PYTHON_TYPE = {vt: (bool if vt is dt.Bool else float if vt.is_float else int) for vt in dt.ALL_TYPES}


class ScalarElement:
    """An element type of the scalar backend (class attributes only; see the module docstring).

    ``ScalarElement subclass(v)`` returns ``v`` as a Python number of the type: floats rounded
    to the type's precision (Float16 through float32, as Dr.Jit), integers range-checked
    (``ConversionOverflowError`` beyond it, floats truncated toward zero), as a JIT
    constructor converts a Python number.
    """

    _vt = None
    _backend = JitBackend.Invalid
    _is_ad = False
    IsJIT = False
    IsVector = False
    Depth = 0

    def __new__(cls, *args):
        if not args:
            return PYTHON_TYPE[cls._vt](0)
        if len(args) > 1:
            raise TypeError(f"{cls.__name__}(): expected one value, got {len(args)}")
        return convert(cls._vt, args[0], f"{cls.__name__}()")


def convert(vt, v, who: str):
    """The Python number ``v`` (or NumPy scalar, 0-d array) as element type ``vt`` stores it."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, ArrayBase):
        raise TypeError(f"{who}: cannot convert a {type(v).__name__} of backend {v._backend.name} to the scalar "
                        "backend (read its values first: .numpy(), [i])")
    if not isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)):
        raise TypeError(f"{who}: cannot construct from an object of type {type(v).__name__}")
    return PYTHON_TYPE[vt](ops.convert_scalar(vt, v, who))


def make_elements() -> dict:
    """``{VarType: element class}`` for every element type of the array families."""
    out = {}
    for vt in dt.ALL_TYPES:
        out[vt] = type(f"Scalar{vt.name}", (ScalarElement,), {"_vt": vt, "__module__": __name__,
                                                            "__doc__": f"Scalar {vt.name} element type."})
    return out
