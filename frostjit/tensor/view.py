"""Strided views: every rearrangement of a tensor's elements as one lazy gather.

Slicing, transposes, broadcasting and integer indexing all read element
``offset + sum(c[k] * strides[k])`` of the source for the output element at coordinates ``c``
(NumPy's strided model, with strides counted in elements; a stride may be negative or 0).
:func:`strided` builds that index from the lane counter with a few integer operations and
gathers: the result is lazy and fuses into whatever consumes it.  Axes of extent 1 are dropped
and neighbouring axes that are contiguous in the source merged first, so a transpose of a
``(N, 3)`` tensor costs one ``//`` and one ``%``, and a view that is the whole source is no
gather at all.
"""
from __future__ import annotations

from ..array.flat import ArrayBase, is_flat
from ..functions.creation import arange
from ..functions.evaluation import width
from ..functions.memory import gather
from ..array import registry as array_registry
from ..trace.dtypes import UInt32, UInt64
from .base import handle, size_of


def index_type(backend, n):
    """The index array class for positions below ``n``: ``UInt32`` (gathers and scatters with
    32-bit indices reach 2^31 elements), else ``UInt64``."""
    return array_registry.flat_type(backend, UInt32 if n <= 2**31 else UInt64)


def c_strides(shape: tuple) -> tuple:
    """The element strides of a C-ordered (row-major) array of ``shape``."""
    out = []
    s = 1
    for d in reversed(shape):
        out.append(s)
        s = s * d
    return tuple(reversed(out))


def merge_axes(shape: tuple, strides: tuple) -> list:
    """``[(extent, stride)]`` with extent-1 axes dropped and axes ``k, k+1`` merged where
    ``strides[k] == strides[k+1] * shape[k+1]`` (one contiguous run of the source)."""
    merged: list = []
    for e, s in zip(shape, strides):
        if e == 1:
            continue
        if merged and merged[-1][1] == s * e:
            merged[-1] = (merged[-1][0] * e, s)
        else:
            merged.append((e, s))
    return merged


def offsets(backend, shape: tuple, strides: tuple, offset=0, limit=None):
    """The flat source position of every element of a strided view, as an index array of
    ``size_of(shape)`` lanes (``limit``: the size of the source, which decides the index
    type); a Python int when the view has a single element."""
    axes = merge_axes(shape, strides)
    total = size_of(shape)
    if not axes:
        return offset
    n = total if limit is None else (limit if limit > total else total)
    idx = arange(index_type(backend, n), total)
    if total == 0:
        return idx      # (an empty view: no arithmetic, an empty operand does not broadcast)
    src = offset
    below = 1                       # product of the extents inside the axis being visited
    for k in range(len(axes) - 1, -1, -1):
        e, s = axes[k]
        if s != 0:
            c = idx if below == 1 else idx // below
            if k > 0:
                c = c % e
            term = c if s == 1 else c * s
            src = term if (type(src) is int and src == 0) else src + term
        below = below * e
    if is_flat(src):
        return src
    return idx * 0 + src            # every lane reads one element


def strided(array: ArrayBase, shape: tuple, strides: tuple, offset=0) -> ArrayBase:
    """The elements of ``array`` seen through a strided view (see the module docstring)."""
    n = width(array)
    axes = merge_axes(shape, strides)
    if len(axes) == 1 and axes[0][1] == 1 and axes[0][0] == n and type(offset) is int and offset == 0:
        return handle(array)        # the view is the whole source, in order
    idx = offsets(array._backend, shape, strides, offset, n)
    return gather(type(array), array, idx)
