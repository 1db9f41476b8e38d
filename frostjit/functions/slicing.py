"""``fj.slice``: select entries of the trailing dynamic dimension of arrays and PyTrees (Dr.Jit 1.5)."""
from __future__ import annotations

import operator

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..tree import transform
from .memory import gather


def slice(value, index=0):  # noqa: A001
    """``value[..., index]`` along the trailing (dynamic) dimension, through PyTrees.

    Parameters
    ----------
    value : array, static vector or PyTree
        Python values in a PyTree are returned unchanged.
    index : int or 1-D integer array
        An array gathers those entries from every array (a PyTree of the same structure);
        an int selects one entry: a Python scalar for a 1-D array, and a width-1 array for
        static vectors and the arrays inside PyTrees (Dr.Jit returns ``drjit.scalar`` types
        there, a backend frostjit does not have yet).

    Examples
    --------
    >>> fj.slice(Float(1, 2, 3), UInt32(2, 0))
    [3, 1]
    >>> fj.slice(Float(1, 2, 3), 1)
    2.0
    """
    if isinstance(index, (ArrayBase, VectorBase)):
        return transform(value, lambda a: gather(type(a), a, index), who="slice", root="value")
    if isinstance(index, (bool, np.bool_)):
        raise TypeError(f"slice(): 'index' must be an int or an integer array, got {index!r}")
    k = operator.index(index)
    if isinstance(value, ArrayBase):
        return value[k]
    return transform(value, lambda a: gather(type(a), a, k), who="slice", root="value")
