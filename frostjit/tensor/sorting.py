"""``sort``, ``argsort``, ``argmin``, ``argmax`` and ``median`` of tensors along an axis.

The axis is moved last; each line is then handled as in :mod:`frostjit.functions.sorting` (the
order, the radix sort), with the line number as a second, more significant sort key (a stable
sort by it after the values keeps each line together and sorted).  Reached through the tensor's
``_fj_order`` hook.
"""
from __future__ import annotations

from ..array import registry as array_registry
from ..functions.creation import arange
from ..functions.evaluation import width
from ..functions.math import select
from ..functions.memory import gather
from ..functions import sorting as flat
from ..trace.dtypes import UInt32
from . import registry
from .axes import moveaxis


def _tensor(array, shape):
    return registry.tensor_of(type(array))._from_array(array, tuple(shape))


def _lines(t, axis, who):
    """``(k, moved, flat array, line length, index type, lane counter)`` for axis ``axis``."""
    shape = t.shape
    k = flat.check_axis(who, axis, len(shape))
    moved = t if k == len(shape) - 1 else moveaxis(t, k, -1)
    x = moved.array
    index_t = array_registry.flat_type(x._backend, UInt32)
    return k, moved, x, moved.shape[-1], index_t, arange(index_t, width(x))


def _back(t, k, r):
    return r if k == len(t.shape) - 1 else moveaxis(r, -1, k)


def _permutation(t, axis, descending, who):
    k, moved, x, n, index_t, idx = _lines(t, axis, who)
    key, bits = flat.sort_key(x)
    if descending:
        key, bits = ~key, key._vt.bits
    keys = [(key, bits)]
    n_lines = 1
    for d in moved.shape[:-1]:
        n_lines *= d
    if n_lines > 1:
        keys.append((idx // n, max(1, (n_lines - 1).bit_length())))
    perm = flat.sort_permutation(keys, index_t) if width(x) else idx
    return k, moved, x, n, perm


def sort(t, axis=-1, descending=False):
    k, moved, x, n, perm = _permutation(t, axis, descending, "sort")
    return _back(t, k, _tensor(gather(type(x), x, perm), moved.shape))


def argsort(t, axis=-1, descending=False):
    k, moved, x, n, perm = _permutation(t, axis, descending, "argsort")
    pos = perm - (perm // n) * n if n else perm
    return _back(t, k, _tensor(pos, moved.shape))


def _extreme(t, axis, keepdims, largest, who):
    if axis is None:
        r = flat._arg_extreme(who, t.array, None, False, largest)
        return _tensor(r, (1,) * len(t.shape)) if keepdims else r    # Dr.Jit: a UInt32 array
    k, moved, x, n, index_t, idx = _lines(t, axis, who)
    if n == 0:
        raise ValueError(f"frostjit.{who}(): axis {axis} has length 0")
    key, _ = flat.sort_key(x)
    line = idx // n
    pos = idx - line * n
    op = "max" if largest else "min"
    best = _tensor(key, moved.shape)._fj_reduce(op, who, -1, None, False, None, lambda v: None).array
    cand = select(key == gather(type(best), best, line), pos, index_t(0xFFFFFFFF))
    r = _tensor(cand, moved.shape)._fj_reduce("min", who, -1, None, False, None, lambda v: None).array
    out = _tensor(r, moved.shape[:-1] + ((1,) if keepdims else ()))
    return _back(t, k, out) if keepdims else out


def argmin(t, axis=None, keepdims=False):
    return _extreme(t, axis, keepdims, False, "argmin")


def argmax(t, axis=None, keepdims=False):
    return _extreme(t, axis, keepdims, True, "argmax")


def median(t, axis=-1, keepdims=False, return_index=False):
    if axis is None:
        v, i = flat.median(t.array, None, False, True)
        shape = (1,) * len(t.shape) if keepdims else ()
        v, i = _tensor(v, shape), _tensor(i, shape)
        return (v, i) if return_index else v
    k, moved, x, n, perm = _permutation(t, axis, False, "median")
    if n == 0:
        raise ValueError(f"frostjit.median(): axis {axis} has length 0")
    n_lines = width(x) // n
    index_t = array_registry.flat_type(x._backend, UInt32)
    start = arange(index_t, n_lines) * n
    chosen = gather(type(perm), perm, start + (n - 1) // 2)      # flat index of each line's median
    v = gather(type(x), x, chosen)
    i = chosen - start
    shape = moved.shape[:-1] + ((1,) if keepdims else ())
    v, i = _tensor(v, shape), _tensor(i, shape)
    if keepdims:
        v, i = _back(t, k, v), _back(t, k, i)
    return (v, i) if return_index else v


ORDER = {"sort": sort, "argsort": argsort, "argmin": argmin, "argmax": argmax, "median": median}
