"""Helpers shared by the frozen-function tests (imported by name: tests/ has no packages)."""
import numpy as np

import frostjit as fj
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




def bits(v):
    """dtype, shape and bytes of an array or value (a NaN's sign and payload, -0.0, included)."""
    a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    return a.dtype.str, a.shape, a.tobytes()


def differential(fn, args, change=lambda k: None, calls=6, change_at=(2, 4), max_recordings=3):
    """``fj.freeze(fn)`` and ``fn`` called with ``args(k)`` ``calls`` times, ``change(k)`` before
    the calls in ``change_at``: every frozen result equals the plain one, bit for bit, and the
    frozen function traced at most ``max_recordings`` times."""
    fz = fj.freeze(fn)
    for k in range(calls):
        if k in change_at:
            change(k)
        got, ref = bits(fz(*args(k))), bits(fn(*args(k)))
        assert got == ref, (k, got, ref)
    assert fz.n_recordings <= max_recordings, fz.n_recordings
    return fz
