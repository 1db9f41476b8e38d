"""Calls in kernel specs: a ``call`` node (:mod:`frostjit.trace.calls`) becomes a ``call``
instruction whose value is the body as a :class:`~frostjit.backend.kernel.CallInfo`.

The ``CallInfo`` of a record is made once (the first time a kernel calls it) and kept on the
record: every call site of an equal body shares the record, so a kernel with 50 calls holds one
body, which the LLVM backend compiles once.  The call's operands (the arguments) are emitted
before it by the ordinary walk; ``call_out`` is an ordinary instruction.
"""
from __future__ import annotations

from ..backend.kernel import CallInfo, Instr
from ..trace.dtypes import Bool, float_bits
from ..trace.node import Node


class FuncVariableError(RuntimeError):
    """A variable computed inside an ``@fj.func`` body was evaluated or used outside it."""


def emit(b, n: Node, visit) -> None:
    """Append the ``call`` instruction of the node ``n`` to the spec ``b`` (its operands have
    instructions already).  A ``call_param`` placeholder outside its body raises."""
    if n.op == "call_param":
        raise FuncVariableError(
            f"fj.func '{n.extra}': a variable computed inside the body of an @fj.func function was evaluated or used "
            "outside it. The body's variables have no value of their own: return them from the function")
    if n.op != "call":
        raise RuntimeError(f"frostjit: the scheduler cannot emit a {n.op!r} node here")
    ids = b.ids
    ins = Instr("call", Bool, tuple([ids[a] for a in n.args]), info_of(n.extra))
    ids[n] = len(b.instrs)
    b.instrs.append(ins)
    b.key_items.append(ins)


def info_of(record) -> CallInfo:
    """The body of ``record`` (a :class:`~frostjit.trace.calls.FuncRecord`) as a ``CallInfo``,
    made once."""
    info = record.info
    if info is None:
        info = record.info = _build(record)
    return info


def _build(record) -> CallInfo:
    ids: dict = {}
    body: list = []
    literals: dict = {}

    def ref(a: Node) -> int:
        k = ids.get(a)
        if k is None:           # a literal (everything else is a parameter or a body node)
            v = a.value
            lk = (a.vt, ("f", v.hex() if v == v else float_bits(v)) if type(v) is float else v)
            k = literals.get(lk)
            if k is None:
                k = literals[lk] = len(body)
                body.append(Instr("literal", a.vt, (), v))
            ids[a] = k
        return k
    for j, p in enumerate(record.params):
        ids[p] = j
        body.append(Instr("call_param", p.vt, (), j))
    for n in record.nodes:
        args = tuple([ref(a) for a in n.args])
        if n.op == "call":
            ins = Instr("call", Bool, args, info_of(n.extra))
        else:
            ins = Instr(n.op, n.vt, args, n.value)
        ids[n] = len(body)
        body.append(ins)
    results = tuple(ref(r) for r in record.results)
    return CallInfo(record.name, tuple(p.vt for p in record.params), tuple(body), results)
