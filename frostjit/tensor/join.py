"""Joining and splitting tensors: ``concat``, ``stack``, ``split`` (Dr.Jit's and NumPy's semantics).

``concat`` is one lazy expression: each output element selects the input it falls in and
gathers from it (masked, so no input is read out of bounds), so the whole join fuses into the
kernel that consumes it.  ``split`` returns strided views (:mod:`.view`).
"""
from __future__ import annotations

import operator

from ..array.flat import ArrayBase, is_flat
from ..errors import IncompatibleArgumentsError, ShapeMismatchError
from ..functions.creation import arange
from ..functions.evaluation import width
from ..functions.math import select
from ..functions.memory import evaluate_together, gather
from .axes import as_tensor, expand_dims, normalize_axis, tensor_input
from .base import TensorBase, handle, size_of
from .view import c_strides, index_type, strided


def _common_type(items: list, who: str):
    """The array class shared by every input (``TypeError`` naming the first that differs)."""
    at = type(items[0]._array)
    for t in items[1:]:
        if type(t._array) is not at:
            raise TypeError(f"{who}: the inputs must have one type, got {type(items[0]).__name__} and "
                            f"{type(t).__name__}")
    return at


def concat(arrays, axis=0):
    """Join tensors (or 1-D arrays) along an existing axis.

    Parameters
    ----------
    arrays : sequence of tensors or of 1-D arrays
        One type; equal shapes except along ``axis``.
    axis : int or None
        Negative values count from the end.  ``None`` joins the flattened inputs and returns
        a 1-D array (Dr.Jit); 1-D arrays are joined into a 1-D array.
    """
    who = "concat()"
    items = list(arrays)
    if not items:
        raise ValueError(f"{who}: needs at least one array")
    flat_inputs = all(is_flat(a) for a in items)
    if axis is None or flat_inputs:
        parts = [a._array if isinstance(a, TensorBase) else a for a in items]
        if not all(is_flat(p) for p in parts):
            raise TypeError(f"{who}: expected tensors or 1-D arrays, got "
                            + ", ".join(type(a).__name__ for a in items))
        return _join_flat(parts, who)
    items = [as_tensor(a, who) for a in items]
    _common_type(items, who)
    shapes = [t.shape for t in items]
    nd = len(shapes[0])
    if nd == 0:
        raise ValueError(f"{who}: cannot concatenate 0-dimensional tensors (use stack())")
    k = normalize_axis(axis, nd, who)
    for s in shapes[1:]:
        if len(s) != nd or any(a != b for j, (a, b) in enumerate(zip(s, shapes[0])) if j != k):
            raise ValueError(f"{who}: the shapes must agree except along axis {k}, got "
                             + " and ".join(str(x) for x in shapes))
    outer = size_of(shapes[0][:k])
    inner = size_of(shapes[0][k + 1:])
    pieces = [(t._array, s[k] * inner) for t, s in zip(items, shapes)]
    array = _join_rows(pieces, outer, who)
    out_shape = shapes[0][:k] + (sum(s[k] for s in shapes),) + shapes[0][k + 1:]
    return type(items[0])._from_array(array, out_shape)


def _join_flat(parts: list, who: str) -> ArrayBase:
    at = type(parts[0])
    for p in parts[1:]:
        if type(p) is not at:
            raise TypeError(f"{who}: the inputs must have one type, got {at.__name__} and {type(p).__name__}")
    return _join_rows([(p, width(p)) for p in parts], 1, who)


def _join_rows(pieces: list, rows, who: str) -> ArrayBase:
    """Row ``r`` of the result is row ``r`` of each piece, one after the other; piece ``j`` is
    ``(array, row length)``.  One select per piece over masked gathers (lazy); each gather is
    active only on its own columns, so nothing is read out of bounds (``JitFlag.Debug``)."""
    pieces = [(a, w) for a, w in pieces if w != 0] or pieces[:1]
    if len(pieces) == 1:
        return handle(pieces[0][0])
    evaluate_together([a for a, _ in pieces])     # one kernel per width, not one per piece
    at = type(pieces[0][0])
    starts = [0]
    for _, w in pieces:
        starts.append(starts[-1] + w)
    row = starts[-1]
    total = rows * row
    limit = total
    for a, _ in pieces:
        n = width(a)
        limit = limit if limit > n else n
    idx = arange(index_type(pieces[0][0]._backend, limit), total)
    r = idx // row if rows != 1 else None
    c = idx % row if rows != 1 else idx
    out = None
    for j in range(len(pieces) - 1, -1, -1):
        a, w = pieces[j]
        lo, hi = starts[j], starts[j + 1]
        pos = c - lo if lo != 0 else c
        if r is not None:
            pos = r * w + pos
        below = c < hi
        if out is None:                         # the last piece: every column from lo on
            out = gather(at, a, pos, c >= lo)
        elif lo == 0:
            out = select(below, gather(at, a, pos, below), out)
        else:
            inside = below & (c >= lo)
            out = select(inside, gather(at, a, pos, inside), out)
    return out


def stack(arrays, axis=0):
    """Join tensors of one shape (or 1-D arrays of one size) along a new axis at ``axis``
    (negative positions count from the end of the result); 1-D arrays become tensors of
    shape ``(n,)`` first, so ``stack([x, y, z], axis=1)`` is an ``(n, 3)`` tensor."""
    who = "stack()"
    items = [as_tensor(a, who) for a in arrays]
    if not items:
        raise ShapeMismatchError(f"{who}: needs at least one array")
    shape = items[0].shape
    for t in items[1:]:
        if t.shape != shape:
            # (a ValueError as NumPy's, a TypeError as Dr.Jit's, and a RuntimeError)
            raise IncompatibleArgumentsError(f"{who}: all inputs must have one shape (Dr.Jit: the same shape), got {shape} and "
                                             f"{t.shape}")
    k = normalize_axis(axis, len(shape) + 1, who)
    return concat([expand_dims(t, k) for t in items], axis=k)


def split(value, indices_or_sections, axis=0) -> list:
    """Split a tensor along ``axis`` into ``N`` equal parts (an int; the length must be a
    multiple of ``N``) or before the given positions (a sequence: ``[:i], [i:j], [j:]``).
    Returns a list of tensors (strided views)."""
    who = "split()"
    t = tensor_input(value, who)
    shape = t.shape
    k = normalize_axis(axis, len(shape), who)
    n = shape[k]
    if isinstance(indices_or_sections, (list, tuple)):
        cuts = [operator.index(i) for i in indices_or_sections]
    else:
        parts = operator.index(indices_or_sections)
        if parts <= 0:
            raise ValueError(f"{who}: the number of sections must be > 0, got {parts}")
        if n % parts:
            raise ShapeMismatchError(f"{who}: tensor of size {n} along axis {k} cannot be equally split into "
                                     f"{parts} parts (use array_split() for unequal splits)")
        cuts = [n // parts * i for i in range(1, parts)]
    bounds = [0] + cuts + [n]
    st = c_strides(shape)
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = min(max(lo if lo >= 0 else lo + n, 0), n)
        hi = min(max(hi if hi >= 0 else hi + n, 0), n)
        ext = hi - lo if hi > lo else 0
        piece = shape[:k] + (ext,) + shape[k + 1:]
        out.append(type(t)._from_array(strided(t._array, piece, st, lo * st[k]), piece))
    return out
