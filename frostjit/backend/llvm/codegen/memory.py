"""Lowering of gathers and scatters: the strategies for random memory access.

A gather whose index is the lane counter plus a constant becomes a masked vector load;
otherwise each chunk decides at run time between one load (every active lane reads one
element), a vector load (consecutive elements) and a hardware gather.  Scatter
reductions combine lanes hitting one address in lane order; ``scatter_add`` of a chunk
whose active lanes all hit one address is one atomic add of their sum; atomic
instructions are used only when other threads run the same launch (``%shared.b``).
"""
from __future__ import annotations

from ....trace.dtypes import Bool, Int32, VarType
from .ir_types import float_constant, memory_type, scalar_type, suffix
from .lowering_table import lowering_table

#: op name -> lowering, merged into the frame's table; ``@_lowers(name)`` registers one.
LOWERINGS, _lowers = lowering_table()


def active_in_bounds(e, k: int, index_instr: int, active: str | None) -> str:
    """The lanes that access source ``k``: active in the chunk and in ``active``, with an index
    inside the source (out-of-bounds lanes read 0 and write nothing)."""
    ivt = e.spec.instrs[index_instr].vt
    idx = e.vals[index_instr]
    if ivt.bits == 32:
        # Negative Int32 indices are huge when compared unsigned: out of bounds.
        inb = e.cmp("icmp", "ult", "i32", idx, f"%n{k}.w")
    else:
        inb = e.cmp("icmp", "ult", "i64", idx, f"%n{k}.v")
    m = e.binop("and", "i1", "%mask", inb)
    if active is not None:
        m = e.binop("and", "i1", m, active)
    return m


_I32_MIN, _I32_MAX = -2 ** 31, 2 ** 31 - 1
# Deeper index expressions are taken as unbounded (keeps the walk short; index arithmetic is a
# few operations deep: a texture's texel index is five).
_RANGE_DEPTH = 24


def int32_range(spec, j: int, depth: int = _RANGE_DEPTH, memo: dict | None = None) -> tuple:
    """``(lo, hi)``: bounds of every value of instruction ``j`` of ``spec`` if it is an Int32
    computation that provably stays within them (None for a side without a bound).

    Literals are exact; ``max``/``min`` bound their result by their operands' bounds (``max(x,
    0)`` is at least 0 whatever ``x``); ``add``/``sub``/``mul``/``fma`` compute in wrapping 32-bit
    arithmetic, so their bounds hold only where both of every operand's are known and the
    exact result's range fits in Int32 (then nothing wraps); ``mod`` by a positive constant
    ``c`` is within ``c - 1`` of 0 (C's remainder); ``select`` is the union of its sides
    (:func:`_select_range`); anything else is unbounded.
    ``memo`` keeps each instruction's answer (an expression that reuses a value, ``x + x``
    chains, is walked once per value; an answer cut short by the depth is only looser).
    """
    memo = {} if memo is None else memo
    r = memo.get(j)
    if r is None:
        r = memo[j] = _int32_range(spec, j, depth, memo)
    return r


def _int32_range(spec, j: int, depth: int, memo: dict) -> tuple:
    ins = spec.instrs[j]
    if ins.vt is not Int32 or depth == 0:
        return None, None
    op = ins.op
    if op == "literal":
        v = ins.value
        if not isinstance(v, int) or isinstance(v, bool):
            return None, None
        v = (v + 2 ** 31) % 2 ** 32 - 2 ** 31     # as the kernel's constant (scalar_constant wraps)
        return v, v
    if op == "select":
        return _select_range(spec, ins.args, depth, memo)
    if op not in ("max", "min", "add", "sub", "mul", "fma", "mod"):
        return None, None
    r = [int32_range(spec, a, depth - 1, memo) for a in ins.args]
    if op == "mod":     # C's remainder by a positive constant c: |r| < c, with the dividend's sign
        (lo, hi), (c, c1) = r
        if c is None or c != c1 or c <= 0:
            return None, None
        return (0 if lo is not None and lo >= 0 else 1 - c), (0 if hi is not None and hi <= 0 else c - 1)
    if op == "max":
        los = [lo for lo, _ in r if lo is not None]
        his = [hi for _, hi in r]
        return (max(los) if los else None), (None if None in his else max(his))
    if op == "min":
        los = [lo for lo, _ in r]
        his = [hi for _, hi in r if hi is not None]
        return (None if None in los else min(los)), (min(his) if his else None)
    if any(b is None for pair in r for b in pair):
        return None, None
    if op == "add":
        lo, hi = r[0][0] + r[1][0], r[0][1] + r[1][1]
    elif op == "sub":
        lo, hi = r[0][0] - r[1][1], r[0][1] - r[1][0]
    else:       # mul, fma: the product's range, plus the addend's
        p = [a * b for a in r[0] for b in r[1]]
        lo, hi = min(p), max(p)
        if op == "fma":
            lo, hi = lo + r[2][0], hi + r[2][1]
    return (lo, hi) if _I32_MIN <= lo and hi <= _I32_MAX else (None, None)


# A select whose condition compares an Int32 value with a constant bounds each side with that
# value's range narrowed by the condition (floor_mod's ``select(r < 0, r + n, r)`` is in [0, n));
# each such narrowing walks the side again, so a kernel's analysis does at most this many.
_NARROWINGS = 16
_NARROWED = {   # condition -> (the value's range where it holds, where it does not), given L
    "lt": (lambda L: (None, L - 1), lambda L: (L, None)),
    "le": (lambda L: (None, L), lambda L: (L + 1, None)),
    "gt": (lambda L: (L + 1, None), lambda L: (None, L)),
    "ge": (lambda L: (L, None), lambda L: (None, L - 1)),
}


def _select_range(spec, args: tuple, depth: int, memo: dict) -> tuple:
    """The range of ``select(cond, t, f)``: the union of both sides' ranges, each side taken with
    the condition's value narrowed when the condition is ``x < L`` (or ``<=``, ``>``, ``>=``)
    for an Int32 ``x`` and a constant ``L``; a side the condition never picks is left out."""
    cond, t, f = args
    ci = spec.instrs[cond]
    budget = memo.setdefault("narrowings", [_NARROWINGS])
    sides = [(t, None), (f, None)]
    if ci.op in _NARROWED and len(ci.args) == 2 and budget[0] > 0 and spec.instrs[ci.args[0]].vt is Int32:
        x, lit = ci.args
        L, L1 = int32_range(spec, lit, depth - 1, memo)
        if L is not None and L == L1:
            budget[0] -= 1
            lo, hi = int32_range(spec, x, depth - 1, memo)
            sides = []
            for side, narrow in zip((t, f), _NARROWED[ci.op]):
                nlo, nhi = narrow(L)
                nlo = lo if nlo is None else nlo if lo is None else max(lo, nlo)
                nhi = hi if nhi is None else nhi if hi is None else min(hi, nhi)
                if nlo is not None and nhi is not None and nlo > nhi:
                    continue        # never picked
                sides.append((side, (nlo, nhi)))
    ranges = []
    for side, narrowed in sides:
        if narrowed is None:
            ranges.append(int32_range(spec, side, depth - 1, memo))
        else:   # a fresh walk: below this select, x has the narrowed range
            ranges.append(int32_range(spec, side, depth - 1, {ci.args[0]: narrowed, "narrowings": budget}))
    if not ranges:
        return None, None
    los = [lo for lo, _ in ranges]
    his = [hi for _, hi in ranges]
    return (None if None in los else min(los)), (None if None in his else max(his))


def pointers(e, k: int, vt: VarType, index_instr: int) -> str:
    """Each lane's address in source ``k``.  Emitted in the block of the instruction that uses
    it: a hardware gather then addresses ``base + 32-bit index`` (one ``vgatherdps`` per 16
    lanes); a vector of pointers made in another block is a vector of 64-bit addresses (two
    ``vgatherqps`` per 16 lanes, and the addresses computed in 64 bits)."""
    ivt = e.spec.instrs[index_instr].vt
    return e.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, <{e.W} x {scalar_type(ivt)}> {e.vals[index_instr]}")


#: A kernel with more gathers of run-time indices than this (excluding literal indices and
#: ``lane + c``) emits each as a plain hardware gather, without the per-chunk tests for one
#: element or consecutive elements.  Each test costs six basic blocks that every value live
#: across the gather crosses, and the cost of compiling them grows faster than their number:
#: a cubic 3-D texture lookup (64 gathers) spent 263 of its 320 ms of ``emit_object`` on them
#: (docs/engine.md, "Compile time").  Such kernels (cubic and 3-D texture lookups, hash grids)
#: gather from scattered addresses, where the tests only cost.  Dr.Jit 1.5 never tests.
GATHER_TESTS_MAX = 8


def _run_tests(e) -> bool:
    """Whether this kernel's gathers get the per-chunk one-element / consecutive tests
    (:data:`GATHER_TESTS_MAX`); counted once per kernel."""
    tests = getattr(e, "_gather_tests", None)
    if tests is None:
        instrs = e.spec.instrs
        n = sum(1 for ins in instrs if ins.op == "gather" and instrs[ins.args[0]].op != "literal"
                and _lane_offset(e, ins.args[0]) is None)
        tests = e._gather_tests = n <= GATHER_TESTS_MAX
    return tests


def _lane_offset(e, index_instr: int):
    """``c`` if the index is ``lane + c`` (the launch's lane counter plus a literal), else None.

    Such a gather reads consecutive elements: a masked vector load replaces the gather.
    """
    ins = e.spec.instrs[index_instr]
    if ins.op == "counter":
        return 0
    if ins.op in ("add", "sub") and ins.vt.is_integral:
        a, b = (e.spec.instrs[j] for j in ins.args)
        if a.op == "counter" and b.op == "literal":
            c = b.value
        elif ins.op == "add" and b.op == "counter" and a.op == "literal":
            c = a.value
        else:
            return None
        bits = ins.vt.bits
        c &= (1 << bits) - 1
        if c >= 1 << (bits - 1):      # wrapped (unsigned) literals are negative offsets
            c -= 1 << bits
        return -c if ins.op == "sub" else c
    return None


def _all_active(e, lanes_ok: str, m: str) -> str:
    """i1: ``lanes_ok`` holds on every active lane, and lane 0 is active."""
    off = e.binop("xor", "i1", m, e.splat("i1", "true"))
    ok = e.binop("or", "i1", lanes_ok, off)
    fn = e.intrinsic(f"llvm.vector.reduce.and.v{e.W}i1", "i1", [e.vty("i1")])
    every = e.emit(f"call i1 {fn}({e.vty('i1')} {ok})")
    lane0 = e.emit(f"extractelement {e.vty('i1')} {m}, i64 0")
    return e.emit(f"and i1 {every}, {lane0}")


def _lanes_01_scattered(e, it: str, idx: str, i0: str) -> str:
    """i1: lanes 0 and 1 of the index vector ``idx`` (lane 0's index ``i0``) read elements
    neither equal nor adjacent, so neither run test (:class:`_IndexRun`) can hold: the gathers'
    scalar pre-test, which sends such a chunk straight to the hardware gather."""
    i1 = e.emit(f"extractelement <{e.W} x {it}> {idx}, i64 1")
    d = e.emit(f"sub {it} {i1}, {i0}")
    return e.emit(f"icmp ugt {it} {d}, 1")


class _IndexRun:
    """How a chunk's indices into source ``k`` relate to lane 0's: the address of lane 0's
    element (``first``) and tests (i1) over the active lanes ``m``.

    The tests compare the indices, not the 64-bit addresses: half the vector work for 32-bit
    indices, and no pointer vector outside the gather's block (see :func:`pointers`).  Exact:
    active lanes' indices lie in ``[0, size)`` with ``size < 2**31`` for 32-bit indices, so
    ``idx - idx0 == j`` in wrapping arithmetic means ``idx == idx0 + j``.  Both tests need
    lane 0 active (its address is ``first``)."""

    def __init__(self, e, k: int, vt: VarType, index_instr: int, m: str):
        W = e.W
        self.e, self.m = e, m
        self.it = it = scalar_type(e.spec.instrs[index_instr].vt)
        idx = e.vals[index_instr]
        self.i0 = i0 = e.emit(f"extractelement <{W} x {it}> {idx}, i64 0")
        self.first = e.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, {it} {i0}")
        s0 = e.emit(f"insertelement <{W} x {it}> poison, {it} {i0}, i64 0")
        s = e.emit(f"shufflevector <{W} x {it}> {s0}, <{W} x {it}> poison, <{W} x i32> zeroinitializer")
        self.step = e.binop("sub", it, idx, s)

    def same(self) -> str:
        """i1: every active lane reads lane 0's element."""
        return _all_active(self.e, self.e.cmp("icmp", "eq", self.it, self.step, "zeroinitializer"), self.m)

    def consecutive(self) -> str:
        """i1: every active lane ``j`` reads element ``idx0 + j``."""
        iota = ", ".join(f"{self.it} {j}" for j in range(self.e.W))
        return _all_active(self.e, self.e.cmp("icmp", "eq", self.it, self.step, f"<{iota}>"), self.m)


def _hardware_gather(e, vt: VarType, ptrs: str, m: str) -> str:
    """``llvm.masked.gather`` of ``vt`` elements at the lanes' addresses ``ptrs`` under the lane
    mask ``m`` (an ``i1`` vector or a literal one); inactive lanes are zero."""
    mt = memory_type(vt)
    v = e.vty(mt)
    fn = e.intrinsic(f"llvm.masked.gather.v{e.W}{suffix(mt)}.v{e.W}p0", v, [e.vty("ptr"), "i32", e.vty("i1"), v])
    return e.emit(f"call {v} {fn}({e.vty('ptr')} {ptrs}, i32 {vt.itemsize}, {e.vty('i1')} {m}, {v} zeroinitializer)")


@_lowers("gather")

def op_gather(e, ins):
    k = ins.value
    vt = ins.vt
    if vt.itemsize != e.spec.params[k][1].itemsize:
        return _gather_pair(e, ins)
    if e.spec.instrs[ins.args[0]].op == "literal":
        return _gather_literal(e, ins)
    offset = _lane_offset(e, ins.args[0])
    if offset is None and not e.masked_chunks:
        return _gather_without_mask_registers(e, ins)
    m = active_in_bounds(e, k, ins.args[0], e.arg(ins, 1))
    if offset is not None:
        # In-bounds lanes have index == i + lane + offset exactly; the mask covers the others.
        start = e.emit(f"add i64 %i, {offset}")
        p = e.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, i64 {start}")
        return e.masked_mem("load", vt, p, mask=m)
    # Decided per chunk at run time: every lane reads one element (a parameter per object,
    # read by the object's consecutive lanes) -> one load; consecutive elements -> a vector
    # load; anything else -> a hardware gather (without mask registers: see
    # _gather_without_mask_registers).  With mask registers the tests cost little beside a gather of
    # random indices (1e6 bilinear texture lookups, AVX-512, one thread: 7.0-8.2 ms CPU, 6.9-7.5
    # ms with no tests; 10.5 ms when they compared 64-bit addresses made outside the gather's block).
    mt = memory_type(vt)
    v = e.vty(mt)
    if not _run_tests(e):
        r = _hardware_gather(e, vt, pointers(e, k, vt, ins.args[0]), m)
        return e.cmp("icmp", "ne", "i8", r, "zeroinitializer") if vt is Bool else r
    tag = e.tmp()[1:]
    run = _IndexRun(e, k, vt, ins.args[0], m)
    p0 = run.first
    # Lanes 0 and 1 reading elements neither equal nor adjacent: neither test can hold, straight
    # to the hardware gather (right for every chunk; lane 1 inactive only sends a chunk there).
    # A scalar subtraction and compare instead of the tests' ~20 vector and mask instructions
    # per chunk: 1e6 bilinear lookups (four gathers each) into 1024^2, the kernel alone on one
    # AVX-512 thread, CPU per call 0.93-0.95x; into 64^2 (in L1) 0.98-1.02x (docs/benchmarks.md,
    # session r12 texture; no tests at all: 0.88-0.92x and 0.94-0.95x, without the fast paths).
    scattered = _lanes_01_scattered(e, run.it, e.vals[ins.args[0]], run.i0)
    e.body.append(f"  br i1 {scattered}, label %{tag}.any, label %{tag}.tests")
    e.body.append(f"{tag}.tests:")
    e.body.append(f"  br i1 {run.same()}, label %{tag}.one, label %{tag}.test")
    e.body.append(f"{tag}.one:")
    x = e.emit(f"load {mt}, ptr {p0}, align {vt.itemsize}")
    xs = e.emit(f"insertelement {v} poison, {mt} {x}, i64 0")
    xv = e.emit(f"shufflevector {v} {xs}, {v} poison, <{e.W} x i32> zeroinitializer")
    r_one = e.select(mt, m, xv, "zeroinitializer")
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.test:")
    e.body.append(f"  br i1 {run.consecutive()}, label %{tag}.vec, label %{tag}.any")
    e.body.append(f"{tag}.vec:")
    fn = e.intrinsic(f"llvm.masked.load.v{e.W}{suffix(mt)}.p0", v, ["ptr", "i32", e.vty("i1"), v])
    r_vec = e.emit(f"call {v} {fn}(ptr {p0}, i32 {vt.itemsize}, {e.vty('i1')} {m}, {v} zeroinitializer)")
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.any:")
    r_any = _hardware_gather(e, vt, pointers(e, k, vt, ins.args[0]), m)
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.end:")
    r = e.emit(f"phi {v} [ {r_one}, %{tag}.one ], [ {r_vec}, %{tag}.vec ], [ {r_any}, %{tag}.any ]")
    if vt is Bool:
        r = e.cmp("icmp", "ne", "i8", r, "zeroinitializer")
    return r


def _gather_pair(e, ins) -> str:
    """A 64-bit gather from a 32-bit source (:func:`~frostjit.functions.memory.gather_pair`):
    elements ``i`` and ``i + 1`` as one value, by one hardware gather of 64-bit elements at
    the source's 4-byte addresses (``vpgatherdq``, 8 lanes each), where the lane is active and
    ``i + 1`` is in bounds; 0 elsewhere.  Always a plain gather: its one user reads scattered
    texels, where the run tests only cost (:data:`GATHER_TESTS_MAX`)."""
    k = ins.value
    src_vt = e.spec.params[k][1]
    index_instr = ins.args[0]
    if e.spec.instrs[index_instr].vt.bits != 32:
        raise NotImplementedError("frostjit: a gather of element pairs needs a 32-bit index")
    W = e.W
    # i < n - 1, saturating at 0 (an empty or one-element source has no pair): the limit is
    # loop-invariant, so the machine code computes it once, outside the loop.
    one = e.splat("i32", "1")
    umax = e.intrinsic(f"llvm.umax.v{W}i32", e.vty("i32"), [e.vty("i32"), e.vty("i32")])
    limit = e.binop("sub", "i32", e.emit(f"call {e.vty('i32')} {umax}({e.vty('i32')} %n{k}.w, {e.vty('i32')} {one})"), one)
    inb = e.cmp("icmp", "ult", "i32", e.vals[index_instr], limit)
    m = e.binop("and", "i1", "%mask", inb)
    active = e.arg(ins, 1)
    if active is not None:
        m = e.binop("and", "i1", m, active)
    ptrs = pointers(e, k, src_vt, index_instr)
    v = e.vty("i64")
    fn = e.intrinsic(f"llvm.masked.gather.v{W}i64.v{W}p0", v, [e.vty("ptr"), "i32", e.vty("i1"), v])
    return e.emit(f"call {v} {fn}({e.vty('ptr')} {ptrs}, i32 {src_vt.itemsize}, {e.vty('i1')} {m}, {v} zeroinitializer)")


def _gather_literal(e, ins) -> str:
    """A gather whose index is a literal (the same element for every lane): one scalar load,
    broadcast, with no per-chunk tests.

    A network layer reads each of its coefficients this way (``nn.matvec``: ``n_out x n_in``
    gathers by constant index).  Through :func:`op_gather`'s three ways each such gather was four
    basic blocks and a phi: 664 of them in one 16-wide training kernel (3,400 blocks) made LLVM's
    code generation take minutes (docs/nn.md, "Known slow case").  An index out of bounds reads
    the zero padding (``@fj.gather_pad``), as out-of-bounds lanes read 0.
    """
    k, vt = ins.value, ins.vt
    index = e.spec.instrs[ins.args[0]]
    bits = index.vt.bits
    c = index.value & ((1 << bits) - 1)         # (negative literals are huge: out of bounds)
    mt = memory_type(vt)
    e.declarations.add("@fj.gather_pad = internal constant [64 x i8] zeroinitializer, align 64")
    # 32-bit indices are in bounds below min(size, 2^31 - 1) (see frame.py's %n{k}.w).
    if bits == 32 and c >= 2 ** 31 - 1:
        ptr = "@fj.gather_pad"
    else:
        # Three scalar instructions where the load is: made in the entry block, a kernel's
        # hundreds of such pointers would all be live across the loop (spilled, and slow to
        # allocate registers for).
        inb = e.emit(f"icmp ult i64 {c}, %n{k}")
        p = e.emit(f"getelementptr {mt}, ptr %a{k}, i64 {c}")
        ptr = e.emit(f"select i1 {inb}, ptr {p}, ptr @fj.gather_pad")
    x = e.emit(f"load {mt}, ptr {ptr}, align {vt.itemsize}")
    v = e.vty(mt)
    xs = e.emit(f"insertelement {v} poison, {mt} {x}, i64 0")
    r = e.emit(f"shufflevector {v} {xs}, {v} poison, <{e.W} x i32> zeroinitializer")
    mask = e.spec.instrs[ins.args[1]]
    if not (mask.op == "literal" and mask.value):      # (lanes outside the chunk need no zeros)
        r = e.select(mt, e.arg(ins, 1), r, "zeroinitializer")
    if vt is Bool:
        r = e.cmp("icmp", "ne", "i8", r, "zeroinitializer")
    return r


def _int_mask(e, m: str, t: str) -> str:
    """``m`` (a lane mask) as integer lanes of type ``t``: all ones where set, else zero."""
    return e.emit(f"sext {e.vty('i1')} {m} to {e.vty(t)}")


def _gather_without_mask_registers(e, ins) -> str:
    """A gather of random indices on a CPU without mask registers (AVX2).

    The same three ways as :func:`op_gather` (one load, a vector load, a hardware gather),
    arranged for what AVX2 makes cheap:

    * no lane mask (``<W x i1>``) is live across a basic block boundary: LLVM keeps such a
      value packed into bytes and unpacks it at every use in another block (~10 instructions
      per use), so the mask travels as integer lanes (all ones or zero, the index's type) and
      becomes ``i1`` again only where an instruction needs one;
    * a chunk whose lanes 0 and 1 read elements neither equal nor adjacent goes to the
      hardware gather without the two whole-chunk tests (a scalar subtraction and compare
      instead of ~40 vector instructions): it can be neither of the other cases.  The
      pre-test only sends chunks to the gather, which is right for every chunk;
    * the hardware gather reads every lane (a masked gather costs more than an unmasked one
      there: 1e6 lanes, one thread, Zen 3: 6.7-8.5 -> 2.2-2.4 ms CPU with hardware gathers;
      14-18 -> 2.0-2.4 ms where LLVM splits them into one branch per lane); inactive lanes
      read element 0 of the source, or a zero constant when the source is empty
      (``%g{k}.base``), which has no effect: gathers only read;
    * inactive lanes of the result are zeroed once, after the three ways join, by an ``and``
      with the integer mask.

    1e6 bilinear texture lookups (four gathers per lookup), the kernel alone on one Zen 3
    thread, median CPU ms of 61 interleaved calls: 64 x 64 texture (in L1) 5.8 -> 4.9, 256 x 256
    (in L2) 8.1 -> 6.7 (at a load average of 14 on 2 cores; docs/benchmarks.md).
    """
    k, vt = ins.value, ins.vt
    W = e.W
    index_instr = ins.args[0]
    ivt = e.spec.instrs[index_instr].vt
    it = scalar_type(ivt)
    idx = e.vals[index_instr]
    mt = memory_type(vt)
    v = e.vty(mt)
    # Active lanes with an index in bounds, as integer lanes of the index's type.  The
    # frame's lane mask is compared again here (from %leftv, a vector of i32 that crosses
    # blocks as it is) rather than read from %mask (an i1 vector from another block).
    lanes = e.emit(f"icmp ult <{W} x i32> {e._lane_numbers()}, %leftv")
    # An index provably in [0, 2^31) (a texture's clamped texel index: int32_range) is compared
    # signed: AVX2 has no unsigned compare (LLVM makes one of vpmaxud, vpcmpeqd and a not), and
    # %n.w is at most 2^31 - 1, so both compares agree.  Lookup kernel alone, 64^2 texture,
    # 1 thread, median CPU ms of 61 interleaved calls: 4.88 / 3.69 / 3.10 -> 4.67 / 3.41 / 3.02
    # (dropping the bounds test altogether: 4.43 / 3.45 / 2.93).
    lo, hi = int32_range(e.spec, index_instr) if ivt.bits == 32 else (None, None)
    signed = lo is not None and lo >= 0 and hi is not None
    inb = e.cmp("icmp", "slt" if signed else "ult", it, idx, f"%n{k}.w" if ivt.bits == 32 else f"%n{k}.v")
    mi = e.binop("and", it, _int_mask(e, lanes, it), _int_mask(e, inb, it))
    active = e.arg(ins, 1)
    if active is not None:
        mi = e.binop("and", it, mi, _int_mask(e, active, it))
    safe_idx = e.binop("and", it, idx, mi)      # inactive lanes read element 0
    # The hardware gather reads every lane (see above).
    every = "<" + ", ".join(["i1 true"] * W) + ">"
    if not _run_tests(e):
        ptrs = e.emit(f"getelementptr {mt}, ptr {_gather_base(e, k)}, <{W} x {it}> {safe_idx}")
        return _zero_inactive(e, vt, ivt, _hardware_gather(e, vt, ptrs, every), mi)
    tag = e.tmp()[1:]
    i0 = e.emit(f"extractelement <{W} x {it}> {idx}, i64 0")
    scattered = _lanes_01_scattered(e, it, idx, i0)
    e.body.append(f"  br i1 {scattered}, label %{tag}.any, label %{tag}.tests")
    e.body.append(f"{tag}.tests:")
    run = _IndexRun(e, k, vt, index_instr, e.cmp("icmp", "slt", it, mi, "zeroinitializer"))
    e.body.append(f"  br i1 {run.same()}, label %{tag}.one, label %{tag}.test")
    e.body.append(f"{tag}.one:")
    x = e.emit(f"load {mt}, ptr {run.first}, align {vt.itemsize}")
    xs = e.emit(f"insertelement {v} poison, {mt} {x}, i64 0")
    r_one = e.emit(f"shufflevector {v} {xs}, {v} poison, <{W} x i32> zeroinitializer")
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.test:")
    run = _IndexRun(e, k, vt, index_instr, e.cmp("icmp", "slt", it, mi, "zeroinitializer"))
    e.body.append(f"  br i1 {run.consecutive()}, label %{tag}.vec, label %{tag}.any")
    e.body.append(f"{tag}.vec:")
    m = e.cmp("icmp", "slt", it, mi, "zeroinitializer")
    fn = e.intrinsic(f"llvm.masked.load.v{W}{suffix(mt)}.p0", v, ["ptr", "i32", e.vty("i1"), v])
    r_vec = e.emit(f"call {v} {fn}(ptr {run.first}, i32 {vt.itemsize}, {e.vty('i1')} {m}, {v} zeroinitializer)")
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.any:")
    ptrs = e.emit(f"getelementptr {mt}, ptr {_gather_base(e, k)}, <{W} x {it}> {safe_idx}")
    r_any = _hardware_gather(e, vt, ptrs, every)
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.end:")
    r = e.emit(f"phi {v} [ {r_one}, %{tag}.one ], [ {r_vec}, %{tag}.vec ], [ {r_any}, %{tag}.any ]")
    return _zero_inactive(e, vt, ivt, r, mi)


def _zero_inactive(e, vt: VarType, ivt: VarType, r: str, mi: str) -> str:
    """Gathered ``r`` with the lanes inactive in ``mi`` (the mask as integer lanes of the index
    type ``ivt``) zeroed: an and with the mask in integer lanes of the element's width."""
    it = scalar_type(ivt)
    mt = memory_type(vt)
    v = e.vty(mt)
    bits = 8 * vt.itemsize
    et = f"i{bits}"
    mr = mi if et == it else e.emit(f"{'trunc' if bits < ivt.bits else 'sext'} {e.vty(it)} {mi} to {e.vty(et)}")
    if mt != et:
        r = e.emit(f"bitcast {v} {r} to {e.vty(et)}")
    r = e.binop("and", et, r, mr)
    if mt != et:
        r = e.emit(f"bitcast {e.vty(et)} {r} to {v}")
    if vt is Bool:
        r = e.cmp("icmp", "ne", "i8", r, "zeroinitializer")
    return r


def _gather_base(e, k: int) -> str:
    """``%g{k}.base``: gather source ``k``'s address, or a zero constant when it is empty
    (so that an inactive lane's read of element 0 stays inside memory we own)."""
    name = f"%g{k}.base"
    if name not in e.entry_names:
        e.entry_names.add(name)
        e.declarations.add("@fj.gather_pad = internal constant [64 x i8] zeroinitializer, align 64")
        e.entry.append(f"  %g{k}.empty = icmp eq i64 %n{k}, 0")
        e.entry.append(f"  {name} = select i1 %g{k}.empty, ptr @fj.gather_pad, ptr %a{k}")
    return name


@_lowers("scatter")

def op_scatter(e, ins):
    k, reduce_op = ins.value
    vt = ins.vt
    value = e.arg(ins, 0)
    m = active_in_bounds(e, k, ins.args[1], e.arg(ins, 2))
    ptrs = pointers(e, k, vt, ins.args[1])
    mt = memory_type(vt)
    if vt is Bool:
        value = e.emit(f"zext {e.vty('i1')} {value} to {e.vty('i8')}")
    if reduce_op is None:
        v = e.vty(mt)
        pv = e.vty("ptr")
        fn = e.intrinsic(f"llvm.masked.scatter.v{e.W}{suffix(mt)}.v{e.W}p0", "void", [v, pv, "i32", e.vty("i1")])
        e.body.append(f"  call void {fn}({v} {value}, {pv} {ptrs}, i32 {vt.itemsize}, {e.vty('i1')} {m})")
        return ""
    if reduce_op == "add":
        _uniform_scatter_add(e, k, vt, ins.args[1], value, ptrs, m)
    else:
        _atomic_scatter(e, k, vt, ins.args[1], reduce_op, value, ptrs, m)
    return ""


def _uniform_scatter_add(e, k, vt, index_instr, value, ptrs, m):
    """scatter_add whose active lanes all hit one address: one add of their sum.

    Common in gradients (the adjoint of a gather by a slowly varying index, e.g. a
    parameter per object read by many consecutive lanes); otherwise per-lane updates.
    The add is atomic only when other threads run the same launch (``%shared.b``): a float
    ``atomicrmw fadd`` is a compare-and-swap loop on x86 (``lock cmpxchg``, ~20 cycles even
    uncontended), and the fit demo's backward kernel runs four per chunk.
    """
    t = scalar_type(vt)
    W = e.W
    tag = e.tmp()[1:]
    run = _IndexRun(e, k, vt, index_instr, m)
    p0 = run.first
    e.body.append(f"  br i1 {run.same()}, label %{tag}.uni, label %{tag}.lanes")
    e.body.append(f"{tag}.uni:")
    vz = e.select(t, m, value, "zeroinitializer")
    if vt.is_float:
        fn = e.intrinsic(f"llvm.vector.reduce.fadd.v{W}{suffix(t)}", t, [t, e.vty(t)])
        total = e.emit(f"call reassoc {t} {fn}({t} {float_constant(-0.0, vt)}, {e.vty(t)} {vz})")
    else:
        fn = e.intrinsic(f"llvm.vector.reduce.add.v{W}{t}", t, [e.vty(t)])
        total = e.emit(f"call {t} {fn}({e.vty(t)} {vz})")
    add = "fadd" if vt.is_float else "add"
    e.body.append(f"  br i1 %shared.b, label %{tag}.uatomic, label %{tag}.uplain")
    e.body.append(f"{tag}.uatomic:")
    e.body.append(f"  atomicrmw {add} ptr {p0}, {t} {total} monotonic, align {vt.itemsize}")
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.uplain:")
    old = e.emit(f"load {t}, ptr {p0}, align {vt.itemsize}")
    new = e.emit(f"{add} {t} {old}, {total}")
    e.body.append(f"  store {t} {new}, ptr {p0}, align {vt.itemsize}")
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.lanes:")
    _atomic_scatter(e, k, vt, index_instr, "add", value, ptrs, m)
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.end:")


def _atomic_scatter(e, k, vt, index_instr, reduce_op, value, ptrs, m):
    """Per-lane read-modify-write, in lane order (so lanes hitting one address combine).

    Atomic instructions (a compare-and-swap loop for floats on x86, ~5x slower) only
    when other threads run the same launch; a launch on one thread uses plain ones.
    """
    tag = e.tmp()[1:]
    e.body.append(f"  br i1 %shared.b, label %{tag}.atomic, label %{tag}.plain")
    e.body.append(f"{tag}.atomic:")
    _atomic_lanes(e, vt, reduce_op, value, ptrs, m)
    e.body.append(f"  br label %{tag}.done")
    e.body.append(f"{tag}.plain:")
    _contiguous_or_lanes(e, k, vt, index_instr, reduce_op, value, ptrs, m)
    e.body.append(f"  br label %{tag}.done")
    e.body.append(f"{tag}.done:")


def _contiguous_or_lanes(e, k, vt, index_instr, reduce_op, value, ptrs, m):
    """Without other threads: consecutive addresses (a run of pixels, a contiguous block)
    are one vector read-modify-write; anything else goes lane by lane."""
    t = scalar_type(vt)
    tag = e.tmp()[1:]
    run = _IndexRun(e, k, vt, index_instr, m)
    p0 = run.first
    e.body.append(f"  br i1 {run.consecutive()}, label %{tag}.vec, label %{tag}.lanes")
    e.body.append(f"{tag}.vec:")
    old = e.masked_mem("load", vt, p0, mask=m)
    if reduce_op == "add":
        new = e.binop("fadd" if vt.is_float else "add", t, old, value)
    elif reduce_op == "mul":
        new = e.binop("fmul" if vt.is_float else "mul", t, old, value)
    elif reduce_op in ("and", "or"):    # integer targets only (bitwise)
        new = e.binop(reduce_op, t, old, value)
    elif vt.is_float:   # minnum/maxnum ignore NaN on either side, as Dr.Jit's scatter_reduce does
        new = e.call_binary_intrinsic("minnum" if reduce_op == "min" else "maxnum", t, old, value)
    else:
        pred = {"min": "slt" if vt.is_signed else "ult", "max": "sgt" if vt.is_signed else "ugt"}[reduce_op]
        new = e.select(t, e.cmp("icmp", pred, t, old, value), old, value)
    e.masked_mem("store", vt, p0, new, mask=m)
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.lanes:")
    _plain_lanes(e, vt, reduce_op, value, ptrs, m)
    e.body.append(f"  br label %{tag}.end")
    e.body.append(f"{tag}.end:")


def active_lanes(e, m: str, ptrs: str, value: str, t: str):
    """For each lane, in order: open block ``{tag}.do``, entered only when the lane is active
    in ``m``, and yield ``(lane, tag, its pointer, its element of value (of type t))``.  The
    caller lowers the lane's work and ends the block with a branch to ``%{tag}.next``, then
    opens ``{tag}.next:`` (where a phi may collect what the lane produced)."""
    for lane in range(e.W):
        tag = e.tmp()[1:]
        mk = e.emit(f"extractelement {e.vty('i1')} {m}, i64 {lane}")
        e.body.append(f"  br i1 {mk}, label %{tag}.do, label %{tag}.next")
        e.body.append(f"{tag}.do:")
        p = e.emit(f"extractelement {e.vty('ptr')} {ptrs}, i64 {lane}")
        v = e.emit(f"extractelement {e.vty(t)} {value}, i64 {lane}")
        yield lane, tag, p, v


def _lane_loop_add(e, vt, atomic: bool, value, ptrs, m) -> None:
    """A scatter-add's per-lane updates (in lane order) as a call of one helper per type:
    shared by every scatter-add of the kernel, out of line beyond
    INLINE_MATH_CALLS uses (frame.py: _definition).  Unrolled in place, each scatter-add was
    ~2 x W basic blocks: a hash grid's backward kernel (128 of them, W = 32) held 1.9 MB of IR
    and LLVM took seconds to compile it."""
    t = scalar_type(vt)
    W = e.W
    symbol = f"fj_scatter_add_{'atomic' if atomic else 'plain'}_v{W}{suffix(t)}"
    if symbol not in e.definitions:
        align = vt.itemsize
        add = "fadd" if vt.is_float else "add"

        def update(lane: int) -> list:
            p, v = f"%pi{lane}", f"%vi{lane}"
            if atomic:
                return [f"  atomicrmw {add} ptr {p}, {t} {v} monotonic, align {align}"]
            return [f"  %old{lane} = load {t}, ptr {p}, align {align}",
                    f"  %new{lane} = {add} {t} %old{lane}, {v}",
                    f"  store {t} %new{lane}, ptr {p}, align {align}"]
        # Unrolled over the lanes inside the helper (one copy per kernel): a loop with a
        # variable lane index ran the hash grid's 1e6-lane backward pass ~25% slower.
        lines = [f"define internal void @{symbol}({e.vty('ptr')} %p, {e.vty(t)} %v, {e.vty('i1')} %m) "
                 "alwaysinline #0 {", "entry:", "  br label %l0"]
        for lane in range(W):
            lines += [f"l{lane}:",
                      f"  %m{lane} = extractelement {e.vty('i1')} %m, i64 {lane}",
                      f"  br i1 %m{lane}, label %do{lane}, label %l{lane + 1}",
                      f"do{lane}:",
                      f"  %pi{lane} = extractelement {e.vty('ptr')} %p, i64 {lane}",
                      f"  %vi{lane} = extractelement {e.vty(t)} %v, i64 {lane}",
                      *update(lane),
                      f"  br label %l{lane + 1}"]
        e.definitions[symbol] = "\n".join(lines + [f"l{W}:", "  ret void", "}"])
    e.math_calls[symbol] = e.math_calls.get(symbol, 0) + 1
    e.body.append(f"  call void @{symbol}({e.vty('ptr')} {ptrs}, {e.vty(t)} {value}, {e.vty('i1')} {m})")


def _plain_lanes(e, vt, reduce_op, value, ptrs, m):
    if reduce_op == "add":
        _lane_loop_add(e, vt, False, value, ptrs, m)
        return
    t = scalar_type(vt)
    for _lane, tag, p, v in active_lanes(e, m, ptrs, value, t):
        old = e.emit(f"load {t}, ptr {p}, align {vt.itemsize}")
        if reduce_op == "add":
            new = e.emit(f"{'fadd' if vt.is_float else 'add'} {t} {old}, {v}")
        else:
            new = _scalar_reduce(e, vt, reduce_op, old, v)
        e.body.append(f"  store {t} {new}, ptr {p}, align {vt.itemsize}")
        e.body.append(f"  br label %{tag}.next")
        e.body.append(f"{tag}.next:")


def _atomic_lanes(e, vt, reduce_op, value, ptrs, m):
    if reduce_op == "add":
        _lane_loop_add(e, vt, True, value, ptrs, m)
        return
    t = scalar_type(vt)
    it = f"i{vt.bits}"
    for _lane, tag, p, v in active_lanes(e, m, ptrs, value, t):
        if reduce_op == "add":
            e.body.append(f"  atomicrmw {'fadd' if vt.is_float else 'add'} ptr {p}, {t} {v} monotonic, align {vt.itemsize}")
            e.body.append(f"  br label %{tag}.next")
        else:
            # Compare-and-swap loop for operations without a native atomic.
            o0 = e.emit(f"load atomic {it}, ptr {p} monotonic, align {vt.itemsize}")
            e.body.append(f"  br label %{tag}.loop")
            e.body.append(f"{tag}.loop:")
            old = e.tmp()
            seen = e.tmp()
            e.body.append(f"  {old} = phi {it} [ {o0}, %{tag}.do ], [ {seen}, %{tag}.loop ]")
            oldv = old if not vt.is_float else e.emit(f"bitcast {it} {old} to {t}")
            new = _scalar_reduce(e, vt, reduce_op, oldv, v)
            newi = new if not vt.is_float else e.emit(f"bitcast {t} {new} to {it}")
            res = e.emit(f"cmpxchg ptr {p}, {it} {old}, {it} {newi} monotonic monotonic, align {vt.itemsize}")
            e.body.append(f"  {seen} = extractvalue {{ {it}, i1 }} {res}, 0")
            ok = e.emit(f"extractvalue {{ {it}, i1 }} {res}, 1")
            e.body.append(f"  br i1 {ok}, label %{tag}.next, label %{tag}.loop")
        e.body.append(f"{tag}.next:")


def _scalar_reduce(e, vt, reduce_op, a, b) -> str:
    t = scalar_type(vt)
    if reduce_op == "mul":
        return e.emit(f"{'fmul' if vt.is_float else 'mul'} {t} {a}, {b}")
    if reduce_op in ("and", "or"):
        return e.emit(f"{reduce_op} {t} {a}, {b}")
    if vt.is_float:     # NaN-ignoring, as above
        name = "minnum" if reduce_op == "min" else "maxnum"
        fn = e.intrinsic(f"llvm.{name}.{suffix(t)}", t, [t, t])
        return e.emit(f"call {t} {fn}({t} {a}, {t} {b})")
    pred = {"min": "slt" if vt.is_signed else "ult", "max": "sgt" if vt.is_signed else "ugt"}[reduce_op]
    c = e.emit(f"icmp {pred} {t} {a}, {b}")
    return e.emit(f"select i1 {c}, {t} {a}, {t} {b}")
