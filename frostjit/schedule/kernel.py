"""From a set of pending nodes of one size to a kernel spec (the backend contract).

:func:`build_kernel` lowers pending nodes and scatters to a :class:`ScheduledKernel`: the
backend-neutral :class:`~frostjit.backend.kernel.KernelSpec` that the backend compiles,
plus the trace nodes bound to its parameters, which only the scheduler (and the freeze
recorder) look at.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..backend.kernel import IN, IN_SCALAR, OUT, GATHER_SRC, SCATTER_DST, Instr, KernelSpec, literal_key
from ..trace.node import Node


@dataclass(slots=True)
class ScheduledKernel(KernelSpec):
    """A :class:`KernelSpec` and the nodes of the launch it was built for.

    Attributes
    ----------
    bindings : list[Node]
        The node bound to each parameter: a data node (inputs, gather sources, scatter
        targets) or the pending node an OUT parameter stores.
    outputs : list[Node]
        The nodes written by the OUT parameters, in order.
    """

    bindings: list = field(default_factory=list)
    outputs: list = field(default_factory=list)


def build_kernel(outputs: list, effects: list) -> ScheduledKernel:
    """Lower ``outputs`` (pending nodes to store) and ``effects`` (scatter nodes) to a spec.

    Operands are visited depth-first; shared subexpressions are emitted once, and so is
    each distinct constant.
    """
    b = _Builder()
    spec = b.spec
    ids = b.ids
    for eff in effects:
        for a in eff.args:
            if a not in ids:
                b.visit(a, 0)
        target, reduce_op = eff.extra
        p = b.param(target, SCATTER_DST)
        spec.instrs.append(Instr("scatter", eff.vt, tuple(ids[a] for a in eff.args), (p, reduce_op)))
        spec.has_side_effects = True
    for out in outputs:
        if out not in ids:
            b.visit(out, 0)
        p = b.param(out, OUT)
        spec.outputs.append(out)
        spec.instrs.append(Instr("store", out.vt, (ids[out],), p))
    return spec


class _Builder:
    """The state of one :func:`build_kernel` call.

    (A class rather than nested functions: a recursive closure would form a reference
    cycle holding every visited node until the cyclic garbage collector runs, delaying
    the release of their buffers.)
    """

    __slots__ = ("spec", "ids", "params", "literals")

    def __init__(self):
        self.spec = ScheduledKernel()
        self.ids: dict = {}           # node -> instruction index
        self.params: dict = {}        # (id(node), kind) -> parameter index
        self.literals: dict = {}      # one instruction per distinct constant of a type

    def param(self, node: Node, kind: str) -> int:
        key = (id(node), kind)
        p = self.params.get(key)
        if p is None:
            spec = self.spec
            p = self.params[key] = len(spec.params)
            spec.params.append((kind, node.vt))
            spec.bindings.append(node)
        return p

    def emit(self, n: Node) -> None:
        instrs = self.spec.instrs
        ids = self.ids
        op = n.op
        if op == "literal":
            v = n.value
            lk = (n.vt, literal_key(v))
            i = self.literals.get(lk)
            if i is None:
                i = self.literals[lk] = len(instrs)
                instrs.append(Instr("literal", n.vt, (), v))
            ids[n] = i
            return
        if op == "data":
            ins = Instr("load", n.vt, (), self.param(n, IN_SCALAR if n.size == 1 else IN))
        elif op == "gather":
            ins = Instr("gather", n.vt, tuple([ids[a] for a in n.args]), self.param(n.extra, GATHER_SRC))
        else:
            ins = Instr(op, n.vt, tuple([ids[a] for a in n.args]), n.value)
        ids[n] = len(instrs)
        instrs.append(ins)

    def visit(self, n: Node, depth: int) -> None:
        # Recursion is the fast path (each node is looked at once); deep chains switch to an
        # explicit stack long before Python's recursion limit.
        if depth > 200:
            self.visit_deep(n)
            return
        ids = self.ids
        for a in n.args:
            if a not in ids:
                self.visit(a, depth + 1)
        self.emit(n)

    def visit_deep(self, root: Node) -> None:
        """Post-order without recursion: a node is emitted once all its operands have ids."""
        ids = self.ids
        stack = [root]
        while stack:
            n = stack[-1]
            if n in ids:
                stack.pop()
                continue
            waiting = False
            for a in n.args:
                if a not in ids:
                    stack.append(a)
                    waiting = True
            if waiting:
                continue
            stack.pop()
            self.emit(n)
