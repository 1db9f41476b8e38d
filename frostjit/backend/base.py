"""The backend boundary.

The trace and the scheduler talk to a backend only through this interface, so
a CUDA backend can sit beside the LLVM one.  A *buffer* is whatever object the
backend uses for device memory; the trace stores it in data nodes and never
looks inside.
"""
from __future__ import annotations

import abc

import numpy as np

from ..trace.dtypes import VarType


class Backend(abc.ABC):
    """Abstract compute backend (see module docstring)."""

    name: str

    @abc.abstractmethod
    def alloc(self, vt: VarType, size: int):
        """A new uninitialized buffer of ``size`` elements of type ``vt``."""

    @abc.abstractmethod
    def from_numpy(self, array: np.ndarray):
        """A new buffer holding a copy of a contiguous 1-D NumPy array."""

    def full(self, vt: VarType, value, size: int):
        """A new buffer of ``size`` elements equal to ``value`` (a literal made concrete)."""
        return self.from_numpy(np.full(size, value, dtype=vt.np_dtype))

    @abc.abstractmethod
    def to_numpy(self, buffer, size: int) -> np.ndarray:
        """A NumPy copy of the first ``size`` elements of ``buffer``."""

    def thread_count(self) -> int:
        """Threads that run a launch (the calling thread included); 1 for a backend without a pool."""
        return 1

    def set_thread_count(self, n: int) -> None:
        """Run launches on ``n`` threads (the calling thread included; ``n >= 1``)."""

    @abc.abstractmethod
    def compile(self, spec):
        """Return ``(kernel, status)`` for a kernel spec (status: "memory", "disk" or "compiled")."""

    @abc.abstractmethod
    def launch(self, kernel, size: int, spec, buffers: list) -> None:
        """Run ``kernel`` over ``size`` lanes with ``buffers`` bound to the spec's parameters."""

    @abc.abstractmethod
    def reduce(self, op: str, vt: VarType, buffer, size: int):
        """Reduce a buffer with ``op`` in {"add", "mul", "min", "max", "and", "or"}; a size-1 buffer."""

    @abc.abstractmethod
    def prefix_sum(self, vt: VarType, buffer, size: int, exclusive: bool):
        """Exclusive or inclusive prefix sum of a buffer."""

    @abc.abstractmethod
    def compress(self, buffer, size: int):
        """Indices (UInt32 buffer) of the true entries of a Bool buffer, and their count."""

    @abc.abstractmethod
    def copy(self, vt: VarType, buffer, size: int):
        """A new buffer with the same contents."""

    def set_kernel_cache_size(self, size: int) -> int:
        """Bound the in-memory kernel cache to ``size`` kernels; return the previous bound."""
        raise NotImplementedError(f"the {self.name} backend has no bounded kernel cache")

    def kernel_cache_info(self) -> dict:
        """Counts of the in-memory kernel cache: ``capacity``, ``cached``, ``live``, ``evictions``."""
        raise NotImplementedError(f"the {self.name} backend has no kernel cache")
