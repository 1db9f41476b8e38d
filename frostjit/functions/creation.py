"""Array creation: ``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``opaque``."""
from __future__ import annotations

import math
import operator


from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..array import registry
from ..trace import ops
from ..trace.state import state


def _check_type(who, dtype):
    if not (isinstance(dtype, type) and issubclass(dtype, (ArrayBase, VectorBase))):
        raise TypeError(f"{who}(): 'dtype' must be a frostjit array type (e.g. Float), got {dtype!r}")


def _check_size(who, size):
    if isinstance(size, (tuple, list)) and len(size) == 1:
        size = size[0]
    if hasattr(size, "__symbolic_size__") and isinstance(size, int):
        n = size        # a width inside a frozen function stays symbolic; the check below is guarded
    else:
        try:
            n = operator.index(size)      # as Dr.Jit and NumPy: a float size is an error
        except TypeError:
            raise TypeError(f"{who}(): the size must be an integer, got {size.__class__.__name__}") from None
    if n < 0:
        raise ValueError(f"{who}(): the size must be >= 0, got {n}")
    return n


def _as_int(v):
    """``int(v)``, except that a width inside a frozen function stays symbolic."""
    return v if hasattr(v, "__symbolic_size__") and isinstance(v, int) else int(v)


def _sized_literal(dtype, value, size):
    rec = state.recorder
    if rec is not None and hasattr(size, "__symbolic_size__"):
        return dtype._from_node(rec.sized_literal(dtype._vt, value, size))
    return dtype._from_node(ops.literal(dtype._vt, value, int(size)))


def full(dtype, value, shape=1):
    """An array of ``shape`` elements all equal to ``value`` (a literal: no memory until needed)."""
    _check_type("full", dtype)
    size = _check_size("full", shape)
    if issubclass(dtype, VectorBase):
        return dtype._from_components([full(dtype._elem, value, size) for _ in range(dtype._n)])
    return _sized_literal(dtype, value, size)


def zeros(dtype, shape=1):
    """An array of zeros."""
    return full(dtype, 0, shape)


def ones(dtype, shape=1):
    """An array of ones."""
    return full(dtype, 1, shape)


def empty(dtype, shape=1):
    """An uninitialized array (its contents are unspecified until written)."""
    _check_type("empty", dtype)
    size = _check_size("empty", shape)
    if issubclass(dtype, VectorBase):
        return dtype._from_components([empty(dtype._elem, size) for _ in range(dtype._n)])
    if hasattr(size, "__symbolic_size__"):
        return zeros(dtype, size)
    from ..backend import current_backend
    return dtype._from_node(ops.data(dtype._vt, current_backend().alloc(dtype._vt, size), size))


def opaque(dtype, value, shape=1):
    """Like :func:`full`, but stored in memory, so the value is never folded into kernels."""
    from .evaluation import make_opaque
    r = full(dtype, value, shape)
    make_opaque(r)
    return r


def _counter(dtype, size):
    """The lane index 0, 1, ..., size-1 as ``dtype``."""
    from ..trace.dtypes import UInt32, Int64
    rec = state.recorder
    if rec is not None and hasattr(size, "__symbolic_size__"):
        node = rec.sized_counter(size)
    else:
        n = int(size)
        idx_vt = UInt32 if n <= 2**32 else Int64
        node = ops.literal(idx_vt, 0, 1) if n == 1 else ops.make("counter", idx_vt, (), size=n)
    idx_cls = registry.flat_type(dtype._backend, node.vt)
    return dtype(idx_cls._from_node(node)) if dtype._vt is not node.vt else dtype._from_node(node)


def arange(dtype, start=None, stop=None, step=1):
    """``[start, start + step, ...)`` up to ``stop`` (exclusive), like ``numpy.arange``.

    ``arange(T, n)`` gives ``0, 1, ..., n-1``.
    """
    _check_type("arange", dtype)
    if issubclass(dtype, VectorBase):
        raise TypeError("arange(): expects a 1-D array type such as UInt32 or Float")
    if stop is None:
        start, stop = 0, (start if start is not None else 0)
    if step == 0:
        raise ValueError("arange(): step must be non-zero")
    # (one computation for plain and symbolic bounds: a frozen function guards what it decides)
    size = max(0, -(-(_as_int(stop) - _as_int(start)) // int(step))) if isinstance(step, int) \
        else max(0, math.ceil((stop - start) / step))
    size = _check_size("arange", size)
    r = _counter(dtype, size)
    if step != 1:
        r = r * step
    if not (isinstance(start, int) and start == 0):
        r = r + start
    return r


def linspace(dtype, start, stop, num, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive if ``endpoint``)."""
    _check_type("linspace", dtype)
    num = _check_size("linspace", num)
    div = (num - 1) if endpoint else num
    rec = state.recorder
    if rec is not None and hasattr(num, "__symbolic_size__"):
        step = (stop - start) / rec.symbolic_max(div, 1)
    else:
        step = (stop - start) / (int(div) if int(div) > 0 else 1)
    i = _counter(dtype, num)
    from .math import fma
    return fma(i, step, start)
