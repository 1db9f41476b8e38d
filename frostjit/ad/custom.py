"""Custom operations: user-written derivative rules (Dr.Jit's ``CustomOp`` and ``custom``).

>>> class Square(fj.CustomOp):
...     def eval(self, x):                 # the primal, on detached inputs
...         self.x = x
...         return x * x
...     def forward(self):                 # d out = 2 x d x
...         self.set_grad_out(2 * self.x * self.grad_in("x"))
...     def backward(self):                # d x += 2 x d out
...         self.set_grad_in("x", 2 * self.x * self.grad_out())
>>> y = fj.custom(Square, x)

``custom(cls, *args, **kwargs)`` makes an instance of ``cls``, calls its ``eval`` with
*detached* copies of the arguments (any PyTrees), and returns eval's result with every
floating point AD array in it made a new grad-enabled variable that depends on the
operation, provided some input (or an implicit input, :meth:`CustomOp.add_input`) is
grad-enabled; otherwise the result is returned as it is, detached.  Traversals then call
``backward()`` or ``forward()`` once per operation, whichever outputs or inputs the gradient
came through.

Arguments are named by ``eval``'s signature: ``grad_in("x")`` for a parameter ``x`` (passed
by position or by keyword), ``grad_in(0)``, ``grad_in(1)``... for the entries of ``*args``, the
keyword's name for those of ``**kwargs``, and the names of ``*args``/``**kwargs`` themselves
for all of them (a tuple / a dict, as in Dr.Jit 1.5).  An argument's gradient has its structure (a
PyTree of gradients; zeros where nothing arrived or the entry is not differentiable, 0.0 for
a Python number).

In the AD graph the operation is one :class:`~.graph.HubVertex` (see :mod:`.graph`).
"""
from __future__ import annotations

import functools
import inspect
import weakref

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..tree import flatten, transform, unflatten, traverse2
from . import api, graph
from .graph import HubOutput, HubVertex, Vertex, is_active, sized_literal

__all__ = ["CustomOp", "custom"]


class CustomOp:
    """Base class of custom differentiable operations (Dr.Jit's ``drjit.CustomOp``).

    Subclasses implement :meth:`eval` (the primal computation, on detached inputs),
    :meth:`forward` (forward-mode derivative: read :meth:`grad_in`, call :meth:`set_grad_out`)
    and :meth:`backward` (reverse mode: read :meth:`grad_out`, call :meth:`set_grad_in`), and
    optionally :meth:`name`.  Values needed by the derivatives are stashed on ``self`` in
    ``eval``.  Run the operation with :func:`custom`, never by calling ``eval`` directly.

    Examples
    --------
    >>> class Multiplication(fj.CustomOp):
    ...     def eval(self, x, y):
    ...         self.x, self.y = x, y
    ...         return x * y
    ...     def forward(self):
    ...         self.set_grad_out(self.y * self.grad_in("x") + self.x * self.grad_in("y"))
    ...     def backward(self):
    ...         self.set_grad_in("x", self.y * self.grad_out())
    ...         self.set_grad_in("y", self.x * self.grad_out())
    >>> z = fj.custom(Multiplication, x, y)
    """

    # The state of one application (set by custom(); class-level defaults so that a subclass
    # whose __init__ does not call super().__init__() still works).
    _fj_inputs = None        # argument name (str) or *args index (int) -> the argument as passed
    _fj_implicit_in = None   # vertices registered with add_input (during eval)
    _fj_implicit_out = None  # vertices registered with add_output (during eval)
    _fj_outputs = None       # _Outputs: eval's result and its output slots
    _fj_grads = None         # during backward(): the gradient of each output slot (None: none)
    _fj_accept = None        # during a callback: which input vertices may receive gradients
    # frostjit's own operations (a differentiated loop or call) let eval's errors through as they
    # are; a user's operation reports them as Dr.Jit does (see custom())
    _fj_wrap_eval_errors = True

    # -- to be implemented by subclasses ------------------------------------------------
    def eval(self, *args, **kwargs):
        """The primal computation, on detached arguments; returns the result (any PyTree)."""
        raise RuntimeError(f"{self.name()}.eval(): not implemented!")

    def forward(self) -> None:
        """Forward-mode derivative: ``set_grad_out(...)`` from ``grad_in(...)``."""
        raise RuntimeError(f"{self.name()}.forward(): not implemented!")

    def backward(self) -> None:
        """Reverse-mode derivative: ``set_grad_in(name, ...)`` from ``grad_out()``."""
        raise RuntimeError(f"{self.name()}.backward(): not implemented!")

    def name(self) -> str:
        """A descriptive name (shown by :func:`frostjit.graphviz_ad`); default ``module.ClassName``."""
        cls = type(self)
        return f"{cls.__module__}.{cls.__qualname__}"

    # -- inputs ------------------------------------------------------------------------
    def _input(self, arg, who: str):
        inputs = self._fj_inputs
        if inputs is None:
            raise RuntimeError(f"{type(self).__name__}.{who}(): the operation has not been run with "
                               "frostjit.custom()")
        try:
            return inputs[arg]
        except (KeyError, TypeError):
            names = ", ".join(repr(k) for k in inputs)
            raise RuntimeError(f"{type(self).__name__}.{who}(): could not find an input argument named "
                               f"{arg!r} (the arguments are {names or 'none'})") from None

    def grad_in(self, arg):
        """The gradient of input ``arg`` (a parameter name of ``eval``, or an index into its ``*args``).

        Has the argument's structure; zeros where no gradient arrived.  For :meth:`forward`.
        """
        return api.grad(self._input(arg, "grad_in"))

    def set_grad_in(self, arg, value) -> None:
        """Add ``value`` to the gradient of input ``arg`` (for :meth:`backward`).

        ``value`` has the argument's structure, or is an array or number used for each of its
        arrays.  Entries that are not grad-enabled are skipped.
        """
        target = self._input(arg, "set_grad_in")
        accept = self._fj_accept
        for a, g in api._pairs(target, value, "set_grad_in"):
            v = a._ad
            if v is not None and is_active(v) and (accept is None or accept(v)):
                graph.accum(v, g)

    def add_input(self, arg) -> None:
        """Register an implicit input: a grad-enabled variable (or PyTree) that ``eval`` reads
        without receiving it as an argument.  Call it from :meth:`eval`; the derivatives
        read and write its gradient with ``fj.grad``/``fj.accum_grad``."""
        if self._fj_implicit_in is None:
            raise RuntimeError(f"{type(self).__name__}.add_input(): call it from eval()")
        self._fj_implicit_in.extend(api._vertices(arg))

    def add_output(self, arg) -> None:
        """Register an implicit output: a grad-enabled variable (or PyTree) that ``eval``
        creates besides its result.  Call it from :meth:`eval`; :meth:`backward` reads its
        gradient with ``fj.grad``, :meth:`forward` sets it with ``fj.accum_grad``."""
        if self._fj_implicit_out is None:
            raise RuntimeError(f"{type(self).__name__}.add_output(): call it from eval()")
        self._fj_implicit_out.extend(api._vertices(arg))

    # -- outputs -----------------------------------------------------------------------
    def grad_out(self):
        """The gradient of the result (for :meth:`backward`): the structure ``eval`` returned,
        zeros where no gradient arrived."""
        outs = self._fj_outputs
        if outs is None:
            raise RuntimeError(f"{type(self).__name__}.grad_out(): the operation has not been run with "
                               "frostjit.custom()")
        grads = self._fj_grads
        return outs.gradients(grads if grads is not None else ())

    def set_grad_out(self, value) -> None:
        """Add ``value`` to the gradient of the result (for :meth:`forward`): the structure
        ``eval`` returned, or an array or number used for each of its arrays."""
        outs = self._fj_outputs
        if outs is None:
            raise RuntimeError(f"{type(self).__name__}.set_grad_out(): the operation has not been run with "
                               "frostjit.custom()")
        outs.accumulate(value)


class _Outputs:
    """The result of ``eval`` and, per array in it (its *slots*, in flatten order), what a
    zero gradient needs (type, size, node) and the slot's vertex (weakly: the op must not
    keep its outputs alive)."""

    __slots__ = ("treedef", "slots", "vertices")

    def __init__(self, treedef, flat: list, vertices: list):
        self.treedef = treedef
        self.slots = [(type(a), a._node.size, weakref.ref(a._node)) for a in flat]
        self.vertices = [weakref.ref(v) if v is not None else None for v in vertices]

    def _zero(self, k: int):
        cls, size, node = self.slots[k]
        return sized_literal(cls, 0, size, node)

    def gradients(self, grads) -> object:
        values = []
        for k, (cls, _size, _node) in enumerate(self.slots):
            g = grads[k] if k < len(grads) else None
            values.append(self._zero(k) if g is None else g if type(g) is cls else graph.detached(cls, g))
        return unflatten(self.treedef, values)

    def accumulate(self, value) -> None:
        zeros = [self._zero(k) for k in range(len(self.slots))]
        slot_of = {id(z): k for k, z in enumerate(zeros)}
        like = unflatten(self.treedef, zeros)
        if isinstance(value, api._SEQUENCES) and isinstance(like, (ArrayBase, VectorBase)):
            value = type(like)(value)       # a list for an array result: its constructor (as set_grad)
        pairs = []

        def pair(z, g):
            if isinstance(z, ArrayBase):
                pairs.append((slot_of[id(z)], g))
        traverse2(like, value, pair, broadcast=True, who="set_grad_out", names=("result", "value"))
        for k, g in pairs:
            ref = self.vertices[k]
            v = ref() if ref is not None else None
            if v is not None:
                graph.accum(v, g)


class _Adapter:
    """What the traversals call at the operation's hub (see :class:`~.graph.HubVertex`)."""

    __slots__ = ("op", "implicit_out", "n_slots")

    def __init__(self, op: CustomOp, implicit_out: list, n_slots: int):
        self.op = op
        self.implicit_out = implicit_out      # (slot, vertex weakref) of each implicit output
        self.n_slots = n_slots

    def backward(self, grads, accept) -> None:
        op = self.op
        # An implicit output's gradient is read with fj.grad(); the traversal already passed it
        # on to the hub (and may have cleared it), so show it there during the call.
        shown = []
        for k, ref in self.implicit_out:
            v = ref()
            if v is not None:
                shown.append((v, v.grad))
                v.grad = grads[k]
        op._fj_grads, op._fj_accept = grads, accept
        try:
            op.backward()
        finally:
            op._fj_grads = op._fj_accept = None
            for v, old in shown:
                v.grad = old

    def forward(self, accept) -> None:
        op = self.op
        op._fj_accept = accept
        try:
            op.forward()
        finally:
            op._fj_accept = None

    def __repr__(self) -> str:
        return self.op.name()


@functools.lru_cache(maxsize=512)
def _signature(func) -> inspect.Signature:
    return inspect.signature(func)


def _named_arguments(cls, op, args: tuple, kwargs: dict) -> dict:
    """``{name: value}`` of the arguments as ``eval`` receives them (``*args`` entries by index)."""
    try:
        bound = _signature(cls.eval).bind(op, *args, **kwargs)
    except TypeError as e:
        raise TypeError(f"custom(): the arguments do not fit {cls.__qualname__}.eval(): {e}") from None
    params = bound.signature.parameters
    named, whole = {}, {}
    for i, (name, value) in enumerate(bound.arguments.items()):
        if i == 0:
            continue                                  # self
        kind = params[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            named.update(enumerate(value))
            whole[name] = value
        elif kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
            whole[name] = value
        else:
            named[name] = value
    # Dr.Jit 1.5 also names ``*args``/``**kwargs`` as a whole (grad_in("args") is a tuple,
    # grad_in("kwargs") a dict); an entry of the same name wins
    for name, value in whole.items():
        named.setdefault(name, value)
    return named


def _unique(vertices) -> list:
    return list({v.id: v for v in vertices}.values())


def custom(cls, /, *args, **kwargs):
    """Run the custom operation ``cls`` (a subclass of :class:`CustomOp`) on ``args``/``kwargs``.

    Calls ``cls().eval(*args, **kwargs)`` with detached copies of the arguments (PyTrees of
    any kind) and returns its result.  If an argument (or an implicit input registered with
    :meth:`CustomOp.add_input`) is grad-enabled, each floating point AD array of the result
    is a new grad-enabled variable, and traversals reaching the operation call its
    ``backward``/``forward``; otherwise the result is returned detached.

    Parameters
    ----------
    cls : type
        A subclass of :class:`CustomOp` (instantiated without arguments).
    *args, **kwargs
        Passed on to ``eval``; their names (``eval``'s parameter names, or indices into its
        ``*args``) are what ``grad_in``/``set_grad_in`` take.

    Returns
    -------
    object
        ``eval``'s result, with the structure ``eval`` gave it.

    Raises
    ------
    TypeError
        If ``cls`` is not a subclass of :class:`CustomOp`, or the arguments do not fit
        ``eval``'s signature.
    RuntimeError
        If ``eval`` raises: its exception is the ``__cause__`` (Dr.Jit), and its message is
        repeated.
    """
    if not (isinstance(cls, type) and issubclass(cls, CustomOp)):
        raise TypeError(f"custom(): the first argument must be a subclass of frostjit.CustomOp, got {cls!r}")
    op = cls()
    inputs = _named_arguments(cls, op, args, kwargs)
    explicit = api._vertices(list(inputs.values()))
    adapter = _Adapter(op, [], 0)
    hub = HubVertex(adapter)                 # numbered before anything eval creates
    # The inputs' variables as they are now: a caller may rebind its arrays in place before the
    # derivatives run (fj.while_loop writes a loop's results back into the caller's state arrays),
    # and grad_in/set_grad_in must still reach the variables the operation read.
    op._fj_inputs = {k: transform(v, _same_variable, who="custom") for k, v in inputs.items()}
    op._fj_implicit_in, op._fj_implicit_out = [], []
    try:
        result = op.eval(*[api.detach(a) for a in args], **{k: api.detach(v) for k, v in kwargs.items()})
    except Exception as e:
        if not cls._fj_wrap_eval_errors:
            raise
        # Dr.Jit: a RuntimeError whose cause is eval's exception
        raise RuntimeError(f"custom(<{cls.__module__}.{cls.__qualname__}>): error while performing a custom "
                           f"differentiable operation ({type(e).__name__}: {e})") from e
    implicit_in, implicit_out = op._fj_implicit_in, op._fj_implicit_out
    op._fj_implicit_in = op._fj_implicit_out = None
    flat, treedef = flatten(api.detach(result))
    parents = _unique(explicit + implicit_in)
    if not parents:
        op._fj_outputs = _Outputs(treedef, flat, [None] * len(flat))
        return unflatten(treedef, flat)
    hub.connect(parents)
    implicit_out = [v for v in _unique(implicit_out) if not v.is_hub]
    n_slots = len(flat) + len(implicit_out)
    outs, verts = [], []
    for k, a in enumerate(flat):
        b = type(a)._from_node(a._node)
        v = None
        if api._differentiable(b):
            edge = HubOutput(k, n_slots)
            v = b._ad = Vertex(type(b), b._node.size, ((hub, edge, edge),), b._node)
        outs.append(b)
        verts.append(v)
    for j, v in enumerate(implicit_out):
        edge = HubOutput(len(flat) + j, n_slots)
        if v.id < hub.id:
            v.id = graph.fresh_id()          # a child is numbered after its parents (the topological order)
        v.parents = v.parents + ((hub, edge, edge),)
        hub.children.append(weakref.ref(v))
        adapter.implicit_out.append((len(flat) + j, weakref.ref(v)))
    adapter.n_slots = n_slots
    op._fj_outputs = _Outputs(treedef, outs, verts)
    return unflatten(treedef, outs)


def _same_variable(a):
    """A new handle on ``a``'s variable and AD vertex (no copy, whatever the AD scope)."""
    b = type(a)._from_node(a._node)
    b._ad = a._ad
    return b
