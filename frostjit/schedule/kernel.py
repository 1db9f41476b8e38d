"""From a set of pending nodes of one size to a backend-neutral kernel description.

A :class:`KernelSpec` is a straight-line SSA program over one *lane* of a
launch: instructions refer to earlier instructions by index, buffers by
parameter index.  It contains no sizes and no addresses, so the same spec (and
the same compiled kernel) serves every launch width; the actual buffers live in
``bindings``, outside the part a backend compiles and caches.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..trace.node import Node

# Parameter kinds: how a kernel uses a buffer.
IN = "in"            # elementwise input, one element per lane
IN_SCALAR = "in1"    # size-1 input broadcast to every lane
OUT = "out"          # elementwise output
GATHER_SRC = "src"   # random-access read (pointer + element count)
SCATTER_DST = "dst"  # random-access write (pointer + element count)


@dataclass(slots=True)
class Instr:
    """One SSA instruction. ``args`` index earlier instructions."""

    op: str
    vt: object
    args: tuple = ()
    value: object = None   # literal value, cast target, parameter index, ...


@dataclass(slots=True)
class KernelSpec:
    """A kernel: instructions and the parameter list (kinds and types)."""

    instrs: list = field(default_factory=list)
    params: list = field(default_factory=list)      # [(kind, vt)]
    bindings: list = field(default_factory=list)    # [Node] bound to each parameter
    outputs: list = field(default_factory=list)     # nodes written by OUT params, in order
    has_side_effects: bool = False

    def key(self) -> tuple:
        """A hashable structural key: equal keys give equal code (sizes and buffers excluded)."""
        return (tuple(self.params), tuple([(i.op, i.vt, i.args, _literal_key(i.value)) for i in self.instrs]))


def _literal_key(v):
    # -0.0 == 0.0 and NaN != NaN: key floats by their exact bit pattern.
    return ("f", v.hex()) if type(v) is float else v


def build_kernel(outputs: list, effects: list) -> KernelSpec:
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
        self.spec = KernelSpec()
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
            lk = (n.vt, _literal_key(v))
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
