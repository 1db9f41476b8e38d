"""Reshaping helpers of Dr.Jit's API: ``shape``, ``ravel``, ``unravel``, ``tile``, ``repeat``,
``reverse``, ``meshgrid``.  All are gathers over index arithmetic, so they stay lazy and fuse.
"""
from __future__ import annotations

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..array import registry
from ..trace.dtypes import UInt32
from .creation import arange
from .memory import gather


def _flat(x, who):
    if not isinstance(x, ArrayBase):
        raise TypeError(f"{who}(): expects a 1-D frostjit array, got {type(x).__name__}")
    return x


def _index_type(x):
    return registry.flat_type(x._backend, UInt32)


def shape(x) -> tuple:
    """Shape of a JIT array: ``(n,)`` for 1-D arrays, ``(k, n)`` for static vectors."""
    if isinstance(x, (ArrayBase, VectorBase)):
        return x.shape
    raise TypeError(f"shape(): expects a frostjit array, got {type(x).__name__}")


def ravel(x):
    """Flatten a static vector into one 1-D array, interleaved (``x0, y0, z0, x1, ...``)."""
    if isinstance(x, ArrayBase):
        return x
    if not isinstance(x, VectorBase):
        raise TypeError(f"ravel(): expects a frostjit array, got {type(x).__name__}")
    from .memory import scatter
    from .creation import empty
    n = len(x)
    w = max(len(c) for c in x)
    out = empty(x._elem, n * w)
    scatter(out, x, arange(_index_type(x[0]), w))
    return out


def unravel(dtype, x):
    """Inverse of :func:`ravel`: a static vector type from an interleaved 1-D array."""
    if not (isinstance(dtype, type) and issubclass(dtype, VectorBase)):
        raise TypeError(f"unravel(): 'dtype' must be a static vector type such as Array3f, got {dtype!r}")
    x = _flat(x, "unravel")
    n = dtype._n
    if len(x) % n:
        raise ValueError(f"unravel(): an array of size {len(x)} is not a multiple of {n} ({dtype.__name__})")
    return gather(dtype, x, arange(_index_type(x), len(x) // n))


def tile(x, count: int):
    """``[x, x, ..., x]`` (``count`` copies one after the other), like ``numpy.tile``."""
    x = _flat(x, "tile")
    n = len(x)
    if n == 0 or count == 0:
        return type(x)()
    return gather(type(x), x, arange(_index_type(x), n * count) % n)


def repeat(x, count: int):
    """Each element ``count`` times in a row, like ``numpy.repeat``."""
    x = _flat(x, "repeat")
    n = len(x)
    if n == 0 or count == 0:
        return type(x)()
    return gather(type(x), x, arange(_index_type(x), n * count) // count)


def reverse(x):
    """The elements in reverse order."""
    x = _flat(x, "reverse")
    n = len(x)
    if n == 0:
        return type(x)()
    return gather(type(x), x, (n - 1) - arange(_index_type(x), n))


def meshgrid(*args, indexing: str = "xy"):
    """Flattened coordinate grids of 1-D arrays, like ``numpy.meshgrid(...)`` raveled.

    With ``indexing="xy"`` (default) the first array varies fastest; ``"ij"`` makes the
    last one vary fastest.  Returns one 1-D array per argument, each of the product size.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [_flat(a, "meshgrid") for a in args]
    if len(arrays) < 2:
        return tuple(arrays)
    sizes = [len(a) for a in arrays]
    # NumPy's "xy" swaps the first two axes of "ij"
    order = list(range(len(arrays)))
    if indexing == "xy":
        order[0], order[1] = 1, 0
    total = 1
    for s in sizes:
        total *= s
    idx = arange(_index_type(arrays[0]), total)
    out = [None] * len(arrays)
    stride = 1
    for axis in reversed(order):              # the last axis of the grid varies fastest
        a = arrays[axis]
        k = idx if stride == 1 else idx // stride
        out[axis] = gather(type(a), a, k % sizes[axis])
        stride *= sizes[axis]
    return tuple(out)
