"""Rejection sampling as a host loop of kernels: redraw the lanes that were rejected.

Dr.Jit runs these loops (unbiased bounded integers) as ``dr.while_loop``.  frostjit has no
loop construct inside kernels yet, so each round is evaluated and the host checks whether any
lane is still rejected; the values are the same, only the number of kernel launches differs
(one per round; a round rejects a lane with probability below ``bound / 2^32``).  Inside
``fj.freeze`` the check reads data, so such a call falls back to a plain call (see
docs/random.md).
"""
from __future__ import annotations

from typing import Callable

from ..functions.evaluation import eval as fj_eval
from ..functions.math import select
from ..functions.reduce import any as fj_any


def redraw_rejected(result, rejected, redraw: Callable, carried: Callable[[], object]):
    """Replace ``result`` where ``rejected`` until no lane is rejected.

    ``redraw(rejected)`` draws new candidates for the rejected lanes and returns
    ``(value, still_rejected)``; the generator state it advances is ``carried()``, evaluated
    with the loop variables every round (so no round re-traces the previous ones).
    """
    while True:
        fj_eval(result, rejected, carried())
        if not bool(fj_any(rejected)):
            return result
        value, again = redraw(rejected)
        result = select(rejected, value, result)
        rejected = rejected & again
