"""From a set of pending nodes of one size to a kernel spec (the backend contract).

:func:`build_kernel` lowers pending nodes and scatters to a :class:`ScheduledKernel`: the
backend-neutral :class:`~frostjit.backend.kernel.KernelSpec` that the backend compiles,
plus the trace nodes bound to its parameters, which only the scheduler (and the freeze
recorder) look at.
"""
from __future__ import annotations

from ..backend.kernel import IN, IN_SCALAR, OUT, GATHER_SRC, SCATTER_DST, Instr, KernelSpec, instr_key
from ..trace.calls import CALL_NODES
from ..trace.dtypes import float_bits
from ..trace.node import Node
from . import calls, loops


class ScheduledKernel(KernelSpec):
    """A :class:`KernelSpec` and the nodes of the launch it was built for.

    Attributes
    ----------
    bindings : list[Node]
        The node bound to each parameter: a data node (inputs, gather sources, scatter
        targets) or the pending node an OUT parameter stores.  The OUT parameters come last,
        in the order of ``outputs``.
    outputs : list[Node]
        The nodes written by the OUT parameters, in order.
    key_items : list
        The instructions' parts of :meth:`key`, made while building (no second pass over
        the instructions on every launch).
    """

    # ids, slots, literals, loops, depth: the builder's state (see build_kernel)
    __slots__ = ("bindings", "outputs", "key_items", "ids", "slots", "literals", "loops", "depth")

    def __init__(self):     # (written out: a dataclass's default factories cost ~0.3 us here)
        self.instrs = []
        self.params = []
        self.has_side_effects = False
        self.bindings = []
        self.outputs = []
        self.key_items = []
        self.ids: dict = {}           # node -> instruction index
        self.slots: dict = {}         # (id(node), kind) -> parameter index
        self.literals: dict = {}      # (type, value key) -> instruction index: one per distinct constant
        self.loops: list = []         # the outermost symbolic loops emitted (schedule/loops.py)
        self.depth = 0                # how many loop regions enclose the instruction emitted now

    def key(self) -> tuple:
        return (tuple(self.params), tuple(self.key_items))

    def param(self, node: Node, kind: str) -> int:
        """The parameter of kind ``kind`` bound to ``node`` (added when new)."""
        key = (id(node), kind)
        p = self.slots.get(key)
        if p is None:
            p = self.slots[key] = len(self.params)
            self.params.append((kind, node.vt))
            self.bindings.append(node)
        return p

    def __repr__(self) -> str:
        return f"ScheduledKernel({len(self.params)} parameters, {len(self.instrs)} instructions)"


_instr = tuple.__new__      # Instr(...) without the Python-level constructor (the hot path)


def build_kernel(outputs: list, effects: list) -> ScheduledKernel:
    """Lower ``outputs`` (pending nodes to store) and ``effects`` (scatter nodes) to a spec.

    Operands are visited depth-first, in order; shared subexpressions are emitted once, and
    so is each distinct constant.  This runs on every evaluation, so it is written for speed:
    ``y = x + 1; fj.eval(y)`` spends a good part of its time here.  (The recursion is a
    module-level function over the spec: a recursive closure would form a reference cycle
    holding every visited node until the cyclic garbage collector runs, delaying the release
    of their buffers.)
    """
    b = ScheduledKernel()
    if effects and _loop_effects(effects):
        return _build_with_loops(b, outputs, effects)
    ids = b.ids
    for eff in effects:
        for a in eff.args:
            if a not in ids:
                _visit(b, a, 0)
    for out in outputs:
        if out not in ids:
            _visit(b, out, 0)
    for eff in effects:
        _emit_scatter(b, eff)
    return _emit_stores(b, outputs)


def _emit_scatter(b: ScheduledKernel, eff: Node) -> None:
    """The ``scatter`` instruction of the side-effect node ``eff`` (its operands are emitted)."""
    ids = b.ids
    target, reduce_op = eff.extra
    ins = _instr(Instr, ("scatter", eff.vt, tuple([ids[a] for a in eff.args]),
                         (b.param(target, SCATTER_DST), reduce_op)))
    b.instrs.append(ins)
    b.key_items.append(ins)
    b.has_side_effects = True


def _emit_stores(b: ScheduledKernel, outputs: list) -> ScheduledKernel:
    """The ``store`` of each output (the OUT parameters come last, in the order of b.outputs),
    then the other live results of the kernel's symbolic loops."""
    ids, instrs, keys = b.ids, b.instrs, b.key_items
    for out in outputs:
        if (id(out), OUT) in b.slots:
            continue
        ins = _instr(Instr, ("store", out.vt, (ids[out],), b.param(out, OUT)))
        b.outputs.append(out)
        instrs.append(ins)
        keys.append(ins)
    if b.loops:
        loops.store_siblings(b, _visit)
    return b


def _loop_effects(effects: list) -> bool:
    """Whether a scatter of a symbolic loop's body is among ``effects`` (its ``value`` is the loop)."""
    for eff in effects:
        if eff.value is not None:
            return True
    return False


def _build_with_loops(b: ScheduledKernel, outputs: list, effects: list) -> ScheduledKernel:
    """:func:`build_kernel` when some scatters belong to symbolic loops (``schedule/loops.py``).

    Each such loop is emitted, with its scatters inside its region, at the place of its first
    scatter among the kernel's scatters (program order), and before the outputs are visited: an
    output of the loop must not emit it first, without its scatters.  (A separate function:
    the common path of build_kernel stays as it was, measured ~8% faster than one body with
    both cases.)
    """
    ids = b.ids
    for eff in effects:
        if eff.value is None:
            for a in eff.args:
                if a not in ids:
                    _visit(b, a, 0)
    for eff in effects:
        if eff.value is not None:
            loops.emit_with_effects(b, eff.value, _visit)
        else:
            _emit_scatter(b, eff)
    for out in outputs:
        if out not in ids:
            _visit(b, out, 0)
    return _emit_stores(b, outputs)


def _visit(b: ScheduledKernel, n: Node, depth: int) -> None:
    """Emit ``n`` after its operands (recursion is the fast path; deep chains switch to an
    explicit stack long before Python's recursion limit)."""
    ids = b.ids
    a1 = n.a1       # (Node.args without its property call: a1 is None unless two operands)
    for a in n.a0 if a1 is None else (n.a0, a1):
        if a not in ids:
            if depth > 200:
                _visit_deep(b, a)
            elif a.op == "literal":         # (inlined: literals are the most common leaves)
                v = a.value
                lk = (a.vt, ("f", v.hex() if v == v else float_bits(v)) if type(v) is float else v)
                i = b.literals.get(lk)
                if i is None:
                    i = b.literals[lk] = len(b.instrs)
                    b.instrs.append(_instr(Instr, ("literal", a.vt, (), v)))
                    b.key_items.append(("literal", a.vt, (), lk[1]))
                ids[a] = i
            else:
                _visit(b, a, depth + 1)
    _emit(b, n)


def _visit_deep(b: ScheduledKernel, root: Node) -> None:
    """Post-order without recursion: a node is emitted once all its operands have ids."""
    ids = b.ids
    stack = [root]
    while stack:
        n = stack[-1]
        if n in ids:
            stack.pop()
            continue
        waiting = False
        a1 = n.a1       # (Node.args without its property call: a1 is None unless two operands)
        # (operand 0 is emitted first, as by _visit: pushed last)
        for a in reversed(n.a0) if a1 is None else (a1, n.a0):
            if a not in ids:
                stack.append(a)
                waiting = True
        if waiting:
            continue
        stack.pop()
        _emit(b, n)


def _emit(b: ScheduledKernel, n: Node) -> None:
    """Append the instruction of ``n`` (whose operands have ids)."""
    ids = b.ids
    instrs = b.instrs
    op = n.op
    vt = n.vt
    if op == "literal":
        v = n.value
        lk = (vt, ("f", v.hex() if v == v else float_bits(v)) if type(v) is float else v)
        i = b.literals.get(lk)
        if i is None:
            i = b.literals[lk] = len(instrs)
            instrs.append(_instr(Instr, ("literal", vt, (), v)))
            b.key_items.append(("literal", vt, (), lk[1]))
        ids[n] = i
        return
    a1 = n.a1       # (Node.args without its property call: a1 is None unless two operands)
    if a1 is not None:
        t = (ids[n.a0], ids[a1])
    else:
        args = n.a0     # (no comprehension for the common arities: each is a function call)
        na = len(args)
        if na == 1:
            t = (ids[args[0]],)
        elif na == 0:
            t = ()
        else:
            t = tuple([ids[a] for a in args])
    if op == "data":
        ins = key = _instr(Instr, ("load", vt, t, b.param(n, IN_SCALAR if n.size == 1 else IN)))
    elif op == "gather":
        ins = key = _instr(Instr, ("gather", vt, t, b.param(n.extra, GATHER_SRC)))
    elif n.extra is not None:
        # (gathers, above, and the nodes of symbolic loops and calls are the only ones with an
        # extra: this test costs the hot path less than naming the loop ops)
        if n.op in CALL_NODES:
            calls.emit(b, n, _visit)
        else:
            loops.emit(b, n, _visit)
        return
    else:
        v = n.value
        ins = _instr(Instr, (op, vt, t, v))
        key = ins if type(v) is not float else instr_key(ins)
    ids[n] = len(instrs)
    instrs.append(ins)
    b.key_items.append(key)
