"""Geometry of static vectors and norms: ``fj.cross``, ``fj.squared_norm``, ``fj.norm``,
``fj.normalize`` (built from the element-wise functions and the reductions)."""
from __future__ import annotations

import math

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..tree import vector_from_components
from .math import fma, rsqrt, sqrt
from .reduce import dot, sum as fsum


def _jit(x) -> bool:
    return isinstance(x, (ArrayBase, VectorBase)) or getattr(type(x), "IsTensor", False)


def _require_vector(name, *vs):
    for v in vs:
        if not isinstance(v, VectorBase):
            raise TypeError(f"frostjit.{name}(): expected static vectors (e.g. Array3f), got {type(v).__name__}")


def cross(a, b):
    """Cross product of two 3-vectors."""
    _require_vector("cross", a, b)
    if len(a) != 3 or len(b) != 3:
        raise ValueError(f"cross(): needs 3-vectors, got sizes {len(a)} and {len(b)}")
    comps = [fma(a[1], b[2], -(a[2] * b[1])), fma(a[2], b[0], -(a[0] * b[2])), fma(a[0], b[1], -(a[1] * b[0]))]
    return vector_from_components(type(a), comps)     # cross(Array3f, ad.Array3f) is an ad.Array3f


def squared_norm(v, axis=..., mode=None, keepdims=False):
    """Squared 2-norm: ``dot(v, v)`` by default (lane by lane for a static vector, over the
    elements of a 1-D array), else ``sum(v * v, axis, mode, keepdims)`` (see :func:`frostjit.sum`).
    """
    if axis is ... and mode is None and not keepdims and not getattr(type(v), "IsTensor", False):
        return dot(v, v)        # (a tensor: the sum over every axis, below)
    sq = [x * x for x in v] if not _jit(v) and not isinstance(v, (int, float, np.number)) else v * v
    r = fsum(sq, axis=axis, mode=mode, keepdims=keepdims)
    if not keepdims and getattr(type(r), "IsTensor", False) and r.shape and math.prod(r.shape) == 1:
        # Dr.Jit: a tensor norm over axes that leave one entry is a whole-array norm, a 0-d
        # tensor (norm of shape (1, 1, 5) over axis 2: shape (), where sum gives (1, 1))
        r = type(r)(r.array, ())
    return r


def norm(v, axis=..., mode=None, keepdims=False):
    """2-norm ``sqrt(squared_norm(v, axis, mode, keepdims))``: the Euclidean length of a static
    vector (lane by lane) or of a 1-D array's elements; ``axis=None`` over everything."""
    r = squared_norm(v, axis, mode, keepdims)
    return sqrt(r) if _jit(r) else math.sqrt(r)


def normalize(v):
    """``v / norm(v)``."""
    _require_vector("normalize", v)
    return v * rsqrt(squared_norm(v))
