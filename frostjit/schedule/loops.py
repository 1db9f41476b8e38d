"""Symbolic loops in kernel specs: a ``loop`` node (:mod:`frostjit.trace.loops`) becomes a loop
region (``loop_start`` ... ``loop_end``, see :mod:`frostjit.backend.kernel`).

The ``loop`` node's operands (the initial state and the loop's free nodes) are emitted before
it by the ordinary walk, so the region holds only what depends on the state: the placeholders
(``loop_phi``), the condition and the body.  A kernel that stores one of a loop's results also
stores the others still alive (:func:`store_siblings`): the loop runs once for all of them.
"""
from __future__ import annotations

from ..backend.kernel import OUT, SCATTER_DST, Instr, LoopInfo
from ..trace.dtypes import Bool
from ..trace.node import Node

#: The node kinds that :func:`emit` handles (``loop_out`` is an ordinary instruction).
REGION_NODES = frozenset({"loop", "loop_phi"})


class LoopVariableError(RuntimeError):
    """A variable of a symbolic loop's body was used outside the loop (or evaluated inside it)."""


class StateUsedAsMemory(LoopVariableError):
    """A symbolic loop's body gathers from or scatters to a state variable's placeholder (``node``,
    a ``loop_phi``): the loop that owns it traces its body again with the caller's array in its
    place (Dr.Jit's loop-invariant state, :func:`frostjit.control.symbolic.loop`)."""

    def __init__(self, node: Node):
        rec = node.extra
        name = f" {rec.label!r}" if rec.label else ""
        super().__init__(f"fj.while_loop{name}: the body gathers from or scatters to a state variable that it "
                         "also modifies; such a variable must be returned unchanged (or use mode='evaluated')")
        self.node = node


def emit_with_effects(b, n: Node, visit) -> None:
    """Emit the loop ``n`` with its body's scatters (once per kernel: its scatters are side
    effects of this launch); its operands first."""
    if n in b.ids:
        return
    for a in n.args:
        if a not in b.ids:
            visit(b, a, 0)
    emit(b, n, visit, with_effects=True)


def emit(b, n: Node, visit, with_effects: bool = False) -> None:
    """Append the loop region of the ``loop`` node ``n`` to the spec ``b`` (its operands have
    instructions already); ``visit(b, node, depth)`` emits a node after its operands.
    ``with_effects``: the body's scatters too (see :func:`emit_with_effects`; a loop emitted for
    its results alone, after its scatters ran, does not repeat them)."""
    if n.op == "scatter_rmw":
        raise LoopVariableError(
            "frostjit: the result of scatter_inc/scatter_exch/scatter_cas in the body of a symbolic loop was used "
            "outside the loop (or in a loop traced again without its side effects, for derivatives); return it "
            "from the body as loop state, or use mode='evaluated'")
    if n.op not in REGION_NODES:
        raise RuntimeError(f"frostjit: the scheduler cannot emit a {n.op!r} node here")
    if n.op == "loop_phi":
        rec = n.extra
        name = f" {rec.label!r}" if rec.label else ""
        raise LoopVariableError(
            f"fj.while_loop{name}: a variable computed inside the body or the condition of a symbolic loop "
            "was evaluated or used outside the loop (or the body read an array it had scattered to). "
            "Symbolic loop variables have no value of their own: return them from the body as loop state, "
            "or use mode='evaluated'")
    rec = n.extra
    ids = b.ids
    instrs = b.instrs
    keys = b.key_items
    k = rec.n_state
    start = len(instrs)
    instrs.append(None)            # loop_start, completed below once its parts are placed
    keys.append(None)
    for j, p in enumerate(rec.phis):
        ids[p] = len(instrs)
        ins = Instr("loop_phi", p.vt, (start,), j)
        instrs.append(ins)
        keys.append(ins)
    b.depth += 1
    c = rec.cond
    if c not in ids:
        visit(b, c, 0)
    cond_at = len(instrs)
    ins = Instr("loop_cond", Bool, (start, ids[c]))
    instrs.append(ins)
    keys.append(ins)
    if with_effects:
        # the body's scatters and the nested loops that scatter, in program order, before the
        # results (which must not emit a nested loop without its scatters, and may read a
        # scatter_rmw's old value)
        _emit_scatters(b, rec, visit)
    for r in rec.results:
        if r not in ids:
            visit(b, r, 0)
    end_at = len(instrs)
    ins = Instr("loop_end", Bool, (start,) + tuple(ids[r] for r in rec.results))
    instrs.append(ins)
    keys.append(ins)
    b.depth -= 1
    head = Instr("loop_start", Bool, tuple(ids[a] for a in n.args[:k]), LoopInfo(k, cond_at, end_at))
    instrs[start] = head
    keys[start] = head
    ids[n] = start
    if b.depth == 0:
        b.loops.append(rec)


def store_siblings(b, visit) -> None:
    """Store the alive, still pending results of the outermost loops of ``b`` that no output
    stores yet (after the other stores: the OUT parameters come last, in ``b.outputs``' order)."""
    ids = b.ids
    for rec in b.loops:
        for ref in rec.outputs:
            o = ref()
            if o is None or o.op != "loop_out" or (id(o), OUT) in b.slots:
                continue
            if o not in ids:
                visit(b, o, 0)
            ins = Instr("store", o.vt, (ids[o],), b.param(o, OUT))
            b.outputs.append(o)
            b.instrs.append(ins)
            b.key_items.append(ins)


def _emit_scatters(b, rec, visit) -> None:
    """The body's scatters and nested loops with scatters, in program order, inside the region
    (before ``loop_end``)."""
    ids = b.ids
    for ref in rec.effects:
        e = ref()
        if e is None:           # already launched and released (not queued any more)
            continue
        if e.op == "loop":
            emit_with_effects(b, e, visit)
            continue
        for a in e.args:
            if a not in ids:
                visit(b, a, 0)
        target, reduce_op = e.extra
        ins = Instr(e.op, e.vt, tuple(ids[a] for a in e.args), (b.param(target, SCATTER_DST), reduce_op))
        if e.op == "scatter_rmw":       # (its value, the old one, is an operand of later nodes)
            ids[e] = len(b.instrs)
        b.instrs.append(ins)
        b.key_items.append(ins)
        b.has_side_effects = True
