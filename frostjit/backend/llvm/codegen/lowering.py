"""Per-operation lowering: one function per op of the table, instruction -> LLVM IR.

Each lowering takes the kernel emitter (:class:`~.frame.KernelEmitter`: operand values,
helpers that emit instructions) and one :class:`~frostjit.backend.kernel.Instr`, emits
the IR computing it for ``W`` lanes and returns the result's IR value.  The semantics
are the op table's NumPy references (:mod:`frostjit.trace.numpy_semantics`), bit for
bit: floor division and modulo round toward -inf, division by zero gives 0 for
integers, shifts by the bit width or more give 0 (or -1 for negative signed right
shifts), ``!=`` is true for NaN.  Transcendental functions call the vectorized math
library (``vmath``).  Gathers and scatters are in :mod:`.memory`.
"""
from __future__ import annotations

from ...kernel import IN_SCALAR
from ....trace.dtypes import Bool
from ....trace.optable import TRANSCENDENTAL
from ..vmath import SUPPORTED
from . import half
from .ir_types import float_constant, scalar_type, suffix
from .lowering_table import lowering_table

#: op name -> lowering, merged into the frame's table; ``@_lowers(name)`` registers one.
LOWERINGS, _lowers = lowering_table()


@_lowers("load")

def op_load(e, ins) -> str:
    k = ins.value
    kind, vt = e.spec.params[k]
    if kind == IN_SCALAR:
        return f"%s{k}.v"
    return e.frame_load(k, vt)


@_lowers("store")

def op_store(e, ins) -> str:
    k = ins.value
    e.frame_store(k, ins.vt, e.arg(ins))
    return ""


@_lowers("literal")

def op_literal(e, ins) -> str:
    return e.const(ins.vt, ins.value)


@_lowers("counter")

def op_counter(e, ins) -> str:
    e.uses_lane = True
    if ins.vt.bits == 64:
        return "%lane"
    return e.emit(f"trunc <{e.W} x i64> %lane to {e.vty(scalar_type(ins.vt))}")


# arithmetic

def _arith(e, ins, iop: str, fop: str) -> str:
    t = scalar_type(ins.vt)
    return e.binop(fop if ins.vt.is_float else iop, t, e.arg(ins, 0), e.arg(ins, 1))


@_lowers("add")

def op_add(e, ins):
    return _arith(e, ins, "add", "fadd")


@_lowers("sub")

def op_sub(e, ins):
    return _arith(e, ins, "sub", "fsub")


@_lowers("mul")

def op_mul(e, ins):
    return _arith(e, ins, "mul", "fmul")


@_lowers("truediv")

def op_truediv(e, ins):
    return e.binop("fdiv", scalar_type(ins.vt), e.arg(ins, 0), e.arg(ins, 1))


def _int_divisor(e, vt, b):
    """Divisor with 0 (and -1 for signed types, whose INT_MIN / -1 traps) replaced by 1."""
    t = scalar_type(vt)
    bad = e.cmp("icmp", "eq", t, b, "zeroinitializer")
    if vt.is_signed:
        m1 = e.cmp("icmp", "eq", t, b, e.const(vt, -1))
        bad = e.binop("or", "i1", bad, m1)
    return e.select(t, bad, e.const(vt, 1), b)


@_lowers("floordiv")

def op_floordiv(e, ins):
    return _divmod(e, ins, quotient=True)


@_lowers("mod")

def op_mod(e, ins):
    return _divmod(e, ins, quotient=False)


def _divmod(e, ins, quotient: bool):
    """Integer ``//`` / ``%`` as C and Dr.Jit (``sdiv``/``srem``: toward zero, the remainder with
    the dividend's sign); x // 0 == x % 0 == 0 and x // -1 == -x (no trap)."""
    vt, a, b = ins.vt, e.arg(ins, 0), e.arg(ins, 1)
    t = scalar_type(vt)
    if vt.is_float:
        return _float_divmod(e, vt, a, b)[0 if quotient else 1]
    zero = e.cmp("icmp", "eq", t, b, "zeroinitializer")
    d = _int_divisor(e, vt, b)
    if not vt.is_signed:
        r = e.binop("udiv" if quotient else "urem", t, a, d)
        return e.select(t, zero, "zeroinitializer", r)
    m1 = e.cmp("icmp", "eq", t, b, e.const(vt, -1))
    if quotient:
        q = e.binop("sdiv", t, a, d)
        r = e.select(t, m1, e.binop("sub", t, "zeroinitializer", a), q)   # x // -1 == -x (wraps)
    else:
        r = e.select(t, m1, "zeroinitializer", e.binop("srem", t, a, d))
    return e.select(t, zero, "zeroinitializer", r)


def _float_divmod(e, vt, a, b):
    """NumPy's ``npy_divmod``: floor quotient and remainder with the divisor's sign."""
    t = scalar_type(vt)
    zero = "zeroinitializer"
    mod = e.binop("frem", t, a, b)
    div = e.binop("fdiv", t, e.binop("fsub", t, a, mod), b)
    bneg = e.cmp("fcmp", "olt", t, b, zero)
    mneg = e.cmp("fcmp", "olt", t, mod, zero)
    mnz = e.cmp("fcmp", "une", t, mod, zero)
    fix = e.binop("and", "i1", mnz, e.binop("xor", "i1", bneg, mneg))
    mod_fixed = e.select(t, fix, e.binop("fadd", t, mod, b), mod)
    div_fixed = e.select(t, fix, e.binop("fsub", t, div, e.const(vt, 1.0)), div)
    signed_zero_b = e.call_binary_intrinsic("copysign", t, zero, b)
    mod_out = e.select(t, mnz, mod_fixed, signed_zero_b)
    fl = e.call_unary_intrinsic("floor", t, div_fixed)
    frac = e.binop("fsub", t, div_fixed, fl)
    up = e.cmp("fcmp", "ogt", t, frac, e.const(vt, 0.5))
    fl = e.select(t, up, e.binop("fadd", t, fl, e.const(vt, 1.0)), fl)
    q = e.binop("fdiv", t, a, b)
    dnz = e.cmp("fcmp", "une", t, div_fixed, zero)
    fl = e.select(t, dnz, fl, e.call_binary_intrinsic("copysign", t, zero, q))
    bz = e.cmp("fcmp", "oeq", t, b, zero)
    return e.select(t, bz, q, fl), e.select(t, bz, mod, mod_out)


@_lowers("pow_int")

def op_pow_int(e, ins):
    vt, a, b = ins.vt, e.arg(ins, 0), e.arg(ins, 1)
    t = scalar_type(vt)
    result, base = e.const(vt, 1), a
    for k in range(vt.bits):
        bit = e.binop("and", t, e.binop("lshr", t, b, e.const(vt, k)), e.const(vt, 1))
        on = e.cmp("icmp", "ne", t, bit, "zeroinitializer")
        result = e.select(t, on, e.binop("mul", t, result, base), result)
        if k + 1 < vt.bits:
            base = e.binop("mul", t, base, base)
    if vt.is_signed:
        # b < 0: 1 / a ** -b truncated toward zero.  The squarings above already give 1, +-1
        # and 0 for bases 1, -1 and 0; bases of magnitude >= 2 give 0 (a + 1 >u 2).
        neg = e.cmp("icmp", "slt", t, b, "zeroinitializer")
        big = e.cmp("icmp", "ugt", t, e.binop("add", t, a, e.const(vt, 1)), e.const(vt, 2))
        result = e.select(t, e.binop("and", "i1", neg, big), "zeroinitializer", result)
    return result


@_lowers("neg")

def op_neg(e, ins):
    t = scalar_type(ins.vt)
    if ins.vt.is_float:
        return e.emit(f"fneg {e.vty(t)} {e.arg(ins)}")
    return e.binop("sub", t, "zeroinitializer", e.arg(ins))


@_lowers("not")

def op_not(e, ins):
    t = scalar_type(ins.vt)
    return e.binop("xor", t, e.arg(ins), e.const(ins.vt, True if ins.vt is Bool else -1))


@_lowers("abs")

def op_abs(e, ins):
    vt, a = ins.vt, e.arg(ins)
    t = scalar_type(vt)
    if vt.is_float:
        return e.call_unary_intrinsic("fabs", t, a)
    if not vt.is_signed:
        return a
    n = e.binop("sub", t, "zeroinitializer", a)
    c = e.cmp("icmp", "slt", t, a, "zeroinitializer")
    return e.select(t, c, n, a)


@_lowers("sqrt")

def op_sqrt(e, ins):
    return e.call_unary_intrinsic("sqrt", scalar_type(ins.vt), e.arg(ins))


@_lowers("rsqrt")

def op_rsqrt(e, ins):
    t = scalar_type(ins.vt)
    s = e.call_unary_intrinsic("sqrt", t, e.arg(ins))
    return e.binop("fdiv", t, e.const(ins.vt, 1.0), s)


@_lowers("rcp")

def op_rcp(e, ins):
    return e.binop("fdiv", scalar_type(ins.vt), e.const(ins.vt, 1.0), e.arg(ins))


@_lowers("floor")

def op_floor(e, ins):
    return e.call_unary_intrinsic("floor", scalar_type(ins.vt), e.arg(ins))


@_lowers("ceil")

def op_ceil(e, ins):
    return e.call_unary_intrinsic("ceil", scalar_type(ins.vt), e.arg(ins))


@_lowers("trunc")

def op_trunc(e, ins):
    return e.call_unary_intrinsic("trunc", scalar_type(ins.vt), e.arg(ins))


@_lowers("round")

def op_round(e, ins):
    return e.call_unary_intrinsic("roundeven", scalar_type(ins.vt), e.arg(ins))


@_lowers("isnan")

def op_isnan(e, ins):
    t = scalar_type(e.argvt(ins))
    return e.cmp("fcmp", "uno", t, e.arg(ins), e.arg(ins))


def _fabs_vs_inf(e, ins, pred):
    vt = e.argvt(ins)
    t = scalar_type(vt)
    f = e.call_unary_intrinsic("fabs", t, e.arg(ins))
    return e.cmp("fcmp", pred, t, f, e.const(vt, float("inf")))


@_lowers("isinf")

def op_isinf(e, ins):
    return _fabs_vs_inf(e, ins, "oeq")


@_lowers("isfinite")

def op_isfinite(e, ins):
    return _fabs_vs_inf(e, ins, "one")


@_lowers("min")

def op_min(e, ins):
    return _minmax(e, ins, "minimum", "slt", "ult")


@_lowers("max")

def op_max(e, ins):
    return _minmax(e, ins, "maximum", "sgt", "ugt")


def _minmax(e, ins, fname, spred, upred):
    vt, a, b = ins.vt, e.arg(ins, 0), e.arg(ins, 1)
    t = scalar_type(vt)
    if vt.is_float:
        return e.call_binary_intrinsic(fname, t, a, b)
    c = e.cmp("icmp", spred if vt.is_signed else upred, t, a, b)
    return e.select(t, c, a, b)


def _nan_ignoring(e, ins, pred):
    """``fmin``/``fmax``: b where ``b pred a`` (ordered: false for NaN) or a is NaN, else a."""
    vt, a, b = ins.vt, e.arg(ins, 0), e.arg(ins, 1)
    t = scalar_type(vt)
    if not vt.is_float:
        return _minmax(e, ins, "", "slt" if pred == "olt" else "sgt", "ult" if pred == "olt" else "ugt")
    take_b = e.binop("or", "i1", e.cmp("fcmp", pred, t, b, a), e.cmp("fcmp", "uno", t, a, a))
    return e.select(t, take_b, b, a)


@_lowers("fmin")

def op_fmin(e, ins):
    return _nan_ignoring(e, ins, "olt")


@_lowers("fmax")

def op_fmax(e, ins):
    return _nan_ignoring(e, ins, "ogt")


@_lowers("copysign")

def op_copysign(e, ins):
    return e.call_binary_intrinsic("copysign", scalar_type(ins.vt), e.arg(ins, 0), e.arg(ins, 1))


def _bitwise(e, ins, iop):
    vt, a, b = ins.vt, e.arg(ins, 0), e.arg(ins, 1)
    bvt = e.argvt(ins, 1)
    t = scalar_type(vt)
    if vt is not Bool and bvt is Bool:
        # Masking a value with a Bool (Dr.Jit): x & m keeps x where m, else 0; x | m sets all bits where m.
        if iop == "and":
            return e.select(t, b, a, "zeroinitializer")
        if iop == "or":
            ones = e.const(vt, -1) if not vt.is_float else e.splat(t, float_constant(float("nan"), vt))
            if vt.is_float:
                it = f"i{vt.bits}"
                ai = e.emit(f"bitcast {e.vty(t)} {a} to {e.vty(it)}")
                r = e.select(it, b, e.splat(it, "-1"), ai)
                return e.emit(f"bitcast {e.vty(it)} {r} to {e.vty(t)}")
            return e.select(t, b, ones, a)
    if vt.is_float:
        it = f"i{vt.bits}"
        ai = e.emit(f"bitcast {e.vty(t)} {a} to {e.vty(it)}")
        bi = e.emit(f"bitcast {e.vty(t)} {b} to {e.vty(it)}")
        r = e.binop(iop, it, ai, bi)
        return e.emit(f"bitcast {e.vty(it)} {r} to {e.vty(t)}")
    return e.binop(iop, t, a, b)


@_lowers("and")

def op_and(e, ins):
    return _bitwise(e, ins, "and")


@_lowers("or")

def op_or(e, ins):
    return _bitwise(e, ins, "or")


@_lowers("xor")

def op_xor(e, ins):
    return _bitwise(e, ins, "xor")


def _shift(e, ins, left: bool):
    """A shift with Dr.Jit's (x86's) result for counts of the bit width or more: 0, or the sign
    fill for ``ashr`` (negative counts are huge unsigned ones).  LLVM's shift gives poison there,
    and ``select`` does not propagate poison from the operand it does not choose, so one select
    on the result suffices; x86 then emits a single vpsrlvq/vpsllvd, which already gives 0."""
    vt, a, b = ins.vt, e.arg(ins, 0), e.arg(ins, 1)
    t = scalar_type(vt)
    big = e.cmp("icmp", "uge", t, b, e.const(vt, vt.bits))
    if left:
        return e.select(t, big, "zeroinitializer", e.binop("shl", t, a, b))
    if vt.is_signed:
        fill = e.binop("ashr", t, a, e.const(vt, vt.bits - 1))
        return e.select(t, big, fill, e.binop("ashr", t, a, b))
    return e.select(t, big, "zeroinitializer", e.binop("lshr", t, a, b))


@_lowers("shl")

def op_shl(e, ins):
    return _shift(e, ins, True)


@_lowers("shr")

def op_shr(e, ins):
    return _shift(e, ins, False)


@_lowers("popcnt")

def op_popcnt(e, ins):
    return e.call_unary_intrinsic("ctpop", scalar_type(ins.vt), e.arg(ins))


def _count_zeros(e, ins, base):
    # is_zero_poison = false: a zero operand gives the bit width (Dr.Jit's lzcnt/tzcnt)
    vt_ = e.vty(scalar_type(ins.vt))
    fn = e.intrinsic(f"llvm.{base}.v{e.W}{scalar_type(ins.vt)}", vt_, [vt_, "i1"])
    return e.emit(f"call {vt_} {fn}({vt_} {e.arg(ins)}, i1 false)")


@_lowers("lzcnt")

def op_lzcnt(e, ins):
    return _count_zeros(e, ins, "ctlz")


@_lowers("tzcnt")

def op_tzcnt(e, ins):
    return _count_zeros(e, ins, "cttz")


@_lowers("brev")

def op_brev(e, ins):
    return e.call_unary_intrinsic("bitreverse", scalar_type(ins.vt), e.arg(ins))


@_lowers("mul_hi")

def op_mul_hi(e, ins):
    """The double-width product's high half: extend, multiply, shift, truncate."""
    vt = ins.vt
    t, wide = scalar_type(vt), f"i{2 * vt.bits}"
    ext = "sext" if vt.is_signed else "zext"
    a, b = (e.emit(f"{ext} {e.vty(t)} {e.arg(ins, k)} to {e.vty(wide)}") for k in range(2))
    p = e.binop("mul", wide, a, b)
    hi = e.binop("lshr", wide, p, e.splat(wide, str(vt.bits)))
    return e.emit(f"trunc {e.vty(wide)} {hi} to {e.vty(t)}")


def _compare(e, ins, fpred, spred, upred):
    vt = e.argvt(ins, 0)
    t = scalar_type(vt)
    a, b = e.arg(ins, 0), e.arg(ins, 1)
    if vt.is_float:
        return e.cmp("fcmp", fpred, t, a, b)
    return e.cmp("icmp", spred if vt.is_signed else upred, t, a, b)


@_lowers("eq")

def op_eq(e, ins):
    return _compare(e, ins, "oeq", "eq", "eq")


@_lowers("ne")

def op_ne(e, ins):
    return _compare(e, ins, "une", "ne", "ne")


@_lowers("lt")

def op_lt(e, ins):
    return _compare(e, ins, "olt", "slt", "ult")


@_lowers("le")

def op_le(e, ins):
    return _compare(e, ins, "ole", "sle", "ule")


@_lowers("gt")

def op_gt(e, ins):
    return _compare(e, ins, "ogt", "sgt", "ugt")


@_lowers("ge")

def op_ge(e, ins):
    return _compare(e, ins, "oge", "sge", "uge")


@_lowers("fma")

def op_fma(e, ins):
    vt = ins.vt
    t = scalar_type(vt)
    a, b, c = (e.arg(ins, k) for k in range(3))
    if vt.is_float:
        vt_ = e.vty(t)
        fn = e.intrinsic(f"llvm.fma.v{e.W}{suffix(t)}", vt_, [vt_, vt_, vt_])
        return e.emit(f"call {vt_} {fn}({vt_} {a}, {vt_} {b}, {vt_} {c})")
    return e.binop("add", t, e.binop("mul", t, a, b), c)


@_lowers("select")

def op_select(e, ins):
    t = scalar_type(ins.vt)
    return e.select(t, e.arg(ins, 0), e.arg(ins, 1), e.arg(ins, 2))


@_lowers("cast")

def op_cast(e, ins):
    src, dst = e.argvt(ins), ins.vt
    a = e.arg(ins)
    if dst.compute is not None and src is not Bool and src is not dst:
        # To Float16 through float32, as Dr.Jit 1.5 converts (a double rounds twice).
        a, src = _convert(e, a, src, dst.compute), dst.compute
    elif src.compute is not None and dst is not Bool:
        a, src = half.extend(e, a, src), src.compute     # exact
    elif src.bits == 64 and dst.bits == 32 and not src.is_float and not dst.is_float and e.masked_chunks \
            and e.widened is None:
        return _half_words(e, ins)
    return _convert(e, a, src, dst)


def _half_words(e, ins) -> str:
    """A 64-bit integer vector truncated to 32 bits, on targets with mask registers (AVX-512): the
    even words of its ``2W``-word view (x86 is little-endian), one ``vpermt2d`` per register of
    results where ``trunc`` takes two ``vpmovqd`` and an insert.  A cast of ``x >> 32`` (the high
    halves, e.g. the second texel of a texture's pair gather) takes the odd words of ``x`` instead
    of the shift and the truncation (the shift is left unused).  The same bits either way."""
    W = e.W
    src = e.spec.instrs[ins.args[0]]
    word = 0
    if src.op == "shr" and _literal_value(e, src.args[1]) == 32:
        a, word = e.vals[src.args[0]], 1
    else:
        a = e.arg(ins)
    words = e.emit(f"bitcast <{W} x i64> {a} to <{2 * W} x i32>")
    mask = ", ".join(f"i32 {2 * j + word}" for j in range(W))
    return e.emit(f"shufflevector <{2 * W} x i32> {words}, <{2 * W} x i32> poison, <{W} x i32> <{mask}>")


def _literal_value(e, k: int):
    """The value of instruction ``k`` of the kernel if it is a literal, else None."""
    ins = e.spec.instrs[k]
    return ins.value if ins.op == "literal" else None


def _convert(e, a, src, dst):
    """The IR converting ``a`` of type ``src`` to ``dst`` (see :func:`op_cast`)."""
    if src is dst:
        return a
    st, dt = scalar_type(src), scalar_type(dst)
    vs, vd = e.vty(st), e.vty(dt)
    if dst is Bool:
        if src.is_float:
            return e.cmp("fcmp", "une", st, a, "zeroinitializer")
        return e.cmp("icmp", "ne", st, a, "zeroinitializer")
    if src is Bool:
        return e.emit(f"{'uitofp' if dst.is_float else 'zext'} {vs} {a} to {vd}")
    if src.is_float and dst.is_float:
        if src.bits == dst.bits:
            return a
        return e.emit(f"{'fpext' if dst.bits > src.bits else 'fptrunc'} {vs} {a} to {vd}")
    if src.is_float:
        r = e.emit(f"{'fptosi' if dst.is_signed else 'fptoui'} {vs} {a} to {vd}")
        # Out-of-range conversions are poison in LLVM; freeze pins them to what the CPU produces.
        return e.emit(f"freeze {vd} {r}")
    if dst.is_float:
        return e.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {vs} {a} to {vd}")
    if src.bits == dst.bits:
        return a
    if dst.bits < src.bits:
        return e.emit(f"trunc {vs} {a} to {vd}")
    return e.emit(f"{'sext' if src.is_signed else 'zext'} {vs} {a} to {vd}")


@_lowers("bitcast")

def op_bitcast(e, ins):
    src = e.argvt(ins)
    return e.emit(f"bitcast {e.vty(scalar_type(src))} {e.arg(ins)} to {e.vty(scalar_type(ins.vt))}")


# memory


def _math_lowering(name: str):
    def lower(e, ins):
        return e.math(name, scalar_type(ins.vt), *(e.arg(ins, k) for k in range(len(ins.args))))
    lower.__name__ = f"op_{name}"
    lower.vmath = True
    return lower


# Transcendental functions without a lowering of their own: a call of the vectorized math
# library's function of that name.
for _name in sorted(TRANSCENDENTAL & SUPPORTED):
    LOWERINGS.setdefault(_name, _math_lowering(_name))
del _name
