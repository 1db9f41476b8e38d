"""Runtime controls of Dr.Jit's API: threads, log level, backends, kernel history.

``set_thread_count``/``thread_count`` size the LLVM backend's thread pool;
``set_log_level``/``log_level`` set the level of frostjit's ``logging`` logger (``"frostjit"``)
in Dr.Jit's terms (:class:`LogLevel`); ``has_backend`` says whether a backend can run;
``set_expand_threshold``/``expand_threshold`` bound the scatter-reduction targets the LLVM
backend replicates per thread.
"""
from __future__ import annotations

import enum
import logging
import operator
import sys

from ..backend import current_backend
from ..backend.settings import settings
from ..trace.state import JitBackend, state

__all__ = ["LogLevel", "log_level", "set_log_level", "thread_count", "set_thread_count", "has_backend",
           "kernel_history_clear", "flush_thread", "expand_threshold", "set_expand_threshold"]

log = logging.getLogger("frostjit")


class LogLevel(enum.Enum):
    """Dr.Jit's log levels (Dr.Jit 1.5's values); :func:`set_log_level` maps them to ``logging``."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``LogLevel.Member``

    Disable = 0
    Error = 1
    Warn = 2
    Info = 3
    InfoSym = 4
    Debug = 5
    Trace = 6


# LogLevel -> logging level of the "frostjit" logger (Disable: above CRITICAL, nothing passes).
_TO_LOGGING = {LogLevel.Disable: logging.CRITICAL + 10, LogLevel.Error: logging.ERROR,
               LogLevel.Warn: logging.WARNING, LogLevel.Info: logging.INFO, LogLevel.InfoSym: logging.INFO,
               LogLevel.Debug: logging.DEBUG, LogLevel.Trace: 5}
_set_level: list = [None]        # the LogLevel last set, while the logger still has its level
_handler: list = [None]          # the stderr handler set_log_level installed, if any


def set_log_level(level, /) -> None:
    """Set how much frostjit logs (``logging`` logger ``"frostjit"``), in Dr.Jit's levels.

    Parameters
    ----------
    level : LogLevel or int
        ``LogLevel.Warn`` (the default) shows warnings and errors, ``Info`` also compiles and
        cache events, ``Debug``/``Trace`` everything, ``Disable`` nothing.  An int is Dr.Jit's
        value of a level (``5`` is ``Debug``; values above 6 mean ``Trace``).

    Notes
    -----
    When no logging handler is configured (neither on ``"frostjit"`` nor on the root logger),
    a handler writing to ``sys.stderr`` is added so the messages appear, as Dr.Jit prints its
    log to the console; with ``logging`` configured, frostjit's records go to its handlers.
    """
    if isinstance(level, bool) or not isinstance(level, (LogLevel, int)):
        raise TypeError(f"set_log_level(): expected a frostjit.LogLevel or an int, got {type(level).__name__}")
    if not isinstance(level, LogLevel):
        if level < 0:
            raise ValueError(f"set_log_level(): a log level is >= 0, got {level}")
        level = LogLevel(min(level, LogLevel.Trace.value))
    log.setLevel(_TO_LOGGING[level])
    _set_level[0] = level
    if _handler[0] is None and not log.handlers and not logging.getLogger().handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(h)
        _handler[0] = h


def log_level() -> LogLevel:
    """The current :class:`LogLevel` of frostjit's logger (``Warn`` unless changed)."""
    level = _set_level[0]
    effective = log.getEffectiveLevel()
    if level is not None and _TO_LOGGING[level] == effective:
        return level
    # Set through logging directly: the Dr.Jit level that lets the same records through.
    for lv in (LogLevel.Trace, LogLevel.Debug, LogLevel.Info, LogLevel.Warn, LogLevel.Error):
        if effective <= _TO_LOGGING[lv]:
            return lv
    return LogLevel.Disable



def thread_count() -> int:
    """The number of threads that run a kernel launch, the calling thread included."""
    return current_backend().thread_count()


def set_thread_count(count: int, /) -> None:
    """Run kernel launches on ``count`` threads, the calling thread included (``0`` and ``1``
    both mean the calling thread alone).  The default is the number of cores this process may
    use, or ``FROSTJIT_NUM_THREADS``.

    Raises
    ------
    TypeError
        ``count`` is not a non-negative int.
    """
    n = _count("set_thread_count", count)
    with state.lock:        # no launch runs while the pool is replaced
        current_backend().set_thread_count(max(n, 1))


def expand_threshold() -> int:
    """The largest scatter-reduction target (in elements) that may be replicated per thread.

    See :func:`set_expand_threshold`; the default is ``1048576`` (as Dr.Jit 1.5).
    """
    return settings.expand_threshold


def set_expand_threshold(value: int, /) -> None:
    """Set the largest scatter-reduction target (in elements) the LLVM backend replicates per thread.

    A multi-threaded launch whose ``scatter_reduce`` targets a small array (an image, the
    gradient of a few parameters) gives each thread a private copy to reduce into without
    atomics and combines the copies afterwards; this costs one copy of the target per thread.
    Targets larger than ``value`` elements (and targets larger than a quarter of the launch,
    frostjit's own rule) are reduced with atomics instead.  The setting changes only the
    strategy (and thereby the order of floating-point additions), never what is computed; the
    reference backend has no threads and ignores it.

    Parameters
    ----------
    value : int
        A number of elements, ``>= 0`` (``0``: never replicate).

    Raises
    ------
    TypeError
        ``value`` is not a non-negative int (Dr.Jit: ``TypeError`` too).
    """
    settings.expand_threshold = _count("set_expand_threshold", value)


def _count(who: str, value) -> int:
    """``value`` as an int >= 0 (an ``operator.index``-able value, not a bool), else ``TypeError``
    naming ``who`` (Dr.Jit raises ``TypeError`` for these settings too)."""
    if isinstance(value, bool):
        raise TypeError(f"{who}(): expected an int >= 0, got bool")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{who}(): expected an int >= 0, got {type(value).__name__}") from None
    if n < 0:
        raise TypeError(f"{who}(): expected an int >= 0, got {n}")
    return n


def has_backend(backend: JitBackend, /) -> int:
    """``1`` if ``backend`` can run here, else ``0`` (an ``int``, as Dr.Jit returns it).

    Raises
    ------
    TypeError
        ``backend`` is not a :class:`frostjit.JitBackend`.
    RuntimeError
        ``backend`` is ``JitBackend.Invalid``.
    """
    if not isinstance(backend, JitBackend):
        raise TypeError(f"has_backend(): expected a frostjit.JitBackend, got {type(backend).__name__}")
    if backend is JitBackend.Invalid:
        raise RuntimeError("has_backend(): JitBackend.Invalid is not a backend")
    if backend is not JitBackend.LLVM:
        return 0
    try:
        current_backend()
    except Exception:       # noqa: BLE001  (LLVM could not be initialized here)
        return 0
    return 1


def kernel_history_clear() -> None:
    """Forget the recorded kernel history (:func:`frostjit.kernel_history` would return it)."""
    state.history.clear()


def flush_thread() -> None:
    """Submit queued work without waiting: a no-op, frostjit launches run to completion at once."""


# Process state user code may read inside a frozen function: the read set guards what these
# return (frostjit/freeze/readset.py), so a replay never uses a stale value.
for _getter in (log_level, thread_count, expand_threshold):
    _getter.__fj_state__ = True
del _getter
