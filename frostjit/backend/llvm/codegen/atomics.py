"""Lowering of ``scatter_rmw``: atomic read-modify-writes that return the old value
(``fj.scatter_inc``, ``scatter_exch``, ``scatter_cas`` in the body of a symbolic loop).

Each active lane of a chunk acts on its element in turn, lane 0 first, and the chunk's result
collects the value each lane saw before its change.  When other threads run the same launch
(``%shared.b``) the lanes use ``atomicrmw add`` / ``atomicrmw xchg`` / ``cmpxchg``, so lanes
of different threads interleave in some order the hardware picks (as in Dr.Jit); a launch on
one thread uses plain loads and stores, and the result is that of the lanes in launch order.
Elements are handled as integers of their size (floats and ``Float16`` by their bits, ``Bool``
as a byte), which is also what makes ``cas`` compare bit for bit.
"""
from __future__ import annotations

from ....trace.dtypes import Bool
from .ir_types import scalar_type
from .lowering_table import lowering_table
from .memory import active_in_bounds, active_lanes, pointers

#: op name -> lowering, merged into the frame's table.
LOWERINGS, _lowers = lowering_table()


@_lowers("scatter_rmw")
def op_scatter_rmw(e, ins) -> str:
    k, kind = ins.value
    vt = ins.vt
    n = len(ins.args)
    m = active_in_bounds(e, k, ins.args[n - 2], e.arg(ins, n - 1))
    ptrs = pointers(e, k, vt, ins.args[n - 2])
    it = f"i{8 * vt.itemsize}"
    value = _to_bits(e, vt, it, e.arg(ins, n - 3))
    compare = _to_bits(e, vt, it, e.arg(ins, 0)) if kind == "cas" else None
    tag = e.tmp()[1:]
    e.body.append(f"  br i1 %shared.b, label %{tag}.atomic, label %{tag}.plain")
    e.body.append(f"{tag}.atomic:")
    r_atomic, end_atomic = _lanes(e, kind, vt, it, value, compare, ptrs, m, atomic=True)
    e.body.append(f"  br label %{tag}.done")
    e.body.append(f"{tag}.plain:")
    r_plain, end_plain = _lanes(e, kind, vt, it, value, compare, ptrs, m, atomic=False)
    e.body.append(f"  br label %{tag}.done")
    e.body.append(f"{tag}.done:")
    old = e.emit(f"phi {e.vty(it)} [ {r_atomic}, %{end_atomic} ], [ {r_plain}, %{end_plain} ]")
    return _from_bits(e, vt, it, old)


def _to_bits(e, vt, it: str, x: str) -> str:
    """The vector ``x`` of ``vt`` as integers of ``vt``'s size in memory."""
    if vt is Bool:
        return e.emit(f"zext {e.vty('i1')} {x} to {e.vty(it)}")
    if vt.is_float:
        return e.emit(f"bitcast {e.vty(scalar_type(vt))} {x} to {e.vty(it)}")
    return x


def _from_bits(e, vt, it: str, x: str) -> str:
    if vt is Bool:
        return e.cmp("icmp", "ne", it, x, "zeroinitializer")
    if vt.is_float:
        return e.emit(f"bitcast {e.vty(it)} {x} to {e.vty(scalar_type(vt))}")
    return x


def _lanes(e, kind: str, vt, it: str, value: str, compare: str | None, ptrs: str, m: str, atomic: bool):
    """Every active lane's read-modify-write in lane order; returns ``(old values, the label of
    the block that ends the sequence)`` (0 on inactive lanes)."""
    a = vt.itemsize
    vi = e.vty(it)
    first = e.tmp()[1:]
    e.body.append(f"  br label %{first}.s")
    e.body.append(f"{first}.s:")
    acc, came_from = "zeroinitializer", f"{first}.s"
    for lane, tag, p, v in active_lanes(e, m, ptrs, value, it):
        if atomic:
            if kind == "cas":
                c = e.emit(f"extractelement {vi} {compare}, i64 {lane}")
                pair = e.emit(f"cmpxchg ptr {p}, {it} {c}, {it} {v} monotonic monotonic, align {a}")
                old = e.emit(f"extractvalue {{ {it}, i1 }} {pair}, 0")
            else:
                rmw = "add" if kind == "inc" else "xchg"
                old = e.emit(f"atomicrmw {rmw} ptr {p}, {it} {v} monotonic, align {a}")
        else:
            old = e.emit(f"load {it}, ptr {p}, align {a}")
            if kind == "inc":
                new = e.emit(f"add {it} {old}, {v}")
            elif kind == "exch":
                new = v
            else:
                c = e.emit(f"extractelement {vi} {compare}, i64 {lane}")
                same = e.emit(f"icmp eq {it} {old}, {c}")
                new = e.emit(f"select i1 {same}, {it} {v}, {it} {old}")
            e.body.append(f"  store {it} {new}, ptr {p}, align {a}")
        with_old = e.emit(f"insertelement {vi} {acc}, {it} {old}, i64 {lane}")
        e.body.append(f"  br label %{tag}.next")
        e.body.append(f"{tag}.next:")
        acc = e.emit(f"phi {vi} [ {acc}, %{came_from} ], [ {with_old}, %{tag}.do ]")
        came_from = f"{tag}.next"
    return acc, came_from
