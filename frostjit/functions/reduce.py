"""Reductions and scans: ``sum``, ``prod``, ``min``, ``max``, ``mean``, ``dot``, ``all``,
``any``, ``none``, ``count``, ``prefix_sum``, ``cumsum``, ``compress``.

On a 1-D array a reduction returns a size-1 array of the same type, as in
Dr.Jit; on a static vector it combines the components (``sum(Array3f)`` is a
``Float``); on Python scalars and sequences it works like the builtins.
"""
from __future__ import annotations

import builtins

from ..array.flat import ArrayBase, apply
from ..array.vector import VectorBase
from ..schedule import memops
from ..trace.dtypes import Bool, UInt32
from ..trace.state import state

_COMBINE = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}


def _combine_components(op, v: VectorBase):
    from .math import minimum, maximum
    f = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "min": minimum, "max": maximum,
         "and": lambda a, b: a & b, "or": lambda a, b: a | b}[op]
    acc = v[0]
    for c in list(v)[1:]:
        acc = f(acc, c)
    return acc


def _reduce(op: str, x, name: str):
    if isinstance(x, VectorBase):
        return _combine_components(op, x)
    if isinstance(x, ArrayBase):
        if op in ("add", "mul", "min", "max") and x._vt is Bool:
            raise TypeError(f"frostjit.{name}(): not defined for Bool arrays (use count/all/any)")
        node = memops.reduce(op, x._node)
        out = type(x)._from_node(node)
        if x._ad is not None and state.ad_hook is not None:
            state.ad_hook.on_op("reduce_" + op, out, (x,))
        return out
    if isinstance(x, (int, float)):
        return x
    seq = list(x)
    if op == "add":
        return builtins.sum(seq)
    if op == "mul":
        r = 1
        for v in seq:
            r = r * v
        return r
    return builtins.min(seq) if op == "min" else builtins.max(seq)


def sum(value, axis=None):  # noqa: A001
    """Sum of the elements (1-D array -> size-1 array; static vector -> sum of components)."""
    return _reduce("add", value, "sum")


def prod(value, axis=None):
    """Product of the elements."""
    return _reduce("mul", value, "prod")


def min(value, axis=None):  # noqa: A001
    """Smallest element (NaN-propagating); +inf for an empty float array."""
    return _reduce("min", value, "min")


def max(value, axis=None):  # noqa: A001
    """Largest element (NaN-propagating); -inf for an empty float array."""
    return _reduce("max", value, "max")


def mean(value, axis=None):
    """Arithmetic mean: ``sum(value) / width(value)``."""
    from .evaluation import width
    if isinstance(value, VectorBase):
        return sum(value) / len(value)
    n = width(value)
    return sum(value) / n


def dot(a, b):
    """Dot product: of the components for static vectors (a 1-D array), else ``sum(a * b)``."""
    if isinstance(a, VectorBase) or isinstance(b, VectorBase):
        if not (isinstance(a, VectorBase) and isinstance(b, VectorBase)) or len(a) != len(b):
            raise TypeError(f"dot(): needs two static vectors of one size, got {type(a).__name__} "
                            f"and {type(b).__name__}")
        from .math import fma
        acc = a[0] * b[0]
        for k in range(1, len(a)):
            acc = fma(a[k], b[k], acc)
        return acc
    return sum(a * b)


def _mask_reduce(op, x, name):
    if isinstance(x, VectorBase):
        if x._elem._vt is not Bool:
            raise TypeError(f"frostjit.{name}(): expects a Bool array, got {type(x).__name__}")
        return _combine_components(op, x)     # per lane, like sum(Array3f) (Dr.Jit: axis 0)
    if isinstance(x, (bool,)):
        return x
    if not (isinstance(x, ArrayBase) and x._vt is Bool):
        raise TypeError(f"frostjit.{name}(): expects a Bool array, got {type(x).__name__}")
    return type(x)._from_node(memops.reduce(op, x._node))


def all(value, axis=None):  # noqa: A001
    """``True`` if every element is true (size-1 Bool array)."""
    return _mask_reduce("and", value, "all")


def any(value, axis=None):  # noqa: A001
    """``True`` if some element is true (size-1 Bool array)."""
    return _mask_reduce("or", value, "any")


def none(value, axis=None):
    """``True`` if no element is true (size-1 Bool array)."""
    r = any(value)
    return not r if isinstance(r, bool) else ~r


def count(value, axis=None):
    """Number of true elements of a Bool array (size-1 ``UInt32``); per lane for a static vector."""
    if isinstance(value, VectorBase):
        from ..array.registry import flat_type
        if value._elem._vt is not Bool:
            raise TypeError(f"count(): expects a Bool array, got {type(value).__name__}")
        acc = None
        for c in value:
            u = flat_type(c._backend, UInt32)(c)
            acc = u if acc is None else acc + u
        return acc
    if not (isinstance(value, ArrayBase) and value._vt is Bool):
        raise TypeError(f"count(): expects a Bool array, got {type(value).__name__}")
    from ..array.registry import flat_type
    return sum(flat_type(value._backend, UInt32)(value))


def prefix_sum(value, exclusive: bool = True):
    """Prefix sum; exclusive by default (``[0, x0, x0+x1, ...]``), as in Dr.Jit."""
    if not isinstance(value, ArrayBase):
        raise TypeError(f"prefix_sum(): expects a 1-D JIT array, got {type(value).__name__}")
    if value._vt is Bool:       # counting a mask (compaction offsets): as UInt32
        from ..array.registry import flat_type
        value = flat_type(value._backend, UInt32)(value)
    out = type(value)._from_node(memops.prefix_sum(value._node, exclusive))
    if value._ad is not None and state.ad_hook is not None:
        state.ad_hook.on_op("prefix_sum_excl" if exclusive else "prefix_sum_incl", out, (value,))
    return out


def cumsum(value):
    """Inclusive prefix sum (``numpy.cumsum``)."""
    return prefix_sum(value, exclusive=False)


def compress(mask):
    """Indices (``UInt32``) of the true entries of a Bool array; the size depends on the data."""
    if not (isinstance(mask, ArrayBase) and mask._vt is Bool):
        raise TypeError(f"compress(): expects a Bool array, got {type(mask).__name__}")
    from ..array.registry import flat_type
    return flat_type(mask._backend, UInt32)._from_node(memops.compress(mask._node))
