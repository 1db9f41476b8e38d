"""Reductions fused into a kernel: the ``reduce`` instruction and its per-row partials.

``fj.sum(x * y)``, ``fj.count(x > 0)`` of a large pending expression compile the expression
and its reduction into one kernel (:func:`frostjit.schedule.memops.reduce`), so the value
is never stored: instruction ``reduce`` (``args: (value,)``, ``value: (parameter, op)``) adds
each chunk's lanes into a ``W``-lane accumulator (inactive lanes contribute the identity), and
at the end of every row of :data:`~frostjit.backend.llvm.reduction.REDUCE_ROW` lanes (and at
the end of the launch) the accumulator's lanes are combined as a tree and stored as the row's
partial in the :data:`~frostjit.backend.kernel.PARTIAL` parameter.  The launch splits its
lanes between threads at row boundaries, so each row is reduced by one thread in one fixed
order: the same bits at any thread count and on every call.  The backend combines the
partials (``LLVMBackend.launch_reduction``).

The accumulators are ``loop`` phis of the kernel frame (:meth:`.frame.KernelEmitter.generate`
asks :func:`header_phis`, :func:`latch` and :func:`flush` for their text).
"""
from __future__ import annotations

from ..block_kernels import _identity
from ..reduction import REDUCE_ROW
from .ir_types import scalar_type, suffix
from .lowering_table import lowering_table

LOWERINGS, _lowers = lowering_table()

assert REDUCE_ROW & (REDUCE_ROW - 1) == 0       # rows are found with a mask and a shift
_ROW_SHIFT = REDUCE_ROW.bit_length() - 1


def combine(e, op: str, vt, ty: str, a: str, b: str) -> str:
    """``a op b`` on values of IR type ``ty`` (``W`` lanes or fewer): float min/max ignore NaN
    (``llvm.minnum``/``maxnum``), as every reduction of the backend."""
    if op in ("min", "max"):
        name = ("minnum" if op == "min" else "maxnum") if vt.is_float else ("s" if vt.is_signed else "u") + op
        elem = scalar_type(vt)
        sfx = f"v{ty.split(' x ')[0][1:]}{suffix(elem)}" if ty.startswith("<") else suffix(elem)
        fn = e.intrinsic(f"llvm.{name}.{sfx}", ty, [ty, ty])
        return e.emit(f"call {ty} {fn}({ty} {a}, {ty} {b})")
    inst = {"add": "fadd", "mul": "fmul"}[op] if vt.is_float else op
    return e.emit(f"{inst} {ty} {a}, {b}")


def _reductions(spec) -> list:
    return [ins for ins in spec.instrs if ins.op == "reduce"]


@_lowers("reduce")
def op_reduce(e, ins) -> str:
    """Fold this chunk's active lanes into the accumulator ``%racc<p>`` (``%racc<p>.n``)."""
    p, op = ins.value
    vt = ins.vt
    t = scalar_type(vt)
    v = e.select(t, "%mask", e.arg(ins), e.splat(t, _identity(op, vt)))
    out = combine(e, op, vt, e.vty(t), f"%racc{p}", v)
    e.body.append(f"  %racc{p}.n = bitcast {e.vty(t)} {out} to {e.vty(t)}")
    return ""


def header_phis(e) -> list[str]:
    """The accumulators' phis at the top of the frame's loop: the identity at the start of the
    launch and of every row, the running value otherwise."""
    lines = []
    for ins in _reductions(e.spec):
        p, op = ins.value
        ident = e.splat(scalar_type(ins.vt), _identity(op, ins.vt))
        lines.append(f"  %racc{p} = phi {e.vty(scalar_type(ins.vt))} [ {ident}, %entry ], "
                     f"[ %racc{p}.n, %latch ], [ {ident}, %rflush ]")
    return lines


def latch(e) -> list[str]:
    """The frame's latch with reductions: to ``rflush`` after the last chunk of a row or of the
    launch, else back to the loop."""
    return [f"  %inext = add i64 %i, {e.W}",
            f"  %rpos = and i64 %inext, {REDUCE_ROW - 1}",
            "  %rowend = icmp eq i64 %rpos, 0",
            "  %launchend = icmp sge i64 %inext, %end",
            "  %rflush.go = or i1 %rowend, %launchend",
            "  br i1 %rflush.go, label %rflush, label %loop"]


def flush(e) -> list[str]:
    """Block ``rflush``: each accumulator's lanes combined as a tree (the upper half onto the
    lower half), stored as the partial of the row holding chunk ``%i``."""
    saved, e.body = e.body, []
    e.body.append(f"  %rrow = lshr i64 %i, {_ROW_SHIFT}")
    for ins in _reductions(e.spec):
        p, op = ins.value
        t = scalar_type(ins.vt)
        acc, width = f"%racc{p}.n", e.W
        while width > 1:
            half = width // 2
            w_ty = f"<{width} x {t}>"
            lo = ", ".join(f"i32 {j}" for j in range(half))
            hi = ", ".join(f"i32 {j}" for j in range(half, width))
            a = e.emit(f"shufflevector {w_ty} {acc}, {w_ty} poison, <{half} x i32> <{lo}>")
            b = e.emit(f"shufflevector {w_ty} {acc}, {w_ty} poison, <{half} x i32> <{hi}>")
            acc, width = combine(e, op, ins.vt, f"<{half} x {t}>", a, b), half
        s = e.emit(f"extractelement <1 x {t}> {acc}, i64 0")
        q = e.emit(f"getelementptr {t}, ptr %a{p}, i64 %rrow")
        e.body.append(f"  store {t} {s}, ptr {q}, align {ins.vt.itemsize}")
    e.body.append("  br label %loop")
    lines, e.body = e.body, saved
    return ["rflush:", *lines]
