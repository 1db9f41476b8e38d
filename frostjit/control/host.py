"""Decisions the host takes from data (are any lanes still active? how many?), made so that a
frozen function never replays a stale one.

A plain call reduces the mask (``fj.any``) and reads one bool.  Inside a ``fj.freeze`` recording
that read would make the whole recording data-dependent (never replayed), so the count comes
from ``fj.compress`` instead: its element count is a symbol of the recording (``c3``), and the
decision becomes a *guard* on it (``c3 == 0`` was false), checked right after that compress in
every replay.  A replay whose data takes another decision (a loop that needs one more
iteration, a ``switch`` target that now has lanes) fails the guard and traces again; the guard's
text names the loop, so the re-trace log and ``FreezeWarning`` say which one.
"""
from __future__ import annotations

from ..freeze.symbolic import Sym
from ..functions.evaluation import width
from ..functions.reduce import any as any_, compress
from ..backend import current_backend
from ..trace.state import KERNEL_HISTORY, state


def recorder():
    """The calling thread's freeze recorder, or ``None`` when it is not recording."""
    rec = state.recorder
    return None if rec is None else rec.current()


def is_empty(indices, what: str) -> bool:
    """Whether ``indices`` (a ``compress`` result) has no entries; a guard inside a recording."""
    n = width(indices)
    if type(n) is Sym:
        rec = recorder()
        if rec is not None:
            return rec.guard_compare(n, "==", 0, what)
    return int(n) == 0


def any_active(mask, what: str) -> bool:
    """Whether any lane of the Bool array ``mask`` is set (see module docstring)."""
    if recorder() is None:
        n = getattr(mask, "_node", None)
        if n is not None and n.op == "data" and not state.flags & KERNEL_HISTORY:
            # An evaluated mask (an evaluated loop's, at every iteration) is read where it lies:
            # fj.any's size-1 result array and the read of its element were ~a tenth of a small
            # loop's iteration.  (With the kernel history on, fj.any reports its reduction.)
            try:
                return bool(current_backend().host_array(n.value, n.size).any())
            except TypeError:       # (a backend whose memory is not the host's)
                pass
        return bool(any_(mask)[0])
    return not is_empty(compress(mask), what)
