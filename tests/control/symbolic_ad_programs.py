"""Programs for the AD tests of symbolic control flow whose bodies read grad-enabled arrays from
outside their state (closures, an outer loop's state), written against a namespace ``dr`` so
that the same code runs on frostjit (the tests) and on Dr.Jit (``anchor_symbolic_ad.py``).

Each program is ``program(dr, Float, UInt32, x, p, q, trips, mode)``: ``x`` and ``q`` have one
lane per lane, ``p`` is one value; every one of them may be grad-enabled.  Loops are bounded by
``trips`` (< 4) and pass ``max_iterations=8`` (Dr.Jit's requirement for reverse mode).
"""
from __future__ import annotations

MAX_ITERATIONS = 8


def loop_closure(dr, Float, UInt32, x, p, q, trips, mode):
    """The state ``y`` starts at ``x``; the body reads ``p`` and ``q`` from outside."""
    _, y = dr.while_loop((UInt32(0), Float(x)), lambda i, y: i < trips,
                         lambda i, y: (i + 1, y * p + dr.sin(y) * q), mode=mode, max_iterations=MAX_ITERATIONS)
    return y


def closure_only(dr, Float, UInt32, x, p, q, trips, mode):
    """No state variable is grad-enabled: every derivative comes through the body's reads."""
    _, acc = dr.while_loop((UInt32(0), dr.zeros(Float, dr.width(x))), lambda i, a: i < trips,
                           lambda i, a: (i + 1, a * 0.5 + dr.sin(x * p) * q), mode=mode,
                           max_iterations=MAX_ITERATIONS)
    return acc


def nested_loops(dr, Float, UInt32, x, p, q, trips, mode):
    """The inner loop reads the outer loop's state ``y`` and the closure ``p``."""
    def outer_body(i, y):
        _, z = dr.while_loop((UInt32(0), Float(y)), lambda j, z: j < i + 1,
                             lambda j, z: (j + 1, z * 0.5 + y * p), mode=mode, max_iterations=MAX_ITERATIONS)
        return i + 1, z + q
    _, y = dr.while_loop((UInt32(0), Float(x)), lambda i, y: i < trips, outer_body, mode=mode,
                         max_iterations=MAX_ITERATIONS)
    return y


def if_in_loop(dr, Float, UInt32, x, p, q, trips, mode):
    """A conditional in a loop body, each branch reading a different closure."""
    def body(i, y):
        y = dr.if_stmt((y,), y > 0.25, lambda v: v * p, lambda v: v + q * v * v, mode=mode)
        return i + 1, y
    _, y = dr.while_loop((UInt32(0), Float(x)), lambda i, y: i < trips, body, mode=mode,
                         max_iterations=MAX_ITERATIONS)
    return y


def switch_in_loop(dr, Float, UInt32, x, p, q, trips, mode):
    """A call in a loop body: the target changes with the iteration.  (Targets read only size-1
    arrays from outside: a per-lane array is passed as an argument, as Dr.Jit requires.)"""
    targets = [lambda v, w: v * p, lambda v, w: dr.cos(v) + w, lambda v, w: v * w * p]

    def body(i, y):
        return i + 1, dr.switch(i % 3, targets, y, q, mode=mode)
    _, y = dr.while_loop((UInt32(0), Float(x)), lambda i, y: i < trips, body, mode=mode,
                         max_iterations=MAX_ITERATIONS)
    return y


def if_closure(dr, Float, UInt32, x, p, q, trips, mode):
    """A conditional whose branches read closures (no loop)."""
    return dr.if_stmt((x,), (trips & 1) == 0, lambda v: v * p * p, lambda v: v * q + p, mode=mode)


def switch_closure(dr, Float, UInt32, x, p, q, trips, mode):
    """A call whose targets read a closure (no loop)."""
    return dr.switch(trips % 3, [lambda v, w: v * p, lambda v, w: dr.exp(v) * w, lambda v, w: v + p * w], x, q,
                     mode=mode)


PROGRAMS = [loop_closure, closure_only, nested_loops, if_in_loop, switch_in_loop, if_closure, switch_closure]

#: Inputs of the comparison with Dr.Jit (``anchor_symbolic_ad.py``) and their derivatives there.
ANCHOR_X = (0.5, -0.75, 1.25, 0.1)
ANCHOR_Q = (0.3, -0.2, 0.7, 1.1)
ANCHOR_P = 0.8
ANCHOR_TRIPS = (0, 1, 2, 3)
