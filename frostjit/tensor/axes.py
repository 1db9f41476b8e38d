"""Rearranging a tensor's axes: ``reshape``, ``transpose``, ``moveaxis``, ``swapaxes``,
``squeeze``, ``expand_dims`` (Dr.Jit's and NumPy's semantics).

A reshape keeps the C-ordered elements and changes only the shape (no gather); the axis
permutations are strided views (:mod:`.view`), lazy gathers that fuse into their consumer.
"""
from __future__ import annotations

import operator

import numpy as np

from ..array import matrix as static_matrix
from ..array import registry as array_registry
from ..array.flat import ArrayBase, is_flat, is_flat_type
from ..array.vector import VectorBase
from ..errors import AxisError, LayoutArgumentError, ShapeMismatchError, UnsupportedOperandError
from ..functions.creation import arange
from ..functions.evaluation import width
from ..functions.memory import gather
from ..functions.shape import ravel, unravel
from ..trace.dtypes import Int64, UInt32
from ..tree.kinds import Kind, node_type
from ..tree.kinds import vector_from_components
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
                        f"{'' if ndim == 1 else 's'} (valid: {-ndim} to {ndim - 1}; Dr.Jit: out-of-bounds {what})")
    return k % ndim


def normalize_axes(axis, ndim: int, who: str) -> tuple:
    """An int or a sequence of ints as distinct axes in ``[0, ndim)`` (``AxisError``, a ``ValueError``
    as NumPy's and a ``RuntimeError`` as Dr.Jit's, for a repeat)."""
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, who) for a in items)
    if len(set(out)) != len(out):
        raise AxisError(f"{who}: repeated axis in {axis!r} (Dr.Jit: duplicate axis)")
    return out


def as_tensor(x, who: str):
    """A tensor as it is, a 1-D array as a tensor of shape ``(n,)``; ``TypeError`` otherwise."""
    if isinstance(x, TensorBase):
        return x
    if is_flat(x):
        return registry.tensor_of(type(x))._from_array(handle(x), (width(x),))
    raise TypeError(f"{who}: expected a tensor (or a 1-D array), got {type(x).__name__}")


def tensor_input(x, who: str):
    """``x`` if it is a tensor; Dr.Jit's ``TypeError`` ("expected a tensor input") otherwise.

    For the axis rearrangements Dr.Jit 1.5 defines only on tensors (``transpose``, ``swapaxes``,
    ``moveaxis``, ``squeeze``, ``expand_dims``, ``split``): a 1-D array is refused there, not
    taken as a tensor of shape ``(n,)`` (which would, e.g., make ``squeeze`` of a 1-D array
    silently return a tensor where Dr.Jit code expects the error)."""
    if isinstance(x, TensorBase):
        return x
    raise TypeError(f"{who}: expected a tensor input (got {type(x).__module__}.{type(x).__qualname__}).")


def _with_shape(t, shape: tuple):
    return type(t)._from_array(handle(t._array), shape)


def reshape(*args, **kwargs):
    """The same elements with another shape (Dr.Jit's ``reshape``, both of its forms).

    ``reshape(value, shape, order="A", shrink=False)`` reshapes a tensor (C order, as NumPy's
    ``reshape``; a 1-D array is a tensor of shape ``(n,)``; a list, tuple or dict of them is
    reshaped entry by entry).  ``reshape(dtype, value, shape, order="A", shrink=False)`` also
    converts to ``dtype``: a tensor type (the result is of that type), a 1-D array type
    (the elements raveled in ``order``), or a static/nested array type (the 1-D data unraveled:
    :func:`frostjit.unravel`; ``shape[0]`` must be the type's size or ``-1``).

    Parameters
    ----------
    dtype : type, optional
        The result's type (first positional argument when given).
    value : tensor, array or PyTree
    shape : int or sequence of ints
        One entry may be ``-1``: inferred from the others and the number of elements.
    order : ``"A"``, ``"C"`` or ``"F"``
        Tensors are always C order (``"A"`` or ``"C"``).  Raveling and unraveling static arrays
        follows :func:`frostjit.ravel`: ``"A"``/``"F"`` interleave the components, ``"C"``
        puts one component after the other.
    shrink : bool
        ``shape`` is a number of elements no larger than the width of the 1-D ``value``: the
        first ``shape`` elements (Dr.Jit's shrinking view of a queue; frostjit returns a copy
        of them, see docs/tensor.md).

    Raises
    ------
    ValueError
        The number of elements does not fit the shape, more than one ``-1``, a bad ``order``,
        or ``shrink`` beyond the width.
    TypeError
        A value or ``dtype`` that cannot be reshaped.
    """
    if "dtype" in kwargs:            # reshape(dtype=..., value=..., shape=...), Dr.Jit's keywords
        return _reshape_to_type(kwargs.pop("dtype"), *args, **kwargs)
    if args and isinstance(args[0], type):
        return _reshape_to_type(*args, **kwargs)
    return _reshape_value(*args, **kwargs)


def _reshape_to_type(dtype, value, shape, order: str = "A", shrink: bool = False):
    who = "reshape()"
    if dtype in (list, tuple, dict) or (not issubclass(dtype, (TensorBase, VectorBase, ArrayBase))
                                        and isinstance(value, dtype) and _is_tree(value)):
        # a PyTree type (dtype=dict, the DRJIT_STRUCT class or dataclass of the value): its entries
        # are reshaped, as without a dtype
        return _reshape_value(value, shape, order, shrink)
    if not issubclass(dtype, (TensorBase, VectorBase, ArrayBase)):
        # Dr.Jit 1.5 returns a value of another library's type as it is when 'dtype' is its type
        # (reshape(np.ndarray, a, (2, 3)) is a, unchanged, whatever the shape)
        if type(value) is dtype:
            _check_leaf_arguments(shape, order, who)
            return value
        raise UnsupportedOperandError(f"{who}: when 'dtype' and 'type(value)' disagree, 'dtype' must be a frostjit "
                                      f"tensor, 1-D or static array type (or the type of a PyTree value, to "
                                      f"reshape its entries), got dtype={dtype.__name__} and a value of type "
                                      f"{type(value).__name__}")
    if issubclass(dtype, TensorBase):
        if _is_python_leaf(value):      # a number: a tensor of its one element (Dr.Jit: TensorXf, 5, (1,))
            value = dtype([value])
        elif _is_foreign_array(value):  # a NumPy/DLPack array: converted (then reshaped), as Dr.Jit
            value = dtype(value)
        t = _reshape_value(value, shape, order, shrink)
        return t if type(t) is dtype else dtype(t)
    if issubclass(dtype, VectorBase) and not is_flat_type(dtype):
        if shrink:          # each component's first elements
            return vector_from_components(dtype, [_shrink(c, shape, who) for c in value])
        dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        flat = value if is_flat(value) else ravel(value, order)
        _resolve_shape(dims, width(flat), who)          # Dr.Jit's checks and messages
        if dims[0] not in (-1, dtype._n):
            raise ShapeMismatchError(f"{who}: the first entry of 'shape' {dims} must be {dtype._n} (the size of "
                                     f"{dtype.__name__}) or -1 (incompatible layout)")
        return unravel(dtype, flat, order)
    if is_flat_type(dtype):
        flat = _shrink(value, shape, who) if shrink else ravel(value, order)
        if not shrink:
            n = width(flat)
            dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            if len(dims) != 1 or dims[0] not in (-1, n):
                raise ShapeMismatchError(f"{who}: a 1-D {dtype.__name__} of {n} elements has shape ({n},), not "
                                         f"{dims} (incompatible layout; mismatched array sizes)")
        return flat if type(flat) is dtype else dtype(flat)
    raise TypeError(f"{who}: 'dtype' must be a frostjit tensor, 1-D or static array type, got {dtype!r} (or "
                    f"the type of a PyTree value, to reshape its entries; the value is a {type(value).__name__})")


def _is_tree(value) -> bool:
    """Whether ``value`` is a PyTree container (a sequence, mapping, ``DRJIT_STRUCT`` object,
    dataclass or traversable object), not an array or a Python value."""
    return node_type(type(value)).kind in (Kind.SEQUENCE, Kind.MAPPING, Kind.STRUCT, Kind.DATACLASS,
                                           Kind.PROTOCOL)


def _reshape_tree(value, shape, order: str, shrink: bool):
    """The entries of the PyTree ``value`` reshaped one by one (Dr.Jit threads ``reshape`` through
    a PyTree): a tensor as a tensor; a 1-D array keeps its type where ``shape`` is one-dimensional
    (``shrink=True``: its first elements) and becomes a tensor otherwise (frostjit's value form); a
    static array as ``reshape(type(entry), entry, ...)``; Python values stay as they are."""
    if isinstance(value, TensorBase):
        return _reshape_value(value, shape, order, shrink)
    if isinstance(value, ArrayBase):
        if shrink:
            return _shrink(value, shape, "reshape()")
        if not isinstance(shape, (tuple, list)) or len(shape) == 1:
            return _reshape_to_type(type(value), value, shape, order)
        return _reshape_value(value, shape, order)
    if isinstance(value, VectorBase):
        return _reshape_to_type(type(value), value, shape, order, shrink)
    if not _is_tree(value):
        return value
    nt = node_type(type(value))
    keys, children = nt.children(value)
    return nt.rebuild(value, keys, [_reshape_tree(c, shape, order, shrink) for c in children])


def _shrink(value, size, who: str):
    """The first ``size`` elements of the 1-D array ``value`` (``reshape(..., shrink=True)``)."""
    if isinstance(size, (tuple, list)) and len(size) == 1:
        size = size[0]
    if not is_flat(value):
        raise TypeError(f"{who}: shrink=True needs a 1-D array, got {type(value).__name__}")
    n = width(value)
    if not isinstance(size, int) or not 0 <= size <= n:
        raise ShapeMismatchError(f"{who}: shrink=True takes a size between 0 and the width {n}, got {size!r}")
    if size == n:
        return value
    index = array_registry.flat_type(value._backend, UInt32 if n <= 2**32 else Int64)
    return gather(type(value), value, arange(index, size))


def _reshape_value(value, shape, order: str = "A", shrink: bool = False):
    who = "reshape()"
    if not isinstance(value, (ArrayBase, VectorBase, TensorBase)) and _is_tree(value):
        return _reshape_tree(value, shape, order, shrink)
    if _is_python_leaf(value) or _is_foreign_array(value):
        # Dr.Jit 1.5 returns a Python value (a number, a string, any other object) as it is
        # (reshape(5, 4) == 5), after checking the arguments' types and the order; also another
        # library's array (a NumPy array, a torch tensor: reshape(a, (3, 2)) is a, unchanged).
        _check_leaf_arguments(shape, order, who)
        return value
    if shrink:
        return _shrink(value, shape, who)
    if order not in ("A", "C"):
        raise LayoutArgumentError(f"{who}: tensor reshaping supports order 'A' or 'C', got {order!r} ('order' "
                                  f"argument must equal \"A\", \"F\", or \"C\"; tensors take no F order)")
    t = as_tensor(value, who)
    return _with_shape(t, _resolve_shape(shape, width(t._array), who))


def _is_python_leaf(value) -> bool:
    """A value ``reshape`` returns as it is: not ``None``, no frostjit array or tensor, no PyTree
    container and nothing NumPy or DLPack could turn into a tensor."""
    if value is None or isinstance(value, (ArrayBase, VectorBase, TensorBase, np.ndarray)):
        return False
    return not hasattr(value, "__dlpack__") and not hasattr(value, "__array_interface__")


def _is_foreign_array(value) -> bool:
    """A NumPy array or another library's array (DLPack, array interface): not frostjit's."""
    return not isinstance(value, (ArrayBase, VectorBase, TensorBase)) and (
        isinstance(value, np.ndarray) or hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__"))


def _check_leaf_arguments(shape, order, who: str) -> None:
    """Dr.Jit's checks of ``reshape(value, shape, order)`` for a value it returns as it is: a
    shape of ints and a known order."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(d, (int, np.integer)) or hasattr(d, "__symbolic_size__") for d in dims):
        raise TypeError(f"{who}: the shape must be an int or a sequence of ints, got {shape!r}")
    if order not in ("A", "C", "F"):
        raise LayoutArgumentError(f"{who}: 'order' argument must equal \"A\", \"F\", or \"C\", got {order!r}")


def _resolve_shape(shape, n: int, who: str) -> tuple:
    """``shape`` (an int or a sequence; one entry may be -1) for ``n`` elements, checked.

    The errors are :class:`~frostjit.errors.ShapeMismatchError` (``ValueError`` and, as
    Dr.Jit raises, ``RuntimeError``) with Dr.Jit's wording."""
    dims = list(shape) if isinstance(shape, (tuple, list)) else [shape]
    unknown = [k for k, d in enumerate(dims) if not hasattr(d, "__symbolic_size__") and d == -1]
    if len(unknown) > 1:
        raise ShapeMismatchError(f"{who}: only a single 'shape' entry may be equal to -1 (only one dimension "
                                 f"can be -1), got {tuple(dims)}")
    if unknown:
        rest = check_shape([d for k, d in enumerate(dims) if k != unknown[0]], who)
        known = size_of(rest)
        if known == 0 or n % known != 0:
            raise ShapeMismatchError(f"{who}: cannot infer a compatible shape (cannot infer -1 in {tuple(dims)} "
                                     f"for {n} elements)")
        dims[unknown[0]] = n // known
    new = check_shape(dims, who)
    if size_of(new) != n:
        raise ShapeMismatchError(f"{who}: mismatched array sizes (input: {n}, target: {size_of(new)}): cannot "
                                 f"reshape {n} elements into shape {new}")
    return new


def transpose(value, axes=None):
    """The axes permuted: reversed by default, else in the order ``axes`` (a permutation of
    ``0..ndim-1``; negative entries count from the end).  A lazy gather.

    A matrix or square static array (``Matrix4f``, ``Array33f``) is transposed lane by lane
    (:func:`frostjit.array.matrix.transpose`; ``axes`` must be ``None``)."""
    who = "transpose()"
    if static_matrix._is_square(value):
        if axes is not None:
            raise TypeError(f"{who}: 'axes' applies to tensors; a {type(value).__name__} is transposed whole")
        return static_matrix.transpose(value)
    t = tensor_input(value, who)
    shape = t.shape
    nd = len(shape)
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = tuple(axes)
        if len(perm) != nd:
            raise AxisError(f"{who}: 'axes' must have length {nd} (got {len(perm)}): axes {perm!r} for "
                            f"shape {shape}")
        perm = tuple(normalize_axis(a, nd, who) for a in perm)
        if sorted(perm) != list(range(nd)):
            # (the length is ndim and each axis in range: not a permutation means a repeat)
            raise AxisError(f"{who}: 'axes' must be a permutation of (0, 1, ..., {nd - 1}): repeated axis "
                            f"in {tuple(axes)!r}")
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
    t = tensor_input(value, who)
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
    t = tensor_input(value, who)
    nd = t.ndim
    a, b = normalize_axis(axis1, nd, who, "axis1"), normalize_axis(axis2, nd, who, "axis2")
    perm = list(range(nd))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(t, tuple(perm))


def squeeze(value, axis=None):
    """Remove axes of length one: all of them (``axis=None``) or those given (``ValueError``
    if one of them is longer)."""
    who = "squeeze()"
    t = tensor_input(value, who)
    shape = t.shape
    if axis is None:
        keep = [d for d in shape if d != 1]
    else:
        drop = normalize_axes(axis, len(shape), who)
        for k in drop:
            if shape[k] != 1:
                # (a ValueError as NumPy's, a RuntimeError as Dr.Jit's)
                raise ShapeMismatchError(f"{who}: cannot remove axis {k} of length {shape[k]} (shape {shape}); "
                                         "only axes of length one can be squeezed (Dr.Jit: size is not 1)")
        keep = [d for k, d in enumerate(shape) if k not in drop]
    return _with_shape(t, tuple(keep))


def expand_dims(value, axis):
    """Insert axes of length one at the positions ``axis`` of the result (an int or a tuple;
    negative positions count from the end of the result)."""
    who = "expand_dims()"
    t = tensor_input(value, who)
    shape = t.shape
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(shape) + len(items)
    where = normalize_axes(items, nd, who)
    rest = iter(shape)
    return _with_shape(t, tuple(1 if k in where else next(rest) for k in range(nd)))
