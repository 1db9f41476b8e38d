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

**Axis reductions** (a tensor's ``fj.sum(expr, axis=k)``, :class:`~frostjit.backend.base.
AxisReduction`) give ``value`` two more entries, ``(parameter, op, segment, inner)``: the lanes
are the array seen as ``(outer, n, inner)``, cut into segments of ``segment`` entries of the
axis (``segment * inner`` lanes; the launch splits between threads at segment boundaries).

* ``inner == 1`` (the reduced axes are the last ones): the rows of the register accumulator
  above are the segments (``segment`` lanes, a multiple of ``W``, so no chunk straddles two).
* ``inner > 1`` (a multiple of ``W``): each chunk lies in one row of ``inner`` lanes; it is
  combined into the segment's partial row in memory (``PARTIAL[segment index, column]``, which
  the launcher fills with the identity), in the order of the rows.  Partial rows of up to a
  few thousand entries stay in the L1/L2 cache.
"""
from __future__ import annotations

from ..block_kernels import _identity
from ..reduction import REDUCE_ROW
from .ir_types import scalar_type, suffix
from .lowering_table import lowering_table

LOWERINGS, _lowers = lowering_table()

assert REDUCE_ROW & (REDUCE_ROW - 1) == 0       # whole-array rows are found with a mask and a shift


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


def _in_memory(ins) -> bool:
    """Whether a ``reduce`` instruction combines into partial rows in memory (an axis with
    ``inner > 1``) rather than into a register accumulator."""
    return len(ins.value) > 2 and ins.value[3] > 1


def _reductions(spec) -> list:
    """The spec's ``reduce`` instructions with register accumulators."""
    return [ins for ins in spec.instrs if ins.op == "reduce" and not _in_memory(ins)]


def has_accumulators(spec) -> bool:
    """Whether the kernel carries reduction accumulators around its loop (:func:`header_phis`,
    :func:`latch`, :func:`flush`)."""
    return bool(_reductions(spec))


def _row(spec) -> int:
    """The lanes per partial of the spec's register reductions (all share one row length)."""
    rows = {ins.value[2] if len(ins.value) > 2 else REDUCE_ROW for ins in _reductions(spec)}
    assert len(rows) == 1, rows
    return rows.pop()


@_lowers("reduce")
def op_reduce(e, ins) -> str:
    """Fold this chunk's active lanes into the accumulator ``%racc<p>`` (``%racc<p>.n``), or
    (an axis with ``inner > 1``) into the chunk's columns of its segment's partial row."""
    p, op = ins.value[:2]
    vt = ins.vt
    t = scalar_type(vt)
    if len(ins.value) > 2:
        # an axis reduction: its launches cover whole rows of a multiple of W lanes, every lane
        # of every chunk is active (and without mask registers, AVX2, the mask would cost a
        # dozen instructions per chunk)
        v = e.arg(ins)
    else:
        v = e.select(t, "%mask", e.arg(ins), e.splat(t, _identity(op, vt)))
    if _in_memory(ins):
        _, _, segment, inner = ins.value
        seg = e.emit(f"udiv i64 %i, {segment * inner}")
        col = e.emit(f"urem i64 %i, {inner}")
        base = e.emit(f"mul i64 {seg}, {inner}")
        q = e.emit(f"add i64 {base}, {col}")
        ptr = e.emit(f"getelementptr {t}, ptr %a{p}, i64 {q}")
        old = e.emit(f"load {e.vty(t)}, ptr {ptr}, align {vt.itemsize}")
        out = combine(e, op, vt, e.vty(t), old, v)
        e.body.append(f"  store {e.vty(t)} {out}, ptr {ptr}, align {vt.itemsize}")
        return ""
    out = combine(e, op, vt, e.vty(t), f"%racc{p}", v)
    e.body.append(f"  %racc{p}.n = bitcast {e.vty(t)} {out} to {e.vty(t)}")
    return ""


def header_phis(e) -> list[str]:
    """The accumulators' phis at the top of the frame's loop: the identity at the start of the
    launch and of every row, the running value otherwise."""
    lines = []
    for ins in _reductions(e.spec):
        p, op = ins.value[:2]
        ident = e.splat(scalar_type(ins.vt), _identity(op, ins.vt))
        lines.append(f"  %racc{p} = phi {e.vty(scalar_type(ins.vt))} [ {ident}, %entry ], "
                     f"[ %racc{p}.n, %latch ], [ {ident}, %rflush ]")
    return lines


def latch(e) -> list[str]:
    """The frame's latch with reductions: to ``rflush`` after the last chunk of a row or of the
    launch, else back to the loop."""
    row = _row(e.spec)
    pos = f"and i64 %inext, {row - 1}" if row & (row - 1) == 0 else f"urem i64 %inext, {row}"
    return [f"  %inext = add i64 %i, {e.W}",
            f"  %rpos = {pos}",
            "  %rowend = icmp eq i64 %rpos, 0",
            "  %launchend = icmp sge i64 %inext, %end",
            "  %rflush.go = or i1 %rowend, %launchend",
            "  br i1 %rflush.go, label %rflush, label %loop"]


def flush(e) -> list[str]:
    """Block ``rflush``: each accumulator's lanes combined as a tree (the upper half onto the
    lower half), stored as the partial of the row holding chunk ``%i``."""
    saved, e.body = e.body, []
    row = _row(e.spec)
    e.body.append(f"  %rrow = lshr i64 %i, {row.bit_length() - 1}" if row & (row - 1) == 0 else
                  f"  %rrow = udiv i64 %i, {row}")
    for ins in _reductions(e.spec):
        p, op = ins.value[:2]
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
