"""Loop regions (symbolic loops, see :mod:`frostjit.backend.kernel`) in the NumPy interpreter.

Each iteration runs the condition and the body over every lane of the launch, then keeps the
new state on the lanes that ran it (``numpy.where``): retired lanes keep their state.  The
iterations stop when no lane runs.  A nested loop starts with the lanes of the enclosing
iteration (a per-thread stack of the running lanes).
"""
from __future__ import annotations

import threading

import numpy as np


class _Lanes(threading.local):
    def __init__(self) -> None:
        self.stack: list = []


_lanes = _Lanes()


def run_loop(spec, start: int, vals: list, size: int, run) -> int:
    """Run the loop region starting at instruction ``start``; ``run(lo, hi)`` interprets a range
    of instructions.  Leaves the final state in ``vals[start]`` (a tuple, one array per state
    variable, for ``loop_out``) and returns the index of the instruction after ``loop_end``."""
    instrs = spec.instrs
    head = instrs[start]
    info = head.value
    n = info.n_state
    state = [np.broadcast_to(np.asarray(vals[a], instrs[a].vt.np_dtype), (size,)).copy() for a in head.args]
    stack = _lanes.stack
    active = stack[-1].copy() if stack else np.ones(size, bool)
    end = instrs[info.end]
    while True:
        for j in range(n):
            vals[start + 1 + j] = state[j]
        run(start + 1 + n, info.cond)
        active = active & np.broadcast_to(np.asarray(vals[instrs[info.cond].args[1]], bool), (size,))
        if not active.any():
            break
        vals[info.cond] = active
        stack.append(active)
        try:
            run(info.cond + 1, info.end)
        finally:
            stack.pop()
        state = [np.where(active, np.asarray(vals[r], s.dtype), s) for r, s in zip(end.args[1:], state)]
    vals[start] = tuple(state)
    return info.end + 1
