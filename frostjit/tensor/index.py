"""NumPy-style indexing of tensors, for reading (``t[key]``) and assignment (``t[key] = v``).

A key is an int, a slice (with steps, negative bounds), ``None`` (a new axis), ``...``, an
index array (a 1-D integer array, an integer tensor, a list or NumPy array of ints), or a
tuple of those.  Without index arrays this is *basic* indexing, a strided view (:mod:`.view`);
with them it is NumPy's *advanced* indexing: the index arrays (and the ints beside them)
broadcast to one shape ``B``, which replaces the indexed axes where they are adjacent in the
key and goes first otherwise.  Reading is one lazy gather; assignment is one scatter of the
value broadcast to the selected shape (converted to the tensor's type, as NumPy does).

Errors follow NumPy: an int outside its axis raises ``IndexError`` (so does an index array
entry, checked with ``JitFlag.Debug``; otherwise such an entry reads 0 and is not written),
too many indices ``IndexError``, a Bool, float or other index ``TypeError``.
"""
from __future__ import annotations

import operator

import numpy as np

from ..array import registry as array_registry
from ..array.flat import ArrayBase, is_flat, masked_assign
from ..errors import TensorIndexError, TensorIndexTypeError
from ..functions.evaluation import width
from ..functions.math import select
from ..functions.memory import gather, scatter
from ..trace.dtypes import Bool, Int32, Int64
from ..trace.state import state, DEBUG
from .base import TensorBase, handle, size_of
from .broadcast import broadcast_shapes, elementwise, expand
from .view import c_strides, index_type, offsets, strided

_INTS = (int, np.integer)


def _is_int(k) -> bool:
    return (isinstance(k, _INTS) and not isinstance(k, (bool, np.bool_))) or \
        (hasattr(k, "__symbolic_size__") and isinstance(k, int))


def _index_array(k, backend, who: str):
    """An index array of a key as ``(flat integer array, shape)``, or None for another item."""
    if isinstance(k, TensorBase):
        a, shape = k._array, k.shape
    elif is_flat(k):
        a, shape = k, (width(k),)
    elif isinstance(k, (list, np.ndarray)):
        n = np.asarray(k)
        if n.dtype == object or (n.size and not np.issubdtype(n.dtype, np.integer)):
            raise TypeError(f"{who}: index arrays must hold integers, got {n.dtype} entries")
        n = n.astype(np.int64) if n.size else n.astype(np.int32)
        a = array_registry.flat_type(backend, Int64 if n.dtype == np.int64 else Int32)(n.reshape(-1))
        shape = n.shape
    else:
        return None
    if a._vt is Bool:
        raise TypeError(f"{who}: Bool masks are not supported as indices (use frostjit.compress() for the "
                        "positions of the true entries, or frostjit.select())")
    if not a._vt.is_integral:
        raise TypeError(f"{who}: index arrays must be integer arrays, got {type(k).__name__}")
    return a, shape


class _Selection:
    """What a key selects: the output shape, and per output axis its source stride (basic
    axes) or its place in the broadcast shape of the index arrays (advanced axes)."""

    __slots__ = ("shape", "strides", "offset", "adv", "adv_shape", "adv_strides")

    def __init__(self):
        self.shape = []
        self.strides = []        # source stride of each output axis (0 for advanced axes)
        self.offset = 0
        self.adv = []            # (flat index array, its shape, source axis length, source stride)
        self.adv_shape = ()
        self.adv_strides = []    # stride within the advanced block of each output axis (0: basic)


def _select(t, key, who: str) -> _Selection:
    shape = t.shape
    nd = len(shape)
    backend = t._array._backend
    items = list(key) if isinstance(key, tuple) else [key]
    arrays = {}
    for j, k in enumerate(items):
        if k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k):
            continue
        ia = _index_array(k, backend, who)
        if ia is None:
            raise TensorIndexTypeError(f'{who}: unsupported index type {type(k).__name__} (unsupported type '
                                       f'"{type(k).__name__}" in slice; use ints, slices, None, ..., or '
                                       "integer index arrays)")
        arrays[j] = ia
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError(f"{who}: an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if used > nd:
        raise TensorIndexError(f"{who}: too many indices for a tensor of shape {shape} ({used} given)")
    if any(k is Ellipsis for k in items):
        e = next(j for j, k in enumerate(items) if k is Ellipsis)
        fill = nd - used
        items[e:e + 1] = [slice(None)] * fill
        arrays = {(j if j < e else j + fill - 1): v for j, v in arrays.items()}
    else:
        items += [slice(None)] * (nd - used)
    st = c_strides(shape)
    sel = _Selection()
    advanced = set(arrays) | ({j for j, k in enumerate(items) if _is_int(k)} if arrays else set())
    adjacent = not advanced or max(advanced) - min(advanced) + 1 == len(advanced)
    b_pos = None                 # where the advanced block goes in the output shape
    axis = 0
    for j, k in enumerate(items):
        if k is None:
            sel.shape.append(1)
            sel.strides.append(0)
            continue
        dim, stride = shape[axis], st[axis]
        axis += 1
        if j in advanced:
            if b_pos is None:
                b_pos = len(sel.shape) if adjacent else 0
            if j in arrays:
                a, ashape = arrays[j]
            else:
                a, ashape = _checked_int(k, dim, axis - 1, who), ()
            sel.adv.append((a, ashape, dim, stride))
        elif _is_int(k):
            sel.offset = sel.offset + _checked_int(k, dim, axis - 1, who) * stride
        else:
            start, length, step = _slice(k, dim)
            sel.shape.append(length)
            sel.strides.append(stride if step == 1 else stride * step)
            if not (type(start) is int and start == 0):
                sel.offset = sel.offset + start * stride
    sel.adv_strides = [0] * len(sel.shape)
    if sel.adv:
        b = broadcast_shapes(who + " (index arrays)", *[s for _, s, _, _ in sel.adv])
        sel.adv_shape = b
        sel.shape[b_pos:b_pos] = list(b)
        sel.strides[b_pos:b_pos] = [0] * len(b)
        sel.adv_strides[b_pos:b_pos] = list(c_strides(b))
    sel.shape = tuple(sel.shape)
    return sel


def _checked_int(k, dim, axis: int, who: str):
    i = k if hasattr(k, "__symbolic_size__") else int(k)
    if i < 0:
        i = i + dim
    if not 0 <= i < dim:
        raise TensorIndexError(f"{who}: index {k} is out of bounds for axis {axis} with size {dim}")
    return i


def _slice(s: slice, dim):
    """``(start, length, step)`` of a slice of an axis of length ``dim``.

    Inside a frozen function an axis that follows the batch size has a symbolic length: a slice
    with step 1 (``t[1:]``, ``t[:-1]``, ``t[2:n]``) keeps start and length symbolic (its
    comparisons become guards on relations, e.g. ``s0 > 1``); other slices read the length (a
    guard on its exact value)."""
    if s.start is None and s.stop is None and s.step is None:
        return 0, dim, 1
    if hasattr(dim, "__symbolic_size__") and s.step in (None, 1):
        start = 0 if s.start is None else operator.index(s.start)
        stop = dim if s.stop is None else operator.index(s.stop)
        start = start + dim if start < 0 else start
        stop = stop + dim if stop < 0 else stop
        start = 0 if start < 0 else (dim if start > dim else start)
        stop = 0 if stop < 0 else (dim if stop > dim else stop)
        return start, (stop - start if stop > start else 0), 1
    start, stop, step = s.indices(int(dim))
    return start, len(range(start, stop, step)), step


def _positions(t, sel: _Selection, who: str):
    """(flat source positions of the selected elements, Bool mask of the valid ones or True)."""
    backend = t._array._backend
    n = width(t._array)
    pos = offsets(backend, sel.shape, tuple(sel.strides), sel.offset, n)
    if not sel.adv:
        return pos, True
    b = offsets(backend, sel.shape, tuple(sel.adv_strides), 0, n)
    valid = True
    for a, ashape, dim, stride in sel.adv:
        if is_flat(a):
            if ashape != sel.adv_shape and (size_of(ashape) != 1 or size_of(sel.adv_shape) == 0):
                # (a size-1 index array beside an empty one selects nothing, as in NumPy: it is
                # expanded to the empty shape, since an empty operand does not broadcast)
                a = expand(a, ashape, sel.adv_shape)
            if a._vt.is_signed:
                a = select(a < 0, a + dim, a)
            if state.flags & DEBUG:
                _check_index_array(a, dim, who)
            # (a one-element index array is used as it is, a broadcast operand; beside an empty
            # selection it is gathered too, since an empty operand does not broadcast:
            # t[np.array([0, 0, 0]), np.array([0]), 1:] of a (1, 1, 1) tensor is (3, 0), as in NumPy)
            v = gather(type(a), a, b) if width(a) != 1 or width(b) == 0 else a
            idx_type = type(pos) if is_flat(pos) else index_type(backend, n)
            v = idx_type(v)
            ok = v < dim
            valid = ok if valid is True else valid & ok
            term = v if stride == 1 else v * stride
        else:
            term = a * stride
        pos = pos + term
    return pos, valid


def _check_index_array(a: ArrayBase, dim, who: str) -> None:
    """``JitFlag.Debug``: ``IndexError`` for the first index outside ``[0, dim)``."""
    values = a.numpy()
    bad = np.flatnonzero((values < 0) | (values >= int(dim)))
    if bad.size:
        raise IndexError(f"{who}: index {int(values[bad[0]])} is out of bounds for an axis of size {dim}")


def _is_mask(key) -> bool:
    return isinstance(key, TensorBase) and key._array._vt is Bool


def getitem(t, key):
    """``t[key]`` (see the module docstring): a tensor (0-dimensional for a single element).
    A Bool tensor ``key`` gives ``t``'s value as a new tensor (Dr.Jit: ``t[mask] += v``)."""
    if _is_mask(key):
        return type(t)._from_array(handle(t._array), t.shape)
    who = f"{type(t).__name__}[...]"
    sel = _select(t, key, who)
    array = t._array
    if not sel.adv:
        return type(t)._from_array(strided(array, sel.shape, tuple(sel.strides), sel.offset), sel.shape)
    pos, valid = _positions(t, sel, who)
    return type(t)._from_array(gather(type(array), array, pos, valid), sel.shape)


def setitem(t, key, value) -> None:
    """``t[key] = value``: ``value`` (a tensor, 1-D array, NumPy array or scalar) broadcast to the
    selected shape and converted to ``t``'s type, scattered into ``t``'s array.  A Bool tensor
    ``key`` (broadcast to ``t``'s shape) selects element-wise: ``t = select(key, value, t)``."""
    who = f"{type(t).__name__}[...] = ..."
    if _is_mask(key):
        r = elementwise(lambda m, v, x: masked_assign(x, m, v), key, value, t, who=who)
        if r.shape != t.shape:
            raise ValueError(f"{who}: a mask of shape {key.shape} and a value that broadcast to {r.shape}, "
                             f"not to the tensor's shape {t.shape}")
        t._array = r._array
        return
    sel = _select(t, key, who)
    pos, valid = _positions(t, sel, who)
    target = t._array
    at = type(target)
    if isinstance(value, (TensorBase, np.ndarray, list)) or is_flat(value):
        if isinstance(value, TensorBase):
            v, vshape = value._array, value.shape
        elif is_flat(value):
            v, vshape = value, (width(value),)
        else:
            n = np.asarray(value)
            v, vshape = at(np.ascontiguousarray(n).reshape(-1)), n.shape
        out_shape = broadcast_shapes(who, sel.shape, vshape)
        if out_shape != sel.shape:
            raise ValueError(f"{who}: cannot assign a value of shape {vshape} to a selection of shape "
                             f"{sel.shape}")
        if type(v) is not at:
            v = at(v)
        if vshape != sel.shape and size_of(vshape) != size_of(sel.shape) and size_of(vshape) != 1:
            v = expand(v, vshape, sel.shape)
        value = v
    scatter(target, value, pos, valid)
