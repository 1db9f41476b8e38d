"""Loop regions (symbolic loops, see :mod:`frostjit.backend.kernel`) in LLVM IR.

Inside the kernel's loop over groups of ``W`` lanes, a loop region becomes a loop of its own::

    L.pre:   br L.head
    L.head:  %p_j  = phi [initial_j, L.pre], [%n_j, L.latch]     (one per state variable)
             %act  = phi [lanes running the enclosing code, L.pre], [%a, L.latch]
             ... condition ...
             %a    = and %act, condition          (lanes that run this iteration)
             br (any lane of %a), L.body, L.exit
    L.body:  ... body ...
             %n_j  = select %a, new_j, %p_j       (retired lanes keep their state)
             br L.latch
    L.latch: br L.head
    L.exit:  (loop_out j is %p_j)

so the group runs as many iterations as its slowest lane, each lane retiring when its condition
is false (``%act`` only ever loses lanes).  The lanes running the enclosing code are the
kernel's lane mask (all but the tail of the last group) or, for a nested loop, the enclosing
loop's ``%a``.  Names are derived from the index of the ``loop_start`` instruction, so the phi
nodes can name the values of the latch before they are emitted.
"""
from __future__ import annotations

from .ir_types import scalar_type
from .lowering_table import lowering_table

#: op name -> lowering, merged into the frame's table; ``@_lowers(name)`` registers one.
LOWERINGS, _lowers = lowering_table()


def _tag(ins) -> str:
    return f"%L{ins.args[0]}"


def _state_types(e, start: int) -> list[str]:
    head = e.spec.instrs[start]
    return [scalar_type(e.spec.instrs[a].vt) for a in head.args]


@_lowers("loop_start")
def op_loop_start(e, ins) -> str:
    start = len(e.vals)             # this instruction's index: vals holds one entry per earlier one
    tag = f"L{start}"
    enclosing = e.loop_lanes[-1] if e.loop_lanes else "%mask"
    e.body.append(f"  br label %{tag}.pre")
    e.body.append(f"{tag}.pre:")
    e.body.append(f"  br label %{tag}.head")
    e.body.append(f"{tag}.head:")
    v1 = e.vty("i1")
    e.body.append(f"  %{tag}.act = phi {v1} [ {enclosing}, %{tag}.pre ], [ %{tag}.a, %{tag}.latch ]")
    for j, a in enumerate(ins.args):
        t = e.vty(scalar_type(e.spec.instrs[a].vt))
        e.body.append(f"  %{tag}.p{j} = phi {t} [ {e.vals[a]}, %{tag}.pre ], [ %{tag}.n{j}, %{tag}.latch ]")
    return ""


@_lowers("loop_phi")
def op_loop_phi(e, ins) -> str:
    return f"{_tag(ins)}.p{ins.value}"


@_lowers("loop_cond")
def op_loop_cond(e, ins) -> str:
    tag = _tag(ins)
    W = e.W
    v1 = e.vty("i1")
    e.body.append(f"  {tag}.a = and {v1} {tag}.act, {e.vals[ins.args[1]]}")
    e.body.append(f"  {tag}.bits = bitcast {v1} {tag}.a to i{W}")
    e.body.append(f"  {tag}.any = icmp ne i{W} {tag}.bits, 0")
    e.body.append(f"  br i1 {tag}.any, label {tag}.body, label {tag}.exit")
    e.body.append(f"{tag[1:]}.body:")
    e.loop_lanes.append(f"{tag}.a")
    return f"{tag}.a"


@_lowers("loop_end")
def op_loop_end(e, ins) -> str:
    tag = _tag(ins)
    start = ins.args[0]
    v1 = e.vty("i1")
    for j, (t, r) in enumerate(zip(_state_types(e, start), ins.args[1:])):
        vt_ = e.vty(t)
        e.body.append(f"  {tag}.n{j} = select {v1} {tag}.a, {vt_} {e.vals[r]}, {vt_} {tag}.p{j}")
    e.body.append(f"  br label {tag}.latch")
    e.body.append(f"{tag[1:]}.latch:")
    e.body.append(f"  br label {tag}.head")
    e.body.append(f"{tag[1:]}.exit:")
    e.loop_lanes.pop()
    return ""


@_lowers("loop_out")
def op_loop_out(e, ins) -> str:
    return f"{_tag(ins)}.p{ins.value}"
