"""Gradients *through* a frozen function's results, replayed in both directions.

A recording whose outputs depend on grad-enabled inputs through the AD graph (``loss =
frozen_forward(params); fj.backward(loss)``) does not keep that graph: a replay runs kernels,
not the operations that made it.  Instead every replay joins its outputs to the inputs they
depend on through one custom-operation hub (:class:`~frostjit.ad.graph.HubVertex`), as
:func:`frostjit.custom` does.  When a traversal reaches the hub, its derivative is computed by
a second frozen function, the call's *vector-Jacobian product*: the function run again on the
same inputs, its outputs seeded with the gradients that arrived, ``backward`` inside (forward
mode: a Jacobian-vector product, ``forward`` inside).  That function is recorded once per
layout (of the inputs, of which outputs received gradients, of the AD scope) and replayed
after, so a training loop replays both directions without running Python per operation.  The
forward kernels run twice (once per direction): the price of not keeping the intermediate
values of every replay alive until a backward pass that may never come.

Dr.Jit 1.5 gives silently zero gradients there (its outputs are new AD leaves).

Staleness: the derivative functions are frozen functions keyed like any other (grad-enabled
status of every input, which outputs carry gradients, gradients already present on the
inputs, the AD scope), and they walk the same globals, closure cells and instance as the
forward function.  An input array changed in place between the call and the backward pass is
put back to the value the call saw while the derivative runs; an input *replaced* in its
container (a different array object) cannot be, and raises :class:`RuntimeError`.

What stays a plain call (the ``FreezeWarning`` fallback of :mod:`frostjit.ad.frozen`): a
function that also writes back into its inputs (the derivative would repeat the write), or
whose grad-enabled outputs depend on a variable made differentiable inside it, or sit in a
part of the result that cannot be matched again (a closure, a copy-protocol object).
"""
from __future__ import annotations

import threading
import weakref
from operator import attrgetter, is_

from ..ad import graph
from ..ad.graph import ADFlag, HubOutput, HubVertex, Vertex, scopes
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from .outputs import instance_state, container_state
from .records import (ArrayOut, InputArray, InputAlias, InputContainer, PythonValue, WidthOut, SharedOut, SharedRef, VectorOut,
                      SequenceOut, DictOut, ObjectOut, ContainerOut, nested_descriptors)

__all__ = ["ThroughInfo", "Through", "Unmatched", "new_through", "claim", "check_inputs", "dependencies",
           "match"]


class Unmatched(Exception):
    """A grad-enabled output sits where :func:`match` cannot find it again."""


def match(desc, value, slots: list) -> None:
    """Find the arrays of output slots (:class:`~.records.ArrayOut` with a ``hub_slot``) in ``value``.

    ``desc`` is the recorded output descriptor (:mod:`.outputs`), ``value`` the same function's
    result computed again; ``slots[k]`` receives the array of slot ``k``.  Raises
    :class:`Unmatched` where a slot cannot be reached (the structure differs, or the slot is
    inside a function, cell or copy-protocol object).
    """
    t = type(desc)
    if t is ArrayOut:
        if desc.hub_slot is not None:
            if not isinstance(value, ArrayBase):
                raise Unmatched(f"expected an array, got {type(value).__name__}")
            slots[desc.hub_slot] = value
        return
    if t in (InputArray, InputAlias, InputContainer, PythonValue, WidthOut, SharedRef):
        return
    if t is SharedOut:
        match(desc.desc, value, slots)
        return
    if t is SequenceOut:
        items = list(value) if isinstance(value, (tuple, list)) else None
        if items is None or len(items) != len(desc.items):
            raise Unmatched("a sequence differs")
        for d, v in zip(desc.items, items):
            match(d, v, slots)
        return
    if t is VectorOut:
        if not isinstance(value, VectorBase) or len(value._c) != len(desc.items):
            raise Unmatched("a static vector differs")
        for d, v in zip(desc.items, value._c):
            match(d, v, slots)
        return
    if t is DictOut:
        if not isinstance(value, dict) or tuple(value.keys()) != tuple(desc.keys):
            raise Unmatched("a dict differs")
        for d, v in zip(desc.items, value.values()):
            match(d, v, slots)
        return
    if t is ObjectOut:
        if type(value) is not desc.cls:
            raise Unmatched("an object differs")
        names, values, snames, svalues = instance_state(value)
        _match_state(desc, dict(zip(names, values)) | dict(zip(snames, svalues)), slots)
        return
    if t is ContainerOut:
        if type(value) is not desc.cls:
            raise Unmatched("a container differs")
        vkeys, vitems, _f, vnames, vvalues, vsn, vsv = container_state(value)
        if len(vitems) != len(desc.items):
            raise Unmatched("a container differs")
        for d, v in zip(desc.items, vitems):
            match(d, v, slots)
        _match_state(desc, dict(zip(vnames, vvalues)) | dict(zip(vsn, vsv)), slots)
        return
    if _has_slot(desc):
        raise Unmatched(f"a grad-enabled output inside a {t.__name__} part of the result")


def _match_state(desc, got: dict, slots: list) -> None:
    """:func:`match` for the instance state of an :class:`ObjectOut` or :class:`ContainerOut`."""
    for n, d in list(zip(desc.names, desc.values)) + list(zip(desc.slots, desc.slot_values)):
        if n not in got:
            raise Unmatched(f"attribute {n!r} is missing")
        match(d, got[n], slots)


def _has_slot(desc) -> bool:
    """Whether a hub slot is anywhere inside descriptor ``desc``."""
    if type(desc) is ArrayOut and desc.hub_slot is not None:
        return True
    return any(_has_slot(d) for d in nested_descriptors(desc))


def dependencies(outputs, leaves, start: int):
    """Which inputs the recorded grad-enabled ``outputs`` depend on through the AD graph.

    ``leaves``: the input arrays (walk order); ``start``: the first vertex number of the call.
    Returns the sorted input indices, or ``None`` when an output depends on a variable that is
    not an input and was made differentiable before or during the call (no hub can stand for
    that).
    """
    index = {}
    for i, a in enumerate(leaves):
        if a._ad is not None:
            index.setdefault(a._ad.id, i)
    found = set()
    seen = set()
    stack = [a._ad for a in outputs]
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        i = index.get(v.id)
        if i is not None:
            found.add(i)
            continue
        if v.id < start or not v.parents:
            return None
        stack.extend(e[0] for e in v.parents)
    return sorted(found) if found else None


class ThroughInfo:
    """Per recording: what a replay's hub needs (``ff``: the forward :class:`FrozenFunction`,
    weakly; ``out_desc``: the output descriptor; ``n``: the number of slots; ``inputs``: the
    input leaf indices the slots depend on).  The derivative functions are made on first use."""

    __slots__ = ("ff", "out_desc", "n", "inputs", "vjp", "jvp", "__weakref__")

    def __init__(self, ff, out_desc, n: int, inputs):
        self.ff = weakref.ref(ff)
        self.out_desc = out_desc
        self.n = n
        self.inputs = tuple(inputs)
        self.vjp = None
        self.jvp = None

    def frozen(self, kind: str):
        """The frozen derivative function (``"vjp"`` or ``"jvp"``), made once."""
        fn = getattr(self, kind)
        if fn is None:
            ff = self.ff()
            if ff is None:
                raise RuntimeError("frostjit.freeze: differentiating through the result of a frozen function "
                                   "that no longer exists")
            body = _vjp_body if kind == "vjp" else _jvp_body
            fn = ff._derivative(body, self, kind)
            setattr(self, kind, fn)
        return fn


_NODE = attrgetter("_node")
_AD = attrgetter("_ad")
_last = threading.local()
_current = threading.local()        # the Through whose derivative this thread runs now


def check_inputs(flat) -> None:
    """The derivative functions' ``_inputs_hook``: their walked inputs hold the call's arrays."""
    t = getattr(_current, "value", None)
    if t is not None:
        t.check(flat)


def new_through(info: ThroughInfo, flat) -> "Through":
    """The hub of one replay (called by the generated replay code, before its outputs are built)."""
    t = Through(info, flat)
    _last.value = t
    return t


def claim(flat, args, kwargs) -> None:
    """After a replay that made a hub: give it the call's arguments (the derivatives run on them)."""
    t = getattr(_last, "value", None)
    if t is not None:
        _last.value = None
        if t.flat is flat:
            t.flat = None
            t.args = args
            t.kwargs = kwargs
            # The outputs hold the hub now; the hub holds this handler: a strong reference back
            # would make a cycle that keeps the call's arrays alive until the cyclic GC runs.
            t.hold = None


class Through:
    """The handler of one replay's hub (see module docstring and :class:`~frostjit.ad.graph.HubVertex`)."""

    __slots__ = ("info", "flat", "args", "kwargs", "leaves", "nodes", "verts", "others", "hub", "hold", "outs",
                 "__weakref__")

    def __init__(self, info: ThroughInfo, flat):
        self.info = info
        self.flat = flat
        self.args = self.kwargs = None
        leaves = flat.leaves
        parents = {}
        for i in info.inputs:
            v = leaves[i]._ad
            if v is not None:
                parents.setdefault(v.id, v)
        leaves = self.leaves = _primal(leaves)
        self.nodes = list(map(_NODE, leaves))
        verts = self.verts = list(map(_AD, leaves))
        # The inputs' vertices the outputs do not depend on (usually none): a traversal through
        # the hub must leave their gradients as they are.
        self.others = [v for v in {id(v): v for v in verts if v is not None}.values() if v.id not in parents]
        hub = self.hold = HubVertex(self)     # (held until claim(): then by the outputs only)
        self.hub = weakref.ref(hub)
        hub.connect(list(parents.values()))
        self.outs = [None] * info.n

    def output(self, k: int, cls, node) -> Vertex:
        """The AD vertex of output slot ``k`` (a child of the hub)."""
        edge = HubOutput(k, self.info.n)
        v = Vertex(cls, node.size, ((self.hold, edge, edge),), node)
        self.outs[k] = weakref.ref(v)
        return v

    # -- the traversals ----------------------------------------------------------------
    def backward(self, grads, accept) -> None:
        self._run("vjp", grads, accept)

    def forward(self, accept) -> None:
        tangents = self._run("jvp", None, accept)
        for k, g in enumerate(tangents):
            ref = self.outs[k]
            v = ref() if ref is not None else None
            if v is not None and g is not None:
                graph.accum(v, g)

    def _run(self, kind, grads, accept):
        if self.flat is not None or self.args is None:     # pragma: no cover - claim() always runs
            raise RuntimeError("frostjit.freeze: a frozen call's result lost its call")
        fn = self.info.frozen(kind)
        # Inputs that must not receive gradients here (not depended on, or outside backward_to's
        # targets) keep the gradient they have.
        keep = [(v, v.grad) for v in self.others]
        if accept is not None:
            hub = self.hub()        # (alive: the traversal that called us came through it)
            keep += [(p, p.grad) for p, _f, _b in (hub.parents if hub is not None else ()) if not accept(p)]
        swapped = []
        leaves, nodes, verts = self.leaves, self.nodes, self.verts
        if not (all(map(is_, map(_NODE, leaves), nodes)) and all(map(is_, map(_AD, leaves), verts))):
            for a, n, v in zip(leaves, nodes, verts):
                if a._node is not n or a._ad is not v:      # changed in place since the call: put back
                    swapped.append((a, a._node, a._ad))
                    a._node, a._ad = n, v
        saved = scopes.after_call
        scopes.after_call = []
        scopes.defer += 1       # the traversal that called us walks the inputs' parents itself
        outer, _current.value = getattr(_current, "value", None), self     # (for check_inputs)
        try:
            if kind == "vjp":
                fn(self.args, self.kwargs, list(grads))
                result = None
            else:
                result = fn(self.args, self.kwargs)
        finally:
            _current.value = outer
            scopes.defer -= 1
            scopes.after_call = saved
            for a, n, v in swapped:
                a._node, a._ad = n, v
            for v, g in keep:
                v.grad = g
        return result

    def check(self, flat) -> None:
        """Raise if an input array of the call is no longer among ``flat``'s (the derivative's
        walk of the same arguments): it was replaced in its container since the call."""
        now, mine = flat.leaves, self.leaves
        if len(now) >= len(mine) and all(map(is_, now, mine)):
            return      # (the usual order: the derivative walks the call's arguments first)
        if not set(map(id, now)).issuperset(map(id, mine)):
            ff = self.info.ff()
            raise RuntimeError(
                f"frostjit.freeze({ff.name if ff is not None else '?'}): the inputs of the call changed (an "
                "array was replaced in its container) between the call and the traversal through its result; "
                "differentiate a result before replacing the arrays it was computed from")

    def __repr__(self) -> str:       # (graphviz_ad's label of the hub)
        ff = self.info.ff()
        return f"frozen {ff.name if ff is not None else '?'}"


def _primal(leaves) -> list:
    """The input arrays without the gradients the walk reaches through their vertices (those
    change as gradients accumulate; they are not what the call computed from)."""
    grads = {id(a._ad.grad) for a in leaves if a._ad is not None and a._ad.grad is not None}
    return [a for a in leaves if id(a) not in grads] if grads else leaves


def _grad_arrays(info: ThroughInfo, out) -> list:
    slots = [None] * info.n
    match(info.out_desc, out, slots)
    return slots


def _vjp_body(info: ThroughInfo, f, args, kwargs, grads):
    """The recorded backward pass: ``f`` again, its grad-enabled outputs seeded, ``backward``."""
    out = f(*args, **kwargs)
    starts = []
    for a, g in zip(_grad_arrays(info, out), grads):
        if g is not None and a is not None and a._ad is not None:
            graph.accum(a._ad, g)
            starts.append(a._ad)
    if starts:
        graph.traverse_backward(starts, ADFlag.Default)


def _jvp_body(info: ThroughInfo, f, args, kwargs):
    """The recorded forward-mode pass: ``f`` again, the inputs' gradients pushed to its outputs."""
    out = f(*args, **kwargs)
    slots = _grad_arrays(info, out)
    verts = [a._ad for a in slots if a is not None and a._ad is not None]
    bound = graph.boundary()
    # the inputs (created before the call's isolation scope) that carry a tangent
    sources = [p for p in graph._ancestors(verts, bound) if p.id < bound and p.grad is not None]
    if sources:
        inside = [v for v in graph.descendants(sources) if v.id >= bound]
        graph.traverse_forward(inside + sources, sources, ADFlag.ClearNone)
    return [None if a is None or a._ad is None else a._ad.grad for a in slots]
