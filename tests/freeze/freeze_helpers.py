"""Helpers shared by the frozen-function tests (imported by name: tests/ has no packages)."""
import numpy as np

from frostjit.llvm import Float


def F(*values):
    """A Float array from Python values (evaluated)."""
    return Float(np.array(values, dtype=np.float32))


def ramp(n, offset=0.0):
    return Float(np.arange(n, dtype=np.float32) + np.float32(offset))


def to_np(x):
    """NumPy view of an array, static vector, Python scalar (for comparisons)."""
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def same(a, b):
    a, b = to_np(a), to_np(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


