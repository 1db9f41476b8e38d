"""Host memory for the LLVM backend: buffers and a caching allocator.

A :class:`HostBuffer` owns a NumPy array.  When the last node using it goes
away, large arrays go back to a pool keyed by byte size instead of to the
operating system: a loop that evaluates a step per iteration then reuses the
same few buffers, with no page faults and a flat memory profile.  An array is
only recycled when nothing else (a DLPack capsule, a view) still refers to it.
"""
from __future__ import annotations

import sys
import threading

import numpy as np

POOL_MIN_BYTES = 1 << 16          # smaller arrays are cheap to allocate
POOL_MAX_BYTES = 1 << 30          # never hoard more than this


class BufferPool:
    """Free lists of raw byte arrays, keyed by size in bytes."""

    def __init__(self) -> None:
        self.free: dict[int, list] = {}
        self.bytes = 0
        self.lock = threading.Lock()

    def acquire(self, dtype: np.dtype, size: int) -> np.ndarray:
        nbytes = size * dtype.itemsize
        if nbytes >= POOL_MIN_BYTES:
            with self.lock:
                lst = self.free.get(nbytes)
                if lst:
                    raw = lst.pop()
                    self.bytes -= nbytes
                    return raw.view(dtype)
            return np.empty(nbytes, np.uint8).view(dtype)
        return np.empty(size, dtype)

    def release(self, raw: np.ndarray) -> None:
        nbytes = raw.nbytes
        with self.lock:
            if self.bytes + nbytes <= POOL_MAX_BYTES:
                self.free.setdefault(nbytes, []).append(raw)
                self.bytes += nbytes

    def trim(self) -> None:
        """Return every pooled array to the operating system."""
        with self.lock:
            self.free.clear()
            self.bytes = 0


pool = BufferPool()


class HostBuffer:
    """A backend buffer: a contiguous NumPy array and its address."""

    __slots__ = ("array", "ptr", "__weakref__")

    def __init__(self, array: np.ndarray):
        self.array = array
        self.ptr = array.ctypes.data

    def __del__(self):
        a = self.array
        # Two references: the attribute and getrefcount's argument. A third means a view or DLPack capsule.
        if a.base is not None and a.nbytes >= POOL_MIN_BYTES and sys.getrefcount(a) <= 3:
            raw = a.base
            if type(raw) is np.ndarray and raw.base is None and sys.getrefcount(raw) <= 3:
                pool.release(raw)

    def __len__(self) -> int:
        return self.array.shape[0]
