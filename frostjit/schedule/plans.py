"""Evaluations of a graph shaped like an earlier one reuse its kernel spec (the plan cache).

An unfrozen program evaluated in a loop traces the same graph again at every call: new nodes,
the same operations, types and constants over new (or the same) buffers.  Lowering it to a spec
(:func:`~.kernel.build_kernel`: an instruction per node, the parameters, the key the backend's
cache is looked up with) cost as much as tracing it.  :func:`shape_of` walks the graph once,
lighter, to its *shape*: a key that determines the spec ``build_kernel`` would build, and the
data nodes that its input parameters bind, in order.  A shape seen before reuses its spec
(:class:`~.single_op.SpecWithKey`); the backend still owns the kernels (a reuse asks
``backend.compile(spec)``: a hit in its memory cache), so flushing the kernel cache, bounding
it or switching backends needs nothing here.

What the shape holds, one entry per node reachable from the evaluated ones (operands
depth-first, each node once), so that graphs of equal shapes are the same graph up to the
nodes' identities and the data buffers, of which ``build_kernel`` makes equal specs:

* a pending node: its operation, type, parameter (``value``: a cast's target type...; floats
  by their bits) and the positions of its operands in the shape;
* a literal node: its type and value (floats by their bits: ``-0.0`` and ``0.0`` differ);
* a data node: its type and whether it broadcasts (size 1: an ``IN_SCALAR`` parameter), one
  entry per node (``x * x`` and ``x * y`` differ);
* the evaluated nodes (one ``store`` each), as the positions of their entries.

Nothing else goes into a spec: sizes and buffers are the launch's, and no flag changes code
generation.  Graphs the walk does not cover take ``build_kernel`` each time: nodes with an
``extra`` (gathers, symbolic loops and calls), scatters, graphs deeper than ~200 nodes, and
frozen-function recording (its recorder needs the built spec's nodes).
"""
from __future__ import annotations

from ..trace.node import Node
from .kernel import build_kernel
from .single_op import SpecWithKey

MAX_PLANS = 1024            # shapes remembered (all forgotten when full: they are cheap to rebuild)
MAX_ENTRIES = 1 << 18       # and their entries in all (~0.3 KB each with the spec: ~80 MB at most)
MAX_DEPTH = 200             # deeper graphs: build_kernel (its walk has an explicit stack for them)


class HashedKey:
    """A spec key (a tuple) whose hash is computed once: a plan's spec is looked up in the
    backend's kernel cache at every reuse, and hashing a key of ~70 instructions cost ~3 us.
    Equal to the tuple it wraps (and hashes as it), so either finds the other's kernel."""

    __slots__ = ("key", "_hash")

    def __init__(self, key: tuple):
        self.key = key
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if other is self:
            return True
        if type(other) is HashedKey:
            return self._hash == other._hash and self.key == other.key
        return self.key == other

    def __repr__(self) -> str:
        return f"HashedKey({self.key!r})"


class Plan:
    """A spec and how to bind its parameters: ``inputs[i]`` is the position among the shape's data
    nodes of the node bound to input parameter ``i``; the outputs follow, in order."""

    __slots__ = ("spec", "inputs", "n_instrs")

    def __init__(self, spec: SpecWithKey, inputs: tuple):
        self.spec = spec
        self.inputs = inputs
        self.n_instrs = len(spec.instrs)


_plans: dict = {}
_entries = [0]              # entries of the shapes in _plans


class _NotCovered(Exception):
    """The graph is deeper than :data:`MAX_DEPTH` or holds a node with an ``extra`` (a gather, a
    symbolic loop or call): the caller builds its spec."""


class _Walk:
    """The state of one :func:`shape_of` walk (module-level functions over it: a recursive
    closure would keep every visited node alive in a reference cycle until the collector runs)."""

    __slots__ = ("ids", "key", "data")

    def __init__(self):
        self.ids: dict = {}         # node -> position in key
        self.key: list = []
        self.data: list = []        # the data nodes, in the order of their entries


def shape_of(outputs: list):
    """``(shape, data nodes)`` of evaluating the pending nodes ``outputs`` (one size, no
    scatters), or ``None`` if the graph holds a node the walk does not cover (see the module
    docstring)."""
    w = _Walk()
    ids = w.ids
    try:
        for out in outputs:
            if out not in ids:
                _visit(w, out, 0)
    except _NotCovered:
        return None
    key = w.key
    key.append(tuple([ids[out] for out in outputs]))
    return tuple(key), w.data


def _visit(w: _Walk, n: Node, depth: int) -> int:
    """Add the entry of ``n`` (not visited yet) after its operands'; return its position."""
    op = n.op
    key = w.key
    if op == "literal":
        # One entry per literal node, not per distinct constant as in the spec: two graphs of
        # equal shapes still have equal constants in the same places, so equal specs.
        v = n.value
        i = w.ids[n] = len(key)
        key.append(("literal", n.vt, v if type(v) is not float or (v != 0 and v == v) else ("f", v.hex())))
        return i
    if op == "data":
        i = w.ids[n] = len(key)
        key.append(("data", n.vt, n.size == 1))
        w.data.append(n)
        return i
    if n.extra is not None or depth > MAX_DEPTH:
        raise _NotCovered
    ids = w.ids
    b = n.a1        # (Node.args without its property call: a1 is None unless two operands)
    if b is not None:
        a = n.a0
        ia = ids.get(a)
        if ia is None:
            ia = _visit(w, a, depth + 1)
        ib = ids.get(b)
        if ib is None:
            ib = _visit(w, b, depth + 1)
        item = (op, n.vt, ia, ib)
    else:
        t = []
        for a in n.a0:
            i = ids.get(a)
            t.append(_visit(w, a, depth + 1) if i is None else i)
        v = n.value
        if type(v) is float:
            v = ("f", v.hex())
        item = (op, n.vt, v, tuple(t))
    i = ids[n] = len(key)
    key.append(item)
    return i


def plan_of(outputs: list, shape: tuple, data: list) -> Plan | None:
    """The plan of ``shape`` (built from ``outputs`` the first time; ``None`` if its spec binds
    something other than ``data`` then ``outputs``, which a covered graph never does)."""
    plan = _plans.get(shape)
    if plan is None:
        spec = build_kernel(outputs, ())
        position = {id(d): i for i, d in enumerate(data)}
        n_in = len(spec.bindings) - len(spec.outputs)
        inputs = tuple(position.get(id(b), -1) for b in spec.bindings[:n_in])
        if -1 in inputs or spec.outputs != outputs:
            return None
        plan = Plan(SpecWithKey(spec.instrs, spec.params, HashedKey(spec.key())), inputs)
        if len(shape) > MAX_ENTRIES:
            return plan         # (used once: a graph this large is not kept)
        if len(_plans) >= MAX_PLANS or _entries[0] + len(shape) > MAX_ENTRIES:
            _plans.clear()
            _entries[0] = 0
        _plans[shape] = plan
        _entries[0] += len(shape)
    return plan
