"""Lookup templates: a texture lookup's graph of nodes, traced once, made again for new inputs.

A lookup (``Texture.eval``) traces ~45 nodes through the array operators, the sampling rules and
the gathers' checks: ~0.1 ms of Python per call, ~0.3 ms right after the previous call's
1e6-lane kernel evicted the interpreter's data from the caches (docs/benchmarks.md, r12 and
r16).  The graph depends only on the texture's configuration and on what kind of nodes the
inputs are, never on their values, so the first lookup of a configuration records it as a
:class:`Template` (each node's operation, type, parameter and operands as slots) and later
lookups make the same nodes from their own inputs through the same constructors
(:func:`frostjit.trace.ops.make` ...): the same graph, so the same kernel and the same bits.

A template applies only where the graph cannot depend on anything but the key
(:func:`key`): every input an evaluated array (``data`` node) without a derivative, no frozen
function recording, no loop body, branch or call target being traced (their gathers take the
scope's mask), no pending scatters, the same JIT flags, kind of backend and way of reading
texel pairs; anything else takes the traced path.  A recording is checked when made: its replay
on the recording's own inputs must give the traced graph node for node (operations, types,
sizes, parameters, sharing), or the configuration is marked as traced every time.
``ENABLED = False`` turns templates off (the tests compare both paths).
"""
from __future__ import annotations

from typing import NamedTuple

from ..array.flat import ArrayBase
from ..backend import current_backend
from ..trace import masks, ops
from ..trace.node import Node
from ..trace.state import state

ENABLED = True
# Recorded configurations kept (a plain dict, emptied when full: a program uses a few).
CAPACITY = 256
TRACED = "traced"       # a configuration whose graph did not pass the check: traced every time
_templates: dict = {}

_BINARY, _TERNARY, _OTHER = 0, 1, 2        # Step.kind: which constructor makes the node


class Key(NamedTuple):
    """What a lookup's graph depends on (:func:`key`)."""

    what: str               # the lookup ("eval")
    config: tuple           # the texture's (Texture._config)
    inputs: tuple           # per input array: (its type, whether it has one element)
    flags: int              # the JIT flags (state.flags)
    backend: type           # the backend's type
    pair_gathers: bool      # the backend reads a row's texels in pairs


class Step(NamedTuple):
    """One node of a :class:`Template`: ``op``/``vt``/``value`` as the node's, its operands and
    (``extra_slot``) its ``extra`` as slots."""

    kind: int               # _BINARY (make_binary), _TERNARY (make_ternary) or _OTHER (make)
    op: str
    vt: object
    args: tuple             # operand slots
    value: object
    extra: object           # a slot where extra_slot, else the node's extra itself
    extra_slot: bool


class Template:
    """A recorded graph: ``steps`` (:class:`Step`) make its nodes in order into slots after the
    inputs' (literal operands sit in ``literals``, the slots after the inputs), ``outputs`` the
    slots of the results and their array classes."""

    __slots__ = ("n_inputs", "literals", "steps", "outputs")

    def __init__(self, n_inputs: int, literals: list, steps: list, outputs: list):
        self.n_inputs, self.literals, self.steps, self.outputs = n_inputs, literals, steps, outputs

    def make(self, inputs: list) -> list[Node]:
        """The graph's output nodes for the input nodes ``inputs`` (in the recording's order)."""
        s = inputs + self.literals
        make, make_binary, make_ternary = ops.make, ops.make_binary, ops.make_ternary
        for kind, op, vt, args, value, extra, extra_slot in self.steps:
            if kind == _BINARY:
                s.append(make_binary(op, vt, s[args[0]], s[args[1]]))
            elif kind == _TERNARY:
                s.append(make_ternary(op, vt, s[args[0]], s[args[1]], s[args[2]]))
            else:
                s.append(make(op, vt, tuple(s[a] for a in args), value=value, extra=s[extra] if extra_slot else extra))
        return [s[k] for k, _ in self.outputs]

    def arrays(self, inputs: list) -> list:
        """:meth:`make`'s outputs as arrays of the recorded results' classes."""
        return [cls._from_node(n) for n, (_, cls) in zip(self.make(inputs), self.outputs)]


def key(what: str, config: tuple, arrays: list, active) -> Key | None:
    """The template key of a lookup, or None where no template may apply: ``arrays`` the 1-D
    input arrays (the positions, then the texels' array), ``active`` True or a 1-D Bool array.
    Every input must be an evaluated array (a ``data`` node) without a derivative, each a node
    of its own, and the positions and the mask of one size (or 1; other sizes take the traced
    path, which raises)."""
    if not ENABLED or state.recorder is not None or state.dirty or masks.in_scope():
        # (in a loop body, a branch or a call target a gather takes the scope's mask too)
        return None
    kinds = []
    lanes = 1
    for k, a in enumerate(arrays):
        if not isinstance(a, ArrayBase) or a._ad is not None:
            return None
        n = a._node
        if n.op != "data":
            return None
        if n.size != 1 and k < len(arrays) - 1:
            if lanes != 1 and n.size != lanes:
                return None
            lanes = n.size
        kinds.append((type(a), n.size == 1))
    if active is not True:
        if not isinstance(active, ArrayBase) or active._node.op != "data":
            return None
        n = active._node.size
        if n != 1 and lanes != 1 and n != lanes:
            return None
        kinds.append((type(active), n == 1))
    nodes = [a._node for a in arrays]
    if len(set(map(id, nodes))) != len(nodes):
        return None         # (one array as two inputs: the graph would read it for both later)
    backend = current_backend()
    # (the backend's type, not the object: a key must not keep a replaced backend's thread pool
    # alive; its pair_gathers decides how a row's texels are read, texture._pairs_pay)
    return Key(what, config, tuple(kinds), state.flags, type(backend), getattr(backend, "pair_gathers", False))


def inputs(arrays: list, active) -> list[Node]:
    """The input nodes of a lookup whose :func:`key` is not None, in the template's order."""
    nodes = [a._node for a in arrays]
    if active is not True:
        nodes.append(active._node)
    return nodes


def find(k):
    """The template of key ``k``: a :class:`Template`, :data:`TRACED` (traced every time) or
    None (not recorded yet)."""
    return _templates.get(k)


def record(k, leaves: list[Node], results: list) -> None:
    """Record the graph of ``results`` (the traced lookup's output arrays) over the input nodes
    ``leaves`` under key ``k``, if it checks (see the module docstring)."""
    if len(_templates) >= CAPACITY:
        _templates.clear()
    t = _capture(leaves, results)
    if t is not None and not _same_graph(t, leaves, results):
        t = None
    _templates[k] = t if t is not None else TRACED


def _capture(leaves: list[Node], results: list) -> Template | None:
    """The :class:`Template` of ``results`` over ``leaves``, or None where the graph holds
    anything a template does not reproduce (another evaluated array, a literal of more than one
    lane, a symbolic size, a derivative, a non-array result)."""
    for r in results:
        if not isinstance(r, ArrayBase) or r._ad is not None:
            return None
    slot = {id(n): k for k, n in enumerate(leaves)}
    literals, steps, order = [], [], []
    # (depth-first, operands before their node; explicit stack: graphs of any depth)
    stack = [(r._node, False) for r in reversed(results)]
    while stack:
        n, ready = stack.pop()
        if id(n) in slot:
            continue
        if n.sym is not None:
            return None
        if n.op == "literal":
            if n.size != 1:
                return None         # (a literal of the lookup's width: later lookups may have another)
            slot[id(n)] = -1 - len(literals)        # renumbered below, after the inputs
            literals.append(n)
            continue
        if n.op == "data":
            return None
        operands = (n.a0, n.a1) if n.a1 is not None else n.a0
        extra = n.extra if isinstance(n.extra, Node) else None
        if not ready:
            stack.append((n, True))
            stack.extend((m, False) for m in reversed(operands) if id(m) not in slot)
            if extra is not None and id(extra) not in slot:
                stack.append((extra, False))
            continue
        slot[id(n)] = None          # placed below, in this order
        order.append((n, operands, extra))
    base = len(leaves)

    def at(n):
        k = slot[id(n)]
        return base - 1 - k if k < 0 else k

    for j, (n, operands, extra) in enumerate(order):
        slot[id(n)] = base + len(literals) + j
    for n, operands, extra in order:
        kind = _BINARY if n.a1 is not None else _TERNARY if (
            len(n.a0) == 3 and n.value is None and n.extra is None) else _OTHER
        steps.append(Step(kind, n.op, n.vt, tuple(at(m) for m in operands), n.value,
                          at(extra) if extra is not None else n.extra, extra is not None))
    outputs = [(at(r._node), type(r)) for r in results]
    return Template(base, literals, steps, outputs)


def _same_graph(t: Template, leaves: list[Node], results: list) -> bool:
    """Whether ``t`` made from ``leaves`` gives the graph of ``results`` node for node."""
    made = t.make(list(leaves))
    seen: dict = {id(n): n for n in leaves}
    pairs = [(a, r._node) for a, r in zip(made, results)]
    while pairs:
        a, b = pairs.pop()
        if id(b) in seen:
            if seen[id(b)] is not a:
                return False
            continue
        seen[id(b)] = a
        if (a.op, a.vt, a.size, a.sym, type(a.a0), a.a1 is None) != (b.op, b.vt, b.size, b.sym, type(b.a0),
                                                                   b.a1 is None):
            return False
        if b.op == "literal":
            if a is not b:
                return False
            continue
        if not _same(a.value, b.value):
            return False
        ea, eb = a.extra, b.extra
        if isinstance(eb, Node):
            pairs.append((ea, eb))
        elif not _same(ea, eb):
            return False
        if b.a1 is not None:
            pairs += [(a.a0, b.a0), (a.a1, b.a1)]
        else:
            if len(a.a0) != len(b.a0):
                return False
            pairs += list(zip(a.a0, b.a0))
    return True


def _same(a, b) -> bool:
    """Whether two operation parameters are the same (unsure: not the same)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001  (an array parameter: no single truth value)
        return False
