"""The evaluation of one operation over evaluated operands: the innermost step of most loops.

``y = x + 1; fj.eval(y)`` is a kernel of one operation whose operands are data and literal
nodes.  Building its spec (a walk over the nodes, an instruction per node, the key) costs
more than running it, and its shape repeats: the same operation, types and constants on new
buffers.  :func:`plan_of` keys such an evaluation by that shape and remembers the spec (and
which operand feeds which parameter), so a repeat only looks up the kernel and launches it.

A spec is pure structure: the backend still owns the kernels (a repeat asks
``backend.compile(spec)``, a hit in its memory cache), so flushing or bounding the kernel
cache, or switching backends, needs nothing here.
"""
from __future__ import annotations

from ..backend.kernel import KernelSpec
from ..trace.dtypes import float_bits
from ..trace.node import Node
from .kernel import build_kernel

MAX_PLANS = 1024            # shapes remembered (all forgotten when full: they are cheap to rebuild)


class SpecWithKey(KernelSpec):
    """A :class:`KernelSpec` whose key was computed once (no trace nodes in it)."""

    __slots__ = ("_key",)

    def __init__(self, instrs: list, params: list, key: tuple, has_side_effects: bool = False):
        self.instrs = instrs
        self.params = params
        self.has_side_effects = has_side_effects
        self._key = key

    def key(self) -> tuple:
        return self._key


class Plan:
    """A single-operation evaluation's spec, and the operands bound to its parameters (by their
    positions among the node's operands; the output parameter is last)."""

    __slots__ = ("spec", "operands", "n_instrs")

    def __init__(self, spec: SpecWithKey, operands: tuple):
        self.spec = spec
        self.operands = operands
        self.n_instrs = len(spec.instrs)


_plans: dict = {}


def shape_key(n: Node):
    """The shape of ``n`` if it is one operation over data and literal nodes, else ``None``.

    The key holds the operation, its type and parameter, and for each operand its type,
    whether it broadcasts (size 1), and for data the position of its first occurrence (so
    ``x * x`` and ``x * y`` differ), for literals the value.  Floats that equal zero or
    themselves not (-0.0 == 0.0, NaN != NaN) are keyed by their bits.
    """
    if n.extra is not None:             # a gather (its source is a parameter too)
        return None
    v = n.value
    if type(v) is float and (v == 0 or v != v):
        v = ("f", float_bits(v))
    b = n.a1        # (Node.args without its property call: a1 is None unless two operands)
    if b is not None:
        a = n.a0
    else:
        args = n.a0
        if len(args) == 2:
            a, b = args
    if b is not None:                   # (unrolled: the common case, on every evaluation)
        op = a.op
        if op == "data":
            ka = (a.vt, a.size == 1, 0)
        elif op == "literal":
            w = a.value
            ka = (a.vt, ("f", float_bits(w)) if type(w) is float and (w == 0 or w != w) else w)
        else:
            return None
        op = b.op
        if op == "data":
            kb = (b.vt, b.size == 1, 0 if b is a else 1)
        elif op == "literal":
            w = b.value
            kb = (b.vt, ("f", float_bits(w)) if type(w) is float and (w == 0 or w != w) else w)
        else:
            return None
        return (n.op, n.vt, v, ka, kb)
    key = [n.op, n.vt, v]
    for i, a in enumerate(args):
        op = a.op
        if op == "data":
            j = i
            for k in range(i):
                if args[k] is a:
                    j = k
                    break
            key.append((a.vt, a.size == 1, j))
        elif op == "literal":
            w = a.value
            key.append((a.vt, ("f", float_bits(w)) if type(w) is float and (w == 0 or w != w) else w))
        else:
            return None
    return tuple(key)


def plan_of(n: Node, key: tuple) -> Plan:
    """The plan of shape ``key`` (built from ``n`` the first time)."""
    plan = _plans.get(key)
    if plan is None:
        spec = build_kernel([n], ())
        args = n.args
        operands = tuple(next(i for i, a in enumerate(args) if a is b) for b in spec.bindings[:-1])
        plan = Plan(SpecWithKey(spec.instrs, spec.params, spec.key()), operands)
        if len(_plans) >= MAX_PLANS:
            _plans.clear()
        _plans[key] = plan
    return plan
