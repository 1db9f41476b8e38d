"""Hypothesis strategies and helpers shared by the tensor tests: shapes (empty dimensions
included), NumPy-style index keys, and conversions between NumPy arrays and tensors."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from frostjit import llvm

# NumPy dtype -> tensor type of frostjit.llvm
TENSOR_OF = {np.dtype(np.float32): llvm.TensorXf, np.dtype(np.float64): llvm.TensorXf64,
             np.dtype(np.int32): llvm.TensorXi, np.dtype(np.uint32): llvm.TensorXu,
             np.dtype(np.int64): llvm.TensorXi64, np.dtype(np.uint64): llvm.TensorXu64,
             np.dtype(np.bool_): llvm.TensorXb}


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def values(shape, dtype=np.float32, seed: int = 0) -> np.ndarray:
    """Deterministic test data of ``shape`` (small integers stored in ``dtype``: exact in every type)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if np.dtype(dtype).kind == "u" else -9
    return rng.integers(lo, 10, shape).astype(dtype)


def tensor(a: np.ndarray):
    return TENSOR_OF[a.dtype](a)


def broadcastable(shape, draw):
    """A shape that broadcasts with ``shape``: a suffix of it with some entries set to 1."""
    k = draw(st.integers(0, len(shape)))
    tail = list(shape[len(shape) - k:])
    return tuple(1 if draw(st.booleans()) else d for d in tail)


@st.composite
def basic_keys(draw, shape):
    """A basic-indexing key for ``shape``: ints, slices (steps, negative bounds), None, ``...``."""
    items = []
    axis = 0
    ellipsis_used = False
    while axis < len(shape):
        kind = draw(st.sampled_from(["stop", "slice", "int", "slice", "none", "ellipsis"]))
        d = shape[axis]
        if kind == "stop":
            break
        if kind == "int" and d > 0:
            items.append(draw(st.integers(-d, d - 1)))
            axis += 1
        elif kind in ("slice", "int"):
            start = draw(st.none() | st.integers(-d - 2, d + 2))
            stop = draw(st.none() | st.integers(-d - 2, d + 2))
            step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
            items.append(slice(start, stop, step))
            axis += 1
        elif kind == "none":
            items.append(None)
        elif not ellipsis_used:
            ellipsis_used = True
            items.append(Ellipsis)
            axis = len(shape) - draw(st.integers(0, len(shape) - axis))
    if draw(st.booleans()):
        items.append(None)
    return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]


def as_numpy(x) -> np.ndarray:
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)
