"""Intermediates a forward replay keeps for its backward derivative.

A backward derivative (:mod:`.through`) runs the function again to rebuild its AD graph, so
its recording begins with the forward recording's kernels: the same compiled kernels over the
same input buffers.  When its inputs are bound from the forward call's walk (the forward
call's nodes, then the seeds), those launches would compute exactly what the forward replay
computed.  :func:`plan` matches them, operation by operation, and finds the forward slots whose
final contents are the values the derivative reads; the forward replay then hands those
buffers to its hub (``through.kept``, :meth:`.recording.Recording.variant` with ``keep_out``)
and the derivative's variant reads them instead of launching the forward kernels again
(``kept_in``), so a backward pass through a replay launches only the backward kernels.

The buffers live as long as the call's outputs (the hub): what a plain call's AD graph keeps.

A slot is kept only when every operation of either recording that writes it is matched with
one of the other (so neither replay changes it afterwards), and an operation is left out of
the derivative only when every slot it writes is kept.
"""
from __future__ import annotations

import re

from ..backend.kernel import OUT, SCATTER_DST
from .records import BufferEntry, Fill, FillWidth, Launch, Reduce, SlotOrigin
from .scratch import dead_operations
from .values import same_value

__all__ = ["plan"]

# size expressions that mean the same in both recordings: a size-class symbol or a number
_PLAIN_SIZE = re.compile(r"(s\d+|\d+)")


def _written(op) -> list:
    if type(op) is Launch:
        return [p.slot for p in op.params if p.kind == OUT or p.kind == SCATTER_DST]
    out = getattr(op, "out", None)
    return [] if out is None else [out]


def _same_size(a, b) -> bool:
    return a.expr == b.expr and _PLAIN_SIZE.fullmatch(a.expr) is not None


def _match(d, f, eq: dict) -> bool:
    """Whether derivative operation ``d`` computes what forward operation ``f`` computed, given
    the slots known equal ``eq`` (derivative slot -> forward slot)."""
    t = type(d)
    if t is not type(f):
        return False
    if t is Launch:
        if d.kernel is not f.kernel or not _same_size(d.size, f.size) or len(d.params) != len(f.params):
            return False
        for p, q in zip(d.params, f.params):
            if p.kind != q.kind or p.vt is not q.vt:
                return False
            if p.kind != OUT and eq.get(p.slot) != q.slot:
                return False
        return True
    if t is Fill:
        return d.vt is f.vt and _same_size(d.size, f.size) and same_value(d.value, f.value)
    if t is FillWidth:
        return d.vt is f.vt and _same_size(d.value, f.value)
    if t is Reduce:
        return d.op == f.op and d.vt is f.vt and _same_size(d.size, f.size) and eq.get(d.src) == f.src
    return False


def _closed(d_ops, kept: dict) -> dict:
    """``kept`` without the slots written by an operation that also writes a slot not kept (an
    operation is left out only if all it writes is kept; one that runs writes its own buffers)."""
    kept = dict(kept)
    while True:
        drop = {s for d in d_ops for s in _written(d) if s in kept and not all(w in kept for w in _written(d))}
        if not drop:
            return kept
        for s in drop:
            del kept[s]


def plan(forward, derivative, n_inputs: int, fixed=None):
    """``(keep_out, kept_in)``: the forward recording's slots to keep (sorted) and, for the
    derivative recording, ``{slot: index into keep_out}``; ``None`` when nothing can be shared.

    ``n_inputs``: the forward call's input nodes (the derivative's first inputs are the same
    nodes).  ``fixed``: the forward slots already kept for another derivative; the plan then
    uses only those (the forward replay hands out one set of buffers).
    """
    f_ops, d_ops = forward.ops, derivative.ops
    f_input = {src.index: slot for slot, src in enumerate(forward.slot_kind) if src.origin is SlotOrigin.INPUT}
    eq = {}
    for slot, src in enumerate(derivative.slot_kind):
        if src.origin is SlotOrigin.INPUT and src.index < n_inputs and src.index in f_input:
            eq[slot] = f_input[src.index]
    inputs = set(eq)
    f_dead = dead_operations(f_ops, forward.node_table, forward.keep_out)
    matched = {}            # derivative op -> forward op
    j = 0
    for i, d in enumerate(d_ops):
        for k in range(j, len(f_ops)):
            if k not in f_dead and _match(d, f_ops[k], eq):
                matched[i] = k
                j = k + 1
                for p, q in zip(_written(d), _written(f_ops[k])):
                    eq[p] = q
                break
    # A slot stays equal only if every write to it, in either recording, is a matched pair.
    f_writes, d_writes = {}, {}
    for k, f in enumerate(f_ops):
        for s in _written(f):
            f_writes.setdefault(s, set()).add(k)
    for i, d in enumerate(d_ops):
        for s in _written(d):
            d_writes.setdefault(s, set()).add(i)
    # (not the forward call's outputs: the caller may change those in place before the backward pass)
    outputs = {e.slot for e in forward.node_table if type(e) is BufferEntry}
    kept = {}
    for s, fs in eq.items():
        if s in inputs or fs in outputs:
            continue
        dw = d_writes.get(s, set())
        if all(i in matched for i in dw) and {matched[i] for i in dw} == f_writes.get(fs, set()):
            kept[s] = fs
    if fixed is not None:
        kept = {s: fs for s, fs in kept.items() if fs in fixed}
    kept = _closed(d_ops, kept)
    # Only what an operation that still runs reads is handed over (then close again).
    skip = {i for i, d in enumerate(d_ops) if _written(d) and all(w in kept for w in _written(d))}
    read = {s for i, d in enumerate(d_ops) if i not in skip for s in d.reads()}
    kept = _closed(d_ops, {s: fs for s, fs in kept.items() if s in read})
    if not kept:
        return None
    keep_out = tuple(sorted(set(kept.values()))) if fixed is None else tuple(fixed)
    index = {fs: k for k, fs in enumerate(keep_out)}
    return keep_out, {s: index[fs] for s, fs in kept.items()}
