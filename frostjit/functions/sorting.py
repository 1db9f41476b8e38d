"""Sorting and order statistics: ``sort``, ``argsort``, ``argmin``, ``argmax``, ``median``,
``binary_search``.

**Order.**  Every element type is ordered as Dr.Jit 1.5's radix sort orders it: by a *key*, an
unsigned integer whose order is the value's (floats: the IEEE total order, ``-nan < -inf <
... < -0 < +0 < ... < inf < nan``, so a NaN of positive sign sorts last and ``-0`` before
``+0``; signed integers with their sign bit flipped; Bool as 0/1).  ``argmin``/``argmax`` use
the same order (``argmax(Float(3, nan, 1))`` is 1, as in Dr.Jit) and return the first index
of the extreme value.

**Sorting** evaluates the key and sorts it with the backend's stable sort (``Backend.argsort``,
a memory-level operation like the prefix sum: on the LLVM backend a compiled 8-bit LSD radix
sort, ``backend/llvm/sort_kernel.py``; elsewhere NumPy's stable sort; one operation, where the
former array-code radix sort launched ~4 kernels per key bit).  Stable, so ``descending=True`` sorts the complemented key and keeps equal
elements in their original order, as Dr.Jit does.  Frozen functions record the operation and
replay it on the new inputs at any width.  Tensors sort along an axis by a second stable sort
of the row index.
"""
from __future__ import annotations

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..errors import AxisError
from ..schedule import memops
from ..trace.dtypes import Bool, Float32, Int32, UInt32, UInt64
from .creation import arange
from .evaluation import width
from .math import reinterpret_array, select
from .memory import gather
from .reduce import _reduce_array


def _flat(x, vt):
    return registry.flat_type(x._backend, vt)


def sort_key(x: ArrayBase):
    """``(key, bits)``: an unsigned array ordered as ``x`` (see the module docstring), and the
    number of its low bits that vary."""
    vt = x._vt
    if vt is Bool:
        return _flat(x, UInt32)(x), 1
    if vt.compute is not None:          # Float16: its float32 value orders it (exact)
        return sort_key(_flat(x, Float32)(x))
    if vt.is_float:
        ut = UInt32 if vt.bits == 32 else UInt64
        u = reinterpret_array(_flat(x, ut), x)
        top = ut.np_dtype.type(1 << (vt.bits - 1))
        negative = u >= top
        return select(negative, ~u, u | top), vt.bits
    if vt.bits < 32:                    # 8-bit: widened, with the sign offset for signed types
        wide = _flat(x, Int32 if vt.is_signed else UInt32)(x)
        u = _flat(x, UInt32)(wide + (1 << (vt.bits - 1)) if vt.is_signed else wide)
        return u, vt.bits
    ut = UInt32 if vt.bits == 32 else UInt64
    u = reinterpret_array(_flat(x, ut), x) if vt.is_signed else x
    if vt.is_signed:
        u = u ^ ut.np_dtype.type(1 << (vt.bits - 1))
    return u, vt.bits


def _stable_order(key):
    """The stable ascending permutation (``UInt32``) of the unsigned key array ``key``: the
    backend's host sort (``schedule.memops.argsort``; a recorded operation in frozen functions)."""
    index_t = _flat(key, UInt32)
    if getattr(type(key), "_eager_flat", False):        # the scalar backend's ArrayXu: sorted now
        return key._fj_argsort(index_t)
    return index_t._from_node(memops.argsort(key._node))


def sort_permutation(keys: list, index_type):
    """The stable permutation sorting by ``keys`` (``[(key, bits), ...]``, the most significant
    last): one stable sort per key, each of that key in the order the previous ones gave."""
    perm = None
    for key, _bits in keys:
        if perm is None:
            perm = _stable_order(key)
        else:
            k = gather(type(key), key, perm)        # this key in the current order
            perm = gather(type(perm), perm, _stable_order(k))
    return index_type(perm)


def _check_flat(who: str, value):
    if not isinstance(value, ArrayBase):
        raise TypeError(f"frostjit.{who}(): expects a 1-D JIT array or a tensor, got {type(value).__name__}")


def argsort(value, axis=-1, descending=False):
    """Indices (``UInt32``) that sort ``value``: ``gather(type(value), value, argsort(value))``
    is sorted.  Stable (equal elements keep their order, also with ``descending=True``).

    Parameters
    ----------
    value : 1-D array or tensor
    axis : int
        Tensors: the axis to sort along (-1, the last, by default; any axis); the indices are
        positions along it.  1-D arrays: 0 or -1.
    descending : bool

    Examples
    --------
    >>> fj.argsort(Float(3, 1, 2, 1))
    [1, 3, 2, 0]
    """
    if getattr(type(value), "IsTensor", False):     # frostjit/tensor/sorting.py (above this layer)
        return value._fj_order("argsort", axis=axis, descending=descending)
    _check_flat("argsort", value)
    check_axis("argsort", axis, 1)
    key, bits = sort_key(value)
    if descending:
        key = ~key
        bits = key._vt.bits
    return sort_permutation([(key, bits)], _flat(value, UInt32))


def sort(value, axis=-1, descending=False):
    """A sorted copy of ``value`` (stable; see :func:`argsort` and the module docstring for the
    order: NaN last, ``-0`` before ``+0``).  Differentiable: the result is a gather of ``value``.

    Examples
    --------
    >>> fj.sort(Float(3, nan, 1, -inf))
    [-inf, 1, 3, nan]
    """
    if getattr(type(value), "IsTensor", False):
        return value._fj_order("sort", axis=axis, descending=descending)
    perm = argsort(value, axis, descending)
    return gather(type(value), value, perm)


def check_axis(who: str, axis, ndim: int) -> int:
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"frostjit.{who}(): 'axis' must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"frostjit.{who}(): axis {axis} is out of bounds for {ndim} dimension(s)")
    return axis % ndim


# -- argmin / argmax ---------------------------------------------------------------------------

def _arg_extreme(who: str, value, axis, keepdims: bool, largest: bool):
    if getattr(type(value), "IsTensor", False):
        return value._fj_order(who, axis=axis, keepdims=keepdims)
    if isinstance(value, VectorBase):
        raise TypeError(f"frostjit.{who}(): static vectors are not supported (as in Dr.Jit 1.5): "
                        f"reduce a component or use a tensor")
    _check_flat(who, value)
    if axis is not None:
        check_axis(who, axis, 1)
    n = width(value)
    if n == 0:      # (inside a frozen function's recording a guarded fact: a width-0 replay traces again)
        raise ValueError(f"frostjit.{who}(): the array is empty")
    key, _ = sort_key(value)
    best = _reduce_array("max" if largest else "min", key)
    idx = arange(_flat(value, UInt32), n)
    big = _flat(value, UInt32)(0xFFFFFFFF)
    return _reduce_array("min", select(key == best, idx, big))


def argmin(value, axis=None, keepdims=False):
    """The index (``UInt32``) of the smallest element, the first one on ties (Dr.Jit 1.5).

    Elements are ordered as :func:`sort` orders them (a NaN of positive sign is the largest,
    ``-0 < +0``).  A 1-D array gives a size-1 array; a tensor reduces ``axis`` (``None``: the
    flattened tensor; ``keepdims`` keeps it with length 1).  An empty array raises ``ValueError``.

    Examples
    --------
    >>> fj.argmin(Float(3, 1, 2, 1))
    [1]
    """
    return _arg_extreme("argmin", value, axis, keepdims, False)


def argmax(value, axis=None, keepdims=False):
    """The index (``UInt32``) of the largest element, the first one on ties; see :func:`argmin`."""
    return _arg_extreme("argmax", value, axis, keepdims, True)


# -- median ------------------------------------------------------------------------------------

def median(value, axis=-1, keepdims=False, return_index=False):
    """The element at sorted rank ``(N - 1) // 2`` of the ``N`` reduced elements (the lower of
    the two central ones for even ``N``; in :func:`sort`'s order, so NaNs count as the largest).

    Parameters
    ----------
    value : 1-D array or tensor
    axis : int or None
        Tensors: the axis (default -1) or None (all elements).  1-D arrays: 0, -1 or None.
    keepdims : bool
    return_index : bool
        Also return the index of the chosen element (along the axis, or into the flattened
        input for ``axis=None``).

    Examples
    --------
    >>> fj.median(Float(4, 1, 3, 2, 5, 6))
    [3]
    """
    if getattr(type(value), "IsTensor", False):
        return value._fj_order("median", axis=axis, keepdims=keepdims, return_index=return_index)
    _check_flat("median", value)
    if axis is not None:
        check_axis("median", axis, 1)
    n = width(value)
    if n == 0:      # (guarded while recording, as above)
        raise ValueError("frostjit.median(): the array is empty")
    perm = argsort(value)
    i = gather(type(perm), perm, arange(type(perm), 1) * 0 + (n - 1) // 2)
    v = gather(type(value), value, i)
    return (v, i) if return_index else v


# -- binary search -------------------------------------------------------------------------------

def binary_search(start, end, pred):
    """The first index in ``[start, end]`` where the monotonically decreasing predicate
    ``pred(index)`` (one ``True`` -> ``False`` transition) is ``False``: ``start`` if it never
    holds, ``end`` if it always does (Dr.Jit 1.5).

    ``pred`` is called ``floor(log2(end - start)) + 1`` times with index arrays (or Python ints
    on the first call) and returns a ``Bool`` array (or a bool); the result has the index type
    the predicate's lanes imply.

    Examples
    --------
    >>> data = Float(0, 1, 2, 3, 4)
    >>> fj.binary_search(0, 4, lambda i: fj.gather(Float, data, i) < Float(-1, 0.5, 2, 10))
    [0, 1, 2, 4]
    """
    if not (isinstance(start, int) and isinstance(end, int)):
        raise TypeError(f"frostjit.binary_search(): 'start' and 'end' must be Python ints, got "
                        f"{type(start).__name__} and {type(end).__name__}")
    iterations = (end - start).bit_length() if start < end else 0
    for _ in range(iterations):
        middle = (start + end) >> 1
        cond = pred(middle)
        if isinstance(cond, (bool,)) or not isinstance(cond, ArrayBase):
            start, end = (min(middle + 1, end), end) if cond else (start, middle)
            continue
        index_t = _flat(cond, Int32)
        if not isinstance(middle, ArrayBase):
            middle = index_t(middle)
        start = select(cond, _minimum(middle + 1, end), start)
        end = select(cond, end, middle)
    return start


def _minimum(a, b):
    return select(a < b, a, b)


