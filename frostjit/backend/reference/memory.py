"""The reference backend's buffers: a NumPy array each, allocated by NumPy.

A :class:`ReferenceBuffer` deliberately has no ``array`` and no ``ptr``: code outside the
backend that reaches into a buffer instead of asking the backend fails on this backend, and
an LLVM kernel handed one raises a ``TypeError`` naming the mix-up.
"""
from __future__ import annotations

import numpy as np

from ...errors import out_of_memory
from ...trace.dtypes import BY_NUMPY


class ReferenceBuffer:
    """A buffer of the reference backend: ``data``, a 1-D NumPy array."""

    __slots__ = ("data", "__weakref__")

    def __init__(self, data: np.ndarray):
        self.data = data

    def __len__(self) -> int:
        return self.data.shape[0]

    @property
    def ptr(self):
        raise TypeError("frostjit: an array evaluated by the reference backend was passed to the LLVM backend "
                        "(fj.set_cpu_backend() switched backends; convert it through NumPy)")

    def __repr__(self) -> str:
        return f"ReferenceBuffer({self.data.dtype}, {self.data.shape[0]})"


def allocate(dtype: np.dtype, size: int) -> ReferenceBuffer:
    """A new buffer of ``size`` elements (zeroed: the reference backend's uninitialized memory
    reads as zeros, so a result never depends on a previous buffer's contents)."""
    try:
        return ReferenceBuffer(np.zeros(size, dtype))
    except (MemoryError, ValueError):       # ValueError: beyond NumPy's largest dimension
        vt = BY_NUMPY.get(np.dtype(dtype))
        raise out_of_memory(vt.name if vt is not None else str(dtype), size, np.dtype(dtype).itemsize) from None


def data_of(buffer) -> np.ndarray:
    """The NumPy array of a reference buffer (``TypeError`` for another backend's buffer)."""
    if type(buffer) is not ReferenceBuffer:
        raise TypeError(f"frostjit: the reference backend was given a buffer of another backend "
                        f"({type(buffer).__name__}; fj.set_cpu_backend() switched backends)")
    return buffer.data
