"""A persistent thread pool that runs kernel launches on all cores.

A kernel is a C function over ``[start, end)``; ctypes releases the GIL while
it runs, so Python threads give real parallelism.  Large launches are cut into
one chunk per thread (aligned to the SIMD width); the calling thread runs the
first chunk itself.  Small launches never leave the calling thread.
"""
from __future__ import annotations

import os
import queue
import threading


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
            fn, start, end, args = inbox.get()
            try:
                fn(start, end, args)
                self.done.put(None)
            except BaseException as e:  # pragma: no cover - kernels do not raise
                self.done.put(e)

    def run(self, fn, size: int, args, align: int, parallel: bool) -> None:
        """Run ``fn(start, end, args)`` over ``[0, size)``, split across threads if ``parallel``."""
        n = self.n_threads
        if not parallel or n == 1:
            fn(0, size, args)
            return
        chunk = -(-size // n)
        chunk = -(-chunk // align) * align
        with self.lock:
            bounds = [(s, min(size, s + chunk)) for s in range(0, size, chunk)]
            for inbox, (s, e) in zip(self.inboxes, bounds[1:]):
                inbox.put((fn, s, e, args))
            fn(bounds[0][0], bounds[0][1], args)
            errors = [self.done.get() for _ in bounds[1:]]
        for e in errors:
            if e is not None:
                raise e
