"""``tile`` and ``repeat`` (Dr.Jit 1.5, ``numpy.tile`` / ``numpy.repeat``): gathers over index
arithmetic for 1-D arrays, strided views for tensors, a prefix scan for per-element counts.

(Separate from :mod:`.shape`, which the reductions and scans import: ``repeat`` with per-element
counts needs both.)
"""
from __future__ import annotations

import operator

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..errors import AxisError, IncompatibleArgumentsError
from ..tree import transform
from .creation import arange, zeros
from .evaluation import width
from .memory import ReduceOp, gather, scatter
from .reduce import prefix_sum, sum as sum_
from .scan import prefix_reduce
from .shape import _index_type, _is_tensor


def _count(who: str, count, what: str) -> int:
    """A repetition count: an int >= 0 (a float or negative count raises, as in Dr.Jit)."""
    try:
        k = operator.index(count)
    except TypeError:
        raise TypeError(f"{who}(): '{what}' must be an int, got {type(count).__name__} {count!r}") from None
    if k < 0:
        raise ValueError(f"{who}(): '{what}' must be >= 0, got {k}")
    return k


def tile(x, reps):
    """``numpy.tile``: ``x`` repeated ``reps`` times (Dr.Jit 1.5).

    Parameters
    ----------
    x : 1-D array, static vector, tensor or PyTree
        A static vector tiles each component, a PyTree each of its arrays (its Python values
        are kept).
    reps : int or tuple of ints
        An int (or a 1-tuple) tiles a 1-D array (``reps == 1`` returns ``x`` itself); a longer
        tuple tiles a tensor along several axes as ``numpy.tile`` does (a 1-D array becomes
        a tensor first).  Entries must be >= 0 (``ValueError``).

    Examples
    --------
    >>> fj.tile(Float(1, 2), 3)
    [1, 2, 1, 2, 1, 2]
    >>> fj.tile(Float(1, 2, 3), (2, 3)).shape
    (2, 9)
    """
    reps = _reps("tile", reps)
    if _is_tensor(x):
        return x._fj_tile(reps)
    if _is_scalar_arrayx(x) and len(reps) == 1:
        return type(x)(list(x) * reps[0])
    if not isinstance(x, ArrayBase):
        return transform(x, lambda a: tile(a, reps), who="tile", root="x")
    if len(reps) > 1:
        return _as_tensor(x, "tile")._fj_tile(reps)    # numpy.tile of a 1-D array by a tuple
    if reps[0] == 1:
        return x
    return _tile(x, reps[0])


def _reps(who: str, reps) -> tuple:
    """``reps`` as a tuple of ints >= 0."""
    if isinstance(reps, (tuple, list)):
        return tuple(_count(who, r, "reps") for r in reps)
    return (_count(who, reps, "reps"),)


def _as_tensor(x, who: str):
    """The 1-D array ``x`` as a tensor of shape ``(n,)`` (Dr.Jit promotes it there)."""
    cls = registry.find_type(type(x).__meta__.with_(kind="tensor", shape=()))
    if cls is None:
        raise TypeError(f"{who}(): {type(x).__name__} has no tensor type")
    return cls(x)


def _is_scalar_arrayx(x) -> bool:
    """The scalar backend's ``ArrayXf`` (its 1-D arrays, as Dr.Jit's ``drjit.scalar.ArrayXf``)."""
    return isinstance(x, VectorBase) and not x.IsJIT and x.IsDynamic and x.Depth == 1


def _tile(x, count: int):
    n = width(x)        # not len(x): inside a frozen function, width() stays symbolic
    if n == 0 or count == 0:
        return type(x)()
    return gather(type(x), x, arange(_index_type(x, n * count), n * count) % n)


def repeat(x, repeats, axis=None):
    """``numpy.repeat``: each element ``repeats`` times in a row (Dr.Jit 1.5).

    Parameters
    ----------
    x : 1-D array, static vector, tensor or PyTree
        A static vector repeats each component, a PyTree each of its arrays.
    repeats : int or 1-D integer array
        An int >= 0 (``1`` returns ``x`` itself), or one count per element (per entry along
        ``axis`` for a tensor); its size must match (``RuntimeError``).
    axis : int, optional
        Tensors only: the axis to repeat along; ``None`` flattens first, as NumPy.

    Examples
    --------
    >>> fj.repeat(Float(1, 2), 3)
    [1, 1, 1, 2, 2, 2]
    >>> fj.repeat(Float(10, 20, 30), UInt32(1, 2, 3))
    [10, 20, 20, 30, 30, 30]
    """
    if not isinstance(repeats, ArrayBase):
        repeats = _count("repeat", repeats, "repeats")
    if _is_tensor(x):
        return x._fj_repeat(repeats, axis)
    if axis not in (None, 0, -1):
        raise AxisError(f"repeat(): axis {axis!r} is out of bounds for a 1-D array (axis applies to tensors)")
    if _is_scalar_arrayx(x) and isinstance(repeats, int):
        return type(x)([v for v in x for _ in range(repeats)])
    if not isinstance(x, ArrayBase):
        return transform(x, lambda a: repeat(a, repeats), who="repeat", root="x")
    if isinstance(repeats, ArrayBase):
        return gather(type(x), x, repeat_index(repeats, width(x), "repeat"))
    if repeats == 1:
        return x
    return _repeat(x, repeats)


def repeat_index(counts, size, who: str):
    """For element counts ``counts`` (one per entry of an axis of ``size`` entries), the entry
    each output position reads: ``i`` repeated ``counts[i]`` times (``numpy.repeat(arange(size),
    counts)``).  Reads the total back (the output size depends on the data)."""
    if not counts._vt.is_integral:
        raise TypeError(f"{who}(): 'repeats' must be an int or an integer array, got {type(counts).__name__}")
    if width(counts) != size:
        raise IncompatibleArgumentsError(f"{who}(): 'repeats' array of size {width(counts)} does not match input "
                                         f"size {size}")
    u32 = _index_type(counts, size)
    counts = u32(counts)
    offsets = prefix_sum(counts)                   # where each entry's run starts
    total = int(sum_(counts)[0]) if size else 0
    if total == 0:
        return u32()
    starts = zeros(u32, total)
    # each entry with a run writes its index at the run's start; a running maximum fills the rest
    scatter(starts, arange(u32, size), offsets, counts > 0)
    return prefix_reduce(ReduceOp.Max, starts, exclusive=False)


def _repeat(x, count: int):
    n = width(x)
    if n == 0 or count == 0:
        return type(x)()
    return gather(type(x), x, arange(_index_type(x, n * count), n * count) // count)
