"""Symbolic loops in the trace: the record of a loop body traced once over placeholder nodes.

A symbolic loop (``fj.while_loop(..., mode="symbolic")``) is three kinds of node, all made by
the door (:mod:`.ops`: :func:`~.ops.loop_phi`, :func:`~.ops.loop`, :func:`~.ops.loop_out`):

* ``loop_phi`` (one per state variable): the state at the top of an iteration, a placeholder
  with no value of its own.  Its only operand is a node of the loop's width (so sizes and a
  frozen function's symbolic widths follow it); it is never computed outside its loop.
* ``loop`` (one per loop): operands are the initial state values followed by the loop's *free
  nodes*, everything the condition and the body read that does not depend on the state (so
  the scheduler emits them before the loop, and every walk over operands sees them); its
  ``extra`` is the :class:`LoopRecord`.
* ``loop_out`` (one per state variable): the final state, ``value`` is the variable's position.

The scheduler (``schedule/kernel.py``) turns a ``loop`` node into a loop region of the kernel
spec (``backend/kernel.py``: ``loop_start`` ... ``loop_end``).
"""
from __future__ import annotations

import weakref

from .node import Node


class LoopRecord:
    """A symbolic loop's body, traced once.

    Attributes
    ----------
    label : str or None
        The loop's name (``label=`` of ``while_loop``), for messages.
    phis : list[Node]
        The ``loop_phi`` placeholders, one per state variable, in order.
    cond : Node
        The ``Bool`` condition over ``phis`` (already restricted to the enclosing scope's lanes).
    results : list[Node]
        The state after one iteration, one node per state variable.
    outputs : list[weakref.ref]
        The ``loop_out`` nodes made for it: evaluating one evaluates the others still alive in
        the same kernel (the loop runs once).
    effects : list[weakref.ref]
        The scatters of the body and the loops nested in it that scatter (each at the place of
        its first scatter), in program order.  The scatters stay in the queue of side effects
        (which holds them) with ``value`` set to the outermost loop node they belong to; the
        scheduler emits that loop in their place, with the scatters inside its region.
    effect_loops : list[Node]
        Loops nested in the body that scatter (held here): emitted with their scatters inside
        this loop's region.
    """

    __slots__ = ("label", "phis", "cond", "results", "outputs", "effects", "effect_loops", "__weakref__")

    def __init__(self, label: str | None):
        self.label = label
        self.phis: list = []
        self.cond: Node | None = None
        self.results: list = []
        self.outputs: list = []
        self.effects: list = []
        self.effect_loops: list = []

    @property
    def n_state(self) -> int:
        return len(self.phis)

    def add_output(self, node: Node) -> None:
        self.outputs.append(weakref.ref(node))

    def __repr__(self) -> str:
        return f"LoopRecord({self.label!r}, {len(self.phis)} state variables)"


def free_nodes(phis, roots) -> list[Node]:
    """The nodes that ``roots`` read and that do not depend on ``phis`` (in first-use order).

    A node *depends* on the phis when it is one of them or one of its operands depends on them;
    the free nodes are the operands of dependent nodes (and the roots) that do not.  They are
    the loop's inputs: computed once, before the loop.  Iterative (a body can be a long chain).
    """
    variant = _variant(phis, roots)
    free: dict = {}
    seen: set = set()
    for r in roots:
        _collect(r, variant, free, seen)
    return list(free)


def _variant(phis, roots) -> dict:
    """Whether each node ``roots`` reach depends on ``phis`` (see :func:`free_nodes`).

    Every node reachable from the roots is visited, the graph computed before the loop too (the
    body's free operands and everything under them), so the walk reads the operand slots
    directly and keeps no per-visit tuples: a node stays on the stack until its operands are
    known (it is looked at twice), then gets its answer (r15: the walk was 17% of ``p_dda``'s
    steady call, ~1.1 us per node).  A ``scatter_rmw`` of the body runs in the loop, whatever its
    operands.
    """
    variant: dict = dict.fromkeys(phis, True)
    get = variant.get
    stack = list(roots)
    while stack:
        n = stack[-1]
        if n in variant:
            stack.pop()
            continue
        b = n.a1
        if b is not None:       # (two operands: the slots, no tuple)
            a = n.a0
            va = get(a)
            vb = get(b)
            if va is None or vb is None:
                if va is None:
                    stack.append(a)
                if vb is None:
                    stack.append(b)
                continue
            stack.pop()
            variant[n] = va or vb or n.op == "scatter_rmw"
            continue
        args = n.a0
        known = True
        for a in args:
            if a not in variant:
                stack.append(a)
                known = False
        if not known:
            continue
        stack.pop()
        v = n.op == "scatter_rmw"
        if not v:
            for a in args:
                if variant[a]:
                    v = True
                    break
        variant[n] = v
    return variant


def _collect(root: Node, variant: dict, free: dict, seen: set) -> None:
    """Add to ``free`` the maximal independent nodes under ``root`` (see :func:`free_nodes`)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if not variant[n]:
            free.setdefault(n, None)
            continue
        if n.op == "loop_phi":
            continue
        b = n.a1
        if b is None:
            stack.extend(reversed(n.a0))
        else:
            stack.append(b)
            stack.append(n.a0)


def is_symbolic(nodes) -> bool:
    """Whether one of ``nodes`` depends on a symbolic loop's placeholder (a variable of a loop body
    or condition) or an ``@fj.func`` body's parameter (:mod:`.calls`): it has no value outside
    its kernel, so it cannot be read on the host."""
    stack = list(nodes)
    seen: set = set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        op = n.op
        if op == "loop_phi" or op == "call_param":
            return True
        if op != "data" and op != "literal":
            stack.extend(n.args)
    return False
