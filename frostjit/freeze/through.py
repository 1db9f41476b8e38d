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
after, so a training loop replays both directions without running Python per operation.

Its walk is the forward call's walk followed by the seeds, so once a backward pass has checked
that for a seed layout, later ones bind it from the forward call's walk (no second walk of the
arguments, :meth:`Through._bound_run`), and the forward replay keeps the intermediates the
derivative reads, so that it launches only the backward kernels (:mod:`.kept`).  They live as
long as the call's outputs, as a plain call's AD graph does.

Dr.Jit 1.5 gives silently zero gradients there (its outputs are new AD leaves).

Staleness: the derivative functions are frozen functions keyed like any other (grad-enabled
status of every input, which outputs carry gradients, the AD scope), and they walk the same
globals, closure cells and instance as the forward function; the gradients the inputs already
hold are taken off while the backward derivative runs and added back after.  An input array
changed in place between the call and the backward pass is put back to the value the call saw
while the derivative runs (a bound replay reads the call's nodes); an input *replaced* in its
container (a different array object) cannot be, and raises :class:`RuntimeError` where the
derivative walks its arguments (a bound replay uses the call's arrays, as a plain call does).

What stays a plain call (the ``FreezeWarning`` fallback of :mod:`frostjit.ad.frozen`): a
function that also writes back into its inputs (the derivative would repeat the write), or
whose grad-enabled outputs depend on a variable made differentiable inside it, or sit in a
part of the result that cannot be matched again (a closure, a copy-protocol object).
"""
from __future__ import annotations

import weakref
from operator import attrgetter, is_

from ..ad import graph
from ..ad.graph import ADFlag, DeferredCalls, HubOutput, Vertex, hub_child, new_hub, scopes
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions.evaluation import make_opaque
from ..schedule.evaluate import evaluate
from ..trace.state import state
from ..tree.kinds import ARRAY_TYPES
from .outputs import instance_state, container_state
from .values import float_bits
from . import kept as _kept
from .binder import Bound
from .layout import entries
from .records import (ArrayOut, InputArray, InputAlias, InputContainer, PythonValue, WidthOut, SharedOut, SharedRef, VectorOut,
                      SequenceOut, DictOut, ObjectOut, ContainerOut, ConstructedOut, nested_descriptors)

__all__ = ["ThroughInfo", "Through", "Unmatched", "new_through", "claim", "check_inputs", "dependencies",
           "match", "derivative_state"]


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
    if t is ConstructedOut:
        # a protocol object rebuilt by __fj_construct__ (a tensor: its array and shape), found
        # again through the children the protocol names, as the output was described
        if type(value) is not desc.cls:
            raise Unmatched("an object differs")
        got = dict(entries(value))
        for n, d in zip(desc.names, desc.values):
            if n not in got:
                raise Unmatched(f"entry {n!r} is missing")
            match(d, got[n], slots)
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
    input leaf indices the slots depend on; ``key``: the recording's layout key).  The
    derivative functions are made on first use; ``bound`` maps a seed layout
    (:func:`_seed_part`) to the backward derivative's cache entry whose recording a replay binds
    from the forward call's walk (:meth:`Through._bound_run`).  What the key fixes about the
    walked inputs is worked out by the first replay (:meth:`layout`)."""

    __slots__ = ("ff", "out_desc", "n", "inputs", "key", "vjp", "jvp", "bound", "misses", "edges", "primal",
                 "grad_idx", "recording", "views",
                 "__weakref__")

    def __init__(self, ff, out_desc, n: int, inputs, key=None, views=()):
        self.ff = weakref.ref(ff)
        # the forward function's globals, closure cells and instance attributes (views with
        # values()/same()/put()): what a call read there is put back while its derivative runs
        # (Through._put_back_python)
        self.views = views
        self.out_desc = out_desc
        self.n = n
        self.inputs = tuple(inputs)
        self.key = key
        self.vjp = None
        self.jvp = None
        self.bound = {}
        self.misses = {}            # seed layout -> checks that found the derivative's walk different
        self.recording = None       # (weak) the forward Recording (its replay may keep intermediates: .kept)
        self.edges = [HubOutput(k, n) for k in range(n)]     # (immutable: shared by every replay)
        self.primal = None          # whether the walk reaches gradients through vertices (layout())
        self.grad_idx = ()          # indices of the grad-enabled arrays among the primal leaves

    def layout(self, leaves) -> None:
        """Note what the layout key fixes for every replay: whether the walked ``leaves`` include
        gradients reached through the inputs' vertices, and which primal leaves are grad-enabled."""
        grads = {id(a._ad.grad) for a in leaves if a._ad is not None and a._ad.grad is not None}
        primal = [a for a in leaves if id(a) not in grads]
        grad_idx = tuple(i for i, a in enumerate(primal) if a._ad is not None)
        # (without gradients among the leaves, a grad-enabled leaf among the inputs the outputs
        # depend on is always a parent of the hub: only the others can be "not depended on")
        self.grad_idx = grad_idx if grads else tuple(i for i in grad_idx if i not in self.inputs)
        self.primal = bool(grads)

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
_new = object.__new__
_AD = attrgetter("_ad")


def _running():
    """The :class:`Through` whose derivative this thread runs now, or None."""
    ac = scopes.after_call
    return ac.owner if type(ac) is DeferredCalls else None


def check_inputs(flat) -> None:
    """The derivative functions' ``_inputs_hook``: their walked inputs hold the call's arrays."""
    t = _running()
    if t is not None:
        t.check(flat)


def derivative_state(state_fn, kind: str):
    """The ``state_fn`` of a derivative function: the forward function's state (if any) and,
    backward, the gradients that arrived at the outputs (walked last, so the derivative's walk
    is the forward call's walk followed by the seeds)."""
    if kind != "vjp":
        return state_fn
    if state_fn is None:
        return _seeds
    return lambda *args, **kwargs: (state_fn(*args, **kwargs), _seeds())


def _seeds(*_args, **_kwargs) -> list:
    """The gradients the derivative running on this thread propagates (:meth:`Through._run`)."""
    return scopes.after_call.owner.seeds


def new_through(info: ThroughInfo, flat) -> "Through":
    """The hub handler of one replay (called by the generated replay code, before its outputs
    are built; see :class:`Through`); the replay's inputs ``flat`` keep it until :func:`claim` (a
    plain slot: a ``threading.local`` costs ~10x as much, and a replay's inputs are its own).

    Made without ``Through()`` and a Python ``__init__``, its hub and output vertices without
    theirs (:func:`~frostjit.ad.graph.new_hub`): one per replay of a training step's forward
    pass, where they were ~10 % of the Python instructions (callgrind)."""
    t = _new(Through)
    flat.through = t
    t.info = info
    t.flat = flat
    t.fwd = None                # the forward call's walked inputs (after claim())
    t.seeds = None              # the gradients a backward derivative propagates now
    t.held = None               # the gradients the inputs held before it (_hold_grads)
    t.kept = None               # the forward replay's intermediates for the derivative (.kept)
    t.args = t.kwargs = None
    leaves = flat.leaves
    parents = {}
    for i in info.inputs:
        v = leaves[i]._ad
        if v is not None:
            parents[v.id] = v
    if info.primal is None:
        info.layout(leaves)
    nodes = verts = None
    if info.primal:
        leaves = _primal(leaves)
    else:
        # the leaves' nodes and vertices at the call: the binder's lists when it gives them (the
        # walk's nodes otherwise; never changed)
        nodes = getattr(flat, "leaf_nodes", None)
        verts = getattr(flat, "leaf_ads", None)
    t.leaves = leaves
    t.nodes = nodes if nodes is not None else list(map(_NODE, leaves))
    if verts is None:
        verts = list(map(_AD, leaves))
    t.verts = verts
    # the globals and closure cells the call read (a global rebound before the backward pass
    # is put back while the derivative runs, as the plain call's AD graph used the old value)
    views = info.views
    if not views:
        t.python = None
    elif len(views) == 1:
        t.python = [views[0].values()]      # (no comprehension: a function call)
    else:
        t.python = [v.values() for v in views]
    # The inputs' vertices the outputs do not depend on (usually none): a traversal through
    # the hub must leave their gradients as they are.
    if info.grad_idx:
        others = {}
        for i in info.grad_idx:
            v = verts[i]
            if v is not None and v.id not in parents:
                others[v.id] = v
        t.others = list(others.values())
        t.gverts = [*parents.values(), *t.others]
    else:
        t.others = ()
        t.gverts = list(parents.values())
    hub = t.hold = new_hub(t, parents.values())     # (held until claim(): then by the outputs only)
    t.hub = weakref.ref(hub)
    t.outs = [None] * info.n
    return t


def claim(flat, args, kwargs) -> None:
    """After a replay that made a hub: give it the call's arguments (the derivatives run on them)."""
    t = getattr(flat, "through", None)
    if t is None:
        return          # (claimed already: checking mode claims before its plain call)
    flat.through = None
    t.flat = None
    t.fwd = flat
    t.args = args
    t.kwargs = kwargs
    # The outputs hold the hub now; the hub holds this handler: a strong reference back
    # would make a cycle that keeps the call's arrays alive until the cyclic GC runs.
    t.hold = None


class Through:
    """The handler of one replay's hub (see module docstring and :class:`~frostjit.ad.graph.HubVertex`);
    made by :func:`new_through` only."""

    __slots__ = ("info", "flat", "fwd", "args", "kwargs", "leaves", "nodes", "verts", "others", "gverts", "hub",
                 "hold", "outs", "seeds", "held", "kept", "python", "__weakref__")

    def output(self, k: int, cls, node) -> Vertex:
        """The AD vertex of output slot ``k`` (a child of the hub)."""
        v = hub_child(self.hold, self.info.edges[k], cls, node)
        self.outs[k] = weakref.ref(v)
        return v

    # -- the traversals ----------------------------------------------------------------
    def backward(self, grads, accept) -> None:
        self._run("vjp", grads, accept)
        scopes.replayed_backward = True     # (an optimizer step after it replays too: opt/base.py)

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
        info = self.info
        fn = info.vjp if kind == "vjp" else info.jvp
        if fn is None:
            fn = info.frozen(kind)
        # Inputs that must not receive gradients here (not depended on, or outside backward_to's
        # targets) keep the gradient they have.
        keep = [(v, v.grad) for v in self.others] if self.others else []
        if accept is not None:
            hub = self.hub()        # (alive: the traversal that called us came through it)
            keep += [(p, p.grad) for p, _f, _b in (hub.parents if hub is not None else ()) if not accept(p)]
        swapped = held = ()
        python = None
        # The vertices the derivative's write-backs give gradients are not walked on from
        # (after_call): the traversal that called us walks the inputs' parents itself.  The
        # list also names this handler (for check_inputs, _seeds): one per-thread attribute.
        saved = scopes.after_call
        deferred = DeferredCalls()
        deferred.owner = self
        scopes.after_call = deferred
        try:
            result = None
            if self.python is not None:
                python = self._put_back_python()
            if kind == "vjp":
                held = self.held = self._hold_grads()
                # (the hub's list, handed over to us; the held gradients after it: _vjp_body)
                seeds = self.seeds = grads + held if held else grads
                part = _seed_part(self.fwd, seeds, fn) if self._bindable() else None
                if part is not None and fn._checking():
                    swapped = self._put_back()      # (the checking call runs the function on them)
                if part is None or not self._bound_run(fn, part, seeds):
                    swapped = swapped or self._put_back()
                    check = (part is not None and part[0] not in info.bound and len(info.bound) < _MAX_BOUND
                             and info.misses.get(part[0], 0) < _MAX_MISSES)
                    dkey = self._verify(fn, part, seeds) if check else None
                    if check and dkey is None:
                        info.misses[part[0]] = info.misses.get(part[0], 0) + 1
                    fn(*self.args, **self.kwargs)
                    if dkey is not None:
                        self._remember(fn, part[0], dkey)
                held = ()       # (the derivative accumulated onto them)
            else:
                swapped = self._put_back()
                result = fn(*self.args, **self.kwargs)
        finally:
            self.seeds = self.held = None
            scopes.after_call = saved
            for a, n, v in swapped:
                a._node, a._ad = n, v
            if python:
                for view, now in python:
                    view.put(now)
            if held:            # (the derivative raised: put them back)
                for v, g in zip(self.gverts, held):
                    if g is not None:
                        v.grad = g
            for v, g in keep:
                v.grad = g
        return result

    def _hold_grads(self):
        """Take the gradients the inputs hold now off their vertices: the list of them (in
        ``gverts`` order, ``None`` where an input holds none), or None when none holds one.

        The backward derivative walks them after its seeds and puts them back on the vertices
        before its traversal (:func:`_vjp_body`), so it accumulates onto them edge by edge in the
        plain call's order (``((g + c1) + c2) + ...``, bit-identical; adding the derivative's total
        rounds differently), while its recording stays keyed on their layout alone, after the
        forward call's walk: a loss with another path to an input (``f(x) + g(x)``) or gradients
        accumulated over several backward passes replay the same derivative, bound from the
        forward call's walk (:meth:`_bound_run`).  Unevaluated ones are evaluated (as the walk
        would), so that they bind."""
        held = None
        lazy = None
        for k, v in enumerate(self.gverts):
            g = v.grad
            if g is not None:
                if held is None:
                    held = [None] * len(self.gverts)
                held[k] = g
                v.grad = None
                if g._node.op not in _BOUND_OPS:
                    lazy = [g._node] if lazy is None else lazy + [g._node]
        if lazy is not None:
            evaluate(lazy)
        return held

    def _put_back_python(self) -> list:
        """Put back the globals and closure cells the call read where they were rebound since (the
        derivative runs the function, and its recordings are guarded on them); returns
        ``[(view, values now)]`` to restore after.  (The instance of a frozen method is put
        back attribute by attribute; objects changed in place deeper down are not.)"""
        out = []
        for view, then in zip(self.info.views, self.python):
            now = view.values()
            if not view.same(now, then):
                view.put(then)
                out.append((view, now))
        return out

    def _put_back(self) -> list:
        """Put the call's nodes and vertices back into input arrays changed in place since the
        call (the derivative runs the function on them); returns what to restore after."""
        swapped = []
        leaves, nodes, verts = self.leaves, self.nodes, self.verts
        if not (all(map(is_, map(_NODE, leaves), nodes)) and all(map(is_, map(_AD, leaves), verts))):
            for a, n, v in zip(leaves, nodes, verts):
                if a._node is not n or a._ad is not v:
                    swapped.append((a, a._node, a._ad))
                    a._node, a._ad = n, v
        return swapped

    # -- the backward derivative bound from the forward call's walk ---------------------------
    # The derivative's walk is the forward call's followed by the seeds (derivative_state), so
    # once a backward pass has checked that the derivative's own walk equals that composition
    # (_verify) and replayed one recording for it (_remember), later backward passes through
    # replays of the same recording with the same seed layout replay it without walking the
    # arguments again: the inputs are the forward call's (what a plain call differentiates).
    def _bindable(self) -> bool:
        """Whether this backward pass may use the forward call's walk: no AD scope now, the
        call's JIT flags, and no gradient among the forward call's inputs (the derivative's
        inputs hold none: _hold_grads).  Pending side effects are run first (as the
        derivative's walk would)."""
        info = self.info
        key = info.key
        fwd = self.fwd
        if not (key is not None and key[1] is None and not info.primal and fwd is not None and not fwd.numpy
                and state.flags == key[0] and not (graph.open_scopes and (scopes.enable or scopes.isolate))):
            return False
        if state.side_effects:
            evaluate(())
        return True

    def _bound_run(self, fn, part, seeds) -> bool:
        """Replay the recording remembered for this seed layout, bound from the forward call's walk.
        False: none applies (the derivative is called the usual way, and the layout is checked
        again: its recording may have been evicted or dropped, or its guards failed)."""
        bound = self.info.bound
        hit = bound.get(part[0])
        if hit is None:
            return False
        b = _compose(self.fwd, part, seeds)
        b.kept = self.kept
        if fn._replay_bound(hit, b, self.args, self.kwargs, self._kept_variant):
            return True
        del bound[part[0]]
        return False

    def _kept_variant(self, recd):
        """The derivative recording ``recd``'s replay reading the forward replay's kept
        intermediates (:mod:`.kept`), or None (its usual replay).  Planned on first use; the
        forward replay keeps them from its next call on."""
        run = getattr(recd, "kept_run", None)
        if run is None:
            run = recd.kept_run = False
            fwd = self.info.recording() if self.info.recording is not None else None
            if fwd is not None and fwd.valid:
                p = _kept.plan(fwd, recd, len(self.fwd.nodes), fwd.keep_out or None)
                if p is not None:
                    keep_out, kept_in = p
                    if not fwd.keep_out:
                        fwd.run = fwd.variant(keep_out=keep_out)
                        fwd.keep_out = keep_out
                    run = recd.kept_run = recd.variant(kept_in=kept_in)
        return run if self.kept is not None else None

    def _verify(self, fn, part, seeds):
        """The derivative's layout key when its full walk of this call equals the forward call's
        walk followed by the seeds (same key prefix, same nodes, sizes, leaves, containers and
        parameters), else None."""
        key = self.info.key
        dflat, dkey = fn._walk(self.args, self.kwargs, False)
        b = _compose(self.fwd, part, seeds)
        n = len(key[2])
        if not (dkey[0] == key[0] and dkey[1] is None and dkey[2][:n] == key[2]
                and _same(dflat.nodes, b.nodes) and dflat.sizes == b.sizes and _same(dflat.leaves, b.leaves)
                and _same(dflat.containers, b.containers) and _same(dflat.params, b.params) and not dflat.numpy):
            return None
        return dkey

    def _remember(self, fn, token, dkey) -> None:
        """After the usual call: remember the derivative's cache entry of key ``dkey`` for the
        seed layout ``token`` (:meth:`FrozenFunction._replay_bound` picks its recording)."""
        entry = fn._cache.entries.get(dkey)
        if entry is not None:
            self.info.bound[token] = entry

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


_BOUND_OPS = ("data", "literal")      # what a held gradient's node may be for _seed_part to bind it
_MAX_BOUND = 8      # seed layouts remembered per recording (a backward pass seeds them differently)
_MAX_MISSES = 3     # checks of one seed layout that found the derivative's walk different, before giving up


_last_literal = (None, None)     # (the float last given a token, its token): see _literal_token


def _literal_token(v):
    """A literal seed's value in a seed-layout token: a float by its exact bits (``hex``: -0.0 and
    0.0 differ; a NaN by :func:`.values.float_bits`, its sign and payload), anything else as is.  The float last tokenized is kept, by
    identity: a loss's seed is the same ``1.0`` object every backward pass (``float.hex`` was ~0.5%
    of a training step's instructions)."""
    global _last_literal
    if type(v) is not float:
        return v
    last = _last_literal
    if v is last[0]:
        return last[1]
    h = v.hex() if v == v else float_bits(v)       # (a NaN's sign and payload too)
    _last_literal = (v, h)      # (one rebinding: another thread sees the old pair or the new one)
    return h


def _seed_part(fwd, seeds, fn):
    """``(token, nodes, sizes)``: the seeds' part of the backward derivative ``fn``'s walk
    after the forward call's walk ``fwd`` (new input nodes, new size classes, and a token that
    fixes the layout-key tokens the walk gives them), or None where the seeds are not plain
    evaluated or literal arrays each reached once (the usual call walks those).  A literal the
    walk would make opaque (``fn``'s auto-opaque mask) is made opaque here."""
    if fwd is None:
        return None
    force, mask = not fn.auto_opaque, fn._opaque_mask
    li = len(fwd.leaves)
    if len(seeds) == 1:         # the common case (a loss): one literal seed, its token alone
        g = seeds[0]
        if g is not None and type(g) in ARRAY_TYPES and g._ad is None:
            node = g._node
            if node.op == "literal" and not (force or li in mask):
                return ((type(g), "L", _literal_token(node.value), node.size),), (), ()
    toks = []
    nodes = []
    sizes = []
    fnodes, fsizes = fwd.nodes, fwd.sizes
    seen = set()
    for g in seeds:
        if g is None:
            toks.append(None)
            continue
        t = type(g)
        if t not in ARRAY_TYPES or g._ad is not None or id(g) in seen:
            return None
        seen.add(id(g))
        node = g._node
        op = node.op
        if op == "literal" and (force or li in mask):
            make_opaque(g)
            node = g._node
            op = node.op
        li += 1
        if op == "literal":
            toks.append((t, "L", _literal_token(node.value), node.size))
            continue
        if op != "data" or node in fnodes or node in nodes:       # (Node compares by identity)
            return None
        size = node.size
        if size == 1:
            c = -1
        elif size in fsizes:
            c = fsizes.index(size)
        elif size in sizes:
            c = len(fsizes) + sizes.index(size)
        else:
            c = len(fsizes) + len(sizes)
            sizes.append(size)
        nodes.append(node)
        toks.append((t, c))
    return tuple(toks), nodes, sizes


def _compose(fwd, part, seeds) -> Bound:
    """The backward derivative's inputs: the forward call's walk followed by the seeds."""
    b = _new(Bound)
    b.nodes = fwd.nodes + list(part[1]) if part[1] else fwd.nodes
    b.sizes = fwd.sizes + list(part[2]) if part[2] else fwd.sizes
    if len(seeds) == 1:     # (a loss: no comprehension; `None in seeds` would compare arrays with ==)
        b.leaves = fwd.leaves + seeds if seeds[0] is not None else fwd.leaves + []
    else:
        b.leaves = fwd.leaves + [g for g in seeds if g is not None]
    b.containers = fwd.containers + [seeds]
    b.numpy = ()
    b.params = fwd.params
    return b


def _same(a, b) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def _vjp_body(info: ThroughInfo, f, /, *args, **kwargs):
    """The recorded backward pass: ``f`` again, its grad-enabled outputs seeded (with the
    gradients :func:`_seeds` gives), ``backward``."""
    t = scopes.after_call.owner
    grads = t.seeds
    out = f(*args, **kwargs)
    if t.held:
        # the gradients the inputs held (walked after the seeds): accumulated onto from here on,
        # in the plain call's order (Through._hold_grads)
        for v, g in zip(t.gverts, grads[info.n:]):
            if g is not None:
                v.grad = g
    starts = []
    for a, g in zip(_grad_arrays(info, out), grads):
        if g is not None and a is not None and a._ad is not None:
            graph.accum(a._ad, g)
            starts.append(a._ad)
    if starts:
        graph.traverse_backward(starts, ADFlag.Default)


def _jvp_body(info: ThroughInfo, f, /, *args, **kwargs):
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
