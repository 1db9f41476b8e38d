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

    def run(self, fn, size: int, args, align: int, parallel: bool) -> None:
        """Run ``fn(start, end, args, shared)`` over ``[0, size)``, split across threads if ``parallel``."""
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
        job = (fn, size, block, args, itertools.count())
        with self.lock:
            for inbox in self.inboxes[:n_workers]:
                inbox.put(job)
            _drain(*job)
            errors = [self.done.get() for _ in range(n_workers)]
        for e in errors:
            if e is not None:
                raise e


def _drain(fn, size: int, block: int, args, counter) -> None:
    """Run blocks of ``[0, size)`` until the shared counter runs past the end."""
    while True:
        start = next(counter) * block   # itertools.count is atomic under the GIL
        if start >= size:
            return
        fn(start, min(size, start + block), args, 1)     # 1: other threads share this launch
