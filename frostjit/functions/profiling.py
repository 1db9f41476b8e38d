"""Profiler annotations of Dr.Jit's API: ``profile_range``, ``profile_mark``, ``profile_enable``.

Dr.Jit reports ranges and marks to NVTX (a no-op without an attached tool) and lets
``profile_enable`` start a targeted profiler.  frostjit's profiling instruments are the
``"frostjit"`` logger and :func:`frostjit.kernel_history`, so the annotations go there:
a range logs its entry and its duration, a mark logs an event, both at ``DEBUG`` level and
named by the path of the enclosing ranges (``"outer/inner"``); ``profile_enable`` records the
kernel history for the launches inside it.  Nothing here changes what a program computes.
"""
from __future__ import annotations

import logging
import threading
import time

from ..trace.state import JitFlag, flag, set_flag

__all__ = ["profile_range", "profile_mark", "profile_enable"]

log = logging.getLogger("frostjit")
_local = threading.local()       # .ranges: this thread's stack of open range names


def _ranges() -> list:
    stack = getattr(_local, "ranges", None)
    if stack is None:
        stack = _local.ranges = []
    return stack


def _check_name(who: str, name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{who}(): expected a str, got {type(name).__name__}")
    return name


class profile_range:  # noqa: N801  (Dr.Jit's name)
    """Mark a region of the program (a context manager), as Dr.Jit's ``profile_range``.

    Parameters
    ----------
    name : str
        The label of the region.  Regions nest; each is reported as the path of the enclosing
        regions' labels.

    Notes
    -----
    On entry the ``"frostjit"`` logger records ``profile range 'path' begins`` and on exit
    ``profile range 'path': <t> ms`` (wall time), at ``DEBUG`` level
    (``fj.set_log_level(fj.LogLevel.Debug)`` shows them).

    Examples
    --------
    >>> with fj.profile_range("preprocessing"):
    ...     fj.eval(x)
    """

    __slots__ = ("name", "_start", "_path")

    def __init__(self, name: str, /) -> None:
        self.name = _check_name("profile_range", name)
        self._start = None
        self._path = None

    def __enter__(self):
        stack = _ranges()
        stack.append(self.name)
        self._path = "/".join(stack)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("profile range %r begins", self._path)
        self._start = time.perf_counter()
        return None

    def __exit__(self, exc_type, exc, tb) -> None:
        elapsed = time.perf_counter() - self._start
        stack = _ranges()
        if stack and stack[-1] == self.name:
            stack.pop()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("profile range %r: %.3f ms", self._path, elapsed * 1e3)
        return None


def profile_mark(name: str, /) -> None:
    """Record an event named ``name`` (Dr.Jit's ``profile_mark``).

    The ``"frostjit"`` logger records ``profile mark 'path'`` at ``DEBUG`` level, where
    ``path`` is ``name`` prefixed by the open :class:`profile_range` labels.

    Raises
    ------
    TypeError
        ``name`` is not a ``str``.
    """
    _check_name("profile_mark", name)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("profile mark %r", "/".join([*_ranges(), name]))


class profile_enable:  # noqa: N801  (Dr.Jit's name)
    """Profile a region of the program only (a context manager), as Dr.Jit's ``profile_enable``.

    frostjit's profiler is the kernel history: inside the block,
    :attr:`JitFlag.KernelHistory` is set to ``active`` (so :func:`frostjit.kernel_history`
    reports every launch with its timings), and restored afterwards.

    Parameters
    ----------
    active : bool, optional
        ``True`` (default) records the launches inside the block; ``False`` suspends recording.
    """

    __slots__ = ("active", "_before")

    def __init__(self, active: bool = True) -> None:
        if not isinstance(active, bool):
            raise TypeError(f"profile_enable(): 'active' must be a bool, got {type(active).__name__}")
        self.active = active
        self._before = None

    def __enter__(self):
        self._before = flag(JitFlag.KernelHistory)
        set_flag(JitFlag.KernelHistory, self.active)
        return None

    def __exit__(self, exc_type, exc, tb) -> None:
        set_flag(JitFlag.KernelHistory, self._before)
        return None
