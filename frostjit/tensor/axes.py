"""Rearranging a tensor's axes: ``reshape``, ``transpose``, ``moveaxis``, ``swapaxes``,
``squeeze``, ``expand_dims`` (Dr.Jit's and NumPy's semantics).

A reshape keeps the C-ordered elements and changes only the shape (no gather); the axis
permutations are strided views (:mod:`.view`), lazy gathers that fuse into their consumer.
"""
from __future__ import annotations

import operator

from ..array import matrix as static_matrix
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..errors import AxisError
from ..functions.evaluation import width
from . import registry
from .base import TensorBase, check_shape, handle, size_of
from .view import c_strides, strided


def normalize_axis(axis, ndim: int, who: str, what: str = "axis") -> int:
    """``axis`` in ``[0, ndim)`` (negative axes count from the end); ``AxisError`` naming it
    and the number of dimensions, ``TypeError`` for a non-integer."""
    try:
        k = operator.index(axis)
    except TypeError:
        raise TypeError(f"{who}: '{what}' must be an int, got {type(axis).__name__} {axis!r}") from None
    if not -ndim <= k < ndim:
        raise AxisError(f"{who}: {what} {k} is out of bounds for a tensor with {ndim} dimension"
                        f"{'' if ndim == 1 else 's'} (valid: {-ndim} to {ndim - 1})")
    return k % ndim


def normalize_axes(axis, ndim: int, who: str) -> tuple:
    """An int or a sequence of ints as distinct axes in ``[0, ndim)`` (``ValueError`` for a repeat)."""
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, who) for a in items)
    if len(set(out)) != len(out):
        raise ValueError(f"{who}: repeated axis in {axis!r}")
    return out


def as_tensor(x, who: str):
    """A tensor as it is, a 1-D array as a tensor of shape ``(n,)``; ``TypeError`` otherwise."""
    if isinstance(x, TensorBase):
        return x
    if isinstance(x, ArrayBase):
        return registry.tensor_of(type(x))._from_array(handle(x), (width(x),))
    raise TypeError(f"{who}: expected a tensor (or a 1-D array), got {type(x).__name__}")


def _with_shape(t, shape: tuple):
    return type(t)._from_array(handle(t._array), shape)


def reshape(value, shape, order: str = "A", shrink: bool = False):
    """The same elements with another shape (C order, as NumPy's ``reshape``).

    Parameters
    ----------
    value : tensor or 1-D array
        A 1-D array reshapes into a tensor of its type (``reshape(Float, (2, 3))``).
    shape : int or sequence of ints
        One entry may be ``-1``: inferred from the others and the number of elements.
    order : ``"A"`` or ``"C"``
        Tensors are reshaped in C order (Dr.Jit supports no other order for tensors).
    shrink : bool
        Dr.Jit's queue-shrinking view of a 1-D array; not supported (``NotImplementedError``).

    Raises
    ------
    ValueError
        The number of elements does not fit the shape, or more than one ``-1``.
    """
    who = "reshape()"
    if shrink:
        raise NotImplementedError("reshape(): shrink=True is not supported by frostjit")
    if order not in ("A", "C"):
        raise ValueError(f"{who}: tensor reshaping supports order 'A' or 'C', got {order!r}")
    t = as_tensor(value, who)
    n = width(t._array)
    dims = list(shape) if isinstance(shape, (tuple, list)) else [shape]
    unknown = [k for k, d in enumerate(dims) if not hasattr(d, "__symbolic_size__") and d == -1]
    if len(unknown) > 1:
        raise ValueError(f"{who}: only one dimension can be -1, got {tuple(dims)}")
    if unknown:
        rest = check_shape([d for k, d in enumerate(dims) if k != unknown[0]], who)
        known = size_of(rest)
        if known == 0 or n % known != 0:
            raise ValueError(f"{who}: cannot infer -1 in {tuple(dims)} for {n} elements (shape {t.shape})")
        dims[unknown[0]] = n // known
    new = check_shape(dims, who)
    if size_of(new) != n:
        raise ValueError(f"{who}: cannot reshape {n} elements (shape {t.shape}) into shape {new}")
    return _with_shape(t, new)


def transpose(value, axes=None):
    """The axes permuted: reversed by default, else in the order ``axes`` (a permutation of
    ``0..ndim-1``; negative entries count from the end).  A lazy gather.

    A matrix or square static array (``Matrix4f``, ``Array33f``) is transposed lane by lane
    (:func:`frostjit.array.matrix.transpose`; ``axes`` must be ``None``)."""
    who = "transpose()"
    if isinstance(value, VectorBase):
        if axes is not None:
            raise TypeError(f"{who}: 'axes' applies to tensors; a {type(value).__name__} is transposed whole")
        return static_matrix.transpose(value)
    t = as_tensor(value, who)
    shape = t.shape
    nd = len(shape)
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = normalize_axes(axes, nd, who) if nd else tuple(axes)
        if sorted(perm) != list(range(nd)):
            raise ValueError(f"{who}: axes {tuple(axes)!r} are not a permutation of the {nd} axes of "
                             f"shape {shape}")
    if perm == tuple(range(nd)):
        return _with_shape(t, shape)
    st = c_strides(shape)
    out_shape = tuple(shape[p] for p in perm)
    array = strided(t._array, out_shape, tuple(st[p] for p in perm))
    return type(t)._from_array(array, out_shape)


def moveaxis(value, source, destination):
    """Move axes ``source`` to positions ``destination`` (ints or sequences of ints of one
    length); the other axes keep their order (NumPy's ``moveaxis``)."""
    who = "moveaxis()"
    t = as_tensor(value, who)
    nd = t.ndim
    src = normalize_axes(source, nd, who)
    dst = normalize_axes(destination, nd, who)
    if len(src) != len(dst):
        raise ValueError(f"{who}: 'source' and 'destination' must have the same number of axes, got "
                         f"{source!r} and {destination!r}")
    order = [k for k in range(nd) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(t, tuple(order))


def swapaxes(value, axis1: int, axis2: int):
    """Exchange two axes (negative axes count from the end)."""
    who = "swapaxes()"
    t = as_tensor(value, who)
    nd = t.ndim
    a, b = normalize_axis(axis1, nd, who, "axis1"), normalize_axis(axis2, nd, who, "axis2")
    perm = list(range(nd))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(t, tuple(perm))


def squeeze(value, axis=None):
    """Remove axes of length one: all of them (``axis=None``) or those given (``ValueError``
    if one of them is longer)."""
    who = "squeeze()"
    t = as_tensor(value, who)
    shape = t.shape
    if axis is None:
        keep = [d for d in shape if d != 1]
    else:
        drop = normalize_axes(axis, len(shape), who)
        for k in drop:
            if shape[k] != 1:
                raise ValueError(f"{who}: cannot remove axis {k} of length {shape[k]} (shape {shape}); "
                                 "only axes of length one can be squeezed")
        keep = [d for k, d in enumerate(shape) if k not in drop]
    return _with_shape(t, tuple(keep))


def expand_dims(value, axis):
    """Insert axes of length one at the positions ``axis`` of the result (an int or a tuple;
    negative positions count from the end of the result)."""
    who = "expand_dims()"
    t = as_tensor(value, who)
    shape = t.shape
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(shape) + len(items)
    where = normalize_axes(items, nd, who)
    rest = iter(shape)
    return _with_shape(t, tuple(1 if k in where else next(rest) for k in range(nd)))
