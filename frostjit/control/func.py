"""``@fj.func``: a function whose body the kernel calls instead of inlining it (Dr.Jit's ``dr.func``).

Every call traces the body (as Dr.Jit does) over *placeholders*, one per array argument, each
standing for one lane (``call_param`` nodes, :mod:`frostjit.trace.calls`); the call becomes a
``call`` node whose results are ``call_out`` nodes.  Call sites whose traced bodies are
structurally equal (same operations, types, literal constants) share one
:class:`~frostjit.trace.calls.FuncRecord`, so a kernel that evaluates 50 calls of a 200-operation
function contains that function's code once: the LLVM backend emits it as one internal
function called from each site (``backend/llvm/codegen/calls.py``), the reference backend
interprets it at each site.

Dr.Jit's semantics:

* arguments and results are PyTrees; Python values are passed unchanged (a Python number used
  in arithmetic is a constant of the body); a literal argument (``Float(2)``) is a constant of
  the body too, so calls with different literals are different functions (Dr.Jit propagates
  literals into calls);
* a ``Bool`` array as the last positional argument, or as ``active=``, masks lanes: the body
  receives ``True`` in its place and masked lanes return zeros;
* array arguments broadcast (size 1) or agree in size, else an error naming both sizes;
* the body must be *pure*: reading an array of more than one lane that is not an argument
  raises (Dr.Jit: "size of output variable ... (must be 1)"); size-1 arrays it reads become
  implicit arguments.

**AD**: a call with grad-enabled arguments is one custom AD operation (:class:`_FuncOp`) whose
forward and reverse derivatives are calls too (the body's Jacobian-vector and vector-Jacobian
products, traced once per call over placeholders with frostjit's AD): each derivative's body
is compiled once per kernel as well.

A body that gathers (from an array it does not receive) is emitted inline at each call site
(same results; no separate function).  A body that scatters, runs a symbolic loop or reads a
grad-enabled array it did not receive is traced a second time, at the call site, on the
arguments (the mask and the enclosing scope mask its scatters; AD sees the array it read):
same results as Dr.Jit, no separate function, and its Python code runs twice.
"""
from __future__ import annotations

import functools

import numpy as np

from ..ad.api import backward_to, detach, enable_grad, forward_to, grad, isolate_grad, set_grad
from ..ad.custom import CustomOp, custom
from ..ad.graph import ADFlag
from ..array import registry
from ..array.flat import ArrayBase
from ..functions.creation import zeros
from ..functions.math import select
from ..trace import calls, masks, ops
from ..trace.dtypes import Bool
from ..trace.state import JitBackend, state as trace_state
from ..tree import flatten, unflatten
from .consistency import contract_error
from .errors import ControlFlowArgumentTypeError, StateValueError, wrapped
from .modes import is_mask
from .symbolic import drop_effects, queued_since

WHO = "func"


def func(f=None, *, backend: JitBackend | None = None):
    """Decorator: calls of ``f`` become calls of one function in the generated code, instead of
    its body inlined at every call site (Dr.Jit's ``dr.func``).

    This cuts the compile time of programs that call a large function from many places: the
    kernel contains the body once.  ``f`` must be *pure*: its results may depend only on its
    arguments.

    Parameters
    ----------
    f : callable, optional
        The function (``@fj.func``); omitted when the decorator takes ``backend``
        (``@fj.func(backend=fj.JitBackend.LLVM)``).
    backend : JitBackend, optional
        The backend of the generated function.  By default it is found in the arguments (their
        first JIT array, also inside PyTrees) on the first call and kept; a function whose
        arguments contain no JIT array needs it.

    Returns
    -------
    callable
        The wrapped function (``functools.wraps``), or a decorator when ``f`` is omitted.

    Raises
    ------
    RuntimeError
        The backend cannot be found in the arguments and ``backend`` was not given (Dr.Jit's
        message); the body's results have more than one lane per call lane (it read an array
        that is not an argument); array arguments of incompatible sizes.  An exception raised
        by the body is wrapped as Dr.Jit does: a ``RuntimeError`` ("fj.func(): encountered an
        exception: ...") whose ``__cause__`` is the original, and which is also an instance of
        the original's class (:class:`frostjit.control.errors.BodyError`).

    Examples
    --------
    >>> @fj.func
    ... def f(x):
    ...     return x * 3
    >>> f(Float(1, 2, 3)) + f(Float(4))
    [15, 18, 21]
    """
    if backend is not None and not isinstance(backend, JitBackend):
        raise TypeError(f"fj.func(): 'backend' must be a JitBackend, got {type(backend).__name__}")

    def decorator(fn):
        if not callable(fn):
            raise TypeError(f"fj.func(): expected a callable, got {type(fn).__name__}")
        chosen = [backend if backend is not None and backend is not JitBackend.Invalid else None]

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            b = chosen[0]
            if b is None:
                b = _detect_backend(args, kwargs)
                if b is JitBackend.Invalid:
                    raise RuntimeError("fj.func(): could not detect the backend from the input arguments. Please "
                                       "specify it explicitly via the 'backend' parameter.")
                chosen[0] = b
            try:
                return call(fn, b, args, kwargs)
            except Exception as err:
                # Dr.Jit: a RuntimeError ("encountered an exception") whose cause is the body's
                # exception; frostjit's is also of the original's class (control/errors.py)
                new = wrapped(WHO, err)
                if new is err:
                    raise
                raise new from err
        return wrapper

    return decorator(f) if f is not None else decorator


def _detect_backend(args: tuple, kwargs: dict) -> JitBackend:
    """The backend of the first JIT array in the arguments (``Invalid`` if there is none)."""
    for leaf in flatten((args, kwargs))[0]:
        if leaf._backend is not None:
            return leaf._backend
    return JitBackend.Invalid


def call(fn, backend: JitBackend, args: tuple, kwargs: dict):
    """One call of the ``@fj.func`` function ``fn`` (see the module docstring)."""
    if backend is not JitBackend.LLVM:
        raise RuntimeError(f"fj.func(): backend {backend.name} is not available (frostjit has the LLVM backend)")
    name = getattr(fn, "__name__", "func")
    bool_t = registry.flat_type(backend, Bool)
    positional = bool(args) and is_mask(args[-1])
    mask = args[-1] if positional else kwargs.get("active")
    if mask is not None and not (is_mask(mask) or isinstance(mask, (bool, np.bool_))):
        raise ControlFlowArgumentTypeError(f"fj.func(): 'active' of '{name}' must be a Bool array or bool, got "
                                           f"{type(mask).__name__}")
    if positional:
        args = args[:-1] + (bool_t(True),)
    if "active" in kwargs:
        kwargs = dict(kwargs, active=bool_t(True))
    leaves, treedef = flatten((args, kwargs))
    width = _width(name, leaves, mask)
    if any(a._ad is not None for a in leaves):
        # Grad-enabled arguments: one custom AD operation whose derivatives are calls too.
        try:
            out = custom(_FuncOp, leaves, fn=fn, name=name, treedef=treedef, width=width, backend=backend, mask=mask)
        except _ReadsGradients:
            out = _inline_call(fn, leaves, treedef, mask)
        return _masked(out, mask, width)
    return _masked(_traced_call(fn, name, leaves, treedef, width, mask), mask, width)


def _width(name: str, leaves: list, mask) -> int:
    """The call's width: the arguments' common size (size 1 broadcasts), Dr.Jit's error otherwise."""
    n = 1
    sizes = [a._node.size for a in leaves]
    if isinstance(mask, ArrayBase):
        sizes.append(mask._node.size)
    for s in sizes:
        if s != n and s != 1:
            if n != 1:
                raise contract_error(StateValueError, WHO, f"some of the call arguments of '{name}' have incompatible "
                                                           f"sizes (encountered arrays of length {n} and {s})")
            n = s
    return n


class _ReadsGradients(Exception):
    """The body of a differentiated call read a grad-enabled array it did not receive."""


def _traced_call(fn, name: str, leaves: list, treedef, width: int, mask, in_ad: bool = False):
    """Trace ``fn`` over placeholders and return its results as the outputs of a ``call`` node
    (a body that scatters, loops or reads a grad-enabled array it did not receive: traced again
    at the call site, :func:`_inline_call`; ``in_ad``: raise :class:`_ReadsGradients` for the
    last instead, the custom AD operation's caller traces it)."""
    params: list = []
    actual: list = []
    inner: list = []
    for a in leaves:
        node = a._node
        if node.op == "literal":
            # Literal arguments are constants of the body (as Dr.Jit's literal propagation)
            inner.append(type(a)._from_node(ops.stored_literal(node.vt, node.value, 1)))
            continue
        p = ops.call_param(node.vt, len(params), name)
        params.append(p)
        actual.append(node)
        inner.append(type(a)._from_node(p))
    call_args, call_kwargs = unflatten(treedef, inner)
    before = list(trace_state.side_effects)
    try:
        with masks.scope(None):     # one lane at a time: the call's mask applies to its results
            out = fn(*call_args, **call_kwargs)
    except BaseException:
        drop_effects(queued_since(before))    # (scatters over placeholders could never run)
        raise
    effects = queued_since(before)
    if effects:
        drop_effects(effects)
        return _inline_call(fn, leaves, treedef, mask)
    out_leaves, out_def = flatten(out)
    if not out_leaves:
        return out
    if any(a._ad is not None for a in out_leaves):
        # The body read a grad-enabled array it did not receive: traced at the call site, its
        # gradients reach that array (as in Dr.Jit).
        if in_ad:
            raise _ReadsGradients
        return _inline_call(fn, leaves, treedef, mask)
    results = [a._node for a in out_leaves]
    body = calls.analyze(params, results)
    for r in results + body.free:
        if r.size != 1:
            raise contract_error(StateValueError, WHO, f"a result of '{name}' has {r.size} lanes for one lane of the "
                                                       "call (must be 1): the body read an array of several lanes "
                                                       "that is not one of its arguments; pass it as an argument")
    if body.loops:
        return _inline_call(fn, leaves, treedef, mask)
    if body.pure:
        outs = _call_node(name, params + body.free, actual + body.free, body, results, width)
    else:
        outs = _inline(params, actual, body.nodes, results)
    return unflatten(out_def, [type(a)._from_node(o) for a, o in zip(out_leaves, outs)])


def _inline_call(fn, leaves: list, treedef, mask):
    """``fn`` traced at the call site, on the arguments, with ``mask`` (and the enclosing scope's
    lanes) as the mask of its side effects: a body whose scatters or symbolic loops the
    backend cannot run as a function of its parameters (its Python code runs a second time)."""
    call_args, call_kwargs = unflatten(treedef, [type(a)(a) for a in leaves])
    if mask is None or (isinstance(mask, (bool, np.bool_)) and mask):
        return fn(*call_args, **call_kwargs)
    m = mask._node if isinstance(mask, ArrayBase) else ops.literal(Bool, False, 1)
    top = masks.top()
    if top is not None and masks.compatible(top, m.size):
        m = ops.make_binary("and", Bool, m, top)
    with masks.scope(m):
        return fn(*call_args, **call_kwargs)


def _call_node(name: str, params: list, args: list, body, results: list, width: int) -> list:
    """The ``call`` node of a pure body and its ``call_out`` results (the record shared with
    earlier call sites of an equal body)."""
    record = calls.shared_record(calls.FuncRecord(name, params, results, body.nodes, body.key))
    node = ops.call(record, tuple(args), width)
    return [ops.call_out(node, r.vt, j) for j, r in enumerate(record.results)]


def _inline(params: list, args: list, nodes: list, results: list) -> list:
    """The body's nodes again, over the call's arguments (a body the backend cannot call as a
    function of its parameters: it gathers)."""
    new = dict(zip(params, args))
    for n in nodes:
        operands = tuple(new.get(a, a) for a in n.args)
        if n.op == "call_out":
            new[n] = ops.call_out(operands[0], n.vt, n.value)
        elif n.op == "call":
            new[n] = ops.call(n.extra, operands, ops.broadcast_size("call", operands) if operands else 1)
        else:
            new[n] = ops.make(n.op, n.vt, operands, n.value, n.extra)
    return [new.get(r, r) for r in results]


def _differentiable(leaves: list) -> list[int]:
    """The positions of the floating-point AD arrays among ``leaves`` (those with derivatives)."""
    return [k for k, a in enumerate(leaves) if a._is_ad and a._vt.is_float]


class _FuncOp(CustomOp):
    """A call with grad-enabled arguments, differentiable (Dr.Jit differentiates calls in both
    modes).  ``eval`` is the call on the detached arguments; ``forward`` calls the body's
    Jacobian-vector product and ``backward`` its vector-Jacobian product, each traced (with
    frostjit's AD over the placeholders) as a function of its own: a kernel holds each
    derivative's body once too, whatever the number of call sites.  Differentiable arrays the
    body reads without receiving them are constants for these derivatives."""

    _fj_wrap_eval_errors = False      # (custom(): its errors pass through as they are)

    def eval(self, leaves, fn, name, treedef, width, backend, mask):
        self.leaves, self.fn, self.name, self.treedef, self.backend = leaves, fn, name, treedef, backend
        self.diff = _differentiable(leaves)
        out = _traced_call(fn, name, leaves, treedef, width, mask, in_ad=True)
        self.out_diff = _differentiable(flatten(out)[0])
        return out

    def _body(self, xs: list):
        """The function's array results, called on ``xs`` (enabled for gradients)."""
        call_args, call_kwargs = unflatten(self.treedef, xs)
        return flatten(self.fn(*call_args, **call_kwargs))[0]

    def forward(self):
        diff, out_diff = self.diff, self.out_diff
        tangents = self.grad_in("leaves")

        def jvp(xs, dxs):
            with isolate_grad():
                xs = list(xs)
                for k, dx in zip(diff, dxs):
                    x = xs[k] = detach(xs[k])
                    enable_grad(x)
                    set_grad(x, dx)
                ys = self._body(xs)
                outs = [ys[k] for k in out_diff]
                forward_to(*outs, flags=ADFlag.ClearNone | ADFlag.AllowNoGrad)
                return [type(y)(detach(grad(y))) for y in outs]
        grads = call(_named(jvp, self.name, "forward"), self.backend, (self.leaves, [tangents[k] for k in diff]), {})
        zeros_out, out_def = flatten(self.grad_out())
        for k, g in zip(out_diff, grads):
            zeros_out[k] = g
        self.set_grad_out(unflatten(out_def, zeros_out))

    def backward(self):
        diff, out_diff = self.diff, self.out_diff
        cotangents = flatten(self.grad_out())[0]

        def vjp(xs, gys):
            with isolate_grad():
                xs = list(xs)
                for k in diff:
                    x = xs[k] = detach(xs[k])
                    enable_grad(x)
                ys = self._body(xs)
                outs = [ys[k] for k in out_diff]
                for y, g in zip(outs, gys):
                    set_grad(y, g)
                backward_to(*[xs[k] for k in diff], flags=ADFlag.ClearNone | ADFlag.AllowNoGrad)
                return [type(xs[k])(detach(grad(xs[k]))) for k in diff]
        grads = call(_named(vjp, self.name, "backward"), self.backend,
                     (self.leaves, [cotangents[k] for k in out_diff]), {})
        full = [zeros(type(a), 1) for a in self.leaves]
        for k, g in zip(diff, grads):
            full[k] = g
        self.set_grad_in("leaves", full)

    def name(self) -> str:
        return f"fj.func {self.name!r}" if isinstance(self.name, str) else "fj.func"


def _named(fn, name: str, what: str):
    fn.__name__ = f"{name}_{what}"
    return fn


def _masked(out, mask, width: int):
    """``out`` with zeros on the lanes ``mask`` turns off (nothing to do without a mask)."""
    if mask is None or (isinstance(mask, (bool, np.bool_)) and mask):
        return out
    leaves, treedef = flatten(out)
    if not leaves:
        return out
    if isinstance(mask, (bool, np.bool_)):      # no lane is active
        return unflatten(treedef, [zeros(type(a), width) for a in leaves])
    return unflatten(treedef, [select(mask, a, type(a)(0)) for a in leaves])
