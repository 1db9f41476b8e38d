"""Symbolic mode of ``fj.while_loop`` and ``fj.if_stmt``: the loop or the conditional becomes part
of the kernel that evaluates its results (Dr.Jit's symbolic mode).

**Loops.** The condition and the body are traced *once*, over placeholders standing for the
state at the top of an iteration (``loop_phi`` nodes, :mod:`frostjit.trace.loops`); the loop is
a ``loop`` node whose results are ``loop_out`` nodes.  Nothing is evaluated: the kernel that
computes a result runs the loop, each lane until its condition is false (a retired lane keeps
its state, and the body's gathers are masked by the condition, :mod:`frostjit.trace.masks`).
A loop therefore compiles once whatever its iteration count, and the count may differ from lane
to lane and from call to call (a frozen function replays it at any width).  The state is any
PyTree; its arrays all take the loop's width (the widest of the state, the condition and the
body's results).  A size-1 state variable that the body widens is found by the first trace;
the body is then traced a second time with placeholders of the full width.

**Conditionals.** Both branches are traced, each with the lanes of its side pushed as the mask
of its gathers and scatters, and the results are selected lane by lane: one kernel, no
evaluation, no branch in the code.

**Calls** (``fj.switch`` with an array index): every target traced over all lanes with its
lanes' mask, results selected per lane (:func:`symbolic_switch`).

**AD** of loops is :mod:`.loop_ad`: :func:`loop` reports the grad-enabled arrays a body reads
from outside its state (its implicit inputs, :class:`ClosureGradients`).  Conditionals and calls
are ``select``s of traced branches, differentiable as they are.

**Scatters** in a loop body run every iteration inside the loop's kernel (:func:`_attach_effects`).

Not supported (a clear error): evaluating a variable of the body inside it or using one outside
the loop, a body gathering from an array after scattering to it.
"""
from __future__ import annotations

import math
import weakref


from ..ad.api import enable_grad
from ..ad.graph import ancestors, next_id
from ..array import registry
from ..functions.creation import zeros
from ..functions.evaluation import width
from ..functions.math import select
from ..trace import masks, ops
from ..trace.dtypes import Bool
from ..trace.loops import LoopRecord, free_nodes
from ..trace.node import Node
from ..schedule.loops import StateUsedAsMemory
from ..trace.state import JitFlag, state as trace_state
from ..tree import flatten, unflatten
from .consistency import (branch_call, check, check_branch_results, check_tuple, contract_error, fresh, merge,
                          share_scattered, size_error)
from .errors import StateTypeError, StateValueError
from .modes import check_mask, is_mask, switch_lanes

WHILE = "while_loop"
IF = "if_stmt"
SWITCH = "switch"


class ClosureGradients(Exception):
    """Raised by :func:`loop` (``implicit=None``) when the body computes with grad-enabled arrays
    that are not part of its state: the caller traces the loop again as a differentiable
    operation (:mod:`.loop_ad`).  ``vertices``: those arrays' AD vertices."""

    def __init__(self, vertices: list):
        super().__init__("the body of a symbolic loop reads grad-enabled arrays from outside its state")
        self.vertices = vertices


def loop(state: tuple, leaves: list, treedef, cond, body, labels, label, strict: bool,
         keep_effects: bool = True, implicit: list | None = None, grad_placeholders: bool = False) -> tuple:
    """The symbolic loop over detached (or grad-free) state; returns the final state.

    ``keep_effects=False``: the body's scatters are dropped (a second loop over the same body,
    for derivatives).  The AD vertices of grad-enabled arrays that the body reads from outside
    its state (its *implicit inputs*) are appended to ``implicit``; with ``implicit=None`` finding
    one raises :class:`ClosureGradients` (nothing of this trace stays queued).
    ``grad_placeholders``: the placeholders of floating-point AD state variables are
    grad-enabled while the body is traced (so that the AD hook sees which scatters carry
    derivatives, :mod:`.loop_ad`); the loop's results are not.

    **Loop-invariant state** (Dr.Jit drops it from the loop): a state variable that the body
    gathers from or scatters to, or that has another size than the loop and is returned
    unchanged, is *bound*: the body receives the caller's array instead of a placeholder (its
    gathers read it, its scatters write it, every iteration), and it is no loop variable.
    """
    inits = [a._node for a in leaves]
    bound: set = set()
    try:
        _width(inits, label)
    except ValueError:
        bound = _invariant_of_other_size(state, leaves, treedef, cond, body, inits, labels, label)
    before = list(trace_state.side_effects)      # (held: their ids stay theirs while we compare)
    rec, new, new_def, widest, free, outer, src = _trace_binding(state, leaves, treedef, None, cond, body, labels,
                                                                 label, strict, grad_placeholders, bound, before)
    width = src.size if src is not None else 1
    if widest != width:
        # A size-1 state variable became wider in the body (or the condition is wider than the
        # state): trace again with placeholders of the full width.
        # (the placeholders are narrower, so a free node of the first trace has that width)
        src = next(n for n in free if n.size == widest)
        drop_effects(queued_since(before))
        rec, new, new_def, widest2, free, outer, src = _trace_binding(state, leaves, treedef, src, cond, body, labels,
                                                                      label, strict, grad_placeholders, bound, before)
        if widest2 != widest:
            drop_effects(queued_since(before))
            raise contract_error(StateValueError, WHILE, f"the loop's width changed from {widest} to {widest2} "
                                                         "between two traces of its body")
    effects = queued_since(before)
    try:
        _check_bound(bound, inits, new, effects, labels, len(state), label)
    except BaseException:
        drop_effects(effects)
        raise
    if outer:
        if implicit is None:
            drop_effects(effects)
            raise ClosureGradients(outer)
        implicit.extend(outer)
    if not keep_effects:
        drop_effects(effects)
        effects = []
    dead = [e for e in effects if _never_active(e)]
    if dead:                # (Dr.Jit skips them too; they would keep their size 1 in the loop)
        drop_effects(dead)
        effects = [e for e in effects if not _never_active(e)]
    bad = [e for e in effects if e.size != widest]
    if bad:
        drop_effects(effects)
        raise NotImplementedError(f"fj.while_loop(): a scatter of {bad[0].size} lanes in the body of a symbolic loop "
                                  f"of {widest} lanes; use mode='evaluated'")
    loop_inits = _variables(inits, bound)
    extra = [] if src is None or src in free or any(src is n for n in loop_inits) else [src]
    node = ops.loop(rec, tuple(loop_inits), tuple(free) + tuple(extra))
    _attach_effects(node, rec, effects)
    outs = []
    k = 0
    for j, r in enumerate(new):
        if j in bound:
            # the caller's array, or what the body's scatters made of it (they run in the loop)
            outs.append(type(r)._from_node(r._node))
            continue
        p = rec.phis[k]
        if r._node is p:
            # The body left it unchanged: the initial value, with its own width (Dr.Jit drops such
            # state variables from the loop too; a size-1 one stays size 1).
            outs.append(type(r)._from_node(inits[j]))
        else:
            outs.append(type(r)._from_node(ops.loop_out(node, p.vt, k)))
        k += 1
    return unflatten(new_def, outs)


def _never_active(effect) -> bool:
    """Whether the scatter ``effect`` writes nothing (its ``active`` operand is the literal False)."""
    a = effect.args[-1] if effect.op == "scatter" else None
    return a is not None and a.op == "literal" and a.value is False


def _variables(items: list, bound: set) -> list:
    """The entries of ``items`` (one per state array) that are loop variables (not bound)."""
    return [x for j, x in enumerate(items) if j not in bound] if bound else list(items)


def _trace_binding(state, leaves, treedef, src, cond, body, labels, label, strict, grad_placeholders, bound: set,
                   before: list):
    """:func:`_trace` over placeholders of ``src``'s width (``None``: the width of the state's
    loop variables), binding (adding to ``bound``, in place) each state variable that the body
    uses as memory and tracing again.  Returns :func:`_trace`'s results and the width node."""
    while True:
        node = src if src is not None else _width_node([a._node for a in leaves], bound, label)
        try:
            return _trace(state, leaves, treedef, node, cond, body, labels, label, strict, grad_placeholders,
                          bound) + (node,)
        except _Memory as m:
            drop_effects(queued_since(before))
            bound.add(m.index)


def _width_node(inits: list, bound: set, label):
    """A loop variable's initial node of the loop variables' width (``None`` without any)."""
    variables = _variables(inits, bound)
    width = _width(variables, label)
    return next((n for n in variables if n.size == width), None)


class _Memory(Exception):
    """The body used state variable ``index`` as memory (:class:`StateUsedAsMemory` for one of this
    trace's placeholders)."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


def _invariant_of_other_size(state, leaves, treedef, cond, body, inits, labels, label) -> set:
    """The state arrays, of sizes incompatible with each other, that a probe trace finds returned
    unchanged or used as memory (Dr.Jit drops them from the loop, so their size does not
    matter); raises the size error if the others still disagree or the probe fails.  Each
    placeholder of the probe has its own variable's size."""
    memory: set = set()
    while True:
        before = list(trace_state.side_effects)
        rec = LoopRecord(label)
        phis = [None if j in memory else ops.loop_phi(n.vt, n, j, rec) for j, n in enumerate(inits)]
        probe = unflatten(treedef, [a if p is None else type(a)._from_node(p) for a, p in zip(leaves, phis)])
        res = c = None
        try:
            with masks.scope(None):
                c = cond(*probe)
                new = body(*fresh(probe))
            if isinstance(new, tuple) and len(new) == len(state):
                res = flatten(new)[0]
        except StateUsedAsMemory as err:
            mine = [j for j, p in enumerate(phis) if p is err.node]
            if not mine:
                raise
            memory.add(mine[0])
            continue
        except Exception:
            pass
        finally:
            drop_effects(queued_since(before))
        break
    if res is None or len(res) != len(inits) or not isinstance(getattr(c, "_node", None), Node):
        raise size_error(WHILE, c._node.size if isinstance(getattr(c, "_node", None), Node) else
                         max(n.size for n in inits), state, leaves, labels) or _mismatch(inits, label)
    same = {j for j, (p, r) in enumerate(zip(phis, res)) if p is not None and r._node is p}
    keep = same | memory
    rest = [n for j, n in enumerate(inits) if j not in keep] + [c._node]
    try:
        width = _width(rest, label)
    except StateValueError:
        raise size_error(WHILE, c._node.size, state, leaves, labels, skip=keep) or _mismatch(rest, label) from None
    err = size_error(WHILE, width, state, leaves, labels, skip=keep)
    if err is not None:
        raise err
    return {j for j in keep if inits[j].size != 1 or j in memory}


def _mismatch(nodes: list, label) -> Exception:
    """The generic size error of :func:`_width` for ``nodes``."""
    try:
        _width(nodes, label)
    except StateValueError as err:
        return err
    return StateValueError("fj.while_loop(): incompatible sizes")   # pragma: no cover - _width raised above


def _check_bound(bound: set, inits: list, new: list, effects: list, labels, n: int, label) -> None:
    """A bound state variable (see :func:`loop`) must come back unchanged, or as what the body's
    scatters made of it; anything else would need it to be a loop variable."""
    if not bound:
        return
    targets = {id(e.extra[0]) for e in effects}
    for j in sorted(bound):
        r = new[j]._node
        if r is inits[j] or id(r) in targets:
            continue
        name = f" {label!r}" if label else ""
        raise contract_error(StateValueError, WHILE, f"the body of the symbolic loop{name} gathers from or "
                                                     f"scatters to state array {j} (or it has {inits[j].size} "
                                                     "entries, another size than the loop's), and also returns "
                                                     "a new value for it. Such a variable is loop-invariant "
                                                     "memory in symbolic mode: return it unchanged, or use "
                                                     "mode='evaluated'")


def _roots(rec: LoopRecord) -> list:
    return [rec.cond] + list(rec.results)


def _width(nodes: list, label) -> int:
    width = 1
    for n in nodes:
        s = n.size
        if s != width:
            if width == 1:
                width = s
            elif s != 1:
                sizes = ", ".join(str(x.size) for x in nodes)
                name = f" {label!r}" if label else ""
                raise StateValueError(f"fj.while_loop{name}(): the loop's arrays (its state, condition, body results and "
                                 f"scatters) have incompatible sizes ({sizes}); only size-1 arrays broadcast")
    return width


def _trace(state, leaves, treedef, src, cond, body, labels, label, strict, grad_placeholders: bool,
           bound: set = frozenset()):
    """Trace the condition and the body once over placeholders of ``src``'s width.

    Returns ``(record, new leaves, new treedef, widest size seen, free nodes, implicit inputs)``:
    the last are the AD vertices, created before this trace, that the body's results depend on.
    """
    start = next_id()
    rec = LoopRecord(label)
    if src is None:                 # no array in the state: placeholders are not needed
        phis = []
    else:
        phis = [ops.loop_phi(a._node.vt, src, k, rec) for k, a in enumerate(_variables(leaves, bound))]
    rec.phis = phis
    it = iter(phis)
    phi_leaves = [a if j in bound else type(a)._from_node(next(it)) for j, a in enumerate(leaves)]
    if grad_placeholders:
        enable_grad(*[a for j, a in enumerate(phi_leaves) if j not in bound and a._is_ad and a._vt.is_float])
    phi_state = unflatten(treedef, phi_leaves)
    before = list(trace_state.side_effects)
    try:
        c = cond(*phi_state)
        check_mask(WHILE, c, "the loop condition")
        active = enclosed(c)
        with masks.scope(active._node):
            new = body(*fresh(phi_state))
        check_result(new, len(state))
        check_tuple(WHILE, phi_state, new, labels, "state", strict)
    except StateUsedAsMemory as err:
        drop_effects(queued_since(before))
        mine = [j for j, a in enumerate(phi_leaves) if j not in bound and a._node is err.node]
        if mine:
            raise _Memory(mine[0]) from None
        raise
    except BaseException:
        drop_effects(queued_since(before))        # scatters over placeholders must not stay queued
        raise
    new_leaves, new_def = flatten(new)
    # The placeholders carry no gradients, so any in the results come from arrays the body read
    # from outside its state: the loop's implicit inputs.
    grads = [a._ad for a in new_leaves if a._ad is not None]
    outer = outer_vertices(grads, start) if grads else []
    rec.cond = active._node
    rec.results = [a._node for a in _variables(new_leaves, bound)]
    effects = queued_since(before)
    # What the loop reads: the condition, the results, its own scatters' operands, and the loops
    # nested in the body that scatter (their scatters' operands belong to their own regions).
    inner = []
    for e in effects:
        if e.value is not None and not any(e.value is x for x in inner):
            inner.append(e.value)
    roots = _roots(rec) + [a for e in effects if e.value is None for a in e.args] + inner
    widest = _width([p for p in phis] + roots + effects, label)
    free = free_nodes(phis, roots)
    return rec, new_leaves, new_def, widest, free, outer


def outer_vertices(verts: list, start: int) -> list:
    """The AD vertices numbered below ``start`` (created before it) that ``verts`` depend on
    through vertices numbered from ``start`` on: what a computation begun at ``start`` read from
    outside."""
    return sorted((v for v in ancestors(verts, start) if v.id < start), key=lambda v: v.id)


def queued_since(before: list) -> list:
    """The scatters queued now that were not in ``before`` (an evaluation in the body may have run
    some of those, so positions in the queue do not tell)."""
    old = {id(e) for e in before}
    return [e for e in trace_state.side_effects if id(e) not in old]


def drop_effects(effects: list) -> None:
    """Remove ``effects`` from the queue of scatters (a body traced again, or an error), and
    recompute which arrays have pending scatters."""
    if not effects:
        return
    drop = {id(e) for e in effects}
    with trace_state.lock:
        trace_state.side_effects = [e for e in trace_state.side_effects if id(e) not in drop]
        trace_state.dirty = {e.extra[0] for e in trace_state.side_effects}
    recorder = trace_state.recorder
    if recorder is not None:        # a frozen function's recording must not wait for them
        recorder.on_drop(effects)


def _attach_effects(node, rec: LoopRecord, effects: list) -> None:
    """Make the body's scatters part of the loop ``node`` (see :mod:`frostjit.trace.loops`).

    They stay in the queue of side effects, so evaluation order, the arrays they make dirty and
    a frozen function's recording treat them as any scatter; their ``value`` names the
    outermost loop they belong to, which the scheduler emits in their place.  A scatter of a
    nested loop's body (``value`` already set) belongs to that loop, which this loop's region
    emits with its scatters.
    """
    for e in effects:
        inner = e.value
        if inner is None:
            rec.effects.append(weakref.ref(e))
        elif not any(inner is x for x in rec.effect_loops):
            rec.effect_loops.append(inner)          # (holds it: rec.effects refers to it weakly)
            rec.effects.append(weakref.ref(inner))  # program order: at its first scatter
        e.value = node


def check_result(new, n: int) -> None:
    if not isinstance(new, tuple):
        raise contract_error(StateTypeError, WHILE, f"the 'body' function must return a tuple, got "
                                                    f"{type(new).__name__}")
    if len(new) != n:
        raise contract_error(StateTypeError, WHILE, f"the 'body' function returned a tuple with an inconsistent "
                                                    f"size ({len(new)} entries, the state has {n})")


def enclosed(active):
    """The condition restricted to the enclosing scope's lanes (a loop inside a loop body or a
    branch): lanes outside it run no iteration."""
    top = masks.top()
    if top is None or not masks.compatible(top, active._node.size):
        return active
    return active & type(active)._from_node(top)


# -- conditionals ----------------------------------------------------------------------------

def symbolic_if_stmt(args: tuple, cond, true_fn, false_fn, arg_labels, rv_labels, label, strict: bool):
    """``fj.if_stmt`` in symbolic mode: both branches in the kernel of the result, selected per lane
    (see the module docstring)."""
    check_mask(IF, cond, "'cond'")
    mask_t, mask_f = cond, ~cond
    top = masks.top()
    if top is not None and masks.compatible(top, cond._node.size):     # inside a loop body or a branch
        enclosing = type(cond)._from_node(top)
        mask_t, mask_f = mask_t & enclosing, mask_f & enclosing
    before = list(trace_state.side_effects)
    try:
        with masks.scope(mask_t._node, shown=True):
            t, given = branch_call(true_fn, args)
        with masks.scope(mask_f._node, shown=True):
            f, _ = branch_call(false_fn, args, given)
        check_branch_results(IF, t, f, rv_labels, strict)
        t, f = share_scattered(args, t, f)
    except BaseException:
        drop_effects(queued_since(before))      # a failed statement leaves no scatter behind
        raise
    return merge(cond, t, f, values_from_a=False)


# -- switch ----------------------------------------------------------------------------------

def symbolic_switch(index, targets: list, args: tuple, kwargs: dict, mask=None, label=None):
    """``fj.switch`` with a ``UInt32`` index in symbolic mode: every target traced once over all
    lanes, with the lanes that call it (``index == k``, the mask, the enclosing scope) pushed as
    the mask of its gathers and scatters; the results are selected lane by lane, zeros where no
    target runs (a masked lane or an index out of range).  One kernel, no evaluation.

    ``mask``: the active lanes (``None``: found as ``switch`` finds it, the last positional
    argument if it is a ``Bool`` array, else the keyword ``active``).  The targets receive
    ``True`` in its place, as in evaluated mode.
    """
    positional = bool(args) and is_mask(args[-1])
    if mask is None:
        mask = args[-1] if positional else kwargs.get("active")
    bool_t = registry.flat_type(index._backend, Bool)
    n = width(index, args, kwargs)
    active = switch_lanes(index, len(targets), mask, n)
    call_args = args[:-1] + (bool_t(True),) if positional else args
    call_kwargs = dict(kwargs)
    if "active" in call_kwargs:
        call_kwargs["active"] = bool_t(True)
    calls = []
    before = list(trace_state.side_effects)
    try:
        for k, fn in enumerate(targets):
            lanes = active & (index == k)
            # (shown: fj.print in a target shows the lanes that call it, as Dr.Jit's symbolic call)
            with masks.scope(lanes._node, shown=True):
                calls.append((lanes, fn(*fresh(call_args), **fresh(call_kwargs))))
        first = calls[0][1]
        for _, out in calls[1:]:
            check(SWITCH, first, out, "result", True)
    except BaseException:
        drop_effects(queued_since(before))      # a failed switch leaves no scatter behind
        raise
    leaves0, treedef = flatten(first)
    per_call = [(lanes, flatten(out)[0]) for lanes, out in calls]
    results = []
    devirtualize = trace_state.flags & JitFlag.OptimizeCalls
    for j, leaf in enumerate(leaves0):
        r = zeros(type(leaf), n)
        if devirtualize and all(_is_zero_literal(leaves[j]) for _, leaves in per_call):
            # Dr.Jit's devirtualization of literals (JitFlag.OptimizeCalls): every target gives
            # the literal 0, which is also the value of the lanes that call none, so the result
            # is that literal, not a chain of selects (an unevaluated variable)
            results.append(r)
            continue
        for lanes, leaves in per_call:
            r = select(lanes, leaves[j], r)
        results.append(r)
    return unflatten(treedef, results)


def _is_zero_literal(x) -> bool:
    node = getattr(x, "_node", None)
    # (not -0.0: the lanes that call no target hold +0.0)
    return node is not None and node.op == "literal" and node.size == 1 and node.value == 0 and \
        not math.copysign(1.0, node.value) < 0 and getattr(x, "_ad", None) is None
