"""``Event``: Dr.Jit's stream events (``drjit.llvm.Event``) for synchronization and timing.

>>> start, end = fj.llvm.Event(), fj.llvm.Event()
>>> start.record(); fj.eval(y); end.record()
>>> start.elapsed_time(end)          # milliseconds
"""
from __future__ import annotations

import time

__all__ = ["Event"]


class Event:
    """A marker in the stream of kernel launches, for waiting on and timing the work before it.

    frostjit's launches are synchronous (``fj.eval`` returns when its kernels have finished),
    so the work before an event is complete when the event is recorded: ``wait`` returns at
    once, ``query`` is ``True``, and ``record`` notes the time.

    Parameters
    ----------
    enable_timing : bool
        Whether :meth:`elapsed_time` may be asked of this event (default ``True``, as Dr.Jit).
    """

    __slots__ = ("enable_timing", "_time")

    def __init__(self, enable_timing: bool = True) -> None:
        self.enable_timing = bool(enable_timing)
        self._time: float | None = None

    def record(self) -> None:
        """Mark this point of the computation (after everything evaluated so far)."""
        self._time = time.perf_counter()

    def wait(self) -> None:
        """Block until the work before the event has finished (it has: launches are synchronous)."""

    def query(self) -> bool:
        """Whether the work before the event has finished, without blocking (always ``True``)."""
        return True

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds from this event to ``end_event`` (0 when ``end_event`` came first).

        Raises
        ------
        TypeError
            ``end_event`` is not an :class:`Event`.
        RuntimeError
            Either event was made with ``enable_timing=False`` or has not been recorded.
        """
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time(): 'end_event' must be an Event, got {type(end_event).__name__}")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time(): both events must have timing enabled")
        if self._time is None or end_event._time is None:
            raise RuntimeError("elapsed_time(): events must be recorded")
        return max(0.0, (end_event._time - self._time) * 1000.0)


# Dr.Jit's class lives in drjit.llvm (and is drjit.llvm.ad.Event too): name it where users find it.
Event.__module__ = "frostjit.llvm"
