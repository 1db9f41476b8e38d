"""Dynamic arrays (``ArrayXf``, ``ArrayXu``, ...): a Python-side list of 1-D JIT arrays.

As in Dr.Jit, an ``ArrayXf`` has a number of components fixed per instance (not per
type): ``ArrayXf(Float(1, 2), Float(3, 4), Float(5, 6))`` has three components of width two,
``ArrayXf([1, 2, 3])`` three of width one, ``ArrayXf(Float(1, 2, 3))`` one of width three.
Operations apply component by component (two dynamic arrays must have as many
components); numbers, 1-D arrays and static arrays of lower depth broadcast.
"""
from __future__ import annotations

import numpy as np

from .flat import ArrayBase, _SCALARS
from .foreign import foreign_to_numpy, is_foreign_array
from .vector import VectorBase, _component, tensor_rows


class DynamicBase(VectorBase):
    """Base class of the dynamic array types (``_n`` is None: the size is per instance)."""

    __slots__ = ()
    _family = "dynamic"
    _swizzle = False
    IsDynamic = True

    @classmethod
    def _components(cls, args) -> list:
        elem = cls._elem
        if not args:
            return []
        if len(args) > 1:
            return [_component(elem, a) for a in args]
        v = args[0]
        if isinstance(v, VectorBase):
            return [_component(elem, c) for c in v._c]
        if isinstance(v, (ArrayBase,) + _SCALARS) or hasattr(v, "__symbolic_size__"):
            return [_component(elem, v)]
        rows = tensor_rows(cls, v)
        if rows is not None:
            return rows
        if is_foreign_array(v) and not isinstance(v, np.ndarray):
            v = foreign_to_numpy(v)
        if isinstance(v, np.ndarray):
            if v.ndim == 0:
                return [_component(elem, v.item())]
            if v.ndim > 2:
                raise ValueError(f"{cls.__name__}(): expected a NumPy array of shape (n,) or (n, width), "
                                 f"got {v.shape}")
            return [_component(elem, v[k] if v.ndim == 2 else v[k].item()) for k in range(v.shape[0])]
        if isinstance(v, (list, tuple, range)):
            return [_component(elem, x) for x in v]
        if hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict)):
            return [_component(elem, x) for x in list(v)]      # a generator, an iterator (Dr.Jit)
        raise TypeError(f"{cls.__name__}(): cannot construct from an object of type {type(v).__name__}")

    @classmethod
    def _broadcast(cls, v) -> list:
        return [_component(cls._elem, v)]
