"""Kernel spec -> LLVM IR text, explicitly vectorized to the host SIMD width.

Every kernel has the signature ``void K(i64 start, i64 end, ptr args, i64 shared)``: it
processes elements ``[start, end)`` in chunks of ``W`` lanes (two SIMD registers
per value, so each iteration has two independent dependency chains to hide
instruction latency), with a lane mask
that is all-true except in the last chunk, so the tail needs no scalar loop.
``args`` holds two 8-byte slots per parameter: the buffer address and its
element count (used by gathers and scatters for bounds checks).  ``shared`` is
non-zero when other threads run the same launch concurrently: only then do
scatter reductions need atomic instructions.  Nothing in the IR depends on the
launch size, so one compiled kernel serves every width.

Semantics follow NumPy bit for bit for integer and basic float arithmetic:
floor division and modulo round toward -inf, division by zero gives 0 for
integers, shifts by the bit width or more give 0 (or -1 for negative signed
right shifts), ``!=`` is true for NaN.
"""
from __future__ import annotations

import struct

from ...trace.dtypes import Bool, VarType
from ..kernel import IN, IN_SCALAR, OUT, GATHER_SRC, SCATTER_DST, KernelSpec

KERNEL_PLACEHOLDER = "@__fj_kernel__"

# A math function called more often than this in one kernel is compiled once, out of line.
INLINE_MATH_CALLS = 2

# The loop body is cut into basic blocks of about this many IR instructions (at operation
# boundaries).  LLVM's machine instruction scheduler costs O(n^2) in the size of a block
# (docs/engine.md, "Compile time"): one 30,000-operation block took 10 s to compile, blocks of
# 500 keep compile time linear in the kernel's size.  250 or 1000 measured within 3%.
BLOCK_INSTRS = 500

MATH_OPS = frozenset({"sin", "cos", "tan", "asin", "acos", "atan", "exp", "exp2", "log", "log2",
                      "sinh", "cosh", "tanh", "erf", "atan2", "pow_float", "cbrt"})


def scalar_type(vt: VarType) -> str:
    """LLVM type of one element of ``vt`` in registers."""
    if vt is Bool:
        return "i1"
    if vt.is_float:
        return "float" if vt.itemsize == 4 else "double"
    return f"i{vt.bits}"


def memory_type(vt: VarType) -> str:
    """LLVM type of one element of ``vt`` in memory (Bool is a byte, like NumPy)."""
    return "i8" if vt is Bool else scalar_type(vt)


def _suffix(t: str) -> str:
    return {"float": "f32", "double": "f64"}.get(t, t)


def float_constant(value: float, vt: VarType) -> str:
    """Exact hexadecimal float constant (LLVM writes float constants as doubles)."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]


def scalar_constant(vt: VarType, value) -> str:
    if vt is Bool:
        return "true" if value else "false"
    if vt.is_float:
        return float_constant(value, vt)
    bits = vt.bits
    value = int(value) & ((1 << bits) - 1)
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    return str(value)


class _Emitter:
    """Emits the IR of one kernel; ``vals[k]`` is the operand text of instruction k."""

    def __init__(self, spec: KernelSpec, width: int):
        self.spec = spec
        self.W = width
        self.entry: list[str] = []
        self.body: list[str] = []
        self.declarations: set[str] = set()
        self.definitions: dict[str, str] = {}
        self.math_calls: dict[str, int] = {}
        self.counter = 0
        self.vals: list[str] = []
        self.split_blocks: list[str] = []    # labels of the blocks cut out of the loop body

    # -- small helpers ---------------------------------------------------
    def tmp(self) -> str:
        self.counter += 1
        return f"%t{self.counter}"

    def vty(self, t: str) -> str:
        return f"<{self.W} x {t}>"

    def splat(self, t: str, c: str) -> str:
        return f"splat ({t} {c})"

    def const(self, vt: VarType, value) -> str:
        return self.splat(scalar_type(vt), scalar_constant(vt, value))

    def emit(self, text: str) -> str:
        r = self.tmp()
        self.body.append(f"  {r} = {text}")
        return r

    def intrinsic(self, name: str, ret: str, argtypes: list[str]) -> str:
        self.declarations.add(f"declare {ret} @{name}({', '.join(argtypes)})")
        return f"@{name}"

    def call_unary_intrinsic(self, base: str, t: str, a: str) -> str:
        vt_ = self.vty(t)
        fn = self.intrinsic(f"llvm.{base}.v{self.W}{_suffix(t)}", vt_, [vt_])
        return self.emit(f"call {vt_} {fn}({vt_} {a})")

    def call_binary_intrinsic(self, base: str, t: str, a: str, b: str) -> str:
        vt_ = self.vty(t)
        fn = self.intrinsic(f"llvm.{base}.v{self.W}{_suffix(t)}", vt_, [vt_, vt_])
        return self.emit(f"call {vt_} {fn}({vt_} {a}, {vt_} {b})")

    def select(self, t: str, m: str, a: str, b: str) -> str:
        return self.emit(f"select {self.vty('i1')} {m}, {self.vty(t)} {a}, {self.vty(t)} {b}")

    def cmp(self, kind: str, pred: str, t: str, a: str, b: str) -> str:
        return self.emit(f"{kind} {pred} {self.vty(t)} {a}, {b}")

    def binop(self, op: str, t: str, a: str, b: str) -> str:
        return self.emit(f"{op} {self.vty(t)} {a}, {b}")

    def math(self, name: str, t: str, *args: str) -> str:
        from .vmath import math_function
        fn = math_function(name, t, self.W)
        self.definitions.update(fn.definitions)
        self.math_calls[fn.symbol] = self.math_calls.get(fn.symbol, 0) + 1
        self.declarations.update(fn.declarations)
        vt_ = self.vty(t)
        if fn.results == 2:
            rt = f"{{ {vt_}, {vt_} }}"
            return self.emit(f"call {rt} @{fn.symbol}({', '.join(f'{vt_} {x}' for x in args)})")
        return self.emit(f"call {vt_} @{fn.symbol}({', '.join(f'{vt_} {x}' for x in args)})")

    # -- the kernel ------------------------------------------------------
    def generate(self) -> str:
        W = self.W
        spec = self.spec
        lanes = ", ".join(f"i64 {k}" for k in range(W))
        self.entry.append(f"  %endv0 = insertelement <{W} x i64> poison, i64 %end, i64 0")
        self.entry.append(f"  %endv = shufflevector <{W} x i64> %endv0, <{W} x i64> poison, <{W} x i32> zeroinitializer")
        self.ptrs = []
        self.sizes = []
        for k, (kind, vt) in enumerate(spec.params):
            self.entry.append(f"  %a{k}.slot = getelementptr i64, ptr %args, i64 {2 * k}")
            self.entry.append(f"  %a{k} = load ptr, ptr %a{k}.slot, align 8")
            self.ptrs.append(f"%a{k}")
            if kind in (GATHER_SRC, SCATTER_DST):
                self.entry.append(f"  %n{k}.slot = getelementptr i64, ptr %args, i64 {2 * k + 1}")
                self.entry.append(f"  %n{k} = load i64, ptr %n{k}.slot, align 8")
                self.entry.append(f"  %n{k}.v0 = insertelement <{W} x i64> poison, i64 %n{k}, i64 0")
                self.entry.append(f"  %n{k}.v = shufflevector <{W} x i64> %n{k}.v0, <{W} x i64> poison, <{W} x i32> zeroinitializer")
                # 32-bit indices address through a sign-extending 32-bit GEP (one vgatherdps per 16
                # lanes instead of two vgatherqps), so they are only in bounds below 2^31.
                self.entry.append(f"  %n{k}.big = icmp ugt i64 %n{k}, 2147483647")
                self.entry.append(f"  %n{k}.c = select i1 %n{k}.big, i64 2147483647, i64 %n{k}")
                self.entry.append(f"  %n{k}.t = trunc i64 %n{k}.c to i32")
                self.entry.append(f"  %n{k}.w0 = insertelement <{W} x i32> poison, i32 %n{k}.t, i64 0")
                self.entry.append(f"  %n{k}.w = shufflevector <{W} x i32> %n{k}.w0, <{W} x i32> poison, <{W} x i32> zeroinitializer")
            elif kind == IN_SCALAR:
                mt = memory_type(vt)
                st = scalar_type(vt)
                self.entry.append(f"  %s{k}.m = load {mt}, ptr %a{k}, align {vt.itemsize}")
                if vt is Bool:
                    self.entry.append(f"  %s{k} = icmp ne i8 %s{k}.m, 0")
                else:
                    self.entry.append(f"  %s{k} = bitcast {st} %s{k}.m to {st}")
                self.entry.append(f"  %s{k}.v0 = insertelement <{W} x {st}> poison, {st} %s{k}, i64 0")
                self.entry.append(f"  %s{k}.v = shufflevector <{W} x {st}> %s{k}.v0, <{W} x {st}> poison, <{W} x i32> zeroinitializer")

        self.body.append(f"  %iv0 = insertelement <{W} x i64> poison, i64 %i, i64 0")
        self.body.append(f"  %iv = shufflevector <{W} x i64> %iv0, <{W} x i64> poison, <{W} x i32> zeroinitializer")
        self.body.append(f"  %lane = add <{W} x i64> %iv, <{lanes}>")
        self.body.append(f"  %mask = icmp slt <{W} x i64> %lane, %endv")
        block_start = 0
        for ins in spec.instrs:
            self.vals.append(self.instruction(ins))
            if len(self.body) - block_start >= BLOCK_INSTRS:
                label = f"body.{len(self.split_blocks) + 1}"
                self.split_blocks.append(label)
                self.body.append(f"  br label %{label}")
                self.body.append(f"{label}:")
                block_start = len(self.body)

        ir = [
            f"define void {KERNEL_PLACEHOLDER}(i64 %start, i64 %end, ptr noalias nocapture readonly %args, "
            f"i64 %shared) #0 {{",
            "entry:",
            "  %shared.b = icmp ne i64 %shared, 0",
            *self.entry,
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ %start, %entry ], [ %inext, %latch ]",
            "  %more = icmp slt i64 %i, %end",
            "  br i1 %more, label %body, label %exit",
            "body:",
            *self.body,
            "  br label %latch",
            "latch:",
            f"  %inext = add i64 %i, {W}",
            "  br label %loop",
            "exit:",
            "  ret void",
            "}",
            # Tell the x86 backend to really use W-lane registers (some CPUs are tuned to prefer 256 bits).
            f'attributes #0 = {{ nounwind "min-legal-vector-width"="{32 * W}" "prefer-vector-width"="{32 * W}" }}',
        ]
        parts = (sorted(self.declarations) + [self._definition(k) for k in sorted(self.definitions)]
                 + self._keep_blocks_apart() + ir)
        return "\n".join(parts) + "\n"

    def _keep_blocks_apart(self) -> list[str]:
        """Globals that take the split blocks' addresses, so LLVM keeps them apart.

        A plain branch between two blocks is merged away (simplify-CFG, then CodeGenPrepare),
        and a conditional one lets Machine Sink move the whole chain into one block again;
        a block whose address is taken stays a block of its own.  ``llvm.compiler.used``
        keeps the (otherwise unused, internal) table alive; it costs nothing at run time.
        """
        if not self.split_blocks:
            return []
        n = len(self.split_blocks)
        entries = ", ".join(f"ptr blockaddress({KERNEL_PLACEHOLDER}, %{b})" for b in self.split_blocks)
        return [f"@fj.blocks = internal constant [{n} x ptr] [{entries}]",
                '@llvm.compiler.used = appending global [1 x ptr] [ptr @fj.blocks], section "llvm.metadata"']

    def _definition(self, symbol: str) -> str:
        """A math function's IR: inlined when used rarely, called when used often.

        Inlining every call of a math function used many times (``sin`` in a 100-step
        loop) multiplies the kernel's size and its compile time by ~8 for a ~6% faster
        kernel; beyond INLINE_MATH_CALLS uses one out-of-line copy is shared.
        """
        text = self.definitions[symbol]
        if self.math_calls.get(symbol, 0) > INLINE_MATH_CALLS:
            text = text.replace(") alwaysinline {", ") noinline {", 1)
        return text

    # -- instructions ----------------------------------------------------
    def instruction(self, ins) -> str:
        op = ins.op
        handler = getattr(self, "op_" + op, None)
        if handler is not None:
            return handler(ins)
        if op in MATH_OPS:
            t = scalar_type(ins.vt)
            name = "pow" if op == "pow_float" else op
            return self.math(name, t, *(self.vals[a] for a in ins.args))
        raise NotImplementedError(f"LLVM backend: no code generation for operation '{op}'")

    def arg(self, ins, k=0) -> str:
        return self.vals[ins.args[k]]

    def argvt(self, ins, k=0) -> VarType:
        return self.spec.instrs[ins.args[k]].vt

    def masked_mem(self, kind: str, vt: VarType, ptr: str, value: str | None = None, mask: str = "%mask") -> str:
        mt = memory_type(vt)
        v = self.vty(mt)
        if kind == "load":
            fn = self.intrinsic(f"llvm.masked.load.v{self.W}{_suffix(mt)}.p0", v, ["ptr", "i32", self.vty("i1"), v])
            r = self.emit(f"call {v} {fn}(ptr {ptr}, i32 {vt.itemsize}, {self.vty('i1')} {mask}, {v} zeroinitializer)")
            if vt is Bool:
                r = self.cmp("icmp", "ne", "i8", r, "zeroinitializer")
            return r
        if vt is Bool:
            value = self.emit(f"zext {self.vty('i1')} {value} to {v}")
        fn = self.intrinsic(f"llvm.masked.store.v{self.W}{_suffix(mt)}.p0", "void", [v, "ptr", "i32", self.vty("i1")])
        self.body.append(f"  call void {fn}({v} {value}, ptr {ptr}, i32 {vt.itemsize}, {self.vty('i1')} {mask})")
        return ""

    def op_load(self, ins) -> str:
        k = ins.value
        kind, vt = self.spec.params[k]
        if kind == IN_SCALAR:
            return f"%s{k}.v"
        p = self.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, i64 %i")
        return self.masked_mem("load", vt, p)

    def op_store(self, ins) -> str:
        k = ins.value
        vt = ins.vt
        p = self.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, i64 %i")
        self.masked_mem("store", vt, p, self.arg(ins))
        return ""

    def op_literal(self, ins) -> str:
        return self.const(ins.vt, ins.value)

    def op_counter(self, ins) -> str:
        if ins.vt.bits == 64:
            return "%lane"
        return self.emit(f"trunc <{self.W} x i64> %lane to {self.vty(scalar_type(ins.vt))}")

    # arithmetic
    def _arith(self, ins, iop: str, fop: str) -> str:
        t = scalar_type(ins.vt)
        return self.binop(fop if ins.vt.is_float else iop, t, self.arg(ins, 0), self.arg(ins, 1))

    def op_add(self, ins):
        return self._arith(ins, "add", "fadd")

    def op_sub(self, ins):
        return self._arith(ins, "sub", "fsub")

    def op_mul(self, ins):
        return self._arith(ins, "mul", "fmul")

    def op_truediv(self, ins):
        return self.binop("fdiv", scalar_type(ins.vt), self.arg(ins, 0), self.arg(ins, 1))

    def _int_divisor(self, vt, b):
        """Divisor with 0 (and -1 for signed types, whose INT_MIN / -1 traps) replaced by 1."""
        t = scalar_type(vt)
        bad = self.cmp("icmp", "eq", t, b, "zeroinitializer")
        if vt.is_signed:
            m1 = self.cmp("icmp", "eq", t, b, self.const(vt, -1))
            bad = self.binop("or", "i1", bad, m1)
        return self.select(t, bad, self.const(vt, 1), b)

    def op_floordiv(self, ins):
        return self._divmod(ins, quotient=True)

    def op_mod(self, ins):
        return self._divmod(ins, quotient=False)

    def _divmod(self, ins, quotient: bool):
        """NumPy's integer ``//`` / ``%``: round toward -inf; x // 0 == x % 0 == 0."""
        vt, a, b = ins.vt, self.arg(ins, 0), self.arg(ins, 1)
        t = scalar_type(vt)
        if vt.is_float:
            return self._float_divmod(vt, a, b)[0 if quotient else 1]
        zero = self.cmp("icmp", "eq", t, b, "zeroinitializer")
        d = self._int_divisor(vt, b)
        if not vt.is_signed:
            r = self.binop("udiv" if quotient else "urem", t, a, d)
            return self.select(t, zero, "zeroinitializer", r)
        rem = self.binop("srem", t, a, d)
        # The truncated result is off by one step when the remainder is non-zero and its
        # sign differs from the divisor's.
        rnz = self.cmp("icmp", "ne", t, rem, "zeroinitializer")
        neg = self.cmp("icmp", "slt", t, self.binop("xor", t, rem, b), "zeroinitializer")
        adj = self.binop("and", "i1", rnz, neg)
        m1 = self.cmp("icmp", "eq", t, b, self.const(vt, -1))
        if quotient:
            q = self.binop("sdiv", t, a, d)
            q = self.select(t, adj, self.binop("sub", t, q, self.const(vt, 1)), q)
            r = self.select(t, m1, self.binop("sub", t, "zeroinitializer", a), q)   # x // -1 == -x (wraps)
        else:
            r = self.select(t, adj, self.binop("add", t, rem, b), rem)
            r = self.select(t, m1, "zeroinitializer", r)
        return self.select(t, zero, "zeroinitializer", r)

    def _float_divmod(self, vt, a, b):
        """NumPy's ``npy_divmod``: floor quotient and remainder with the divisor's sign."""
        t = scalar_type(vt)
        zero = "zeroinitializer"
        mod = self.binop("frem", t, a, b)
        div = self.binop("fdiv", t, self.binop("fsub", t, a, mod), b)
        bneg = self.cmp("fcmp", "olt", t, b, zero)
        mneg = self.cmp("fcmp", "olt", t, mod, zero)
        mnz = self.cmp("fcmp", "une", t, mod, zero)
        fix = self.binop("and", "i1", mnz, self.binop("xor", "i1", bneg, mneg))
        mod_fixed = self.select(t, fix, self.binop("fadd", t, mod, b), mod)
        div_fixed = self.select(t, fix, self.binop("fsub", t, div, self.const(vt, 1.0)), div)
        signed_zero_b = self.call_binary_intrinsic("copysign", t, zero, b)
        mod_out = self.select(t, mnz, mod_fixed, signed_zero_b)
        fl = self.call_unary_intrinsic("floor", t, div_fixed)
        frac = self.binop("fsub", t, div_fixed, fl)
        up = self.cmp("fcmp", "ogt", t, frac, self.const(vt, 0.5))
        fl = self.select(t, up, self.binop("fadd", t, fl, self.const(vt, 1.0)), fl)
        q = self.binop("fdiv", t, a, b)
        dnz = self.cmp("fcmp", "une", t, div_fixed, zero)
        fl = self.select(t, dnz, fl, self.call_binary_intrinsic("copysign", t, zero, q))
        bz = self.cmp("fcmp", "oeq", t, b, zero)
        return self.select(t, bz, q, fl), self.select(t, bz, mod, mod_out)

    def op_pow_int(self, ins):
        vt, a, b = ins.vt, self.arg(ins, 0), self.arg(ins, 1)
        t = scalar_type(vt)
        result, base = self.const(vt, 1), a
        for k in range(vt.bits):
            bit = self.binop("and", t, self.binop("lshr", t, b, self.const(vt, k)), self.const(vt, 1))
            on = self.cmp("icmp", "ne", t, bit, "zeroinitializer")
            result = self.select(t, on, self.binop("mul", t, result, base), result)
            if k + 1 < vt.bits:
                base = self.binop("mul", t, base, base)
        if vt.is_signed:
            neg = self.cmp("icmp", "slt", t, b, "zeroinitializer")
            result = self.select(t, neg, "zeroinitializer", result)
        return result

    def op_neg(self, ins):
        t = scalar_type(ins.vt)
        if ins.vt.is_float:
            return self.emit(f"fneg {self.vty(t)} {self.arg(ins)}")
        return self.binop("sub", t, "zeroinitializer", self.arg(ins))

    def op_not(self, ins):
        t = scalar_type(ins.vt)
        return self.binop("xor", t, self.arg(ins), self.const(ins.vt, True if ins.vt is Bool else -1))

    def op_abs(self, ins):
        vt, a = ins.vt, self.arg(ins)
        t = scalar_type(vt)
        if vt.is_float:
            return self.call_unary_intrinsic("fabs", t, a)
        if not vt.is_signed:
            return a
        n = self.binop("sub", t, "zeroinitializer", a)
        c = self.cmp("icmp", "slt", t, a, "zeroinitializer")
        return self.select(t, c, n, a)

    def op_sqrt(self, ins):
        return self.call_unary_intrinsic("sqrt", scalar_type(ins.vt), self.arg(ins))

    def op_rsqrt(self, ins):
        t = scalar_type(ins.vt)
        s = self.call_unary_intrinsic("sqrt", t, self.arg(ins))
        return self.binop("fdiv", t, self.const(ins.vt, 1.0), s)

    def op_rcp(self, ins):
        return self.binop("fdiv", scalar_type(ins.vt), self.const(ins.vt, 1.0), self.arg(ins))

    def op_floor(self, ins):
        return self.call_unary_intrinsic("floor", scalar_type(ins.vt), self.arg(ins))

    def op_ceil(self, ins):
        return self.call_unary_intrinsic("ceil", scalar_type(ins.vt), self.arg(ins))

    def op_trunc(self, ins):
        return self.call_unary_intrinsic("trunc", scalar_type(ins.vt), self.arg(ins))

    def op_round(self, ins):
        return self.call_unary_intrinsic("roundeven", scalar_type(ins.vt), self.arg(ins))

    def op_isnan(self, ins):
        t = scalar_type(self.argvt(ins))
        return self.cmp("fcmp", "uno", t, self.arg(ins), self.arg(ins))

    def _fabs_vs_inf(self, ins, pred):
        vt = self.argvt(ins)
        t = scalar_type(vt)
        f = self.call_unary_intrinsic("fabs", t, self.arg(ins))
        return self.cmp("fcmp", pred, t, f, self.const(vt, float("inf")))

    def op_isinf(self, ins):
        return self._fabs_vs_inf(ins, "oeq")

    def op_isfinite(self, ins):
        return self._fabs_vs_inf(ins, "one")

    def op_min(self, ins):
        return self._minmax(ins, "minimum", "slt", "ult")

    def op_max(self, ins):
        return self._minmax(ins, "maximum", "sgt", "ugt")

    def _minmax(self, ins, fname, spred, upred):
        vt, a, b = ins.vt, self.arg(ins, 0), self.arg(ins, 1)
        t = scalar_type(vt)
        if vt.is_float:
            return self.call_binary_intrinsic(fname, t, a, b)
        c = self.cmp("icmp", spred if vt.is_signed else upred, t, a, b)
        return self.select(t, c, a, b)

    def op_copysign(self, ins):
        return self.call_binary_intrinsic("copysign", scalar_type(ins.vt), self.arg(ins, 0), self.arg(ins, 1))

    def _bitwise(self, ins, iop):
        vt, a, b = ins.vt, self.arg(ins, 0), self.arg(ins, 1)
        bvt = self.argvt(ins, 1)
        t = scalar_type(vt)
        if vt is not Bool and bvt is Bool:
            # Masking a value with a Bool (Dr.Jit): x & m keeps x where m, else 0; x | m sets all bits where m.
            if iop == "and":
                return self.select(t, b, a, "zeroinitializer")
            if iop == "or":
                ones = self.const(vt, -1) if not vt.is_float else self.splat(t, float_constant(float("nan"), vt))
                if vt.is_float:
                    it = f"i{vt.bits}"
                    ai = self.emit(f"bitcast {self.vty(t)} {a} to {self.vty(it)}")
                    r = self.select(it, b, self.splat(it, "-1"), ai)
                    return self.emit(f"bitcast {self.vty(it)} {r} to {self.vty(t)}")
                return self.select(t, b, ones, a)
        if vt.is_float:
            it = f"i{vt.bits}"
            ai = self.emit(f"bitcast {self.vty(t)} {a} to {self.vty(it)}")
            bi = self.emit(f"bitcast {self.vty(t)} {b} to {self.vty(it)}")
            r = self.binop(iop, it, ai, bi)
            return self.emit(f"bitcast {self.vty(it)} {r} to {self.vty(t)}")
        return self.binop(iop, t, a, b)

    def op_and(self, ins):
        return self._bitwise(ins, "and")

    def op_or(self, ins):
        return self._bitwise(ins, "or")

    def op_xor(self, ins):
        return self._bitwise(ins, "xor")

    def _shift(self, ins, left: bool):
        vt, a, b = ins.vt, self.arg(ins, 0), self.arg(ins, 1)
        t = scalar_type(vt)
        big = self.cmp("icmp", "uge", t, b, self.const(vt, vt.bits))   # negative counts are huge unsigned
        safe = self.select(t, big, "zeroinitializer", b)
        if left:
            r = self.binop("shl", t, a, safe)
            return self.select(t, big, "zeroinitializer", r)
        if vt.is_signed:
            r = self.binop("ashr", t, a, safe)
            fill = self.binop("ashr", t, a, self.const(vt, vt.bits - 1))
            return self.select(t, big, fill, r)
        r = self.binop("lshr", t, a, safe)
        return self.select(t, big, "zeroinitializer", r)

    def op_shl(self, ins):
        return self._shift(ins, True)

    def op_shr(self, ins):
        return self._shift(ins, False)

    def _compare(self, ins, fpred, spred, upred):
        vt = self.argvt(ins, 0)
        t = scalar_type(vt)
        a, b = self.arg(ins, 0), self.arg(ins, 1)
        if vt.is_float:
            return self.cmp("fcmp", fpred, t, a, b)
        return self.cmp("icmp", spred if vt.is_signed else upred, t, a, b)

    def op_eq(self, ins):
        return self._compare(ins, "oeq", "eq", "eq")

    def op_ne(self, ins):
        return self._compare(ins, "une", "ne", "ne")

    def op_lt(self, ins):
        return self._compare(ins, "olt", "slt", "ult")

    def op_le(self, ins):
        return self._compare(ins, "ole", "sle", "ule")

    def op_gt(self, ins):
        return self._compare(ins, "ogt", "sgt", "ugt")

    def op_ge(self, ins):
        return self._compare(ins, "oge", "sge", "uge")

    def op_fma(self, ins):
        vt = ins.vt
        t = scalar_type(vt)
        a, b, c = (self.arg(ins, k) for k in range(3))
        if vt.is_float:
            vt_ = self.vty(t)
            fn = self.intrinsic(f"llvm.fma.v{self.W}{_suffix(t)}", vt_, [vt_, vt_, vt_])
            return self.emit(f"call {vt_} {fn}({vt_} {a}, {vt_} {b}, {vt_} {c})")
        return self.binop("add", t, self.binop("mul", t, a, b), c)

    def op_select(self, ins):
        t = scalar_type(ins.vt)
        return self.select(t, self.arg(ins, 0), self.arg(ins, 1), self.arg(ins, 2))

    def op_cast(self, ins):
        src, dst = self.argvt(ins), ins.vt
        a = self.arg(ins)
        st, dt = scalar_type(src), scalar_type(dst)
        vs, vd = self.vty(st), self.vty(dt)
        if dst is Bool:
            if src.is_float:
                return self.cmp("fcmp", "une", st, a, "zeroinitializer")
            return self.cmp("icmp", "ne", st, a, "zeroinitializer")
        if src is Bool:
            return self.emit(f"{'uitofp' if dst.is_float else 'zext'} {vs} {a} to {vd}")
        if src.is_float and dst.is_float:
            if src.bits == dst.bits:
                return a
            return self.emit(f"{'fpext' if dst.bits > src.bits else 'fptrunc'} {vs} {a} to {vd}")
        if src.is_float:
            r = self.emit(f"{'fptosi' if dst.is_signed else 'fptoui'} {vs} {a} to {vd}")
            # Out-of-range conversions are poison in LLVM; freeze pins them to what the CPU produces.
            return self.emit(f"freeze {vd} {r}")
        if dst.is_float:
            return self.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {vs} {a} to {vd}")
        if src.bits == dst.bits:
            return a
        if dst.bits < src.bits:
            return self.emit(f"trunc {vs} {a} to {vd}")
        return self.emit(f"{'sext' if src.is_signed else 'zext'} {vs} {a} to {vd}")

    def op_bitcast(self, ins):
        src = self.argvt(ins)
        return self.emit(f"bitcast {self.vty(scalar_type(src))} {self.arg(ins)} to {self.vty(scalar_type(ins.vt))}")

    # memory
    def _addresses(self, k: int, vt: VarType, index_instr: int, active: str | None):
        ivt = self.spec.instrs[index_instr].vt
        idx = self.vals[index_instr]
        if ivt.bits == 32:
            # Negative Int32 indices are huge when compared unsigned: out of bounds.
            inb = self.cmp("icmp", "ult", "i32", idx, f"%n{k}.w")
        else:
            inb = self.cmp("icmp", "ult", "i64", idx, f"%n{k}.v")
        m = self.binop("and", "i1", "%mask", inb)
        if active is not None:
            m = self.binop("and", "i1", m, active)
        ptrs = self.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, <{self.W} x {scalar_type(ivt)}> {idx}")
        return ptrs, m

    def _lane_offset(self, index_instr: int):
        """``c`` if the index is ``lane + c`` (the launch's lane counter plus a literal), else None.

        Such a gather reads consecutive elements: a masked vector load replaces the gather.
        """
        ins = self.spec.instrs[index_instr]
        if ins.op == "counter":
            return 0
        if ins.op in ("add", "sub") and ins.vt.is_integral:
            a, b = (self.spec.instrs[j] for j in ins.args)
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

    def _all_active(self, lanes_ok: str, m: str) -> str:
        """i1: ``lanes_ok`` holds on every active lane, and lane 0 is active."""
        off = self.binop("xor", "i1", m, self.splat("i1", "true"))
        ok = self.binop("or", "i1", lanes_ok, off)
        fn = self.intrinsic(f"llvm.vector.reduce.and.v{self.W}i1", "i1", [self.vty("i1")])
        every = self.emit(f"call i1 {fn}({self.vty('i1')} {ok})")
        lane0 = self.emit(f"extractelement {self.vty('i1')} {m}, i64 0")
        return self.emit(f"and i1 {every}, {lane0}")

    def _same_address(self, ptrs: str, m: str):
        """(first address, i1: every active lane uses it)."""
        W = self.W
        p0 = self.emit(f"extractelement <{W} x ptr> {ptrs}, i64 0")
        s0 = self.emit(f"insertelement <{W} x ptr> poison, ptr {p0}, i64 0")
        sp = self.emit(f"shufflevector <{W} x ptr> {s0}, <{W} x ptr> poison, <{W} x i32> zeroinitializer")
        return p0, self._all_active(self.emit(f"icmp eq <{W} x ptr> {ptrs}, {sp}"), m)

    def _consecutive_addresses(self, ptrs: str, m: str, itemsize: int):
        """(first address, i1: every active lane k uses first address + k elements)."""
        W = self.W
        p0 = self.emit(f"extractelement <{W} x ptr> {ptrs}, i64 0")
        ints = self.emit(f"ptrtoint <{W} x ptr> {ptrs} to <{W} x i64>")
        b0 = self.emit(f"ptrtoint ptr {p0} to i64")
        bs = self.emit(f"insertelement <{W} x i64> poison, i64 {b0}, i64 0")
        bv = self.emit(f"shufflevector <{W} x i64> {bs}, <{W} x i64> poison, <{W} x i32> zeroinitializer")
        steps = ", ".join(f"i64 {k * itemsize}" for k in range(W))
        want = self.emit(f"add <{W} x i64> {bv}, <{steps}>")
        return p0, self._all_active(self.emit(f"icmp eq <{W} x i64> {ints}, {want}"), m)

    def op_gather(self, ins):
        k = ins.value
        vt = ins.vt
        ptrs, m = self._addresses(k, vt, ins.args[0], self.arg(ins, 1))
        offset = self._lane_offset(ins.args[0])
        if offset is not None:
            # In-bounds lanes have index == i + lane + offset exactly; the mask covers the others.
            start = self.emit(f"add i64 %i, {offset}")
            p = self.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, i64 {start}")
            return self.masked_mem("load", vt, p, mask=m)
        # Decided per chunk at run time: every lane reads one element (a parameter per object,
        # read by the object's consecutive lanes) -> one load; consecutive elements -> a vector
        # load; anything else -> a hardware gather.
        mt = memory_type(vt)
        v = self.vty(mt)
        pv = self.vty("ptr")
        tag = self.tmp()[1:]
        p0, uniform = self._same_address(ptrs, m)
        self.body.append(f"  br i1 {uniform}, label %{tag}.one, label %{tag}.test")
        self.body.append(f"{tag}.one:")
        x = self.emit(f"load {mt}, ptr {p0}, align {vt.itemsize}")
        xs = self.emit(f"insertelement {v} poison, {mt} {x}, i64 0")
        xv = self.emit(f"shufflevector {v} {xs}, {v} poison, <{self.W} x i32> zeroinitializer")
        r_one = self.select(mt, m, xv, "zeroinitializer")
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.test:")
        _, consecutive = self._consecutive_addresses(ptrs, m, vt.itemsize)
        self.body.append(f"  br i1 {consecutive}, label %{tag}.vec, label %{tag}.any")
        self.body.append(f"{tag}.vec:")
        fn = self.intrinsic(f"llvm.masked.load.v{self.W}{_suffix(mt)}.p0", v, ["ptr", "i32", self.vty("i1"), v])
        r_vec = self.emit(f"call {v} {fn}(ptr {p0}, i32 {vt.itemsize}, {self.vty('i1')} {m}, {v} zeroinitializer)")
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.any:")
        fn = self.intrinsic(f"llvm.masked.gather.v{self.W}{_suffix(mt)}.v{self.W}p0", v, [pv, "i32", self.vty("i1"), v])
        r_any = self.emit(f"call {v} {fn}({pv} {ptrs}, i32 {vt.itemsize}, {self.vty('i1')} {m}, {v} zeroinitializer)")
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.end:")
        r = self.emit(f"phi {v} [ {r_one}, %{tag}.one ], [ {r_vec}, %{tag}.vec ], [ {r_any}, %{tag}.any ]")
        if vt is Bool:
            r = self.cmp("icmp", "ne", "i8", r, "zeroinitializer")
        return r

    def op_scatter(self, ins):
        k, reduce_op = ins.value
        vt = ins.vt
        value = self.arg(ins, 0)
        ptrs, m = self._addresses(k, vt, ins.args[1], self.arg(ins, 2))
        mt = memory_type(vt)
        if vt is Bool:
            value = self.emit(f"zext {self.vty('i1')} {value} to {self.vty('i8')}")
        if reduce_op is None:
            v = self.vty(mt)
            pv = self.vty("ptr")
            fn = self.intrinsic(f"llvm.masked.scatter.v{self.W}{_suffix(mt)}.v{self.W}p0", "void", [v, pv, "i32", self.vty("i1")])
            self.body.append(f"  call void {fn}({v} {value}, {pv} {ptrs}, i32 {vt.itemsize}, {self.vty('i1')} {m})")
            return ""
        if reduce_op == "add":
            self._uniform_scatter_add(vt, value, ptrs, m)
        else:
            self._atomic_scatter(vt, reduce_op, value, ptrs, m)
        return ""

    def _uniform_scatter_add(self, vt, value, ptrs, m):
        """scatter_add whose active lanes all hit one address: one atomic add of their sum.

        Common in gradients (the adjoint of a gather by a slowly varying index, e.g. a
        parameter per object read by many consecutive lanes); otherwise per-lane updates.
        """
        t = scalar_type(vt)
        W = self.W
        tag = self.tmp()[1:]
        p0, uniform = self._same_address(ptrs, m)
        self.body.append(f"  br i1 {uniform}, label %{tag}.uni, label %{tag}.lanes")
        self.body.append(f"{tag}.uni:")
        vz = self.select(t, m, value, "zeroinitializer")
        if vt.is_float:
            fn = self.intrinsic(f"llvm.vector.reduce.fadd.v{W}{_suffix(t)}", t, [t, self.vty(t)])
            total = self.emit(f"call reassoc {t} {fn}({t} {float_constant(-0.0, vt)}, {self.vty(t)} {vz})")
            self.body.append(f"  atomicrmw fadd ptr {p0}, {t} {total} monotonic, align {vt.itemsize}")
        else:
            fn = self.intrinsic(f"llvm.vector.reduce.add.v{W}{t}", t, [self.vty(t)])
            total = self.emit(f"call {t} {fn}({self.vty(t)} {vz})")
            self.body.append(f"  atomicrmw add ptr {p0}, {t} {total} monotonic, align {vt.itemsize}")
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.lanes:")
        self._atomic_scatter(vt, "add", value, ptrs, m)
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.end:")

    def _atomic_scatter(self, vt, reduce_op, value, ptrs, m):
        """Per-lane read-modify-write, in lane order (so lanes hitting one address combine).

        Atomic instructions (a compare-and-swap loop for floats on x86, ~5x slower) only
        when other threads run the same launch; a launch on one thread uses plain ones.
        """
        tag = self.tmp()[1:]
        self.body.append(f"  br i1 %shared.b, label %{tag}.atomic, label %{tag}.plain")
        self.body.append(f"{tag}.atomic:")
        self._atomic_lanes(vt, reduce_op, value, ptrs, m)
        self.body.append(f"  br label %{tag}.done")
        self.body.append(f"{tag}.plain:")
        self._contiguous_or_lanes(vt, reduce_op, value, ptrs, m)
        self.body.append(f"  br label %{tag}.done")
        self.body.append(f"{tag}.done:")

    def _contiguous_or_lanes(self, vt, reduce_op, value, ptrs, m):
        """Without other threads: consecutive addresses (a run of pixels, a contiguous block)
        are one vector read-modify-write; anything else goes lane by lane."""
        t = scalar_type(vt)
        tag = self.tmp()[1:]
        p0, contiguous = self._consecutive_addresses(ptrs, m, vt.itemsize)
        self.body.append(f"  br i1 {contiguous}, label %{tag}.vec, label %{tag}.lanes")
        self.body.append(f"{tag}.vec:")
        old = self.masked_mem("load", vt, p0, mask=m)
        if reduce_op == "add":
            new = self.binop("fadd" if vt.is_float else "add", t, old, value)
        elif reduce_op == "mul":
            new = self.binop("fmul" if vt.is_float else "mul", t, old, value)
        elif vt.is_float:   # minnum/maxnum ignore NaN on either side, as Dr.Jit's scatter_reduce does
            new = self.call_binary_intrinsic("minnum" if reduce_op == "min" else "maxnum", t, old, value)
        else:
            pred = {"min": "slt" if vt.is_signed else "ult", "max": "sgt" if vt.is_signed else "ugt"}[reduce_op]
            new = self.select(t, self.cmp("icmp", pred, t, old, value), old, value)
        self.masked_mem("store", vt, p0, new, mask=m)
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.lanes:")
        self._plain_lanes(vt, reduce_op, value, ptrs, m)
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.end:")

    def _plain_lanes(self, vt, reduce_op, value, ptrs, m):
        t = scalar_type(vt)
        for lane in range(self.W):
            tag = self.tmp()[1:]
            mk = self.emit(f"extractelement {self.vty('i1')} {m}, i64 {lane}")
            self.body.append(f"  br i1 {mk}, label %{tag}.do, label %{tag}.next")
            self.body.append(f"{tag}.do:")
            p = self.emit(f"extractelement {self.vty('ptr')} {ptrs}, i64 {lane}")
            v = self.emit(f"extractelement {self.vty(t)} {value}, i64 {lane}")
            old = self.emit(f"load {t}, ptr {p}, align {vt.itemsize}")
            if reduce_op == "add":
                new = self.emit(f"{'fadd' if vt.is_float else 'add'} {t} {old}, {v}")
            else:
                new = self._scalar_reduce(vt, reduce_op, old, v)
            self.body.append(f"  store {t} {new}, ptr {p}, align {vt.itemsize}")
            self.body.append(f"  br label %{tag}.next")
            self.body.append(f"{tag}.next:")

    def _atomic_lanes(self, vt, reduce_op, value, ptrs, m):
        t = scalar_type(vt)
        it = f"i{vt.bits}"
        for lane in range(self.W):
            tag = self.tmp()[1:]
            mk = self.emit(f"extractelement {self.vty('i1')} {m}, i64 {lane}")
            self.body.append(f"  br i1 {mk}, label %{tag}.do, label %{tag}.next")
            self.body.append(f"{tag}.do:")
            p = self.emit(f"extractelement {self.vty('ptr')} {ptrs}, i64 {lane}")
            v = self.emit(f"extractelement {self.vty(t)} {value}, i64 {lane}")
            if reduce_op == "add":
                self.body.append(f"  atomicrmw {'fadd' if vt.is_float else 'add'} ptr {p}, {t} {v} monotonic, align {vt.itemsize}")
                self.body.append(f"  br label %{tag}.next")
            else:
                # Compare-and-swap loop for operations without a native atomic.
                o0 = self.emit(f"load atomic {it}, ptr {p} monotonic, align {vt.itemsize}")
                self.body.append(f"  br label %{tag}.loop")
                self.body.append(f"{tag}.loop:")
                old = self.tmp()
                seen = self.tmp()
                self.body.append(f"  {old} = phi {it} [ {o0}, %{tag}.do ], [ {seen}, %{tag}.loop ]")
                oldv = old if not vt.is_float else self.emit(f"bitcast {it} {old} to {t}")
                new = self._scalar_reduce(vt, reduce_op, oldv, v)
                newi = new if not vt.is_float else self.emit(f"bitcast {t} {new} to {it}")
                res = self.emit(f"cmpxchg ptr {p}, {it} {old}, {it} {newi} monotonic monotonic, align {vt.itemsize}")
                self.body.append(f"  {seen} = extractvalue {{ {it}, i1 }} {res}, 0")
                ok = self.emit(f"extractvalue {{ {it}, i1 }} {res}, 1")
                self.body.append(f"  br i1 {ok}, label %{tag}.next, label %{tag}.loop")
            self.body.append(f"{tag}.next:")

    def _scalar_reduce(self, vt, reduce_op, a, b) -> str:
        t = scalar_type(vt)
        if reduce_op == "mul":
            return self.emit(f"{'fmul' if vt.is_float else 'mul'} {t} {a}, {b}")
        if vt.is_float:     # NaN-ignoring, as above
            name = "minnum" if reduce_op == "min" else "maxnum"
            fn = self.intrinsic(f"llvm.{name}.{_suffix(t)}", t, [t, t])
            return self.emit(f"call {t} {fn}({t} {a}, {t} {b})")
        pred = {"min": "slt" if vt.is_signed else "ult", "max": "sgt" if vt.is_signed else "ugt"}[reduce_op]
        c = self.emit(f"icmp {pred} {t} {a}, {b}")
        return self.emit(f"select i1 {c}, {t} {a}, {t} {b}")


def generate_ir(spec: KernelSpec, width: int) -> str:
    """Return the LLVM IR of ``spec`` (kernel name: ``KERNEL_PLACEHOLDER``)."""
    return _Emitter(spec, width).generate()
