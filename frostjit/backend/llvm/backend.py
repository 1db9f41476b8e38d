"""The LLVM (CPU) backend: host buffers, compiled kernels, a thread pool."""
from __future__ import annotations

import ctypes
import functools
import os
import weakref

import numpy as np

from ...errors import out_of_memory
from ...trace import numpy_semantics as ns
from ...trace.dtypes import UInt32
from ..base import AxisReduction, Backend, OpenAxisReduction
from ..kernel import IN, PARTIAL, Instr, KernelSpec
from .compiler import Compiler
from ..cache_control import check_capacity
from .memory import HostBuffer, pool
from .reduction import REDUCE_ROW, REDUCE_ROWS_FROM, REDUCE_UFUNC, fusable, reduce_identity, result_dtype
from .replay import LLVMReplayEmitter, SlabBuffer
from .native_pool import native_code
from .block_kernels import RowKernels, supported as row_kernel_supported
from . import sort_kernel
from .threads import PARALLEL_MIN_WORK, ThreadPool, default_thread_count

# ctypes array types of kernel arguments, by length (making one costs as much as a launch)
_ARGS = [ctypes.c_int64 * n for n in range(33)]
# Keys from which argsort runs the compiled radix sort (sort_kernel.py); fewer: NumPy's stable
# sort (the radix sort's fixed cost, 256 buckets per pass, is not worth it).
SORT_KERNEL_MIN = 512
_new = object.__new__
# An axis reduction (AxisReduction) cuts each slab (the reduced axis times the elements after
# it) into at most AXIS_SEGMENTS segments of about AXIS_SEGMENT_WORK elements, each reduced by
# one thread in a fixed order (the same bits at any thread count, threads for long axes).
AXIS_SEGMENTS = 64
AXIS_SEGMENT_WORK = 1 << 16
# An axis of fewer than AXIS_SHORT entries over rows of AXIS_SHORT_WIDE elements or more keeps
# the generic path (one gather level); other segments over inner axes hold at least
# AXIS_SHORT // 2 rows, so their partial rows are at most an eighth of the input.
AXIS_SHORT = 16
AXIS_SHORT_WIDE = 1 << 20
# Block reductions of at least this many elements are shared by the thread pool's threads.
BLOCK_PARALLEL_MIN = 1 << 20
# A compiled block reduction (one row per thread at a time, see block_kernels) shares its rows
# from this many elements, in runs of at least BLOCK_ROWS_MIN elements per claim.
ROW_PARALLEL_MIN = 1 << 17
BLOCK_ROWS_MIN = 1 << 15
acquire = pool.acquire
# Evaluations from this many lanes wake the pool's workers when they start: a launch of 32768
# lanes runs on several threads from 4 instructions per lane (threads.parallel_threshold), and
# smaller evaluations should not keep idle workers spinning.
WAKE_FROM = PARALLEL_MIN_WORK // 4

class LLVMBackend(Backend):
    """CPU backend: kernels compiled by LLVM, run on all cores."""

    name = "LLVM"

    def __init__(self):
        self.compiler = Compiler()
        self.width = self.compiler.width
        # (AVX-512's masked 64-bit gathers: half the loads of a bilinear lookup's four 32-bit
        # ones; AVX2 keeps its tuned unmasked 32-bit gathers, codegen/memory.py)
        self.pair_gathers = self.compiler.mask_registers
        self.native_pool = None         # compiled when a pool first has more than one thread
        self.row_kernels = RowKernels(self.compiler)    # block reductions, compiled on first use
        self._load_reduction: dict = {}     # (op, vt) -> the spec of a fused reduction of a buffer
        self.threads = self._new_pool(default_thread_count())
        if hasattr(os, "register_at_fork"):
            me = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: _renew_pool_in_child(me))

    # -- memory -----------------------------------------------------------
    def alloc(self, vt, size):
        # (allocate() inlined: a launch allocates each output through here, one frame fewer)
        a, ptr = acquire(vt.np_dtype, size)
        b = _new(HostBuffer)
        b.array = a
        b.ptr = ptr
        return b

    def from_numpy(self, array):
        buf = HostBuffer.allocate(array.dtype, array.shape[0])
        np.copyto(buf.array, array, casting="no")
        return buf

    def full(self, vt, value, size):
        buf = self.alloc(vt, size)      # straight into the pool's buffer: no NumPy temporary
        buf.array[:size].fill(value)
        return buf

    def to_numpy(self, buffer, size):
        if type(buffer) is SlabBuffer:
            return buffer.copy_out(size)
        return buffer.array[:size].copy()

    def element(self, buffer, index):
        return buffer.array[index].item()

    def host_array(self, buffer, size):
        return buffer.array[:size]

    def host_address(self, buffer):
        return buffer.ptr       # (a slab piece's view is not made: its address is known)

    def flush_memory_cache(self) -> None:
        pool.trim()

    def copy(self, vt, buffer, size):
        out = self.alloc(vt, size)
        np.copyto(out.array, buffer.array)
        return out

    # -- threads ----------------------------------------------------------
    def thread_count(self) -> int:
        return self.threads.n_threads

    def set_thread_count(self, n: int) -> None:
        # A new pool; the old one finishes the launches it holds (close() waits for them).
        # Launches are serialized by the caller (frostjit.set_thread_count holds the JIT lock).
        if n != self.threads.n_threads:
            old, self.threads = self.threads, self._new_pool(n)
            old.close()

    def _new_pool(self, n: int) -> ThreadPool:
        if n > 1 and self.native_pool is None:
            self.native_pool = native_code(self.compiler)       # (None where unavailable)
        pool = ThreadPool(n, native=self.native_pool)
        self.wake_from = WAKE_FROM if pool.native is not None else Backend.wake_from
        return pool

    def wake_threads(self) -> None:
        """:meth:`Backend.wake_threads`: the native workers spin for the next millisecond
        (:meth:`.threads.ThreadPool.wake`)."""
        self.threads.wake()

    def run_parallel(self, fn, size, args, align, parallel, private=(), keep=None) -> None:
        """A launch on the current thread pool (:meth:`.threads.ThreadPool.run`; with ``keep``,
        the buffers it uses, it may return before its end: :meth:`join_launch` ends it).

        Frozen functions' replays call this, never a pool's own ``run``: ``set_thread_count``
        replaces the pool, and a replay recorded before must use the new one.
        """
        self.threads.run(fn, size, args, align, parallel, private, keep=keep)

    def join_launch(self) -> None:
        """End the pending deferred launch of :meth:`run_parallel`, if any (cheap when none is:
        :meth:`.threads.ThreadPool.join`).  (A pool that ``set_thread_count`` replaced joined
        its own when it closed.)"""
        self.threads.join()

    # -- kernels ----------------------------------------------------------
    def compile(self, spec):
        # A hit in the memory cache, inlined (Compiler.get does the same, and the rest).
        cache = self.compiler.cache
        k = cache.by_spec.get(spec.key())
        if k is not None:
            try:
                cache.lru.move_to_end(k.hash)
            except KeyError:        # evicted meanwhile by another thread; we hold it
                pass
            return k, "memory"
        return self.compiler.get(spec)

    def flush_kernel_cache(self) -> None:
        self.compiler.flush()

    def set_kernel_cache_size(self, size) -> int:
        """Bound the in-memory kernel cache (see :mod:`.kernel_cache`); return the previous bound."""
        n = check_capacity(size, "set_kernel_cache_size()")
        old = self.compiler.cache.capacity
        self.compiler.set_capacity(n)
        return old

    def kernel_cache_info(self) -> dict:
        """Counts of the in-memory kernel cache (see :meth:`.kernel_cache.KernelCache.info`)."""
        return self.compiler.cache.info()

    def launch(self, kernel, size, spec, buffers):
        n = 2 * len(buffers)
        args = _ARGS[n]() if n < len(_ARGS) else (ctypes.c_int64 * n)()
        k = 0
        for buf in buffers:     # (item assignment: the fastest way to fill a ctypes array)
            args[k] = buf.ptr
            args[k + 1] = len(buf.array)
            k += 2
        if size < kernel.parallel_from:
            kernel.cfunc(0, size, args, 0)
        else:
            self.threads.run(kernel.cfunc, size, args, self.width, True, kernel.private)

    def launch_new_output(self, kernel, size, spec, inputs, vt):
        # alloc() and launch() in one frame: this is most of a small evaluation's fixed cost
        a, ptr = acquire(vt.np_dtype, size)
        out = _new(HostBuffer)
        out.array = a
        out.ptr = ptr
        if size > 0:
            n = 2 * len(inputs) + 2
            args = _ARGS[n]() if n < len(_ARGS) else (ctypes.c_int64 * n)()
            k = 0
            for buf in inputs:
                args[k] = buf.ptr
                args[k + 1] = len(buf.array)
                k += 2
            args[k] = ptr
            args[k + 1] = size
            if size < kernel.parallel_from:
                kernel.cfunc(0, size, args, 0)
            else:
                self.threads.run(kernel.cfunc, size, args, self.width, True, kernel.private)
        return out

    def launch_new_outputs(self, kernel, size, spec, inputs, vts):
        # alloc() per output and launch() in one frame (a plain evaluation from a cached plan)
        n = 2 * (len(inputs) + len(vts))
        args = _ARGS[n]() if n < len(_ARGS) else (ctypes.c_int64 * n)()
        k = 0
        for buf in inputs:
            args[k] = buf.ptr
            args[k + 1] = len(buf.array)
            k += 2
        outs = []
        for vt in vts:
            a, ptr = acquire(vt.np_dtype, size)
            out = _new(HostBuffer)
            out.array = a
            out.ptr = ptr
            outs.append(out)
            args[k] = ptr
            args[k + 1] = size
            k += 2
        if size > 0:
            if size < kernel.parallel_from:
                kernel.cfunc(0, size, args, 0)
            else:
                self.threads.run(kernel.cfunc, size, args, self.width, True, kernel.private)
        return outs

    # -- memory-level operations -----------------------------------------
    fused_reductions_from = REDUCE_ROWS_FROM

    def fuses(self, op, vt):
        return fusable(op, vt)

    def reduce(self, op, vt, buffer, size):
        return self.from_numpy(np.array([self.reduce_value(op, vt, buffer, size)], dtype=result_dtype(op, vt)))

    def reduce_value(self, op, vt, buffer, size):
        """``op`` over the first ``size`` elements of ``buffer``, as a NumPy scalar of ``vt``.

        Large arrays go through a compiled block reduction (rows of REDUCE_ROW elements, shared by
        the threads), and NumPy combines the partials; frozen functions' replays call this too,
        so that frozen and plain reductions give the same bits."""
        if op == "count":
            return self._count(buffer, size)
        dt = vt.np_dtype
        if size == 0:
            return np.array([reduce_identity(op, dt)]).astype(dt)[0]
        a = buffer.array[:size]
        if size >= REDUCE_ROWS_FROM and fusable(op, vt):
            # the fused reduction's kernel over a load of the buffer: the bits of a fused
            # reduction of the same values (fj.sum(expr) unfrozen, a frozen replay of it here)
            spec = self._load_reduction.get((op, vt))
            if spec is None:
                spec = self._load_reduction[(op, vt)] = KernelSpec(
                    [Instr("load", vt, (), 0), Instr("reduce", vt, (0,), (1, op))], [(IN, vt), (PARTIAL, vt)])
            return self.launch_reduction(self.compile(spec)[0], size, [buffer], op, vt)
        if op in ("and", "or"):
            return REDUCE_UFUNC[op].reduce(a)
        with np.errstate(all="ignore"):     # inf + -inf is NaN, not a warning (IEEE, as kernels)
            return REDUCE_UFUNC[op].reduce(a, dtype=dt)

    def axis_reduction(self, op, vt, size, inner):
        """:meth:`Backend.axis_reduction`: fused into the kernel of a pending input (and the same
        kernel over a load for an evaluated one) where no ``W``-lane chunk straddles two rows:
        ``size`` a multiple of ``W`` when ``inner == 1`` (the last axes), else ``inner`` a
        multiple of ``W`` and not a short axis over wide rows (fewer than :data:`AXIS_SHORT`
        entries, :data:`AXIS_SHORT_WIDE` elements or more per slab).  The choice and the segment (see :func:`axis_segment`) depend on
        ``size`` and ``inner`` only, never on the thread count or the outer size (which may
        follow a frozen function's batch size)."""
        if not self.axis_fusable(op, vt, size, inner):
            return None
        W = self.width
        if inner == 1:
            return AxisReduction(op, size, 1, W * axis_segment(size // W, size))
        return AxisReduction(op, size, inner, axis_segment(size, size * inner, AXIS_SHORT // 2))

    def axis_fusable(self, op, vt, size, inner):
        """:meth:`Backend.axis_fusable` (comparisons of ``size`` only: a frozen function's
        symbolic length guards on them)."""
        if not fusable(op, vt) or size < 1 or inner < 1:
            return False
        W = self.width
        if inner == 1:
            return size % W == 0
        # (a short axis over wide rows: its segments could not be shared by the threads
        # without partial rows as large as the input; one gather level reads it once)
        wide = -(-AXIS_SHORT_WIDE // inner)     # the shortest axis whose slab is that wide
        # (the concrete test first: rows too narrow for a short-wide axis guard on nothing)
        return not (inner % W or (wide < AXIS_SHORT and wide <= size and size < AXIS_SHORT))

    def launch_axis_reduction(self, kernel, size, inputs, red, vt):
        """Launch ``kernel``, whose last parameter is the partials of the axis reduction ``red``
        (:mod:`.codegen.reductions`), over ``size`` lanes with the buffers ``inputs`` bound to
        the others; NumPy combines each slab's segment partials in order.  The threads share
        the lanes in whole segments.  Returns a buffer of ``size // red.size`` elements."""
        slab = red.size * red.inner
        outer = size // slab
        k = red.size // red.segment
        count = outer * k * red.inner
        out = self.alloc(vt, outer * red.inner)
        if not outer:
            return out
        partial = self.alloc(vt, count)
        if red.inner > 1:       # combined in memory: every partial row starts from the identity
            partial.array[:count] = reduce_identity(red.op, vt.np_dtype)
        self._launch_into_partials(kernel, size, inputs, partial, count, red.segment * red.inner)
        self._combine_segments(red, vt, partial, outer, k, out)
        return out

    def _axis_reduce(self, red, vt, buffer, size):
        """The axis reduction ``red`` of an evaluated buffer, with the bits of the fused reduction
        of the same values: over the last axes (``inner == 1``) the row kernel with one
        ``W``-lane accumulator (the fused kernel's order) reduces each segment; otherwise the
        fused kernel itself over a load of the buffer."""
        if red.inner == 1:
            return self._row_axis_reduce(red, vt, buffer, size)
        key = (red, vt)
        spec = self._load_reduction.get(key)
        if spec is None:
            spec = self._load_reduction[key] = KernelSpec(
                [Instr("load", vt, (), 0), Instr("reduce", vt, (0,), (1, red.op, red.segment, red.inner))],
                [(IN, vt), (PARTIAL, vt)])
        return self.launch_axis_reduction(self.compile(spec)[0], size, [buffer], red, vt)

    def _row_axis_reduce(self, red, vt, buffer, size):
        """:meth:`_axis_reduce` over the last axes: a partial per segment (the row kernel of
        :meth:`.block_kernels.RowKernels.axis`, the threads sharing the segments), then
        :meth:`_combine_segments`."""
        outer = size // red.size
        k = red.size // red.segment
        out = self.alloc(vt, outer)
        if not outer:
            return out
        partial = out if k == 1 else self.alloc(vt, outer * k)
        kernel = self.row_kernels.axis(red.op, vt, self.width)
        rows = outer * k
        args = _ARGS[4](buffer.ptr, size, partial.ptr, red.segment)
        if size < ROW_PARALLEL_MIN:
            kernel(0, rows, args, 0)
        else:
            self.threads.run(kernel, rows, args, 1, True, min_block=-(-BLOCK_ROWS_MIN // red.segment))
        if k > 1:
            self._combine_segments(red, vt, partial, outer, k, out)
        return out

    def _combine_segments(self, red, vt, partial, outer: int, k: int, out) -> None:
        """``out`` = each slab's ``k`` segment partials (``partial``, ``(outer, k, inner)``)
        combined in order by NumPy."""
        a = partial.array[:outer * k * red.inner].reshape(outer, k, red.inner)
        dst = out.array[:outer * red.inner].reshape(outer, red.inner)
        if k == 1:
            dst[...] = a[:, 0, :]
            return
        ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "min": np.fmin, "max": np.fmax}.get(red.op) or \
            REDUCE_UFUNC[red.op]
        with np.errstate(all="ignore"):
            ufunc.reduce(a, axis=1, dtype=vt.np_dtype, out=dst)

    def launch_reduction(self, kernel, size, inputs, op, vt):
        """Launch ``kernel``, whose last parameter is the partials of a fused reduction ``op``
        (:mod:`.codegen.reductions`), over ``size`` lanes with the buffers ``inputs`` bound to
        the others; return the reduction of the partials (NumPy, in a fixed order) as a NumPy
        scalar of ``vt``.  The threads share the lanes in whole rows of REDUCE_ROW."""
        rows = -(-size // REDUCE_ROW)
        partial = self.alloc(vt, rows)
        self._launch_into_partials(kernel, size, inputs, partial, rows, REDUCE_ROW)
        a = partial.array[:rows]
        if op in ("and", "or"):
            return REDUCE_UFUNC[op].reduce(a)
        with np.errstate(all="ignore"):
            return REDUCE_UFUNC[op].reduce(a, dtype=vt.np_dtype)

    def _launch_into_partials(self, kernel, size: int, inputs: list, partial, count: int, grain: int) -> None:
        """Run a fused reduction ``kernel`` over ``size`` lanes: the buffers ``inputs`` bound to its
        first parameters, ``partial`` (``count`` elements) to its last; the threads share the
        lanes in multiples of ``grain`` (a row or segment: each partial is one thread's)."""
        n = 2 * len(inputs) + 2
        args = _ARGS[n]() if n < len(_ARGS) else (ctypes.c_int64 * n)()
        j = 0
        for buf in inputs:
            args[j] = buf.ptr
            args[j + 1] = len(buf.array)
            j += 2
        args[j] = partial.ptr
        args[j + 1] = count
        if size < kernel.parallel_from:
            kernel.cfunc(0, size, args, 0)
        else:
            self.threads.run(kernel.cfunc, size, args, grain, True, kernel.private)

    def _count(self, buffer, size):
        """The true entries among the first ``size`` of a Bool buffer, as a NumPy ``uint32``:
        ``np.count_nonzero`` on small buffers, the compiled row count kernel (rows of REDUCE_ROW
        bytes shared by the threads, one ``UInt32`` partial each) on large ones."""
        if size < REDUCE_ROWS_FROM:
            return np.uint32(np.count_nonzero(buffer.array[:size]))
        rows = -(-size // REDUCE_ROW)
        partial = self.alloc(UInt32, rows)
        kernel = self.row_kernels.count()
        args = _ARGS[4](buffer.ptr, size, partial.ptr, REDUCE_ROW)
        self.threads.run(kernel, rows, args, 1, True, min_block=-(-BLOCK_ROWS_MIN // REDUCE_ROW))
        return partial.array[:rows].sum(dtype=np.uint32)

    def block_reduce(self, block, vt, buffer, size):
        """:meth:`Backend.block_reduce`: a compiled row kernel (:mod:`.block_kernels`, reduction or
        prefix reduction) whose rows the thread pool shares; Bool reduces runs of whole blocks with
        NumPy (which releases the GIL), shared by the pool's threads on large inputs."""
        if isinstance(block, OpenAxisReduction):
            block = block.resolve(self, vt, size)
        if isinstance(block, AxisReduction):
            return self._axis_reduce(block, vt, buffer, size)
        m = block.out_size(size)
        out = self.alloc(vt, m)
        if row_kernel_supported(block.op, vt):
            if size:
                kernel = self.row_kernels.get(block.op, vt, block.prefix, block.exclusive, block.reverse)
                rows = -(-size // block.size)
                args = _ARGS[4](buffer.ptr, size, out.ptr, block.size)
                if size < ROW_PARALLEL_MIN:
                    kernel(0, rows, args, 0)
                else:
                    self.threads.run(kernel, rows, args, 1, True, min_block=-(-BLOCK_ROWS_MIN // block.size))
            return out
        a = buffer.array[:size]
        rows = size // block.size       # whole blocks
        per_row = block.size if block.prefix else 1
        if size >= BLOCK_PARALLEL_MIN and rows >= 2 and self.threads.n_threads > 1:
            b = block.size

            def part(r0, r1, _args, _shared):
                out.array[r0 * per_row:r1 * per_row] = ns.block_reduce(
                    block.op, a[r0 * b:r1 * b], b, block.prefix, block.exclusive, block.reverse)

            # about four runs per thread, each at least BLOCK_PARALLEL_MIN / 4 elements
            chunk = max(-(-rows // (4 * self.threads.n_threads)), -(-BLOCK_PARALLEL_MIN // (4 * b)))
            self.threads.run(part, rows, None, 1, True, min_block=chunk)
            if rows * b < size:         # the shorter last block
                out.array[rows * per_row:m] = ns.block_reduce(
                    block.op, a[rows * b:], b, block.prefix, block.exclusive, block.reverse)
        elif m:
            out.array[:m] = ns.block_reduce(block.op, a, block.size, block.prefix, block.exclusive, block.reverse)
        return out

    def argsort(self, vt, buffer, size):
        if size < SORT_KERNEL_MIN or vt.itemsize not in (4, 8):
            return super().argsort(vt, buffer, size)
        return self.from_numpy(sort_kernel.argsort(self.row_kernels, buffer.array[:size]))

    def prefix_sum(self, vt, buffer, size, exclusive):
        a = buffer.array[:size]
        out = self.alloc(vt, size)
        if size and vt.compute is not None:
            # Float16: accumulated in float32 one element after the other, each output rounded
            # once: Dr.Jit's bits (another order rounds some outputs the other way)
            out.array[:size] = ns.prefix_sum(a, exclusive)
        elif size and row_kernel_supported("add", vt):
            # the compiled prefix kernel over one row: a vectorized scan (NumPy's cumsum adds one
            # element after the other, ~7x slower on float32)
            kernel = self.row_kernels.get("add", vt, True, exclusive, False)
            kernel(0, 1, _ARGS[4](buffer.ptr, size, out.ptr, size), 0)
        elif size:  # written straight into the output: no temporary as large as the input
            with np.errstate(all="ignore"):
                if exclusive:
                    out.array[0] = 0
                    np.cumsum(a[:-1], dtype=a.dtype, out=out.array[1:size])
                else:
                    np.cumsum(a, dtype=a.dtype, out=out.array[:size])
        return out

    def compress(self, buffer, size):
        try:
            idx = np.flatnonzero(buffer.array[:size]).astype(np.uint32)
        except MemoryError:     # NumPy's int64 temporary of one entry per true element
            raise out_of_memory("Bool", size, 12, "compress") from None
        return self.from_numpy(idx), int(idx.shape[0])

    # -- frozen functions -------------------------------------------------
    def replay_emitter(self, code):
        return LLVMReplayEmitter(self, code)


@functools.lru_cache(maxsize=256)
def axis_segment(m: int, work: int, at_least: int = 1) -> int:
    """The entries of an axis of ``m`` per segment of an axis reduction whose slab has ``work``
    elements: the smallest divisor of ``m`` that cuts the slab into at most
    ``max(1, min(AXIS_SEGMENTS, work // AXIS_SEGMENT_WORK))`` segments and is at least
    ``min(m, at_least)`` (an ``m`` without a suitable divisor, a prime, is one segment)."""
    parts = max(1, min(AXIS_SEGMENTS, work // AXIS_SEGMENT_WORK))
    least = max(-(-m // parts), min(m, at_least))
    best = m
    d = 1
    while d * d <= m:
        if m % d == 0:
            for c in (d, m // d):
                if least <= c < best:
                    best = c
        d += 1
    return best


def _renew_pool_in_child(backend_ref) -> None:
    """After ``os.fork()``, in the child: a pool of the same size with threads of its own.

    The child has none of its parent's worker threads (it would run every launch alone), and
    the old pool's lock may have been copied while held by a parent thread's launch, so the
    old pool is dropped, never closed (its finalizer's stop and joins return at once there;
    a launch the parent had open is forgotten first: its blocks would never complete here).
    """
    backend = backend_ref()
    if backend is not None:
        backend.threads.forget_launch()
        backend.threads = backend._new_pool(backend.threads.n_threads)
