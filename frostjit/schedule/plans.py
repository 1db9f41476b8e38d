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
* a gather: its type, the position of its source (a data node's entry: its buffer is bound to
  a ``GATHER_SRC`` parameter) and those of its index and mask;
* the evaluated nodes (one ``store`` each), as the positions of their entries.

The walk is the way in, not the hot path: the plan found (or built) is remembered for outputs
of that signature (their count, the first one's operation and type), and the next evaluation of
such outputs first checks its graph against the recent plans' shapes (:func:`match`, with
:mod:`.plan_check`: no walk, no key to hash and compare); only a graph that none of them fits
is walked.

Nothing else goes into a spec: sizes and buffers are the launch's, and no flag changes code
generation.  Graphs the walk does not cover take ``build_kernel`` each time: nodes of symbolic
loops and calls (an ``extra`` other than a gather's source), scatters, graphs deeper than ~200
nodes, and frozen-function recording (its recorder needs the built spec's nodes).  (Gathers were
not covered before session r13: a texture lookup built its spec at every evaluation, ~0.1 ms.)
"""
from __future__ import annotations

import os

from ..backend.kernel import OUT
from ..trace.dtypes import float_bits
from ..trace.node import Node
from .kernel import build_kernel
from .plan_check import program_of, check, compile_check
from .single_op import SpecWithKey

#: Whether evaluations use the plan caches (this module's and :mod:`.single_op`'s): ``ENABLED[0]``.
#: ``FROSTJIT_PLAN_CACHE=0`` (or setting it False) makes every evaluation build its spec: the
#: reference that tests compare the cached path with, bit for bit.
ENABLED = [os.environ.get("FROSTJIT_PLAN_CACHE", "").strip() != "0"]

MAX_PLANS = 1024            # shapes remembered (all forgotten when full: they are cheap to rebuild)
MAX_ENTRIES = 1 << 18       # and their entries in all (~0.3 KB each with the spec: ~80 MB at most)
MAX_DEPTH = 200             # deeper graphs: build_kernel (its walk has an explicit stack for them)
COMPILE_AFTER = 2           # reuses of a plan checked by plan_check.check before its checker is generated
                            # (0: generated with the plan)
MAX_COMPILED_ENTRIES = 1 << 14  # shape entries of the plans with generated checkers, in all (~0.5 KB
                            # each, source and code: ~8 MB at most); beyond, the others interpret


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
    nodes of the node bound to input parameter ``i``; the outputs follow, in order, new buffers
    of the types ``out_vts``.

    ``program`` is the shape as :mod:`.plan_check` checks a graph against it
    (:func:`~.plan_check.program_of`), ``outputs_at`` and ``inputs_at`` the shape positions of the
    evaluated nodes and of the data nodes bound to the input parameters; ``compiled`` is the
    generated checker of a plan reused :data:`COMPILE_AFTER` times (``None`` before; ``False``
    for a shape too large for one, or beyond :data:`MAX_COMPILED_ENTRIES`), ``uses`` counts the
    reuses until then.
    """

    __slots__ = ("spec", "inputs", "out_vts", "n_instrs", "program", "outputs_at", "inputs_at", "compiled",
                 "uses", "kept", "n_effects", "next")

    def __init__(self, spec: SpecWithKey, inputs: tuple, shape: tuple = (), n_effects: int = 0):
        self.spec = spec
        self.inputs = inputs
        self.out_vts = tuple(vt for _kind, vt in spec.params[len(inputs):])
        self.n_instrs = len(spec.instrs)
        self.program, data_at = program_of(shape) if shape else ([], [])
        self.outputs_at = shape[-1] if shape else ()
        self.inputs_at = tuple(data_at[k] for k in inputs) if shape else ()
        self.compiled = None
        self.uses = 0
        self.kept = False           # in the cache (a shape too large is not: used once)
        self.n_effects = n_effects  # the scatters among the roots (outputs_at: theirs first)
        self.next = None            # the plan used after this one last time (match() tries it first)


_plans: dict = {}
_entries = [0]              # entries of the shapes in _plans
# The plans last used for outputs of each signature (their count, the first one's operation and
# type), most recent first: match() tries them before a walk builds the shape.
_recent: dict = {}
MAX_RECENT = 4
_last: list = [None]        # the plan used last (its ``next`` is tried first)
_compiled_entries = [0]     # entries of the plans with generated checkers


_NO_EFFECTS: tuple = ()


class _NotCovered(Exception):
    """The graph is deeper than :data:`MAX_DEPTH` or holds a node with an ``extra`` other than a
    gather's source (a symbolic loop's or call's node): the caller builds its spec."""


def shape_of(outputs: list, effects: list = _NO_EFFECTS):
    """``(shape, data nodes)`` of evaluating the pending nodes ``outputs`` and the scatters
    ``effects`` (one size), or ``None`` if the graph holds a node the walk does not cover (see
    the module docstring)."""
    ids: dict = {}          # node -> position of its entry in key
    key: list = []
    data: list = []         # the data nodes, in the order of their entries
    try:
        for eff in effects:
            # (the scatters' operands first, then the outputs, then the scatters: build_kernel's order)
            if eff.value is not None or eff.a1 is not None:     # (a symbolic loop's scatter)
                raise _NotCovered
            for a in eff.a0:
                if a not in ids:
                    op = a.op
                    if op == "literal" or op == "data":
                        _leaf(ids, key, data, a, op)
                    else:
                        _visit(ids, key, data, a, 0)
        for out in outputs:
            if out not in ids:
                op = out.op
                if op == "literal" or op == "data":     # (evaluate() passes pending nodes only)
                    _leaf(ids, key, data, out, op)
                else:
                    _visit(ids, key, data, out, 0)
        for eff in effects:
            _scatter_entry(ids, key, data, eff)
    except _NotCovered:
        return None
    if effects:
        key.append(tuple([ids[e] for e in effects] + [ids[out] for out in outputs]))
    else:
        key.append(tuple([ids[out] for out in outputs]))
    return tuple(key), data


def _scatter_entry(ids: dict, key: list, data: list, eff: Node) -> None:
    """Add the entry ``("scatter", type, operand positions, target position, reduction)`` of the
    scatter ``eff`` (its operands have entries): its target, an evaluated node, gets a data entry
    (bound to a ``SCATTER_DST`` parameter, of its buffer's length, as the launch of a built spec
    binds it).  A target that is not a data node is not covered."""
    extra = eff.extra
    if type(extra) is not tuple or len(extra) != 2:
        raise _NotCovered
    target, reduce_op = extra
    if type(target) is not Node or target.op != "data" or not (reduce_op is None or type(reduce_op) is str):
        raise _NotCovered
    s = ids.get(target)
    if s is None:
        s = _leaf(ids, key, data, target, "data")
    ids[eff] = len(key)
    key.append(("scatter", eff.vt, tuple([ids[a] for a in eff.a0]), s, reduce_op))


def _visit(ids: dict, key: list, data: list, n: Node, depth: int) -> int:
    """Add the entry of the pending node ``n`` (not visited yet) after its operands'; return
    its position.

    The walk's state is passed as arguments (a recursive closure would keep every visited node
    alive in a reference cycle until the collector runs).  Data and literal operands of a
    two-operand node get their entries here, without a call, and the three operands of an
    ``fma`` are unrolled: the walk of a complex chain measured ~5% faster, of a matrix product
    ~10%.  (Most reuses of a shape do not walk at all: :func:`match`.)
    """
    if depth > MAX_DEPTH:
        raise _NotCovered
    if n.extra is not None:
        return _visit_gather(ids, key, data, n, depth)
    b = n.a1        # (Node.args without its property call: a1 is None unless two operands)
    if b is None:
        args = n.a0
        if len(args) == 3:      # (fma, select: the matrix products and complex numbers; unrolled)
            a, b, c = args
            ia = ids.get(a)
            if ia is None:
                op = a.op
                ia = _leaf(ids, key, data, a, op) if op == "literal" or op == "data" else \
                    _visit(ids, key, data, a, depth + 1)
            ib = ids.get(b)
            if ib is None:
                op = b.op
                ib = _leaf(ids, key, data, b, op) if op == "literal" or op == "data" else \
                    _visit(ids, key, data, b, depth + 1)
            ic = ids.get(c)
            if ic is None:
                op = c.op
                ic = _leaf(ids, key, data, c, op) if op == "literal" or op == "data" else \
                    _visit(ids, key, data, c, depth + 1)
            t = (ia, ib, ic)
        else:
            t = _positions(ids, key, data, args, depth)
        v = n.value
        if type(v) is float:
            v = ("f", float_bits(v))
        item = (n.op, n.vt, v, t)
    else:
        a = n.a0
        ia = ids.get(a)
        if ia is None:
            op = a.op
            if op == "literal":
                v = a.value
                ia = ids[a] = len(key)
                key.append(("literal", a.vt, v if type(v) is not float or (v != 0 and v == v) else ("f", float_bits(v))))
            elif op == "data":
                ia = ids[a] = len(key)
                key.append(("data", a.vt, a.size == 1))
                data.append(a)
            else:
                ia = _visit(ids, key, data, a, depth + 1)
        ib = ids.get(b)
        if ib is None:
            op = b.op
            if op == "literal":
                v = b.value
                ib = ids[b] = len(key)
                key.append(("literal", b.vt, v if type(v) is not float or (v != 0 and v == v) else ("f", float_bits(v))))
            elif op == "data":
                ib = ids[b] = len(key)
                key.append(("data", b.vt, b.size == 1))
                data.append(b)
            else:
                ib = _visit(ids, key, data, b, depth + 1)
        item = (n.op, n.vt, ia, ib)
    i = ids[n] = len(key)
    key.append(item)
    return i


def _visit_gather(ids: dict, key: list, data: list, n: Node, depth: int) -> int:
    """:func:`_visit` of a node with an ``extra``: a gather from a data node (the texture lookups'
    four per bilinear lookup) gets the entry ``("gather", type, source position, (index position,
    mask position))``, its source an entry of a data node (bound to a ``GATHER_SRC`` parameter:
    the spec's gather reads the source's buffer, its element count that buffer's length, as the
    launch of a built spec does); any other such node (a symbolic loop's or call's) is not
    covered."""
    src = n.extra
    args = n.a0
    if n.op != "gather" or type(src) is not Node or src.op != "data" or n.a1 is not None or len(args) != 2:
        raise _NotCovered
    t = _positions(ids, key, data, args, depth)
    s = ids.get(src)
    if s is None:
        s = _leaf(ids, key, data, src, "data")
    i = ids[n] = len(key)
    key.append(("gather", n.vt, s, t))
    return i


def _positions(ids: dict, key: list, data: list, args: tuple, depth: int) -> tuple:
    """The positions of the operands ``args`` of a node at ``depth``, each given its entry when
    not visited yet."""
    t = []
    for a in args:
        i = ids.get(a)
        if i is None:
            op = a.op
            i = _leaf(ids, key, data, a, op) if op == "literal" or op == "data" else \
                _visit(ids, key, data, a, depth + 1)
        t.append(i)
    return tuple(t)


def _leaf(ids: dict, key: list, data: list, n: Node, op: str) -> int:
    """Add the entry of the literal or data node ``n`` (not visited yet); return its position.

    One entry per literal node, not per distinct constant as in the spec: two graphs of equal
    shapes still have equal constants in the same places, so equal specs."""
    i = ids[n] = len(key)
    if op == "literal":
        v = n.value
        key.append(("literal", n.vt, v if type(v) is not float or (v != 0 and v == v) else ("f", float_bits(v))))
    else:
        key.append(("data", n.vt, n.size == 1))
        data.append(n)
    return i


def plan_of(outputs: list, shape: tuple, data: list, effects: list = _NO_EFFECTS) -> Plan | None:
    """The plan of ``shape`` (built from ``outputs`` and ``effects`` the first time; ``None`` if its
    spec binds something other than ``data`` then ``outputs``, which a covered graph never does)."""
    plan = _plans.get(shape)
    if plan is None:
        spec = build_kernel(outputs, effects)
        position = {id(d): i for i, d in enumerate(data)}
        n_in = len(spec.bindings) - len(spec.outputs)
        inputs = tuple(position.get(id(b), -1) for b in spec.bindings[:n_in])
        if -1 in inputs or spec.outputs != outputs or \
                any((kind == OUT) != (i >= n_in) for i, (kind, _vt) in enumerate(spec.params)):
            return None     # (the launch binds data buffers, then a new buffer per OUT parameter)
        plan = Plan(SpecWithKey(spec.instrs, spec.params, HashedKey(spec.key()), spec.has_side_effects), inputs,
                    shape, len(effects))
        if len(shape) > MAX_ENTRIES:
            return plan         # (used once: a graph this large is not kept)
        if len(_plans) >= MAX_PLANS or _entries[0] + len(shape) > MAX_ENTRIES:
            clear()
        _plans[shape] = plan
        plan.kept = True
        _entries[0] += len(shape)
    return plan


def clear() -> None:
    """Forget every plan."""
    for plan in _plans.values():
        if plan.compiled:
            plan.compiled.release()
    _plans.clear()
    _recent.clear()
    _last[0] = None
    _entries[0] = 0
    _compiled_entries[0] = 0


def _signature(outputs: list, effects: list) -> tuple:
    """The key of :data:`_recent`: the count of outputs, the first one's operation and type; with
    scatters, also their count and the first one's type and reduction."""
    if effects:
        e = effects[0]
        return (len(outputs), len(effects), e.vt, e.extra[1])
    o = outputs[0]
    return (len(outputs), o.op, o.vt)


def remember(outputs: list, plan: Plan, effects: list = _NO_EFFECTS) -> None:
    """Make ``plan`` the first that :func:`match` tries for outputs (and scatters) like ``outputs``
    (and ``effects``), and the successor of the plan used last, if it is kept in the cache."""
    if not plan.kept:
        return
    sig = _signature(outputs, effects)
    recent = _recent.get(sig)
    if plan.compiled is None and plan.uses >= COMPILE_AFTER:
        _compile(plan)
    if recent is None:
        _recent[sig] = [plan]
    elif recent[0] is not plan:
        if plan in recent:
            recent.remove(plan)
        elif len(recent) >= MAX_RECENT:
            recent.pop()
        recent.insert(0, plan)
    last = _last[0]
    if last is not None:
        last.next = plan
    _last[0] = plan


def match(outputs: list, effects: list = _NO_EFFECTS):
    """``(plan, inputs)`` for evaluating ``outputs`` and ``effects`` (as :func:`shape_of` takes
    them) with the successor of the plan used last or a plan recently used for outputs of their
    signature, if their graph has its shape (checked by :mod:`.plan_check`, without the walk to
    the shape); else ``None``.  ``inputs`` are the buffers of the data nodes bound to the plan's
    input parameters."""
    roots = effects + outputs if effects else outputs   # (the scatters' entries, then the outputs')
    last = _last[0]
    if last is not None:
        # A program evaluates its graphs in the same order at every call: the plan that followed
        # the last one before is tried first (a loop of more shapes of one signature than
        # MAX_RECENT, a scan's steps, missed every recent plan and walked every graph).
        plan = last.next
        if plan is not None and len(plan.outputs_at) == len(roots) and plan.n_effects == len(effects):
            bindings = _bindings(plan, roots)
            if bindings is not None:
                _last[0] = plan
                return plan, bindings
    recent = _recent.get(_signature(outputs, effects))
    if recent is None:
        return None
    for plan in recent:
        bindings = _bindings(plan, roots)
        if bindings is None:
            continue
        if recent[0] is not plan:
            recent.remove(plan)
            recent.insert(0, plan)
        if last is not None:
            last.next = plan
        _last[0] = plan
        return plan, bindings
    return None


def _bindings(plan: Plan, roots: list):
    """The buffers bound to ``plan``'s input parameters if the graph of ``roots`` (the scatters, then
    the outputs) has its shape, else ``None``; counts the reuses until its checker is generated."""
    compiled = plan.compiled
    if compiled:
        return compiled.fn(*roots)
    got = check(plan.program, plan.outputs_at, roots)
    if got is None:
        return None
    if compiled is None:
        plan.uses += 1
        if plan.uses >= COMPILE_AFTER:
            _compile(plan)
    return [got[i].value for i in plan.inputs_at]


def _compile(plan: Plan) -> None:
    """Give ``plan`` its generated checker (``False``: it keeps the interpreted one, being too large
    or beyond :data:`MAX_COMPILED_ENTRIES`)."""
    n = len(plan.program)
    if _compiled_entries[0] + n > MAX_COMPILED_ENTRIES:
        plan.compiled = False
        return
    plan.compiled = compile_check(plan.program, plan.outputs_at, plan.inputs_at) or False
    if plan.compiled:
        _compiled_entries[0] += n
