"""Evaluation control: ``eval``, ``schedule``, ``make_opaque``, ``width``, kernel history."""
from __future__ import annotations

from ..array.flat import ArrayBase, literal_to_memory
from ..array.vector import VectorBase
from ..schedule.evaluate import evaluate, kernel_history  # noqa: F401  (re-exported)
from ..trace import ops
from ..trace.state import state
from ..tree import leaves, traverse


# Classes whose instances refuse evaluation, with the reason: Dr.Jit's cooperative vectors
# (frostjit.nn registers them).  Only the arguments themselves are checked: a set lookup per
# argument on this hot path.
UNEVALUABLE: dict = {}


def _refuse_unevaluable(args: tuple, who: str) -> None:
    for a in args:
        reason = UNEVALUABLE.get(type(a))
        if reason is not None:
            raise RuntimeError(f"{who}(): {reason}")


def eval(*args) -> bool:  # noqa: A001  (Dr.Jit's name)
    """Evaluate the arrays in the given PyTrees (and everything scheduled, and pending scatters).

    Pending elementwise work of equal size fuses into one kernel launch.

    Parameters
    ----------
    *args : PyTree
        Arrays, static vectors, or any PyTree of them (see :mod:`frostjit.tree`: tuples,
        lists, dicts, dataclasses, ``DRJIT_STRUCT`` classes, objects using the traversal
        protocol such as the optimizers); Python values inside are ignored.

    Returns
    -------
    bool
        ``True`` if one of the given arrays was unevaluated, ``False`` if all of them were in
        memory or literals (as Dr.Jit 1.5: scheduled arrays and pending scatters are evaluated
        too, but do not count).

    Examples
    --------
    >>> x = fj.arange(Float, 10) * 2 + 1
    >>> fj.eval(x)      # one kernel
    >>> fj.eval({"a": x + 1, "b": [x * 2]})     # one kernel for both
    """
    if UNEVALUABLE:     # (empty until a cooperative vector type exists: one truth test)
        _refuse_unevaluable(args, "eval")
    nodes = [a._node for a in leaves(args)]
    given = False
    for n in nodes:
        if n.op != "data" and n.op != "literal":
            given = True
            break
    if state.scheduled:
        nodes = state.scheduled + nodes
        state.scheduled = []
    evaluate(nodes)
    return given


def schedule(*args) -> bool:
    """Mark the arrays in the given PyTrees (as :func:`eval` takes them) for evaluation by the
    next :func:`eval`; ``True`` if any of them was unevaluated (as Dr.Jit)."""
    if UNEVALUABLE:     # (empty until a cooperative vector type exists: one truth test)
        _refuse_unevaluable(args, "schedule")
    new = [a._node for a in leaves(args) if a._node.op not in ("data", "literal")]
    state.scheduled.extend(new)
    return bool(new)


def make_opaque(*args) -> None:
    """Evaluate the arrays in the given PyTrees (as :func:`eval` takes them) and turn literals
    into memory.

    Afterwards no value of these arrays is folded into kernels as a constant,
    so changing them does not compile new kernels.
    """
    if UNEVALUABLE:     # (empty until a cooperative vector type exists: one truth test)
        _refuse_unevaluable(args, "make_opaque")
    arrays = leaves(args)
    eval(*arrays)
    for a in arrays:
        if a._node.op == "literal":
            literal_to_memory(a)
        elif ops.LITERAL_STAND_INS:
            ops.LITERAL_STAND_INS.discard(a._node)     # (a frozen function's width value: memory now)


def width(*args) -> int:
    """The number of lanes of the arguments (Dr.Jit's rule).

    Each array of a PyTree counts with its size, each Python value (a number, ``None``, ...)
    as 1; the width is the largest of them, and 0 when there is nothing at all
    (``width()``, ``width(())``, ``width(Float())``).

    Raises
    ------
    ValueError
        Two sizes differ and neither is 1 (a ragged input).
    """
    arrays: list = []
    sizes = set()
    for a in args:
        if getattr(type(a), "IsJIT", True) is False:
            if getattr(a, "IsVector", False):
                sizes.add(a.shape[-1])      # the scalar backend: the innermost size (Dr.Jit)
            elif getattr(a, "IsTensor", False):
                sizes.add(len(a.array))     # a scalar tensor: its number of elements (Dr.Jit)
    traverse(args, arrays.append, lambda _: sizes.add(1))     # a Python value counts as size 1
    for a in arrays:
        sizes.add(a._node.size)
    w = max(sizes) if sizes else 0
    if len(sizes) > 1:
        for s in sizes:
            if s != w and s != 1 and w != 1:
                raise ValueError(f"width(): incompatible sizes {s} and {w}")
    rec = state.recorder
    if rec is not None:
        return rec.on_width(w, arrays)
    return w


def is_jit(x) -> bool:
    """Whether ``x`` is a JIT array (1-D or static vector)."""
    return isinstance(x, (ArrayBase, VectorBase))
