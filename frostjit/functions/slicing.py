"""``fj.slice``: select entries of the trailing dynamic dimension of arrays and PyTrees (Dr.Jit 1.5)."""
from __future__ import annotations

import operator

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..trace.dtypes import UInt32
from ..trace.state import JitBackend
from ..tree import transform
from .evaluation import width
from .memory import gather


def slice(value, index=0):  # noqa: A001
    """``value[..., index]`` along the trailing (dynamic) dimension, through PyTrees.

    Parameters
    ----------
    value : array, static vector or PyTree
        Python values in a PyTree are returned unchanged.
    index : int, 1-D integer array or sequence of ints
        An array (or a list of ints) gathers those entries from every array (a PyTree of the
        same structure); an int selects one entry: a Python scalar for a 1-D array, and the
        ``frostjit.scalar`` counterpart for a static vector (``Array3i`` -> ``scalar.Array3i``).
        A component of width 1 is broadcast (as in Dr.Jit).

    Examples
    --------
    >>> fj.slice(Float(1, 2, 3), UInt32(2, 0))
    [3, 1]
    >>> fj.slice(Float(1, 2, 3), 1)
    2.0
    >>> fj.slice(Array3i([1, 2], [3, 4], 5), 1)      # a frostjit.scalar.Array3i
    [2, 4, 5]
    """
    if isinstance(index, (list, tuple)):
        index = np.asarray(index)
        if index.dtype.kind not in "iu":
            raise TypeError(f"slice(): a sequence 'index' must hold ints, got {index.dtype}")
    if isinstance(index, (ArrayBase, VectorBase, np.ndarray)):
        return transform(value, lambda a: _gather(a, index), who="slice", root="value")
    if isinstance(index, (bool, np.bool_)):
        raise TypeError(f"slice(): 'index' must be an int or an integer array, got {index!r}")
    k = operator.index(index)
    return _entries(value, k)


def _entries(value, k: int):
    """:func:`slice` by an int: static vectors become ``frostjit.scalar`` values as a whole,
    so lists, tuples and dicts are walked here; other PyTrees (dataclasses, ``DRJIT_STRUCT``
    classes) take entry ``k`` of each 1-D array."""
    if isinstance(value, (ArrayBase, VectorBase)):
        return _entry(value, k)
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(_entries(v, k) for v in value)
    if type(value) is dict:
        return {name: _entries(v, k) for name, v in value.items()}
    return transform(value, lambda a: _entry(a, k), who="slice", root="value")


def _gather(a, index):
    """The entries ``index`` of every lane-array in ``a`` (a width-1 one broadcast)."""
    if isinstance(a, VectorBase):
        return type(a)._from_components([_gather(c, index) for c in a])
    if isinstance(index, np.ndarray):
        index = registry.flat_type(a._backend, UInt32)(index.astype(np.uint32))
    if width(a) == 1:
        return gather(type(a), a, index * 0)
    return gather(type(a), a, index)


def _entry(a, k: int):
    """Entry ``k`` of ``a``: a Python scalar, or a static vector of the scalar backend."""
    if isinstance(a, ArrayBase):
        return a[0] if width(a) == 1 else a[k]
    if not a.IsJIT:
        return a
    values = [_entry(c, k) for c in a]
    meta = type(a).__meta__
    scalar = registry.find_type(meta.with_(backend=JitBackend.Invalid, is_jit=False, is_diff=False,
                                           shape=meta.shape[:-1]))
    if scalar is None:
        raise TypeError(f"slice(): {type(a).__name__} has no frostjit.scalar counterpart")
    return scalar(*values)
