"""A persistent thread pool that runs kernel launches on all cores.

A kernel is a C function over ``[start, end)``; ctypes releases the GIL while
it runs, so Python threads give real parallelism.  Large launches are cut into
blocks (a few per thread, aligned to the SIMD width) that the threads take from
a shared counter, so a thread slowed down by other load on its core does not
hold everybody up.  The calling thread works too.  Small launches never leave
the calling thread.
"""
from __future__ import annotations

import itertools
import os

import numpy as np

from .reduction import REDUCE_UFUNC, private_identity
import queue
import threading

BLOCKS_PER_THREAD = 4
MIN_BLOCK = 1 << 14


def default_thread_count() -> int:
    env = os.environ.get("FROSTJIT_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


class ThreadPool:
    """Workers waiting on per-thread queues (see module docstring)."""

    def __init__(self, n_threads: int | None = None):
        self.n_threads = n_threads or default_thread_count()
        self.inboxes = []
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        for k in range(self.n_threads - 1):
            inbox: queue.SimpleQueue = queue.SimpleQueue()
            t = threading.Thread(target=self._worker, args=(inbox,), name=f"frostjit-worker-{k}", daemon=True)
            t.start()
            self.inboxes.append(inbox)
        self.lock = threading.Lock()

    def _worker(self, inbox: queue.SimpleQueue) -> None:
        while True:
            job = inbox.get()
            try:
                _drain(*job)
                self.done.put(None)
            except BaseException as e:  # pragma: no cover - kernels do not raise
                self.done.put(e)

    def run(self, fn, size: int, args, align: int, parallel: bool, private=()) -> None:
        """Run ``fn(start, end, args, shared)`` over ``[0, size)``, split across threads if ``parallel``.

        ``private`` lists the kernel's scatter-reduction targets that may be privatized,
        as ``(param index, operation, dtype, all_reductions)`` (see :func:`private_targets`).
        """
        n = self.n_threads
        if not parallel or n == 1:
            fn(0, size, args, 0)
            return
        block = max(MIN_BLOCK, -(-size // (n * BLOCKS_PER_THREAD)))
        block = -(-block // align) * align
        n_workers = min(n - 1, -(-size // block) - 1)
        if n_workers <= 0:
            fn(0, size, args, 0)
            return
        counter = itertools.count()
        argsets, copies, shared = _privatize(args, size, n_workers, private)
        with self.lock:
            for k, inbox in enumerate(self.inboxes[:n_workers]):
                inbox.put((fn, size, block, argsets[k + 1], counter, shared))
            _drain(fn, size, block, argsets[0], counter, shared)
            errors = [self.done.get() for _ in range(n_workers)]
        for e in errors:
            if e is not None:
                raise e
        for target, ufunc, copy in copies:
            ufunc(target, copy, out=target)


def _privatize(args, size: int, n_workers: int, private):
    """Per-thread argument arrays whose small scatter-reduction targets are private copies.

    Threads that add into one small array (an image, a gradient of a few parameters)
    contend on the same addresses, and x86 has no atomic float add (each is a
    compare-and-swap loop).  Instead, each extra thread reduces into its own zeroed (or
    identity-filled) copy without atomics, and the copies are combined into the target
    afterwards.  Only targets much smaller than the launch are privatized; if every
    reduction target is, the kernels run with ``shared = 0`` (no atomics at all).
    Returns ``(argsets, [(target view, ufunc, copy)], shared)``.
    """
    chosen = [p for p in private if args[2 * p[0] + 1] * PRIVATE_RATIO <= size]
    if not chosen:
        return [args] * (n_workers + 1), [], 1
    import ctypes
    argsets = [args]
    copies = []
    for _ in range(n_workers):
        mine = (ctypes.c_int64 * len(args))()
        ctypes.memmove(mine, args, ctypes.sizeof(mine))
        for p, op, dtype, _all in chosen:
            ufunc = REDUCE_UFUNC[op]
            count = args[2 * p + 1]
            copy = np.full(count, private_identity(op, dtype), dtype=dtype)
            mine[2 * p] = copy.ctypes.data
            target = np.ctypeslib.as_array((np.ctypeslib.as_ctypes_type(dtype) * count).from_address(args[2 * p]))
            copies.append((target, ufunc, copy))
        argsets.append(mine)
    every = all(p[3] for p in chosen) and len(chosen) == len(private)
    return argsets, copies, 0 if every else 1


PRIVATE_RATIO = 4    # privatize a target at most a quarter of the launch size


def private_targets(spec) -> tuple:
    """The scatter targets of ``spec`` that threads may reduce into private copies.

    A target qualifies when every scatter into it in this kernel is a reduction with one
    operation (plain scatters into it would race with the copies' late combination).
    Each entry is ``(param index, operation name, dtype, all reductions privatizable)``.
    """
    ops: dict = {}
    for ins in spec.instrs:
        if ins.op == "scatter":
            p, reduce_op = ins.value
            ops.setdefault(p, set()).add(reduce_op)
    out = []
    for p, s in sorted(ops.items()):
        if len(s) == 1 and None not in s:
            out.append((p, next(iter(s)), spec.params[p][1].np_dtype, True))
    if len(out) != sum(1 for s in ops.values() if s - {None}):    # some reduction stays shared
        out = [(p, u, d, False) for p, u, d, _ in out]
    return tuple(out)


def _drain(fn, size: int, block: int, args, counter, shared: int) -> None:
    """Run blocks of ``[0, size)`` until the shared counter runs past the end."""
    while True:
        start = next(counter) * block   # itertools.count is atomic under the GIL
        if start >= size:
            return
        fn(start, min(size, start + block), args, shared)
