"""Host memory for the LLVM backend: buffers and a caching allocator.

A :class:`HostBuffer` owns a NumPy array.  When the last node using it goes
away, the array goes back to a pool keyed by byte size instead of to the
operating system: a loop that evaluates a step per iteration then reuses the
same few buffers, with no page faults and a flat memory profile.  The pool also
remembers each array's address (asking NumPy for it costs ~1 us, a noticeable
part of a small launch).  An array is only recycled when nothing else (a DLPack
capsule, a view) still refers to it.
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from ...errors import out_of_memory
from ...trace.dtypes import BY_NUMPY

POOL_MAX_BYTES = 1 << 30          # never hoard more than this
POOL_MAX_PER_SIZE = 256           # nor more than this many arrays of one size
# Every buffer starts on a 64-byte boundary (NumPy's large arrays start 16 bytes past one):
# kernels write whole chunks of large outputs with non-temporal stores, which x86 only has for
# aligned addresses (codegen/frame.py).
ALIGN = 64


class BufferPool:
    """Free lists of arrays, keyed by size in bytes.

    An entry is ``(array, address)``: the raw ``uint8`` array or, once it served as a typed
    buffer, the typed view of it that buffer had (made again only when the next user wants
    another dtype: a view costs ~0.3 us, a noticeable part of a small launch).

    No lock on the way in and out: every launch takes a buffer per output and every result that
    dies gives one back, and on this machine a ``with lock`` cost ~0.8 us, ~8% of a plain
    ``Matrix4f @ Array4f`` call at 1e3 lanes (4 outputs, 8 locked regions).  The free lists are
    changed by ``list.pop``/``list.append`` and ``dict.setdefault``, each atomic under the GIL
    (a thread that finds a list emptied between its test and its ``pop`` allocates, as for an
    empty list).  ``bytes``, the pooled total bounding the hoard, is updated by one in-place
    addition, with no call or backward jump inside where the interpreter would switch threads:
    exact under the GIL (two threads releasing at once may both pass the bound's test: the
    hoard then exceeds it by a buffer), except that a :meth:`trim` between another thread's
    ``pop`` and its subtraction leaves the total a buffer low; without a GIL (a free-threaded
    build) it may drift by a buffer per race.  Either only loosens or tightens the bound, and
    the next :meth:`trim` resets it.
    """

    def __init__(self) -> None:
        self.free: dict[int, list] = {}
        self.bytes = 0
        # (trim() only.)  Re-entrant: a garbage collection while it is held may finalize a
        # HostBuffer in a reference cycle, whose __del__ releases into this pool on the same thread.
        self.lock = threading.RLock()

    def acquire_raw(self, nbytes: int, dtype: np.dtype = np.dtype(np.uint8), count: int | None = None):
        """``(raw uint8 array, address)``: a pooled one of this size, or a new one (its
        address a multiple of :data:`ALIGN`, a view of a slightly larger allocation).

        When the system has no memory left, the pooled buffers are released and the
        allocation is tried once more; then a ``MemoryError`` names the array (``count``
        elements of ``dtype``) instead of NumPy's raw ``uint8`` buffer.
        """
        lst = self.free.get(nbytes)
        if lst:
            try:
                entry = lst.pop()
            except IndexError:      # (another thread took the last one since the test)
                pass
            else:
                self.bytes -= nbytes
                return entry
        for attempt in (0, 1):
            try:
                whole = np.empty(nbytes + ALIGN, np.uint8)
                ptr = whole.ctypes.data
                off = -ptr % ALIGN
                return whole[off:off + nbytes], ptr + off
            except (MemoryError, ValueError):     # ValueError: beyond NumPy's largest dimension
                if attempt:
                    break
                self.trim()
        count = nbytes // dtype.itemsize if count is None else count
        vt = BY_NUMPY.get(np.dtype(dtype))
        raise out_of_memory(vt.name if vt is not None else str(dtype), count, np.dtype(dtype).itemsize) from None

    def acquire(self, dtype: np.dtype, size: int):
        """``(typed array of size elements, its address)``, backed by a pooled raw array."""
        nbytes = size * dtype.itemsize
        lst = self.free.get(nbytes)
        if lst:
            try:
                a, ptr = lst.pop()
            except IndexError:      # (another thread took the last one since the test)
                pass
            else:
                self.bytes -= nbytes
                if a.dtype is not dtype:
                    a = a.view(dtype)       # (its base stays the whole allocation: NumPy collapses views)
                return a, ptr
        raw, ptr = self.acquire_raw(nbytes, dtype, size)
        return raw.view(dtype), ptr

    def release(self, raw: np.ndarray, ptr: int) -> None:
        """Keep ``raw`` (a raw array, or a typed view of one nothing else uses) for reuse."""
        nbytes = raw.nbytes
        lst = self.free.get(nbytes)
        if lst is None:
            lst = self.free.setdefault(nbytes, [])
        if self.bytes + nbytes <= POOL_MAX_BYTES and len(lst) < POOL_MAX_PER_SIZE:
            lst.append((raw, ptr))
            self.bytes += nbytes

    def trim(self) -> None:
        """Return every pooled array to the operating system."""
        with self.lock:
            for lst in list(self.free.values()):
                lst.clear()         # (a thread holding one of these lists finds it empty)
            self.free.clear()
            self.bytes = 0


pool = BufferPool()
_new = object.__new__


class HostBuffer:
    """A backend buffer: a contiguous NumPy array and its address."""

    __slots__ = ("array", "ptr", "__weakref__")

    def __init__(self, array: np.ndarray, ptr: int | None = None):
        self.array = array
        self.ptr = array.ctypes.data if ptr is None else ptr

    @classmethod
    def allocate(cls, dtype: np.dtype, size: int) -> "HostBuffer":
        """A buffer of ``size`` elements from the pool (address known without asking NumPy)."""
        a, ptr = pool.acquire(dtype, size)     # (first: a failed allocation leaves no half-made buffer)
        b = _new(cls)
        b.array = a
        b.ptr = ptr
        return b

    # What __del__ uses is bound as defaults: a buffer still alive when the interpreter exits (an
    # array in a module global) may be finalized after this module's globals were cleared; it
    # is not pooled then.
    def __del__(self, _refs=sys.getrefcount, _ndarray=np.ndarray, _pool=pool, _exiting=sys.is_finalizing):
        if _exiting():
            return
        a = self.array
        # Two references: the attribute and getrefcount's argument. A third means a view or DLPack capsule.
        if a.base is not None and _refs(a) <= 3:
            raw = a.base
            if type(raw) is _ndarray and raw.base is None and _refs(raw) <= 3:
                # pool.release(a, self.ptr), inlined (every launch's outputs die here, one frame
                # each fewer): the typed view is kept, the next user of this dtype takes it as is
                nbytes = a.nbytes
                lst = _pool.free.get(nbytes)
                if lst is None:
                    lst = _pool.free.setdefault(nbytes, [])
                if _pool.bytes + nbytes <= POOL_MAX_BYTES and len(lst) < POOL_MAX_PER_SIZE:
                    lst.append((a, self.ptr))
                    _pool.bytes += nbytes

    def __len__(self) -> int:
        return self.array.shape[0]


def allocate(dtype: np.dtype, size: int) -> HostBuffer:
    """A buffer of ``size`` elements of ``dtype`` from the pool (:meth:`HostBuffer.allocate`)."""
    a, ptr = pool.acquire(dtype, size)     # (first: a failed allocation leaves no half-made buffer)
    b = _new(HostBuffer)
    b.array = a
    b.ptr = ptr
    return b
