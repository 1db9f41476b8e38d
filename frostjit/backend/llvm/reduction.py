"""The reduction operations of the CPU backend: their NumPy ufuncs and identities.

Shared by whole-array reductions (``fj.sum`` ...), frozen-function replays of them,
and the per-thread private copies of scatter-reduction targets.
"""
from __future__ import annotations

import numpy as np

REDUCE_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
                "and": np.logical_and, "or": np.logical_or}


def reduce_identity(op: str, dtype: np.dtype):
    """The value ``x`` with ``op(x, y) == y`` for every ``y`` of ``dtype``."""
    dt = np.dtype(dtype)
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if op == "and":
        return True
    if op == "or":
        return False
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    if dt.kind == "b":
        return op == "min"
    info = np.iinfo(dt)
    return info.max if op == "min" else info.min
