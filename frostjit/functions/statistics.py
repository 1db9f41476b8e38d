"""Variance and standard deviation: ``fj.var``, ``fj.std`` (Dr.Jit 1.5)."""
from __future__ import annotations

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from .evaluation import width
from .math import sqrt
from .reduce import _axes, mean, sum as fsum


def var(value, axis=..., mode=None, keepdims=False, ddof=0):
    """Variance along ``axis``: the two-pass ``sum((value - mean)**2) / (N - ddof)``.

    Parameters
    ----------
    value : array, static vector, tensor, sequence or number
    axis, mode, keepdims
        As :func:`frostjit.sum` (``...``: axis 0, every axis of a tensor; ``None``: all).
    ddof : int
        Delta degrees of freedom: ``ddof=1`` is the sample variance.

    Returns
    -------
    The variance (a ``Float`` array for integer input; a Python float for Python input).
    ``N - ddof <= 0`` gives inf or NaN, as the division does.

    Examples
    --------
    >>> fj.var(Float(1, 2, 3, 4))
    [1.25]
    >>> fj.var(Float(1, 2, 3, 4), ddof=1)
    [1.66667]
    """
    if not isinstance(ddof, (int, np.integer)) or isinstance(ddof, bool):
        raise TypeError(f"frostjit.var(): 'ddof' must be an int, got {ddof!r}")
    if isinstance(value, (bool, int, float, np.number)):
        return 0.0
    m = mean(value, axis=axis, mode=mode, keepdims=True) if getattr(type(value), "IsTensor", False) \
        else mean(value, axis=axis, mode=mode)
    if isinstance(value, (list, tuple)):
        items = list(value)
        d = [(x - m) * (x - m) for x in items]
        total = fsum(d, axis=axis)
        n = len(items) * (width(*items) if axis is None and isinstance(items[0], ArrayBase) else 1)
        return total / (n - ddof)
    dev = value - m
    total = fsum(dev * dev, axis=axis, mode=mode, keepdims=keepdims)
    return total / (_count(value, axis) - ddof)


def _count(value, axis):
    """The number of entries each result combines."""
    if getattr(type(value), "IsTensor", False):
        shape = value.shape
        if axis is ... or axis is None:
            axes = range(len(shape))
        else:
            axes = [a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))]
        n = 1
        for a in axes:
            n *= shape[a]
        return n
    if isinstance(value, ArrayBase):
        return width(value) if _axes("var", value, axis, 1) else 1
    if isinstance(value, VectorBase):
        axes = _axes("var", value, axis, 2)
        n = 1
        if 0 in axes:
            n *= len(value)
        if 1 in axes:
            n *= width(*value)
        return n
    raise TypeError(f"frostjit.var(): unsupported input {type(value).__name__}")


def std(value, axis=..., mode=None, keepdims=False, ddof=0):
    """Standard deviation along ``axis``: ``sqrt(var(value, ...))`` (see :func:`var`).

    Examples
    --------
    >>> fj.std(Float(1, 2, 3, 4))
    [1.11803]
    """
    v = var(value, axis=axis, mode=mode, keepdims=keepdims, ddof=ddof)
    return v ** 0.5 if isinstance(v, float) else sqrt(v)
