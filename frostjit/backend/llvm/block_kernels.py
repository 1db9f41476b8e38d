"""Compiled block reductions: each row of ``block`` consecutive elements reduced by one thread.

``fj.block_reduce`` (and so ``fj.sum(t, axis=-1)`` of a tensor) reduces rows of a 1-D buffer.
NumPy's ``ufunc.reduce(..., axis=1)`` does it at ~24 GB/s per core with 8 scalar partial
sums; a row kernel that loads whole SIMD registers into several vector accumulators
reaches the memory's speed.  The kernel is written here as LLVM IR text (a fixed shape, not a
traced program) and compiled once per (operation, element type) through the backend's
compiler and disk cache.

Kernel ABI (the thread pool's): ``kernel(start, end, args, shared)`` reduces rows ``[start,
end)``; ``args`` is ``int64[4]``: source pointer, number of source elements ``n``, output
pointer, block size ``b``.  Row ``r`` covers ``[r b, min((r + 1) b, n))``.  The prefix kernels
(``block_prefix_reduce``: exclusive or inclusive, forward or reverse, each a kernel of its own)
write the running reduction of each row over the row's place in the output.

The order of the operations within a row is fixed (``UNROLL`` vector accumulators of one
register each, combined pairwise, then the register's lanes as a tree, then the elements
after the last whole register one by one; a prefix: an in-register scan per register, plus
the carry), and each row is reduced by a single thread, so the result is bit-identical at any
thread count and between calls.  Float ``min``/``max`` ignore NaN (``llvm.minnum``/``maxnum``
starting from +-inf), as the backend's other reductions.
"""
from __future__ import annotations

import ctypes
import hashlib
import threading

from ...trace.dtypes import Bool, VarType
from .codegen.ir_types import scalar_type, scalar_constant, suffix

_SIZES = {"half": 2, "float": 4, "double": 8}


def scalar_size(t: str) -> int:
    """Bytes of IR scalar type ``t`` (``i32``, ``float``, ...): the alignment of its loads."""
    return _SIZES.get(t) or int(t[1:]) // 8

# Vector accumulators per row: enough independent additions to hide the add latency (4
# cycles) behind two loads per cycle on rows that sit in the cache.  (On the 64 MiB sums of
# bench_tensor.py, which stream from memory, 2, 4 and 8 measured the same.)
UNROLL = 4

KERNEL_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)

OPS = ("add", "mul", "min", "max", "and", "or")


def supported(op: str, vt: VarType) -> bool:
    """Whether compiled row kernels (reduction and prefix) exist for ``op`` over ``vt`` (Bool keeps
    the NumPy path; ``and``/``or`` are bitwise on integers; Float16 is loaded as half and
    computed in float32, each output rounded once)."""
    if vt is Bool or op not in OPS:
        return False
    return not (vt.is_float and op in ("and", "or"))


def _identity(op: str, vt: VarType) -> str:
    """The IR constant of ``op``'s identity in ``vt``."""
    if op == "add":
        value = 0
    elif op == "mul":
        value = 1
    elif op == "and":
        value = -1
    elif op == "or":
        value = 0
    elif vt.is_float:
        value = float("inf") if op == "min" else float("-inf")
    else:
        bits = vt.bits
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if vt.is_signed else (0, (1 << bits) - 1)
        value = hi if op == "min" else lo
    return scalar_constant(vt, value)


def _combine(op: str, vt: VarType, ty: str, a: str, b: str, out: str, decls: set) -> str:
    """The instruction ``out = a op b`` on values of IR type ``ty`` (a scalar or a vector)."""
    if op in ("min", "max"):
        if vt.is_float:
            name = "minnum" if op == "min" else "maxnum"
        else:
            name = ("s" if vt.is_signed else "u") + op
        elem = scalar_type(vt)
        sfx = f"v{ty.split(' x ')[0][1:]}{suffix(elem)}" if ty.startswith("<") else suffix(elem)
        fn = f"@llvm.{name}.{sfx}"
        decls.add(f"declare {ty} {fn}({ty}, {ty})")
        return f"  {out} = call {ty} {fn}({ty} {a}, {ty} {b})"
    if vt.is_float:
        inst = {"add": "fadd", "mul": "fmul"}[op]
    else:
        inst = {"add": "add", "mul": "mul", "and": "and", "or": "or"}[op]
    return f"  {out} = {inst} {ty} {a}, {b}"


def _load(name: str, ty: str, mty: str, ptr: str, align: int) -> str:
    """``name = load`` of an element or vector of memory type ``mty``, widened to ``ty`` (half
    to float: Float16 is computed in float32, as everywhere in frostjit)."""
    if ty == mty:
        return f"  {name} = load {ty}, ptr {ptr}, align {align}"
    return f"  {name}.m = load {mty}, ptr {ptr}, align {align}\n  {name} = fpext {mty} {name}.m to {ty}"


def _store(value: str, ty: str, mty: str, ptr: str, align: int) -> str:
    """Store ``value`` (type ``ty``) as memory type ``mty`` (float to half: rounded once)."""
    if ty == mty:
        return f"  store {ty} {value}, ptr {ptr}, align {align}"
    return f"  {value}.st = fptrunc {ty} {value} to {mty}\n  store {mty} {value}.st, ptr {ptr}, align {align}"


def _types(vt: VarType, lanes: int) -> tuple:
    """(compute element type, compute VarType, memory element type, compute vector, memory vector)."""
    cvt = vt.compute or vt
    t, mt = scalar_type(cvt), scalar_type(vt)
    return t, cvt, mt, f"<{lanes} x {t}>", f"<{lanes} x {mt}>"


def row_kernel_ir(op: str, vt: VarType, lanes: int, symbol: str, unroll: int = UNROLL) -> str:
    """The IR of the row kernel for ``op`` over ``vt`` with ``lanes`` elements per vector."""
    t, vt, mt, v, vm = _types(vt, lanes)
    align = scalar_size(mt)
    ident = _identity(op, vt)
    vident = f"<{', '.join([f'{t} {ident}'] * lanes)}>"
    decls: set = set()
    step = lanes * unroll
    body = []
    # Unrolled loop: unroll loads and accumulators per iteration.
    for k in range(unroll):
        body.append(f"  %q{k} = getelementptr {mt}, ptr %p, i64 %i.u{k}")
        body.append(_load(f"%x{k}", v, vm, f"%q{k}", align))
        body.append(_combine(op, vt, v, f"%a{k}", f"%x{k}", f"%a{k}.n", decls))
    offsets = "\n".join(f"  %i.u{k} = add i64 %i, {k * lanes}" for k in range(unroll))
    phis = "\n".join(f"  %a{k} = phi {v} [{vident}, %row], [%a{k}.n, %vloop]" for k in range(unroll))
    outs = "\n".join(f"  %a{k}.f = phi {v} [{vident}, %row], [%a{k}.n, %vloop]" for k in range(unroll))
    # The accumulators combined pairwise (accumulator 0 first takes the single-vector loop).
    tree, names, level = [], ["%b0.f"] + [f"%a{k}.f" for k in range(1, unroll)], 0
    while len(names) > 1:
        nxt = []
        for j in range(0, len(names) - 1, 2):
            out = f"%c{level}.{j // 2}"
            tree.append(_combine(op, vt, v, names[j], names[j + 1], out, decls))
            nxt.append(out)
        if len(names) % 2:
            nxt.append(names[-1])
        names, level = nxt, level + 1
    # The register's lanes as a tree: the upper half onto the lower half.
    acc, width, h = names[0], lanes, 0
    while width > 1:
        half = width // 2
        vt_w, vt_h = f"<{width} x {t}>", f"<{half} x {t}>"
        lo = ", ".join(f"i32 {j}" for j in range(half))
        hi = ", ".join(f"i32 {j}" for j in range(half, width))
        tree.append(f"  %h{h}.lo = shufflevector {vt_w} {acc}, {vt_w} poison, <{half} x i32> <{lo}>")
        tree.append(f"  %h{h}.hi = shufflevector {vt_w} {acc}, {vt_w} poison, <{half} x i32> <{hi}>")
        tree.append(_combine(op, vt, vt_h, f"%h{h}.lo", f"%h{h}.hi", f"%h{h}", decls))
        acc, width, h = f"%h{h}", half, h + 1
    tree.append(f"  %hsum = extractelement <1 x {t}> {acc}, i64 0" if lanes > 1 else
                f"  %hsum = extractelement {v} {acc}, i64 0")
    single = _combine(op, vt, v, "%b0", "%y", "%b0.n", decls)
    scalar = _combine(op, vt, t, "%s", "%z", "%s.n", decls)
    nl = "\n"
    return f"""{nl.join(sorted(decls))}

{_row_entry(symbol, mt)}
  %nv = and i64 %len, {-step}
  %has.v = icmp ne i64 %nv, 0
  br i1 %has.v, label %vloop, label %vdone
vloop:
  %i = phi i64 [0, %row], [%i.next, %vloop]
{phis}
{offsets}
{nl.join(body)}
  %i.next = add i64 %i, {step}
  %more.v = icmp ult i64 %i.next, %nv
  br i1 %more.v, label %vloop, label %vdone
vdone:
{outs}
  %n1 = and i64 %len, {-lanes}
  %has.1 = icmp ult i64 %nv, %n1
  br i1 %has.1, label %v1loop, label %v1done
v1loop:
  %j = phi i64 [%nv, %vdone], [%j.next, %v1loop]
  %b0 = phi {v} [%a0.f, %vdone], [%b0.n, %v1loop]
  %qj = getelementptr {mt}, ptr %p, i64 %j
{_load("%y", v, vm, "%qj", align)}
{single}
  %j.next = add i64 %j, {lanes}
  %more.1 = icmp ult i64 %j.next, %n1
  br i1 %more.1, label %v1loop, label %v1done
v1done:
  %b0.f = phi {v} [%a0.f, %vdone], [%b0.n, %v1loop]
{nl.join(tree)}
  %has.s = icmp ult i64 %n1, %len
  br i1 %has.s, label %sloop, label %sdone
sloop:
  %k = phi i64 [%n1, %v1done], [%k.next, %sloop]
  %s = phi {t} [%hsum, %v1done], [%s.n, %sloop]
  %qk = getelementptr {mt}, ptr %p, i64 %k
{_load("%z", t, mt, "%qk", align)}
{scalar}
  %k.next = add i64 %k, 1
  %more.s = icmp ult i64 %k.next, %len
  br i1 %more.s, label %sloop, label %sdone
sdone:
  %res = phi {t} [%hsum, %v1done], [%s.n, %sloop]
  %d = getelementptr {mt}, ptr %dst, i64 %r
{_store("%res", t, mt, "%d", align)}
  %r.next = add i64 %r, 1
  %more.r = icmp slt i64 %r.next, %end
  br i1 %more.r, label %row, label %exit
exit:
  ret void
}}
"""


def prefix_kernel_ir(op: str, vt: VarType, lanes: int, symbol: str, exclusive: bool, reverse: bool) -> str:
    """The IR of the row prefix kernel (``block_prefix_reduce``): each row scanned in order (from
    its end with ``reverse``), one register at a time: an in-register scan (``log2(lanes)``
    shifted combinations), combined with the running value of the row so far (the carry), then
    the elements after the last whole register one by one."""
    t, vt, mt, v, vm = _types(vt, lanes)
    align = scalar_size(mt)
    ident = _identity(op, vt)
    vident = f"<{', '.join([f'{t} {ident}'] * lanes)}>"
    decls: set = set()
    lines = []
    # lanes in scan order: lane j of the register is element base + j (base + lanes - 1 - j reversed)
    rev_mask = ", ".join(f"i32 {lanes - 1 - j}" for j in range(lanes))
    acc = "%x"
    if reverse:
        lines.append(f"  %xs = shufflevector {v} %x, {v} poison, <{lanes} x i32> <{rev_mask}>")
        acc = "%xs"
    k, step = 0, 1
    while step < lanes:        # Hillis-Steele within the register: lane j takes lane j - step
        mask = ", ".join(f"i32 {j - step if j >= step else lanes + j}" for j in range(lanes))
        lines.append(f"  %sh{k} = shufflevector {v} {acc}, {v} {vident}, <{lanes} x i32> <{mask}>")
        lines.append(_combine(op, vt, v, f"%sh{k}", acc, f"%sc{k}", decls))
        acc, k, step = f"%sc{k}", k + 1, step * 2
    lines.append(f"  %cv.0 = insertelement {v} poison, {t} %carry, i64 0")
    lines.append(f"  %cv = shufflevector {v} %cv.0, {v} poison, <{lanes} x i32> zeroinitializer")
    lines.append(_combine(op, vt, v, "%cv", acc, "%incl", decls))
    lines.append(f"  %carry.n = extractelement {v} %incl, i64 {lanes - 1}")
    out = "%incl"
    if exclusive:           # lane j takes inclusive lane j - 1, lane 0 the carry before
        mask = ", ".join([f"i32 {lanes}"] + [f"i32 {j - 1}" for j in range(1, lanes)])
        lines.append(f"  %excl = shufflevector {v} %incl, {v} %cv, <{lanes} x i32> <{mask}>")
        out = "%excl"
    if reverse:
        lines.append(f"  %out = shufflevector {v} {out}, {v} poison, <{lanes} x i32> <{rev_mask}>")
        out = "%out"
    scalar = _combine(op, vt, t, "%c", "%z", "%c.n", decls)
    # memory index of scan position j: j, or len - 1 - j reversed; of a register at scan offset i:
    # its first element i, or len - i - lanes reversed
    if reverse:
        vbase = ["  %vb.0 = sub i64 %len, %i", f"  %vb = sub i64 %vb.0, {lanes}"]
        sidx = ["  %sm.0 = sub i64 %len, %j", "  %sm = sub i64 %sm.0, 1"]
    else:
        vbase = ["  %vb = add i64 %i, 0"]
        sidx = ["  %sm = add i64 %j, 0"]
    store_s = "%c" if exclusive else "%c.n"
    nl = "\n"
    return f"""{nl.join(sorted(decls))}

{_row_entry(symbol, mt)}
  %q = getelementptr {mt}, ptr %dst, i64 %lo
  %nv = and i64 %len, {-lanes}
  %has.v = icmp ne i64 %nv, 0
  br i1 %has.v, label %vloop, label %vdone
vloop:
  %i = phi i64 [0, %row], [%i.next, %vloop]
  %carry = phi {t} [{ident}, %row], [%carry.n, %vloop]
{nl.join(vbase)}
  %qi = getelementptr {mt}, ptr %p, i64 %vb
{_load("%x", v, vm, "%qi", align)}
{nl.join(lines)}
  %qo = getelementptr {mt}, ptr %q, i64 %vb
{_store(out, v, vm, "%qo", align)}
  %i.next = add i64 %i, {lanes}
  %more.v = icmp ult i64 %i.next, %nv
  br i1 %more.v, label %vloop, label %vdone
vdone:
  %c0 = phi {t} [{ident}, %row], [%carry.n, %vloop]
  %has.s = icmp ult i64 %nv, %len
  br i1 %has.s, label %sloop, label %sdone
sloop:
  %j = phi i64 [%nv, %vdone], [%j.next, %sloop]
  %c = phi {t} [%c0, %vdone], [%c.n, %sloop]
{nl.join(sidx)}
  %qk = getelementptr {mt}, ptr %p, i64 %sm
{_load("%z", t, mt, "%qk", align)}
{scalar}
  %qs = getelementptr {mt}, ptr %q, i64 %sm
{_store(store_s, t, mt, "%qs", align)}
  %j.next = add i64 %j, 1
  %more.s = icmp ult i64 %j.next, %len
  br i1 %more.s, label %sloop, label %sdone
sdone:
  %r.next = add i64 %r, 1
  %more.r = icmp slt i64 %r.next, %end
  br i1 %more.r, label %row, label %exit
exit:
  ret void
}}
"""


def count_kernel_ir(lanes: int, symbol: str, unroll: int = UNROLL) -> str:
    """The IR of the row count kernel: the number of non-zero bytes (true entries of a Bool buffer)
    in each row, stored as ``i32``.

    Each register of ``lanes`` bytes becomes a ``lanes``-bit mask (one compare), counted with one
    population count: ``fj.count(mask)`` reads the mask's bytes once and writes nothing else,
    where counting it as ``UInt32`` first wrote (and read back) four bytes per lane.  The counts
    are integers, so the order of the additions does not matter.
    """
    step = lanes * unroll
    it = f"i{lanes}"
    body, phis, outs = [], [], []
    for k in range(unroll):
        phis.append(f"  %a{k} = phi i64 [0, %row], [%a{k}.n, %vloop]")
        outs.append(f"  %a{k}.f = phi i64 [0, %row], [%a{k}.n, %vloop]")
        body += [f"  %i.u{k} = add i64 %i, {k * lanes}",
                 f"  %q{k} = getelementptr i8, ptr %p, i64 %i.u{k}",
                 f"  %x{k} = load <{lanes} x i8>, ptr %q{k}, align 1",
                 f"  %m{k} = icmp ne <{lanes} x i8> %x{k}, zeroinitializer",
                 f"  %w{k} = bitcast <{lanes} x i1> %m{k} to {it}",
                 f"  %c{k} = call {it} @llvm.ctpop.{it}({it} %w{k})",
                 f"  %e{k} = zext {it} %c{k} to i64" if lanes < 64 else f"  %e{k} = add i64 %c{k}, 0",
                 f"  %a{k}.n = add i64 %a{k}, %e{k}"]
    total = "%a0.f"
    for k in range(1, unroll):
        body_sum = f"%sum{k}"
        outs.append(f"  {body_sum} = add i64 {total}, %a{k}.f")
        total = body_sum
    nl = "\n"
    return f"""declare {it} @llvm.ctpop.{it}({it})

{_row_entry(symbol, "i8")}
  %nv = and i64 %len, {-step}
  %has.v = icmp ne i64 %nv, 0
  br i1 %has.v, label %vloop, label %vdone
vloop:
  %i = phi i64 [0, %row], [%i.next, %vloop]
{nl.join(phis)}
{nl.join(body)}
  %i.next = add i64 %i, {step}
  %more.v = icmp ult i64 %i.next, %nv
  br i1 %more.v, label %vloop, label %vdone
vdone:
{nl.join(outs)}
  %has.s = icmp ult i64 %nv, %len
  br i1 %has.s, label %sloop, label %sdone
sloop:
  %k = phi i64 [%nv, %vdone], [%k.next, %sloop]
  %s = phi i64 [{total}, %vdone], [%s.n, %sloop]
  %qk = getelementptr i8, ptr %p, i64 %k
  %z = load i8, ptr %qk, align 1
  %zb = icmp ne i8 %z, 0
  %ze = zext i1 %zb to i64
  %s.n = add i64 %s, %ze
  %k.next = add i64 %k, 1
  %more.s = icmp ult i64 %k.next, %len
  br i1 %more.s, label %sloop, label %sdone
sdone:
  %res = phi i64 [{total}, %vdone], [%s.n, %sloop]
  %res.32 = trunc i64 %res to i32
  %d = getelementptr i32, ptr %dst, i64 %r
  store i32 %res.32, ptr %d, align 4
  %r.next = add i64 %r, 1
  %more.r = icmp slt i64 %r.next, %end
  br i1 %more.r, label %row, label %exit
exit:
  ret void
}}
"""


class RowKernels:
    """The compiled row kernels of one compiler, by (operation, element type)."""

    def __init__(self, compiler):
        self.compiler = compiler
        # One register's worth of elements per vector (compiler.simd_lanes counts float32 lanes).
        self.register_bytes = 4 * compiler.simd_lanes
        self.kernels: dict = {}
        self.lock = threading.Lock()

    def get(self, op: str, vt: VarType, prefix: bool = False, exclusive: bool = True, reverse: bool = False):
        """The kernel's ctypes entry point (it carries ``fj_address`` for the native pool): the row
        reduction, or with ``prefix`` the row prefix reduction (``exclusive``, ``reverse``)."""
        key = (op, vt, prefix, exclusive, reverse) if prefix else (op, vt)
        return self._cached(key, lambda: self._build(op, vt, prefix, exclusive, reverse))

    def axis(self, op: str, vt: VarType, lanes: int):
        """The row reduction with one accumulator of ``lanes`` elements (``unroll=1``): each
        row's order is that of a fused axis reduction's segment in a kernel of width ``lanes``
        (:mod:`.codegen.reductions`: the chunks in order into one accumulator, then its lanes as
        a tree), so an evaluated tensor's axis reduction gives the fused one's bits."""
        symbol = f"fj_axis_{op}_{vt.name.lower()}_w{lanes}"
        return self._cached(("axis", op, vt, lanes),
                            lambda: self._compile(row_kernel_ir(op, vt, lanes, symbol, unroll=1), symbol))

    def count(self):
        """The row count kernel (:func:`count_kernel_ir`): true entries of each row of a Bool
        buffer, into a ``UInt32`` buffer of one entry per row."""
        symbol = "fj_block_count_bool"
        return self._cached("count", lambda: self._compile(count_kernel_ir(self.register_bytes, symbol), symbol))

    def custom(self, name: str, make_ir):
        """The kernel ``name`` whose IR ``make_ir(symbol)`` writes (another fixed-shape kernel
        of this ABI, e.g. :mod:`.sort_kernel`'s), compiled on first use."""
        symbol = f"fj_{name}"
        return self._cached(name, lambda: self._compile(make_ir(symbol), symbol))

    def _cached(self, key, build):
        """The kernel under ``key``, built by ``build()`` on first use (once, under the lock)."""
        k = self.kernels.get(key)
        if k is None:
            with self.lock:
                k = self.kernels.get(key)
                if k is None:
                    k = self.kernels[key] = build()
        return k

    def _build(self, op: str, vt: VarType, prefix: bool, exclusive: bool, reverse: bool):
        lanes = max(1, self.register_bytes // vt.itemsize)
        if prefix:
            symbol = (f"fj_block_prefix_{op}_{vt.name.lower()}_{'ex' if exclusive else 'in'}"
                      f"{'_rev' if reverse else ''}")
            ir = prefix_kernel_ir(op, vt, lanes, symbol, exclusive, reverse)
        else:
            symbol = f"fj_block_{op}_{vt.name.lower()}"
            ir = row_kernel_ir(op, vt, lanes, symbol)
        return self._compile(ir, symbol)

    def _compile(self, ir: str, symbol: str):
        """Compile ``ir`` (or load it from the disk cache) and return the entry point ``symbol``."""
        c = self.compiler
        key = hashlib.sha256(ir.encode()).hexdigest()
        obj = c.disk.load(key)
        if obj is None:
            obj = c.compile_ir(ir)
            c.disk.store(key, obj)
        engine, address = c.load(obj, symbol)
        fn = KERNEL_CFUNC(address)
        fn.engine = engine          # the machine code lives as long as the entry point
        fn.fj_address = address
        return fn


def _row_entry(symbol: str, mt: str) -> str:
    """The start of both row kernels (reduction and prefix): the pool's signature, the arguments
    ``(src, n, dst, block size)`` unpacked, and row ``%r``'s elements ``[%lo, %hi)`` of ``%src``
    (``%len`` of them, from ``%p``); each kernel continues in block ``row`` and ends the row loop
    in its block ``sdone``."""
    return f"""define void @{symbol}(i64 %start, i64 %end, ptr %args, i64 %shared) {{
entry:
  %src.p = getelementptr i64, ptr %args, i64 0
  %src.i = load i64, ptr %src.p, align 8
  %src = inttoptr i64 %src.i to ptr
  %n.p = getelementptr i64, ptr %args, i64 1
  %n = load i64, ptr %n.p, align 8
  %dst.p = getelementptr i64, ptr %args, i64 2
  %dst.i = load i64, ptr %dst.p, align 8
  %dst = inttoptr i64 %dst.i to ptr
  %b.p = getelementptr i64, ptr %args, i64 3
  %b = load i64, ptr %b.p, align 8
  %none = icmp sge i64 %start, %end
  br i1 %none, label %exit, label %row
row:
  %r = phi i64 [%start, %entry], [%r.next, %sdone]
  %lo = mul i64 %r, %b
  %hi.full = add i64 %lo, %b
  %short = icmp ult i64 %n, %hi.full
  %hi = select i1 %short, i64 %n, i64 %hi.full
  %len = sub i64 %hi, %lo
  %p = getelementptr {mt}, ptr %src, i64 %lo"""
