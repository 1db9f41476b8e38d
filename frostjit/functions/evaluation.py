"""Evaluation control: ``eval``, ``schedule``, ``make_opaque``, ``width``, kernel history."""
from __future__ import annotations

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..backend import current_backend
from ..schedule.evaluate import evaluate, kernel_history  # noqa: F401  (re-exported)
from ..trace import ops
from ..trace.state import state
from ..tree import arrays_in


def eval(*args) -> None:  # noqa: A001  (Dr.Jit's name)
    """Evaluate the arrays in the given PyTrees (and everything scheduled, and pending scatters).

    Pending elementwise work of equal size fuses into one kernel launch.

    Examples
    --------
    >>> x = fj.arange(Float, 10) * 2 + 1
    >>> fj.eval(x)      # one kernel
    """
    nodes = [a._node for a in arrays_in(args)]
    if state.scheduled:
        nodes = state.scheduled + nodes
        state.scheduled = []
    evaluate(nodes)


def schedule(*args) -> None:
    """Mark the arrays in the given PyTrees for evaluation by the next :func:`eval`."""
    state.scheduled.extend(a._node for a in arrays_in(args) if a._node.op not in ("data", "literal"))


def make_opaque(*args) -> None:
    """Evaluate the arrays in the given PyTrees and turn literals into memory.

    Afterwards no value of these arrays is folded into kernels as a constant,
    so changing them does not compile new kernels.
    """
    arrays = arrays_in(args)
    eval(*arrays)
    backend = current_backend()
    for a in arrays:
        node = a._node
        if node.op == "literal":
            buf = backend.full(node.vt, node.value, node.size)
            new = ops.data(node.vt, buf, node.size)
            rec = state.recorder
            if rec is not None:
                new.sym = node.sym      # a frozen function's symbolic size of the literal
                rec.on_memop("fill", node.value, [], [new])
            a._node = new


def width(*args) -> int:
    """The number of lanes of the arguments: the largest size among their arrays (1 if none).

    Raises ``ValueError`` when two arrays have different sizes neither of which is 1.
    """
    w = 1
    for a in arrays_in(args):
        s = a._node.size
        if s != w:
            if w == 1:
                w = s
            elif s != 1:
                raise ValueError(f"width(): incompatible sizes {w} and {s}")
    rec = state.recorder
    if rec is not None:
        return rec.on_width(w, arrays_in(args))
    return w


def is_jit(x) -> bool:
    """Whether ``x`` is a JIT array (1-D or static vector)."""
    return isinstance(x, (ArrayBase, VectorBase))
