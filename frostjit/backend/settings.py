"""Process-wide tuning settings that backends read at launch time (not part of any kernel).

``EXPAND_THRESHOLD`` is Dr.Jit's expansion threshold (``dr.set_expand_threshold``): the
largest scatter-reduction target, in elements, that the LLVM backend may replicate per
thread (reduce without atomics, combine afterwards).  Backends without threads ignore it.
It changes only how a reduction is computed, never which result a kernel means, so it is
not part of kernel or frozen-function keys.
"""
from __future__ import annotations

import contextlib
import threading

DEFAULT_EXPAND_THRESHOLD = 1 << 20      # Dr.Jit 1.5's default (1048576 elements)


class _Settings:
    __slots__ = ("expand_threshold", "serial_launches", "_lock")

    def __init__(self) -> None:
        self.expand_threshold = DEFAULT_EXPAND_THRESHOLD
        # > 0: every launch runs on the calling thread (see serial())
        self.serial_launches = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def serial(self):
        """Run every launch on the calling thread while inside (nests; all threads see it).

        A multi-threaded floating-point reduction (``scatter_add`` into a shared target with
        atomics, or into per-thread copies over blocks the threads claim as they come) adds in
        an order that changes from run to run, so two runs of the same kernels may differ in
        the last bits.  On one thread they add in lane order: freeze's checking mode compares
        a replay with the plain call bit for bit this way.
        """
        with self._lock:
            self.serial_launches += 1
        try:
            yield
        finally:
            with self._lock:
                self.serial_launches -= 1


settings = _Settings()
