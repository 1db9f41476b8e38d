"""NumPy-style stacking and selection on tensors (Dr.Jit 1.5): ``hstack``, ``vstack``/``row_stack``,
``dstack``, ``column_stack``, ``array_split``, ``take``, ``take_interp``, ``slice_index``.

All are compositions of :func:`~frostjit.tensor.join.concat`, :func:`~frostjit.tensor.join.split`,
reshapes and tensor indexing (gathers and strided views), so they are lazy, differentiable and
work in frozen functions.  Plain 1-D arrays are taken as tensors of shape ``(n,)``.
"""
from __future__ import annotations

import math
import operator

from ..array import registry as array_registry
from ..array.flat import ArrayBase, is_flat
from ..functions.creation import arange
from ..functions.evaluation import width
from ..functions.math import clip, floor, minimum
from ..trace.dtypes import UInt32
from . import registry
from .axes import as_tensor, normalize_axis, reshape, tensor_input
from .base import TensorBase, size_of
from .join import concat, split


def _tensors(arrays, who: str) -> list:
    items = [as_tensor(a, who) for a in arrays]
    if not items:
        raise ValueError(f"{who}: needs at least one array")
    return items


def _at_least(t, nd: int, where: str):
    """``t`` with ones added to reach ``nd`` dimensions: a 1-D ``(n,)`` becomes ``(1, n)`` for
    ``vstack`` (``where="front"``), ``(1, n, 1)``/``(m, n, 1)`` for ``dstack`` (``"both"``)."""
    shape = t.shape
    if len(shape) >= nd:
        return t
    if where == "front":
        new = (1,) * (nd - len(shape)) + shape
    elif len(shape) == 0:
        new = (1,) * nd
    elif len(shape) == 1:
        new = (1,) + shape + (1,) * (nd - 2)
    else:
        new = shape + (1,) * (nd - len(shape))
    return reshape(t, new)


def hstack(arrays):
    """Join along the second axis (the first for 1-D inputs).

    Examples
    --------
    >>> fj.hstack([TensorXf([[1, 2], [3, 4]]), TensorXf([[5], [6]])]).shape
    (2, 3)
    """
    items = _tensors(arrays, "hstack()")
    return concat(items, axis=0 if all(len(t.shape) == 1 for t in items) else 1)


def vstack(arrays):
    """Join along the first axis; 1-D inputs ``(n,)`` become rows ``(1, n)`` (the result is at
    least 2-D).  ``row_stack`` is the same function."""
    items = [_at_least(t, 2, "front") for t in _tensors(arrays, "vstack()")]
    return concat(items, axis=0)


row_stack = vstack


def dstack(arrays):
    """Join along the third axis: ``(n,)`` becomes ``(1, n, 1)`` and ``(m, n)`` ``(m, n, 1)``
    first (the result is at least 3-D)."""
    items = [_at_least(t, 3, "both") for t in _tensors(arrays, "dstack()")]
    return concat(items, axis=2)


def column_stack(arrays):
    """1-D inputs ``(n,)`` as columns ``(n, 1)`` of a 2-D tensor; 2-D and higher inputs joined
    along axis 1 as they are (as :func:`hstack`)."""
    items = [reshape(t, t.shape + (1,)) if len(t.shape) == 1 else t for t in _tensors(arrays, "column_stack()")]
    return concat(items, axis=1)


def array_split(value, sections, axis=0) -> list:
    """Split a tensor into ``sections`` nearly equal parts along ``axis``: the first
    ``n % sections`` parts have one element more (NumPy's ``array_split``).

    Raises
    ------
    TypeError
        For a 1-D array (as Dr.Jit: pass a tensor).
    """
    who = "array_split()"
    tensor_input(value, who)
    parts = operator.index(sections)
    if parts <= 0:
        raise ValueError(f"{who}: the number of sections must be > 0, got {parts}")
    k = normalize_axis(axis, len(value.shape), who)
    n = value.shape[k]
    base, extra = divmod(n, parts)
    cuts, at = [], 0
    for i in range(parts - 1):
        at += base + (1 if i < extra else 0)
        cuts.append(at)
    return split(value, cuts, axis=k)


def take(value, index, axis=0):
    """``value[..., index, ...]`` with ``index`` at position ``axis``: an int removes the axis, a
    1-D integer array replaces it by the array's length.  Negative ints count from the end.

    Examples
    --------
    >>> fj.take(TensorXf([[1, 2, 3], [4, 5, 6]]), UInt32(2, 0), axis=1)
    [[3, 1], [6, 4]]
    """
    who = "take()"
    if not isinstance(value, TensorBase):
        raise TypeError(f"{who}: expected a tensor, got {type(value).__name__}")
    k = normalize_axis(axis, len(value.shape), who)
    if not is_flat(index):
        index = operator.index(index)
    out = value[(slice(None),) * k + (index,)]
    return _drop_axis(out, k) if is_flat(index) and width(index) == 1 else out


def _drop_axis(t, k: int):
    """``t`` without its axis ``k`` (of length 1): Dr.Jit's ``take``/``take_interp`` treat a
    size-1 index array as a number, so ``take(t, UInt32(1), axis=0)`` has ``t.shape[1:]``."""
    return reshape(t, t.shape[:k] + t.shape[k + 1:])


def take_interp(value, pos, axis=0):
    """Like :func:`take` with fractional positions: linear interpolation between the two
    neighbouring entries along ``axis`` (positions are clamped to ``[0, n - 1]``).

    ``pos`` is a Python float (the axis is removed) or a 1-D float array (the axis is replaced
    by its length).
    """
    who = "take_interp()"
    if not isinstance(value, TensorBase):
        raise TypeError(f"{who}: expected a tensor, got {type(value).__name__}")
    shape = value.shape
    k = normalize_axis(axis, len(shape), who)
    n = shape[k]
    if n == 0:
        raise ValueError(f"{who}: axis {k} has length 0")
    if not is_flat(pos):
        p = min(max(float(pos), 0.0), float(n - 1))
        i0 = min(int(math.floor(p)), max(n - 2, 0))
        w = p - i0
        a = take(value, i0, k)
        return a if n == 1 else a * (1.0 - w) + take(value, i0 + 1, k) * w
    if not pos._vt.is_float:
        raise TypeError(f"{who}: 'pos' must be a float array, got {type(pos).__name__}")
    p = clip(pos, 0.0, float(n - 1))
    index_t = array_registry.flat_type(pos._backend, UInt32)
    i0 = index_t(floor(p))
    if n > 1:
        i0 = minimum(i0, n - 2)
    a = value[(slice(None),) * k + (i0,)]
    if n > 1:
        w = p - type(p)(i0)
        wt = reshape(as_tensor(w, who), (width(w),) + (1,) * (len(shape) - k - 1))
        a = a + (value[(slice(None),) * k + (i0 + 1,)] - a) * wt
    return _drop_axis(a, k) if width(pos) == 1 else a


def slice_index(dtype, shape, indices):
    """The flat positions a slicing of a tensor of ``shape`` by ``indices`` selects (Dr.Jit 1.5):
    ``(output shape, dtype array of positions)``.

    Parameters
    ----------
    dtype : type
        A 1-D unsigned 32-bit integer array type (``UInt32``, the scalar backend's ``ArrayXu``;
        Dr.Jit refuses ``Int32`` and ``ArrayXi`` too).
    shape : tuple of ints
    indices : tuple
        What would appear between the brackets: ints, slices, ``...``, ``None``, integer arrays
        (several arrays broadcast together, NumPy's advanced indexing).

    Examples
    --------
    >>> fj.slice_index(UInt32, (10, 1), (slice(0, 10, 2), 0))
    ((5,), [0, 2, 4, 6, 8])
    """
    who = "slice_index()"
    vt = getattr(dtype, "_vt", None)
    # (a JIT UInt32, or the scalar backend's ArrayXu, its 1-D array: Dr.Jit takes both)
    if not (isinstance(dtype, type) and (issubclass(dtype, ArrayBase) or getattr(dtype, "_eager_flat", False))) \
            or vt is not UInt32:
        raise TypeError(f"{who}: dtype must be a dynamically sized unsigned 32 bit array type (UInt32, "
                        f"scalar ArrayXu), got {dtype!r}")
    shape = tuple(operator.index(d) for d in shape)
    if not isinstance(indices, tuple):
        indices = (indices,)
    positions = registry.tensor_of(dtype)._from_array(arange(dtype, size_of(shape)), shape)
    out = positions[indices]
    return out.shape, out.array
