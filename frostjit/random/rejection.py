"""Loops of the generators: rejection sampling (bounded integers) and the bit loops of jumps.

Dr.Jit runs its rejection loops (``next_uint32_bounded``, ``next_uint64_bounded``,
``Generator.integers``) as a ``dr.while_loop`` whose state holds the generator: a lane that
draws a biased value redraws from its own copy, so it advances once per draw and the others
stop.  frostjit does the same with :func:`frostjit.while_loop` (symbolic by default, so the
draws are one kernel and a frozen function records the loop once; evaluated when
``JitFlag.SymbolicLoops`` is off).  The scalar backend's values are Python ints or one-lane
arrays, which ``while_loop`` does not take: the same rounds then run as a host loop.
"""
from __future__ import annotations

from typing import Callable

from ..control.while_loop import while_loop


def generator_loop(state: tuple, cond: Callable, body: Callable, label: str, jit: bool) -> tuple:
    """``while_loop(state, cond, body)`` when ``jit``; else the same rounds as a host loop.

    ``cond`` returns a ``Bool`` array (a Python bool, a one-lane array or a scalar ``Bool`` on
    the host path, which runs while its first lane holds).
    """
    if jit:
        return while_loop(state, cond, body, label=label)
    while _holds(cond(*state)):
        state = body(*state)
    return state


def _holds(c) -> bool:
    return bool(c if isinstance(c, bool) else c[0])
