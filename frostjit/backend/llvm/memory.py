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

import ctypes
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

# Large buffers start on a 2 MiB boundary and span whole 2 MiB pages, which Linux is asked to
# back with transparent huge pages (madvise MADV_HUGEPAGE; in the usual "madvise" mode of
# /sys/kernel/mm/transparent_hugepage/enabled nothing else is): a 1e6-lane kernel then walks 2
# pages per 4 MB stream instead of ~1000.  NumPy's own madvise of large arrays gets none of these
# pages (glibc's blocks start 16 bytes past a 4 KiB page, never on a 2 MiB boundary).  Measured
# on 2 threads (AMD EPYC, Zen 4), the 1e6-lane complex chain's and 4x4 transform's launches alone
# on huge-page buffers against NumPy's: 0.956-0.986x in four interleaved runs (r14, lane kernel2);
# Dr.Jit's buffers of these workloads are huge pages too.  A buffer's last page is backed whole,
# so only where that costs at most an eighth more memory: a 1e6-element Float32 buffer (4,000,000
# bytes in 4 MiB) is one, a 2.5 MiB buffer is not; every size from 16 MiB on is.
HUGE_PAGE = 1 << 21
HUGE_MIN_BYTES = HUGE_PAGE
HUGE_MAX_PADDING = 8                # padding up to a whole page <= nbytes / this
MADV_HUGEPAGE = 14                  # (Linux, every architecture)


def _madvise():
    """libc's ``madvise`` (Linux only; None elsewhere: buffers then stay 64-byte aligned)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        f = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    f.restype = ctypes.c_int
    return f


_MADVISE = _madvise()


def _new_raw(nbytes: int):
    """``(raw uint8 array of nbytes, address)`` freshly allocated: 64-byte aligned, or where
    whole huge pages cost little padding (:data:`HUGE_MAX_PADDING`) on a 2 MiB boundary with
    huge pages asked for, before any page of it is touched (the kernel then maps huge pages at
    the first touch).  A view of a slightly larger NumPy allocation (the pool's checks in
    ``HostBuffer.__del__`` rely on that)."""
    span = -(-nbytes // HUGE_PAGE) * HUGE_PAGE
    if nbytes >= HUGE_MIN_BYTES and (span - nbytes) * HUGE_MAX_PADDING <= nbytes and _MADVISE is not None:
        whole = np.empty(span + HUGE_PAGE, np.uint8)
        ptr = whole.ctypes.data
        off = -ptr % HUGE_PAGE
        _MADVISE(ptr + off, span, MADV_HUGEPAGE)      # (a failure only leaves small pages)
        return whole[off:off + nbytes], ptr + off
    whole = np.empty(nbytes + ALIGN, np.uint8)
    ptr = whole.ctypes.data
    off = -ptr % ALIGN
    return whole[off:off + nbytes], ptr + off


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
        address a multiple of :data:`ALIGN`, of :data:`HUGE_PAGE` for large sizes: :func:`_new_raw`).

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
                return _new_raw(nbytes)
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
