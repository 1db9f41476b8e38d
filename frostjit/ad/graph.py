"""The AD graph: vertices, edges, gradient accumulation, scopes, and traversal.

Every grad-enabled array holds a :class:`Vertex` in its ``_ad`` slot.  A
vertex knows its parents through *edges* ``(parent, fwd, bwd)``: ``bwd`` maps
the gradient of the vertex to a contribution to the parent's gradient (reverse
mode), ``fwd`` maps the parent's gradient to a contribution to the vertex's
(forward mode).  For elementwise operations both are "multiply by the partial
derivative", so ``fwd is bwd``.

Vertices are numbered in creation order.  A parent is always created before
its children, so sorting a set of vertices by number is a topological order:
backward traversal walks it from high to low, forward traversal from low to
high (micrograd's topological sort, for free).

Gradients are ordinary, *detached* JIT arrays: the derivative rules call
frostjit operations, which are traced and fuse into kernels like any other
work.  Nothing here loops over elements.

A custom operation (``fj.custom``, :mod:`.custom`) is one :class:`HubVertex`
between its inputs and its outputs: its edges to the inputs carry no
functions, its outputs' edges to it only collect their gradients, and the
traversals call the operation's ``backward``/``forward`` once when they reach
the hub (its inputs' derivatives depend on all its outputs at once).
"""
from __future__ import annotations

import enum
import itertools
import threading
import weakref
from math import copysign
from operator import attrgetter

from ..array.flat import ArrayBase
from ..array.registry import flat_type
from ..errors import GradSizeError
from ..trace import masks, ops
from ..functions.math import select as _select
from ..functions.reduce import sum as _sum
from ..trace.dtypes import Bool
from ..trace.state import state


class ADFlag(enum.IntFlag):
    """What a traversal clears as it goes (Dr.Jit names and values)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``ADFlag.Member``

    ClearNone = 0
    ClearEdges = 1        #: drop the edges it walked (the graph cannot be traversed twice)
    ClearInput = 2        #: clear the gradient of the vertices it started from
    ClearInterior = 4     #: clear the gradients of the vertices it passed through
    ClearVertices = 6
    AllowNoGrad = 8       #: do not raise when the argument is not grad-enabled
    Default = 7

    # Printed as Dr.Jit prints them (``ADFlag.ClearEdges``), not as the bare number IntFlag gives.
    __str__ = enum.Enum.__str__
    __format__ = enum.Enum.__format__


_CLEAR_EDGES, _CLEAR_INPUT, _CLEAR_INTERIOR = int(ADFlag.ClearEdges), int(ADFlag.ClearInput), int(ADFlag.ClearInterior)


class ADMode(enum.Enum):
    """Direction of a traversal (Dr.Jit names)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``ADMode.Member``

    Primal = 0
    Forward = 1
    Backward = 2


_ids = itertools.count(1)


class Vertex:
    """One AD variable: the derivative side of a JIT array (see module docstring).

    Attributes
    ----------
    id : int
        Creation number (a topological order).
    cls : type
        The AD array class of the variable; gradients have this type.
    size : int
        Number of elements.
    parents : tuple
        Edges ``(parent, fwd, bwd)``.
    children : list
        Weak references to the vertices that have an edge to this one (forward
        mode and ``backward_to`` walk them).
    grad : array or None
        The accumulated gradient (``None`` means zero).
    node : weakref or None
        The primal JIT node (only to give new gradient arrays its symbolic size
        inside frozen functions).
    """

    __slots__ = ("id", "cls", "size", "parents", "children", "grad", "node", "sym", "__weakref__")
    is_hub = False      #: True for the vertex of a custom operation (:class:`HubVertex`)

    def __init__(self, cls, size: int, parents: tuple = (), node=None):
        self.id = next(_ids)
        self.cls = cls
        self.size = size
        self.parents = parents
        self.children = []
        self.grad = None
        if node is not None:
            self.node = _ref(node)
            # inside a frozen function: the symbolic size, which outlives the node (see sized_literal)
            self.sym = node.sym
        else:
            self.node = self.sym = None
        if open_scopes and scopes.enable:
            _join_scope(self)
        if parents:
            me = _ref(self)
            for edge in parents:
                kids = edge[0].children
                kids.append(me)
                if len(kids) >= 32 and (len(kids) & (len(kids) - 1)) == 0:
                    _prune(kids)

    def __repr__(self) -> str:
        return f"Vertex({self.id}, {self.cls.__name__}, size={self.size}, parents={len(self.parents)})"

    # Frozen functions walk a grad-enabled input's vertex like a container holding its
    # gradient (frostjit.tree's traversal protocol): the gradient before the call is an input,
    # a changed gradient is written back through __fj_assign__.
    __fj_traverse_attrs__ = ("grad",)

    def __fj_assign__(self, values: dict) -> None:
        assign_grad(self, values.get("grad"))


class HubVertex(Vertex):
    """The vertex of a custom operation (see the module docstring and :mod:`.custom`).

    ``handler`` has ``backward(grads, accept)`` (``grads``: the list of gradients its
    outputs passed on, one per output, ``None`` where none arrived) and ``forward(accept)``;
    ``accept(vertex)`` says whether a gradient may be given to that input in this traversal.
    ``grad`` is that list (``None``: no output passed a gradient), so postponing, clearing
    and ``backward_to`` treat a hub like any vertex.  Created *before* the operation runs,
    so the vertices its ``eval`` creates (implicit outputs) are numbered after it.
    """

    __slots__ = ("handler",)
    is_hub = True

    def __init__(self, handler):
        Vertex.__init__(self, None, 0)      # (not super(): ~800 instructions less)
        self.handler = handler

    def connect(self, parents) -> None:
        """Make the vertices ``parents`` (the operation's inputs) the parents of this hub."""
        # (the edges built in the loop, not by a comprehension: a comprehension is a function
        # call, ~1,500 instructions more for a few parents, measured with callgrind)
        edges = []
        me = _ref(self)
        for p in parents:
            edges.append((p, None, None))
            kids = p.children
            kids.append(me)
            # dead references pruned as in Vertex(): an input of many calls (a frozen function's
            # parameters, replayed 1e6 times) would otherwise collect one per call
            if len(kids) >= 32 and (len(kids) & (len(kids) - 1)) == 0:
                _prune(kids)
        self.parents = tuple(edges)

    def __repr__(self) -> str:
        return f"HubVertex({self.id}, {self.handler!r}, parents={len(self.parents)})"


_ref = weakref.ref
_new = object.__new__


def _join_scope(v: Vertex) -> None:
    """A vertex created inside ``suspend_grad(): resume_grad(a):`` is enabled there."""
    top = scopes.enable[-1]
    if not top.complement:
        top.ids.add(v.id)


def _prune(kids: list) -> None:
    """Drop the dead weak references from a vertex's ``children`` list (in place)."""
    kids[:] = [k for k in kids if k() is not None]


def assign_grad(v: Vertex, g) -> None:
    """A frozen call's write-back of gradient ``g`` to the input vertex ``v``
    (``v.__fj_assign__({"grad": g})``; a replay calls this directly: no dict, no method lookup).
    A vertex with parents is walked on from after the call (:func:`.frozen.after_call`)."""
    v.grad = g
    if v.parents and g is not None:
        mark_after_call()
        scopes.after_call.append(v)


# Whether any thread ever put a vertex into its ``scopes.after_call`` list (sticky).  While it is
# False, every thread's list is empty (the lists grow only through mark_after_call's callers:
# assign_grad and frozen.leave), so frozen.after_call returns without reading the thread-local
# list (~550 instructions per frozen call, three per through-the-forward training step; r16).
after_call_used = False


def mark_after_call() -> None:
    """Note that a vertex is about to be put into ``scopes.after_call`` (call before appending)."""
    global after_call_used
    after_call_used = True


def leaf_vertex(cls, node) -> Vertex:
    """``Vertex(cls, node.size, (), node)``: a new leaf of ``node`` (a frozen call's replay makes
    one per grad-enabled output) without ``type.__call__`` and a Python ``__init__`` (~500
    instructions less each, callgrind)."""
    v = _new(Vertex)
    v.id = next(_ids)
    v.cls = cls
    v.size = node.size
    v.parents = ()
    v.children = []
    v.grad = None
    v.node = _ref(node)
    v.sym = node.sym
    if open_scopes and scopes.enable:
        _join_scope(v)
    return v


def new_hub(handler, parents) -> HubVertex:
    """``HubVertex(handler)`` connected to the vertices ``parents`` (see :meth:`HubVertex.connect`),
    made as :func:`leaf_vertex` makes a leaf (a frozen call's replay makes one per call)."""
    hub = _new(HubVertex)
    hub.id = next(_ids)
    hub.cls = None
    hub.size = 0
    hub.children = []
    hub.grad = None
    hub.node = hub.sym = None
    if open_scopes and scopes.enable:
        _join_scope(hub)
    hub.handler = handler
    hub.connect(parents)
    return hub


def hub_child(hub: HubVertex, edge, cls, node) -> Vertex:
    """``Vertex(cls, node.size, ((hub, edge, edge),), node)``: output ``edge`` of a hub (a frozen
    call's result), made as :func:`leaf_vertex` makes a leaf."""
    v = leaf_vertex(cls, node)
    v.parents = ((hub, edge, edge),)
    kids = hub.children
    kids.append(_ref(v))
    if len(kids) >= 32 and (len(kids) & (len(kids) - 1)) == 0:
        _prune(kids)
    return v


class HubOutput:
    """The edge function from a custom operation's output ``index`` to its hub.

    Backward: adds the output's gradient to the hub's list and contributes nothing through
    :func:`accum` (a literal 0).  Forward: nothing (the hub's ``forward`` sets the outputs'
    gradients itself).
    """

    __slots__ = ("index", "count")

    def __init__(self, index: int, count: int):
        self.index = index
        self.count = count

    def backward(self, hub: HubVertex, g) -> int:
        grads = hub.grad
        if grads is None:
            grads = hub.grad = [None] * self.count
        old = grads[self.index]
        grads[self.index] = g if old is None else old + g
        return 0

    def __call__(self, g) -> int:          # the forward edge
        return 0


def next_id() -> int:
    """A number below every vertex created from now on (isolation scopes start there)."""
    return next(_ids) + 1


def fresh_id() -> int:
    """A new vertex number, above every existing one (to renumber a vertex that gains a parent)."""
    return next(_ids)


# ---------------------------------------------------------------------------
# Scopes: suspend_grad / resume_grad / isolate_grad

class EnableScope:
    """Which variables are grad-enabled inside a ``suspend_grad``/``resume_grad`` scope (Dr.Jit's model).

    ``complement=True``: every variable except those in ``ids``; ``complement=False``: only those
    in ``ids``.  Each scope starts from a copy of its parent's state; a variable created inside a
    ``complement=False`` scope that has any enabled variable joins ``ids`` (so ``enable_grad(d)``
    inside ``suspend_grad(): resume_grad(a):`` enables ``d`` there), and leaves with the scope.
    """

    __slots__ = ("complement", "ids")

    def __init__(self, complement: bool, ids: set) -> None:
        self.complement = complement
        self.ids = ids

    def enabled(self, vid: int) -> bool:
        return (vid not in self.ids) if self.complement else (vid in self.ids)

    def child(self, suspend: bool, ids) -> "EnableScope":
        """The state of a ``suspend_grad(*args)`` (``suspend``) or ``resume_grad(*args)`` scope inside this one.

        ``ids=None``: no arguments (every variable).
        """
        if ids is None:
            return EnableScope(not suspend, set())
        # Suspending excluded ids / resuming included ids grows the set; the other two shrink it.
        if suspend == self.complement:
            return EnableScope(self.complement, set(self.ids) | ids)
        return EnableScope(self.complement, set(self.ids) - ids)


_ROOT = EnableScope(True, frozenset())


class Scopes(threading.local):
    """The active gradient scopes (innermost last), per thread as in Dr.Jit: a ``suspend_grad``
    in one thread does not affect another, and a new thread starts outside every scope."""

    def __init__(self) -> None:
        # EnableScope per suspend_grad / resume_grad / isolate_grad scope (empty: everything enabled)
        self.enable: list = []
        # isolation scopes: [first vertex id, {id: vertex created before it that got a gradient}]
        self.isolate: list = []
        # vertices created outside a frozen call that its replay gave gradients (see ad/frozen.py);
        # a DeferredCalls while a traversal runs a frozen function's derivative on this thread
        self.after_call: list = []
        # a backward pass ran a frozen function's recorded derivative since the last optimizer
        # step (freeze/through.py sets it, Optimizer.step reads and clears it)
        self.replayed_backward = False


scopes = Scopes()


class DeferredCalls(list):
    """``scopes.after_call`` while a traversal runs a frozen function's derivative on this thread
    (freeze/through.py): the vertices the derivative's write-backs gave gradients are collected
    but not walked on from (that traversal walks on from the inputs itself), and ``owner`` is the
    handler whose derivative runs, set by the maker (``d = DeferredCalls(); d.owner = handler``:
    a Python ``__init__`` calling ``list.__init__`` cost ~2,100 more instructions, once per
    backward pass through a frozen call's result)."""

    __slots__ = ("owner",)


# How many suspend/resume/isolation scopes are open in all threads together (changed only by
# push_scope / pop_scope, under _scope_lock).  While it is 0, the common case, every thread's
# ``scopes.enable`` and ``scopes.isolate`` are empty, and the hot paths (a new vertex, a
# frozen call's binder, a backward pass) test this plain global instead of the per-thread
# lists: a ``threading.local`` attribute costs ~10x a global (~130 ns more on the EPYC VM).
open_scopes = 0
_scope_lock = threading.Lock()


def push_scope(stack: list, scope) -> None:
    """Open ``scope`` on this thread's ``stack`` (``scopes.enable`` or ``scopes.isolate``)."""
    global open_scopes
    with _scope_lock:
        open_scopes += 1        # (first: an interrupt in between leaves the count too high, never too low)
        stack.append(scope)


def pop_scope(stack: list, scope) -> None:
    """Close ``scope`` on ``stack`` (scopes nest, so it is usually the innermost one; one that
    is not there any more is left alone)."""
    global open_scopes
    with _scope_lock:
        if stack and stack[-1] is scope:
            stack.pop()
        elif scope in stack:
            stack.remove(scope)
        else:
            return
        open_scopes -= 1        # (after the pop, for the same reason)


def current_scope() -> EnableScope:
    """The innermost suspend/resume state (everything enabled outside any scope)."""
    return scopes.enable[-1] if open_scopes and scopes.enable else _ROOT


def is_active(v: Vertex) -> bool:
    """Whether operations on ``v`` are recorded (not inside a suspend_grad scope for it)."""
    return not open_scopes or not scopes.enable or scopes.enable[-1].enabled(v.id)


def grad_allowed() -> bool:
    """Whether new variables can be made differentiable here (False inside ``suspend_grad()`` without
    arguments, unless a ``resume_grad(*args)`` re-enabled some variables)."""
    if not open_scopes or not scopes.enable:
        return True
    top = scopes.enable[-1]
    return top.complement or bool(top.ids)


def scope_key() -> tuple:
    """A hashable summary of the AD scope state: (complement, enabled/excluded ids, isolation depth).

    Anything that caches work done under one scope state (frozen functions) must not reuse it
    under another.
    """
    top = current_scope()
    return (top.complement, frozenset(top.ids), len(scopes.isolate))


def boundary() -> int:
    """Vertices numbered below this belong outside the innermost isolate_grad scope."""
    return scopes.isolate[-1][0] if open_scopes and scopes.isolate else 0


# ---------------------------------------------------------------------------
# Gradient values

def detached(cls, a):
    """``a`` (an array or Python scalar) as a non-differentiable value of type ``cls``."""
    if isinstance(a, ArrayBase):
        node = a._node
        if node.vt is not cls._vt:
            node = ops.cast(node, cls._vt)
        return cls._from_node(node)
    return a


def sized_literal(cls, value, size: int, like=None):
    """``value`` broadcast to ``size`` elements, as an array of type ``cls``.

    ``like`` (a node, a weak reference to one, or a vertex) has that size: inside
    a frozen function the literal gets its symbolic size, so replays at other
    widths stay correct.
    """
    node = ops.literal(cls._vt, value, size)
    if size != 1 and state.recorder is not None and like is not None:
        vsym = vsize = None
        if isinstance(like, Vertex):
            vsym, vsize, like = like.sym, like.size, like.node
        if isinstance(like, weakref.ref):
            like = like()
        if like is None:            # the node was freed: the vertex kept its symbolic size
            sym, like_size = vsym, vsize
        else:
            sym, like_size = getattr(like, "sym", None), like.size
        if sym is not None and like_size == size:
            node.sym = sym
    return cls._from_node(node)


def broadcast(g, size: int, like=None):
    """``g`` (size 1 or ``size``) with exactly ``size`` elements (lazy); ``like``: see :func:`sized_literal`."""
    n = g._node.size
    if n == size:
        return g
    if n != 1:
        raise GradSizeError(f"frostjit AD: a gradient of size {n} does not fit a variable of size {size}")
    if g._node.op == "literal":
        return sized_literal(type(g), g._node.value, size, like)
    return g + sized_literal(type(g), 0, size, like)


def as_grad(v: Vertex, g):
    """Convert a gradient contribution to ``v``'s type and size."""
    cls = v.cls
    if not isinstance(g, ArrayBase):
        g = cls._from_node(ops.literal(cls._vt, g))
    elif type(g) is not cls or g._ad is not None:
        g = detached(cls, g)
    n = g._node.size
    if n != v.size:
        if v.size == 1:
            g = _sum(g)
        elif n == 1:
            g = broadcast(g, v.size, v)
        else:
            # (Dr.Jit's wording, which ported programs match)
            raise GradSizeError(f"attempted to store a gradient of size {n} into AD variable a{v.id}, "
                                f"which has size {v.size}!")
    return g


def accum(v: Vertex, g) -> None:
    """``v.grad += g``; a literal zero adds nothing (and does not count as a gradient being set)."""
    if _is_zero_literal(g):
        return
    g = as_grad(v, g)
    v.grad = g if v.grad is None else v.grad + g


class ScatterAdjoint:
    """The backward function of an edge whose contribution is a scatter into a zero array of the
    parent's size (a gather's adjoint): ``adjoint(g)`` returns that array, and a backward
    traversal instead scatters every such contribution to one parent into a single gradient
    buffer (:meth:`into`), as Dr.Jit does.  Adding each contribution as its own array would read
    each scatter's target while its scatter is queued, which launches the queue: one kernel per
    gather of the parent (a hash grid's backward pass ran 32 kernels, each recomputing the
    forward pass, where Dr.Jit runs one).

    ``new_target()`` makes the zero array; ``scatter(target, g)`` adds ``g`` into it."""

    __slots__ = ("new_target", "scatter")

    def __init__(self, new_target, scatter):
        self.new_target = new_target
        self.scatter = scatter

    def __call__(self, g):
        t = self.new_target()
        self.scatter(t, g)
        return t

    def into(self, parent: Vertex, g, pending: dict) -> None:
        """Scatter ``g``'s contribution into the parent's buffer of this traversal
        (``pending[parent.id]``, made at its first contribution); the traversal adds the buffer
        to ``parent.grad`` when it reaches the parent, after every contribution is in."""
        if _is_zero_literal(g):
            return
        entry = pending.get(parent.id)
        if entry is None:
            entry = pending[parent.id] = (parent, self.new_target())
        self.scatter(entry[1], g)


def _is_zero_literal(g) -> bool:
    # (+0 only, as Dr.Jit, which tests the literal's bits: -0.0 is a gradient, set_grad(x, -0.0)
    # assigns it and backward_from propagates it)
    if isinstance(g, ArrayBase):
        node = g._node
        return node.op == "literal" and node.value == 0 and copysign(1.0, node.value) > 0
    return (type(g) is int or type(g) is float) and g == 0 and copysign(1.0, g) > 0


# ---------------------------------------------------------------------------
# Traversal

def _ancestors(starts, bound: int) -> list:
    """``starts`` and everything they depend on (not expanding vertices below ``bound``)."""
    seen = {}
    stack = list(starts)
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen[v.id] = v
        if v.id < bound:
            continue
        for edge in v.parents:
            if edge[0].id not in seen:
                stack.append(edge[0])
    return list(seen.values())


def _descendants(starts) -> list:
    """``starts`` and every live vertex that depends on them."""
    seen = {}
    stack = list(starts)
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen[v.id] = v
        for ref in v.children:
            c = ref()
            if c is not None and c.id not in seen and any(e[0] is v for e in c.parents):
                stack.append(c)
    return list(seen.values())


_ID = attrgetter("id")       # (the sort key of the topological order, called in C)


def traverse_backward(starts, flags: int = ADFlag.Default, targets=None, keep=()) -> None:
    """Propagate the gradients of ``starts`` to everything they depend on.

    With ``targets`` (``backward_to``), only the vertices in that set are
    walked, and the gradients of ``keep`` are not cleared.  Vertices created before the innermost ``isolate_grad`` scope are
    not walked now: they are postponed to the scope's exit.
    """
    if targets is None and not keep and len(starts) == 1 and not (open_scopes and scopes.isolate) \
            and _through_one_hub(starts[0], int(flags)):
        return
    bound = boundary()
    if targets is None:
        verts = _ancestors(starts, bound)
        inside = None
    else:
        verts = targets
        inside = {v.id for v in targets}
    verts.sort(key=_ID, reverse=True)
    start_ids = {v.id for v in starts}
    touched = scopes.isolate[-1][1] if scopes.isolate else None
    # (the flags as plain ints, tested once: an IntFlag operation costs about a microsecond)
    flags = int(flags)
    clear_edges = bool(flags & _CLEAR_EDGES)
    clear_input, clear_interior = bool(flags & _CLEAR_INPUT), bool(flags & _CLEAR_INTERIOR)
    pending: dict = {}      # vertex id -> (vertex, the buffer ScatterAdjoint.into scatters into)
    for v in verts:
        if pending:
            entry = pending.pop(v.id, None)
            if entry is not None:
                # (outside the isolation scope: only the active lanes, as _lanes does per edge;
                # a select distributes over the buffer's sum exactly)
                accum(v, entry[1] if v.id >= bound else _lanes(entry[1]))
        if v.id < bound:                  # outside the isolation scope: postponed
            if v.grad is not None:
                touched[v.id] = v
            continue
        if not v.parents:
            continue                      # a leaf keeps its gradient
        g = v.grad
        if g is not None and not (v.size == 0 and _empty(v)):
            if v.is_hub:
                v.grad = None     # consumed by the call, whatever the flags (as Dr.Jit)
                v.handler.backward(g, None if inside is None else (lambda p: p.id in inside))
            else:
                for parent, _fwd, bwd in v.parents:
                    if (inside is None or parent.id in inside) and not (parent.size == 0 and _empty(parent)):
                        if parent.is_hub:
                            bwd.backward(parent, g)
                        elif type(bwd) is ScatterAdjoint:
                            # (a parent outside the isolation scope too: the walk reaches it
                            # after its children and adds the buffer there, in the plain
                            # call's order, so a frozen call's derivative rounds as it did)
                            bwd.into(parent, g, pending)
                        elif parent.id < bound:
                            accum(parent, _lanes(bwd(g)))
                        else:
                            accum(parent, bwd(g))
        if clear_edges:
            v.parents = ()
        if (clear_input if v.id in start_ids else clear_interior) and v.id not in keep:
            v.grad = None
    for v, t in pending.values():      # (none: a parent is walked after its children)
        accum(v, t)


def _empty(v) -> bool:
    """Whether vertex ``v`` has no elements: then no gradient flows through its edges (the
    partials would broadcast size-1 operands to width 0, an error by Dr.Jit's rule, and have
    nothing to carry; Dr.Jit itself fails there).  Inside a frozen function's recording a
    guarded fact, so a recording made at width 0 never replays at another width."""
    if v.is_hub:                # (a hub has size 0: it stands for no array)
        return False
    rec = state.recorder
    if rec is None:
        return v.size == 0
    return rec.on_empty_sym(v.sym, v.size)


def _through_one_hub(v: Vertex, flags: int) -> bool:
    """The general walk of :func:`traverse_backward`, done directly where its graph is one output
    ``v`` of a custom operation (a frozen call's result: ``fj.backward(frozen_loss(params))``)
    whose inputs are leaves: ``v`` passes its gradient to the hub, the hub's handler runs once,
    then the flags clear ``v`` (an input of the traversal) and the hub (an interior vertex), in
    that order, as the general walk does.  False (nothing done) for any other graph, and outside
    isolation scopes only (the caller checks)."""
    ps = v.parents
    if len(ps) != 1:
        return False
    hub, _fwd, edge = ps[0]
    if not hub.is_hub or hub.id >= v.id or not hub.parents:
        return False
    for p, _f, _b in hub.parents:
        if p.parents:
            return False
    g = v.grad
    if g is not None:
        edge.backward(hub, g)
    if flags & _CLEAR_EDGES:
        v.parents = ()
    if flags & _CLEAR_INPUT:
        v.grad = None
    g = hub.grad
    if g is not None:
        hub.grad = None     # consumed by the call, whatever the flags (as Dr.Jit)
        hub.handler.backward(g, None)
    if flags & _CLEAR_EDGES:
        hub.parents = ()
    if flags & _CLEAR_INTERIOR:
        hub.grad = None
    return True


def _lanes(g):
    """A gradient crossing an isolation boundary inside a masked region (the branch of an
    evaluated ``if_stmt``, a loop body): only the active lanes contribute (Dr.Jit)."""
    mask = masks.top()
    if mask is None or not isinstance(g, ArrayBase) or (mask.size != g._node.size and mask.size != 1):
        return g
    return _select(flat_type(g._backend, Bool)._from_node(mask), g, 0)


def traverse_forward(verts, sources, flags: int = ADFlag.Default, keep=()) -> None:
    """Propagate the gradients of ``sources`` to the vertices in ``verts`` that depend on them.

    Only vertices with an edge walked here are cleared (``ClearInput`` / ``ClearInterior``): a
    source nothing depends on keeps its gradient, as in Dr.Jit.  Inside ``isolate_grad``, the
    vertices created before the scope keep their gradients, and propagating into one raises.
    """
    verts.sort(key=_ID)
    inside = {v.id for v in verts}
    bound = boundary()
    has_child = set()
    for v in verts:
        if v.is_hub:
            _forward_hub(v, inside, has_child, bound)
            continue
        for parent, fwd, _bwd in v.parents:
            if parent.id in inside:
                has_child.add(parent.id)
                if parent.grad is not None and not parent.is_hub and \
                        not ((parent.size == 0 or v.size == 0) and (_empty(parent) or _empty(v))):
                    if v.id < bound:
                        _into_isolated()
                    if getattr(fwd, "overwrites", False):
                        v.grad = fwd(parent.grad, v.grad)
                    else:
                        accum(v, fwd(parent.grad))
    source_ids = {v.id for v in sources}
    flags = int(flags)
    clear_input, clear_interior = bool(flags & _CLEAR_INPUT), bool(flags & _CLEAR_INTERIOR)
    if flags & _CLEAR_EDGES:
        # Dr.Jit: the edges walked are dropped in forward mode too (a second forward pass, or a
        # backward pass, through them does nothing); those of vertices outside an isolation scope stay
        for v in verts:
            if v.parents and v.id >= bound:
                kept = tuple(e for e in v.parents if e[0].id not in inside)
                if len(kept) != len(v.parents):
                    v.parents = kept
    for v in verts:
        if v.id not in has_child or v.id < bound or v.id in keep:
            continue
        if clear_input if v.id in source_ids else clear_interior:
            v.grad = None


def _into_isolated():
    raise RuntimeError(
        "forward_to()/forward(): cannot propagate derivatives into a variable created before "
        "the enclosing isolate_grad() scope (a frozen function's call is one). Propagate "
        "them before entering the scope.")


def _forward_hub(hub: HubVertex, inside: set, has_child: set, bound: int) -> None:
    """Forward mode reaching a custom operation: its ``forward`` runs once if an input has a gradient."""
    reached = False
    for parent, _f, _b in hub.parents:
        if parent.id in inside:
            has_child.add(parent.id)
            reached = reached or parent.grad is not None
    if reached:
        if hub.id < bound:
            _into_isolated()
        hub.handler.forward(lambda p: p.id in inside)


def propagate_postponed(verts) -> None:
    """Continue a backward pass from vertices an isolation scope stopped at (leaves keep their gradients)."""
    starts = [v for v in verts if v.parents and v.grad is not None]
    if starts:
        traverse_backward(starts, ADFlag.ClearEdges | ADFlag.ClearInterior | ADFlag.ClearInput)


def ancestors(starts, bound: int = 0) -> list:
    """``starts`` and the vertices they depend on; those numbered below ``bound`` are included
    but not expanded (a computation begun at ``bound`` and what it read from before)."""
    return _ancestors(starts, bound)


def descendants(starts) -> list:
    return _descendants(starts)
