"""Operations on ``Float16`` computed in ``float32`` (:attr:`VarType.compute`).

Half precision is a storage format here: a kernel keeps ``Float16`` values as LLVM ``half``
(loads, stores, selects, bit operations and conversions use them as they are), and every
arithmetic operation extends its half operands to ``float``, runs the ``Float32`` lowering
and rounds the result back to ``half``.  That is what LLVM does by itself on CPUs without
native half arithmetic and what Dr.Jit 1.5 emits (``fma`` is ``fptrunc(fma.f32(...))``,
transcendental functions run their float32 polynomial), so results match it bit for bit;
for ``+ - * / sqrt`` it is the correctly rounded half result.  Doing it here rather than
leaving ``half`` arithmetic to LLVM keeps the result independent of the CPU (a CPU with
AVX512-FP16 would otherwise compute ``fma`` with one rounding).
"""
from __future__ import annotations

from ...kernel import Instr
from .ir_types import scalar_type

#: Ops that handle half values themselves (memory, selection, bits, conversions).
NATIVE = frozenset({"load", "store", "literal", "counter", "select", "and", "or", "xor", "bitcast", "cast",
                    "gather", "scatter", "scatter_rmw", "call", "call_param", "call_out"})


def computes_wider(e, ins) -> bool:
    """Whether instruction ``ins`` has an operand or result computed in a wider type."""
    if ins.op in NATIVE:
        return False
    if ins.vt.compute is not None:
        return True
    instrs = e.spec.instrs
    return any(instrs[a].vt.compute is not None for a in ins.args)


def extend(e, value: str, vt) -> str:
    """``value`` of type ``vt`` extended to ``vt.compute`` (exact)."""
    return e.emit(f"fpext {e.vty(scalar_type(vt))} {value} to {e.vty(scalar_type(vt.compute))}")


def narrow(e, value: str, vt) -> str:
    """``value`` of ``vt.compute`` rounded to ``vt`` (to nearest, ties to even)."""
    return e.emit(f"fptrunc {e.vty(scalar_type(vt.compute))} {value} to {e.vty(scalar_type(vt))}")


def lower_widened(e, ins, lower) -> str:
    """Lower ``ins`` with ``lower`` on operands extended to the compute type, then round.

    The lowering sees an instruction of the compute type (``ins.vt``) whose operands
    (``e.arg``/``e.argvt``) are the extended values.
    """
    operands = []
    for a in ins.args:
        vt = e.spec.instrs[a].vt
        value = e.vals[a]
        if vt.compute is not None:
            value, vt = extend(e, value, vt), vt.compute
        operands.append((value, vt))
    out_vt = ins.vt
    if ins.op == "rsqrt" and out_vt.compute is not None:
        return _rsqrt(e, ins, operands)
    view = Instr(ins.op, out_vt.compute or out_vt, ins.args, ins.value)
    result = _with_operands(e, operands, lambda: lower(e, view))
    return narrow(e, result, out_vt) if out_vt.compute is not None else result


def _with_operands(e, operands, run):
    outer = e.widened
    e.widened = operands
    try:
        return run()
    finally:
        e.widened = outer


def _rsqrt(e, ins, operands) -> str:
    """Half ``rsqrt`` as Dr.Jit 1.5 computes it: ``sqrt(1 / x)``, each step rounded to half."""
    vt = ins.vt
    ct = scalar_type(vt.compute)
    r = narrow(e, e.binop("fdiv", ct, e.const(vt.compute, 1.0), operands[0][0]), vt)
    return narrow(e, e.call_unary_intrinsic("sqrt", ct, extend(e, r, vt)), vt)
