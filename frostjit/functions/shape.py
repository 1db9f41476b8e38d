"""Reshaping helpers of Dr.Jit's API: ``shape``, ``ravel``, ``unravel``, ``reverse``, ``meshgrid``
(``tile``/``repeat``: :mod:`.tiling`).  All are gathers over index arithmetic, so they stay lazy and fuse.

Sizes are read with ``width()``, never ``len()``: inside a frozen function ``width()`` is
symbolic, so a replay at a new width computes the new sizes (``len()`` pins the exact width).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..array import registry
from ..errors import LayoutArgumentError, RaggedArrayError
from ..trace.dtypes import UInt32, UInt64
from .creation import arange, empty
from .evaluation import width
from .memory import evaluate_together, gather, scatter


def _flat(x, who):
    if not isinstance(x, ArrayBase):
        raise TypeError(f"{who}(): expects a 1-D frostjit array, got {type(x).__name__}")
    return x


def _index_type(x, count: int):
    """The index type for positions below ``count``: ``UInt32``, or ``UInt64`` beyond 2**31
    (gathers and scatters with 32-bit indices reach 2**31 elements, see memory.py)."""
    return registry.flat_type(x._backend, UInt32 if count <= 2**31 else UInt64)


def _is_tensor(x) -> bool:
    """A tensor (frostjit/tensor sits above this module; its classes carry the hooks used here)."""
    return not isinstance(x, (ArrayBase, VectorBase)) and getattr(type(x), "IsTensor", False)


def shape(x) -> tuple:
    """Shape of a JIT array: ``(n,)`` for 1-D arrays, ``(k, n)`` for static vectors, a tensor's shape;
    ``()`` for a number; for a list, tuple or NumPy array its length, then the sizes of its entries
    along each further axis; ``()`` for any other object but ``None``, a string or a mapping (a
    ``DRJIT_STRUCT`` object or a dataclass: Dr.Jit 1.5 gives them no shape either).

    Sequences follow Dr.Jit 1.5's rule: the number of axes is found by following the first entry
    down, and along each axis the entries must have one size, where size 1 broadcasts
    (``shape([[1, 2], [3]]) == (2, 2)``) and an empty first entry takes the next size
    (``shape([[], [1, 2]]) == (2, 2)``).

    Raises
    ------
    RaggedArrayError
        A ragged input (``[[1, 2], [3, 4, 5]]``, ``[[1, 2], []]``, ``[1, [2]]``); a ``ValueError``
        and, as Dr.Jit raises, a ``RuntimeError``.
    TypeError
        ``None``, a string or a mapping.
    """
    if isinstance(x, (ArrayBase, VectorBase)) or _is_tensor(x):
        return x.shape
    if isinstance(x, (bool, int, float, complex, np.bool_, np.number)):
        return ()           # a number (the scalar backend's Float is float), as Dr.Jit
    if isinstance(x, _SEQUENCES):
        return _sequence_shape(x)
    if x is not None and not isinstance(x, (str, bytes, Mapping)):
        return ()           # another object (a DRJIT_STRUCT, a dataclass): not an array, as in Dr.Jit 1.5
    raise TypeError(f"shape(): expects a frostjit array, a number or a list/tuple of them, got {type(x).__name__}")


# Python containers with a shape (Dr.Jit asks any object for its length; strings are left out: their
# entries are strings again, and Dr.Jit 1.5 loops forever on them).
_SEQUENCES = (list, tuple, range, np.ndarray)


def _has_shape(x) -> bool:
    return isinstance(x, (ArrayBase, VectorBase)) or _is_tensor(x)


def _sequence_shape(x) -> tuple:
    """Dr.Jit 1.5's ``shape()`` of a Python sequence: the depth from the chain of first entries,
    then one size per axis (size 1 broadcasts; 0 is "not seen yet", as in Dr.Jit's shape.cpp)."""
    depth, o = 0, x
    while True:
        if _has_shape(o):
            depth += len(o.shape)
            break
        if not isinstance(o, _SEQUENCES) or (isinstance(o, np.ndarray) and o.ndim == 0):
            break
        depth += 1
        if len(o) == 0:
            break
        o = o[0]
    sizes = [0] * depth
    if not _fill_sizes(x, sizes, 0):
        raise RaggedArrayError(f"shape(): the input is ragged (i.e., it does not have a consistent size): "
                               f"the {type(x).__name__}'s entries do not have one shape (sizes may differ "
                               f"only where one of them is 1)")
    return tuple(sizes)


def _fill_sizes(x, sizes: list, axis: int) -> bool:
    """Merge the sizes of ``x`` into ``sizes[axis:]``; False where ``x`` is ragged against them."""
    if _has_shape(x):
        own = x.shape
    elif isinstance(x, _SEQUENCES) and not (isinstance(x, np.ndarray) and x.ndim == 0):
        own = None
    else:
        return axis == len(sizes)               # a number (or another leaf) ends the axes
    if own is not None:
        if axis + len(own) != len(sizes):
            return False
        return all(_merge(sizes, axis + k, n) for k, n in enumerate(own))
    if axis == len(sizes) or not _merge(sizes, axis, len(x)):
        return False
    return all(_fill_sizes(e, sizes, axis + 1) for e in x)


def _merge(sizes: list, axis: int, n: int) -> bool:
    cur = sizes[axis]
    if n != cur:
        if n != 1 and cur not in (0, 1):
            return False
        sizes[axis] = max(n, cur)
    return True


def _order(who: str, order: str, allowed: str = "ACF") -> bool:
    """Whether ``order`` lays a static vector out component by component (C) rather than
    interleaved (F; ``"A"``, the default, means F for JIT arrays, as in Dr.Jit)."""
    if not isinstance(order, str) or order not in tuple(allowed):
        choices = ", ".join(map(repr, allowed[:-1])) + f" or {allowed[-1]!r}"
        raise LayoutArgumentError(f"{who}(): order parameter must equal {choices} ('order' was {order!r})")
    return order == "C"


def ravel(x, order: str = "A"):
    """Flatten a static vector into one 1-D array: interleaved (``x0, y0, z0, x1, ...``) for
    ``order="A"``/``"F"``, component after component (``x0, x1, ..., y0, ...``) for ``"C"``.

    A 1-D array and a Python number are returned as they are; a tensor is raveled in C order
    (``"F"`` raises, as in Dr.Jit); the scalar backend's nested arrays in the NumPy order of
    their static shape (``"A"``/``"F"``: Fortran order).

    Raises
    ------
    LayoutArgumentError
        An ``order`` other than ``"A"``, ``"C"``, ``"F"``, or a ragged static vector (a
        ``ValueError`` and a ``RuntimeError``).
    """
    by_component = _order("ravel", order)
    if isinstance(x, ArrayBase) or isinstance(x, (bool, int, float)):
        return x
    if _is_tensor(x):
        if order == "F":
            raise LayoutArgumentError("ravel(): tensors do not support F-style ordering (as in Dr.Jit)")
        return x._fj_ravel()
    if not isinstance(x, VectorBase):
        raise TypeError(f"ravel(): expects a frostjit array, got {type(x).__name__}")
    if not x.IsJIT:
        if x.IsDynamic and x.Depth == 1:
            return x                    # the scalar backend's ArrayXf is already flat
        # The scalar backend: no lanes; the numbers in the order of the static shape, as an ArrayX.
        cls = registry.array_type(type(x)._leaf, None, "dynamic")
        values = np.asarray(x._static_numpy()).reshape(-1, order="C" if by_component else "F")
        return cls._from_components(values.tolist())
    _check_not_ragged(x)
    if any(isinstance(c, VectorBase) for c in x):
        return _ravel_nested(x, by_component)
    n = len(x)
    w = max(width(c) for c in x)
    out = empty(x._elem, n * w)
    idx = arange(_index_type(x[0], n * w), w)
    if by_component:
        for k, c in enumerate(x):
            scatter(out, c, idx + k * w)
    else:
        scatter(out, x, idx)
    return out


def _check_not_ragged(x) -> None:
    """Components of one width (or 1, broadcast), as ravel needs (Dr.Jit: "ragged input")."""
    widths = [width(c) for c in x]
    if not all(type(w) is int for w in widths):
        return          # symbolic widths (a frozen function): comparing them would pin the width
    widths = {w for w in widths if w != 1}
    if len(widths) > 1:
        raise LayoutArgumentError(f"ravel(): ragged input not allowed: the components of the "
                                  f"{type(x).__name__} have widths {sorted(widths)}")


def _ravel_nested(x, by_component: bool):
    """:func:`ravel` of a nested static vector (``Matrix3f``, ``Array22f``) of shape
    ``(d0, ..., width)``: the entries in C order of that shape (``by_component``), else in
    Fortran order (the lanes slowest, the first static index fastest)."""
    dims = x.shape[:-1]
    w = x.shape[-1]
    leaves = []
    for index in np.ndindex(*dims):
        c = x
        for i in index:
            c = c[i]
        leaves.append((index, c))
    total = math.prod(dims) * w
    out = empty(type(leaves[0][1]), total)
    idx = arange(_index_type(leaves[0][1], total), w)
    count = math.prod(dims)
    for index, c in leaves:
        if by_component:
            scatter(out, c, idx + int(np.ravel_multi_index(index, dims)) * w)
        else:
            scatter(out, c, idx * count + int(np.ravel_multi_index(index, dims, order="F")))
    return out


def unravel(dtype, array, order: str = "A"):
    """Inverse of :func:`ravel`: an instance of the static vector type ``dtype`` from the 1-D
    ``array`` (same ``order``; nested types such as ``Matrix2f`` or ``Array22f`` too).

    A 1-D ``dtype`` returns ``array`` itself when it is of that type (Dr.Jit).

    Raises
    ------
    LayoutArgumentError
        A bad ``order``, or a size that is no multiple of the type's number of entries.
    TypeError
        ``array`` is not a 1-D array, or ``dtype`` has a dynamic size (``ArrayXf``).
    """
    by_component = _order("unravel", order)
    if isinstance(dtype, type) and issubclass(dtype, ArrayBase) or _is_scalar_arrayx_type(dtype):
        if type(array) is dtype:
            return array
        raise TypeError(f"unravel(): expected array of type {dtype.__name__!r}, got {type(array).__name__!r}")
    if not (isinstance(dtype, type) and issubclass(dtype, VectorBase)):
        raise TypeError(f"unravel(): 'dtype' must be a static vector type such as Array3f, got {dtype!r}")
    dims = _static_dims(dtype)
    if not dtype.IsJIT:
        # The scalar backend: the numbers of an ArrayX (or a sequence) in order.
        values = list(array)
        size = math.prod(dims)
        if len(values) != size:
            raise LayoutArgumentError(f"unravel(): {len(values)} values do not fill a {dtype.__name__} ({size}): "
                                      f"input array size is not divisible by 'dtype' shape")
        return dtype(np.array(values).reshape(dims, order="C" if by_component else "F"))
    if not isinstance(array, ArrayBase):
        raise TypeError(f"unravel(): expected array of type {dtype._leaf.__name__!r}, but got "
                        f"{type(array).__name__!r}")
    leaf = dtype._leaf
    if type(array) is not leaf:
        array = leaf(array)             # another element type is converted (Dr.Jit)
    count = math.prod(dims)
    size = width(array)
    if size % count:
        raise LayoutArgumentError(f"unravel(): an array of size {size} is not a multiple of {count} "
                                  f"({dtype.__name__}): input array size is not divisible by 'dtype' shape")
    w = size // count
    idx = arange(_index_type(array, size), w)
    if len(dims) == 1 and not by_component:
        return gather(dtype, array, idx)      # interleaved components: one packet gather
    leaves = []
    for index in np.ndindex(*dims):
        if by_component:
            leaves.append(gather(leaf, array, idx + int(np.ravel_multi_index(index, dims)) * w))
        else:
            leaves.append(gather(leaf, array, idx * count + int(np.ravel_multi_index(index, dims, order="F"))))
    return _nest_leaves(dtype, leaves)


def _is_scalar_arrayx_type(dtype) -> bool:
    return (isinstance(dtype, type) and issubclass(dtype, VectorBase) and not dtype.IsJIT
            and dtype.IsDynamic and dtype.Depth == 1)


def _static_dims(dtype) -> tuple:
    """The static sizes of ``dtype`` (outermost first); a dynamic one raises, as in Dr.Jit."""
    dims = []
    t = dtype
    while isinstance(t, type) and issubclass(t, VectorBase):
        if t._n is None:
            raise TypeError(f"unravel(): only the last dimension of 'dtype' may be dynamic, got {dtype.__name__}")
        dims.append(t._n)
        t = t._elem
    return tuple(dims)


def _nest_leaves(dtype, leaves: list):
    """The ``dtype`` instance of ``leaves`` (1-D arrays in C order of its static shape)."""
    if not (isinstance(dtype, type) and issubclass(dtype, VectorBase)):
        return leaves[0]
    per = len(leaves) // dtype._n
    return dtype._from_components([_nest_leaves(dtype._elem, leaves[k * per:(k + 1) * per])
                                   for k in range(dtype._n)])


def reverse(x, axis: int = 0):
    """The elements in reverse order; the components of a static vector (its axis 0), the
    items of a Python sequence.  Only ``axis=0`` exists, as in Dr.Jit."""
    if axis != 0:
        raise ValueError(f"reverse(): only axis=0 is supported, got axis={axis!r}")
    if isinstance(x, VectorBase):
        return type(x)._from_components(list(x)[::-1])
    if _is_tensor(x):
        return x[::-1]                  # its outermost axis
    if isinstance(x, (list, tuple)):
        return type(x)(x[::-1])
    x = _flat(x, "reverse")
    n = width(x)
    if n == 0:
        return type(x)()
    return gather(type(x), x, (n - 1) - arange(_index_type(x, n), n))


def meshgrid(*args, indexing: str = "xy"):
    """Flattened coordinate grids of 1-D arrays, like ``numpy.meshgrid(...)`` raveled.

    With ``indexing="xy"`` (default) the first array varies fastest; ``"ij"`` makes the
    last one vary fastest.  Returns one 1-D array per argument, each of the product size.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    if args and all(isinstance(a, VectorBase) and not a.IsJIT and a.IsDynamic for a in args):
        # The scalar backend's ArrayX values: NumPy's grids, raveled, of the same types.
        grids = np.meshgrid(*[np.array(list(a)) for a in args], indexing=indexing)
        out = tuple(type(a)(g.reshape(-1).tolist()) for a, g in zip(args, grids))
        return out[0] if len(out) == 1 else out
    arrays = [_flat(a, "meshgrid") for a in args]
    if len(arrays) == 1:
        return arrays[0]        # Dr.Jit returns the one array itself, not a 1-tuple
    if not arrays:
        return ()
    sizes = [width(a) for a in arrays]
    # NumPy's "xy" swaps the first two axes of "ij"
    order = list(range(len(arrays)))
    if indexing == "xy":
        order[0], order[1] = 1, 0
    total = 1
    for s in sizes:
        total *= s
    idx = arange(_index_type(arrays[0], total), total)
    evaluate_together(arrays)         # one kernel per width, not one per gather below
    out = [None] * len(arrays)
    stride = 1
    for axis in reversed(order):              # the last axis of the grid varies fastest
        a = arrays[axis]
        k = idx if stride == 1 else idx // stride
        out[axis] = gather(type(a), a, k % sizes[axis])
        stride *= sizes[axis]
    return tuple(out)
