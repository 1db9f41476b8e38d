"""Calls (``@fj.func``, see :mod:`frostjit.backend.kernel`) in LLVM IR: one internal function per
distinct body, called from every call site.

The body is lowered by a second emitter of the same kind as the kernel's (so every lane-wise
operation lowers as it does in a kernel) into::

    define fastcc { <W x t0>, ... } @func_<hash>(<W x p0> %p0, ...) noinline #0 {
    entry:
      ... the body ...
      ret { <W x t0>, ... } %r
    }

(a single result is returned as is).  ``noinline`` keeps it one function: LLVM optimizes and
compiles the body once however many sites call it, which is the point of ``@fj.func``.  The
name and the default linkage are Dr.Jit's (``define fastcc ... @func_<hash>``: programs and
tests look for them in ``kernel_history()``'s IR); every kernel is its own module and execution
engine, so two kernels defining the same function never clash.  The
kernel and the function share their declarations and math-function definitions.  A call
computes every lane of the group (the body is pure, and its integer divisions are safe on
any value), so it needs no lane mask.
"""
from __future__ import annotations

import hashlib

from ...kernel import KernelSpec
from .ir_types import scalar_type
from .lowering_table import lowering_table

#: op name -> lowering, merged into the frame's table; ``@_lowers(name)`` registers one.
LOWERINGS, _lowers = lowering_table()


def _return_type(e, info) -> str:
    types = [e.vty(scalar_type(info.body[r].vt)) for r in info.results]
    return types[0] if len(types) == 1 else "{ " + ", ".join(types) + " }"


def define(e, info) -> str:
    """The symbol of the function of ``info`` (a CallInfo), its definition added once."""
    symbol = "func_" + hashlib.sha1(repr(info.key).encode()).hexdigest()[:16]
    if symbol in e.definitions:
        return symbol
    sub = type(e)(KernelSpec(instrs=list(info.body)), e.W, e.masked_chunks)
    sub.declarations = e.declarations          # shared: one module
    sub.definitions = e.definitions
    sub.math_calls = e.math_calls
    for ins in info.body:
        sub.vals.append(sub.instruction(ins))
    rt = _return_type(e, info)
    if len(info.results) == 1:
        ret = f"  ret {rt} {sub.vals[info.results[0]]}"
    else:
        acc = "undef"
        for j, r in enumerate(info.results):
            t = e.vty(scalar_type(info.body[r].vt))
            nxt = sub.tmp()
            sub.body.append(f"  {nxt} = insertvalue {rt} {acc}, {t} {sub.vals[r]}, {j}")
            acc = nxt
        ret = f"  ret {rt} {acc}"
    params = ", ".join(f"{e.vty(scalar_type(vt))} %p{j}" for j, vt in enumerate(info.params))
    e.definitions[symbol] = "\n".join([f"define fastcc {rt} @{symbol}({params}) noinline #0 {{", "entry:",
                                       *sub.body, ret, "}"])
    return symbol


@_lowers("call")
def op_call(e, ins) -> str:
    info = ins.value
    symbol = define(e, info)
    args = ", ".join(f"{e.vty(scalar_type(vt))} {e.vals[a]}" for vt, a in zip(info.params, ins.args))
    return e.emit(f"call fastcc {_return_type(e, info)} @{symbol}({args})")


@_lowers("call_out")
def op_call_out(e, ins) -> str:
    call = e.spec.instrs[ins.args[0]]
    if len(call.value.results) == 1:
        return e.vals[ins.args[0]]
    return e.emit(f"extractvalue {_return_type(e, call.value)} {e.vals[ins.args[0]]}, {ins.value}")


@_lowers("call_param")
def op_call_param(e, ins) -> str:
    return f"%p{ins.value}"
