"""The gradient API (Dr.Jit names): ``enable_grad``, ``grad``, ``backward``, ``forward``, scopes, ...

Every function accepts arrays, static vectors and PyTrees of them (lists,
tuples, dicts, dataclasses, ``DRJIT_STRUCT`` classes).

>>> from frostjit.llvm.ad import Float
>>> x = Float(1, 2, 3)
>>> fj.enable_grad(x)
>>> y = fj.sum(x * x)
>>> fj.backward(y)
>>> fj.grad(x)
[2, 4, 6]
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from . import graph
from .graph import ADFlag, ADMode, Vertex, scopes


# ---------------------------------------------------------------------------
# PyTree helpers

def _leaves(obj, out: list) -> list:
    """The 1-D arrays inside ``obj`` (static vectors give their components)."""
    if isinstance(obj, ArrayBase):
        out.append(obj)
    elif isinstance(obj, VectorBase):
        out.extend(obj._c)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _leaves(o, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _leaves(getattr(obj, f.name), out)
    elif hasattr(type(obj), "DRJIT_STRUCT"):
        for k in type(obj).DRJIT_STRUCT:
            _leaves(getattr(obj, k), out)
    return out


def _map(fn, obj):
    """Rebuild ``obj`` with every 1-D array ``a`` replaced by ``fn(a)``."""
    if isinstance(obj, ArrayBase):
        return fn(obj)
    if isinstance(obj, VectorBase):
        comps = [fn(c) for c in obj._c]
        return type(obj)._from_components(comps)
    if isinstance(obj, list):
        return [_map(fn, o) for o in obj]
    if isinstance(obj, tuple):
        items = [_map(fn, o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, dict):
        return type(obj)((k, _map(fn, v)) for k, v in obj.items())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: _map(fn, getattr(obj, f.name))
                                            for f in dataclasses.fields(obj) if f.init})
    if hasattr(type(obj), "DRJIT_STRUCT"):
        new = type(obj).__new__(type(obj))
        for k in type(obj).DRJIT_STRUCT:
            setattr(new, k, _map(fn, getattr(obj, k)))
        return new
    return obj


def _vertices(args) -> list:
    out = []
    for a in _leaves(args, []):
        v = a._ad
        if v is not None and graph.is_active(v):
            out.append(v)
    return out


def _differentiable(a) -> bool:
    return isinstance(a, ArrayBase) and a._is_ad and a._vt.is_float


# ---------------------------------------------------------------------------
# Enabling gradients

def enable_grad(*args) -> None:
    """Make the float arrays in ``args`` differentiable: new AD leaves whose gradient can be read later.

    Raises ``TypeError`` for a non-AD or non-float array (import the types from
    ``frostjit.llvm.ad``).  Inside PyTrees, non-differentiable entries are skipped.
    Already grad-enabled arrays are left as they are.  Inside ``suspend_grad()``
    (no arguments, nothing resumed) this does nothing, as in Dr.Jit: no variable
    can become differentiable there.
    """
    allowed = graph.grad_allowed()
    for arg in args:
        if isinstance(arg, (ArrayBase, VectorBase)):
            leaves = _leaves(arg, [])
            for a in leaves:
                if not _differentiable(a):
                    raise TypeError(
                        f"enable_grad(): {type(arg).__module__}.{type(arg).__name__} cannot carry gradients "
                        "(use a floating point type from frostjit.llvm.ad)")
        elif isinstance(arg, (int, float, complex, str, bytes)) or arg is None:
            raise TypeError(f"enable_grad(): expected a frostjit AD array, got {type(arg).__name__}")
        else:
            leaves = [a for a in _leaves(arg, []) if _differentiable(a)]
        for a in leaves:
            if a._ad is None and allowed:
                a._ad = Vertex(type(a), a._node.size, (), a._node)


def disable_grad(*args) -> None:
    """Detach the arrays in ``args`` from the AD graph (in place)."""
    for a in _leaves(args, []):
        a._ad = None


def set_grad_enabled(arg, value: bool) -> None:
    """``enable_grad(arg)`` if ``value`` else ``disable_grad(arg)``."""
    (enable_grad if value else disable_grad)(arg)


def grad_enabled(*args) -> bool:
    """Whether some array in ``args`` is grad-enabled (and not inside ``suspend_grad`` for it)."""
    return bool(_vertices(args))


# ---------------------------------------------------------------------------
# Reading and writing gradients

def _zeros_like(a):
    return graph.sized_literal(type(a), 0, a._node.size, a._node)


def _grad_of(a):
    v = a._ad
    if v is None or not a._is_ad or v.grad is None or not graph.is_active(v):
        return _zeros_like(a)
    g = v.grad
    if type(g) is not type(a):
        g = graph.detached(type(a), g)
    else:
        g = type(a)._from_node(g._node)
    return g


def grad(arg, preserve_type: bool = True):
    """The gradient of ``arg`` (zeros where it is not grad-enabled or nothing reached it).

    Same type and shape as ``arg`` (PyTrees map element by element).  Inside
    ``suspend_grad`` for a variable, its gradient reads as zero (Dr.Jit).
    """
    if isinstance(arg, (int, float)):
        return type(arg)(0)
    return _map(_grad_of, arg)


def _pairs(dst, src, who: str):
    """(array of dst, matching part of src) pairs; src broadcasts over dst's structure."""
    if isinstance(dst, ArrayBase):
        if isinstance(src, VectorBase):
            raise TypeError(f"{who}(): cannot assign a {type(src).__name__} to a {type(dst).__name__}")
        return [(dst, src)]
    if isinstance(dst, VectorBase):
        if isinstance(src, VectorBase):
            if len(src) != len(dst):
                raise TypeError(f"{who}(): {type(src).__name__} does not match {type(dst).__name__}")
            return list(zip(dst._c, src._c))
        return [(c, src) for c in dst._c]
    if isinstance(dst, (list, tuple)):
        if isinstance(src, (list, tuple)):
            if len(src) != len(dst):
                raise ValueError(f"{who}(): the gradient has {len(src)} entries, the target {len(dst)}")
            return [p for d, s in zip(dst, src) for p in _pairs(d, s, who)]
        return [p for d in dst for p in _pairs(d, src, who)]
    if isinstance(dst, dict):
        if isinstance(src, dict):
            return [p for k in dst for p in _pairs(dst[k], src[k], who)]
        return [p for d in dst.values() for p in _pairs(d, src, who)]
    if dataclasses.is_dataclass(dst) or hasattr(type(dst), "DRJIT_STRUCT"):
        names = [f.name for f in dataclasses.fields(dst)] if dataclasses.is_dataclass(dst) \
            else list(type(dst).DRJIT_STRUCT)
        same = type(src) is type(dst)
        return [p for k in names for p in _pairs(getattr(dst, k), getattr(src, k) if same else src, who)]
    return []


def set_grad(dst, src) -> None:
    """Set the gradient of ``dst`` to ``src`` (an array, PyTree or scalar; broadcast if needed).

    As in Dr.Jit, this clears the gradients of every array in ``dst`` and then
    adds ``src`` to each: a variable appearing ``k`` times in ``dst`` (e.g.
    ``Array3f(a, a, a)``) receives ``k`` contributions.
    """
    pairs = _pairs(dst, src, "set_grad")
    for a, _ in pairs:
        v = a._ad
        if v is not None and graph.is_active(v):
            v.grad = None
    for a, g in pairs:
        v = a._ad
        if v is not None and graph.is_active(v):
            graph.accum(v, g)


def accum_grad(dst, src) -> None:
    """Add ``src`` to the gradient of ``dst``."""
    for a, g in _pairs(dst, src, "accum_grad"):
        v = a._ad
        if v is not None and graph.is_active(v):
            graph.accum(v, g)


def clear_grad(*args) -> None:
    """Reset the gradients of ``args`` to zero."""
    for a in _leaves(args, []):
        if a._ad is not None:
            a._ad.grad = None


def detach(arg, preserve_type: bool = True):
    """A copy of ``arg`` that shares its values but is not part of the AD graph.

    With ``preserve_type=False`` the result has the non-AD type
    (``frostjit.llvm.Float`` instead of ``frostjit.llvm.ad.Float``).
    """
    def one(a):
        cls = type(a)
        if not preserve_type and a._is_ad:
            cls = registry.flat_type(a._backend, a._vt, False)
        return cls._from_node(a._node)
    if isinstance(arg, VectorBase) and not preserve_type:
        comps = [one(c) for c in arg._c]
        vcls = registry.vector_type(comps[0]._backend, comps[0]._vt, len(comps), False)
        return vcls._from_components(comps)
    return _map(one, arg)


def replace_grad(a, b):
    """An array with the value of ``a`` and the derivatives of ``b`` (``b``'s AD graph)."""
    if isinstance(a, VectorBase) or isinstance(b, VectorBase):
        if isinstance(a, VectorBase) and isinstance(b, VectorBase) and len(a) != len(b):
            raise TypeError("replace_grad(): static sizes differ")
        n = len(a) if isinstance(a, VectorBase) else len(b)
        ca = a._c if isinstance(a, VectorBase) else [a] * n
        cb = b._c if isinstance(b, VectorBase) else [b] * n
        comps = [replace_grad(x, y) for x, y in zip(ca, cb)]
        vec = a if isinstance(a, VectorBase) else b
        return type(vec)._from_components(comps)
    if not (isinstance(a, ArrayBase) and isinstance(b, ArrayBase)):
        raise TypeError(f"replace_grad(): expected two arrays, got {type(a).__name__} and {type(b).__name__}")
    if type(a) is not type(b):
        raise TypeError(f"replace_grad(): the types differ ({type(a).__name__} and {type(b).__name__})")
    sa, sb = a._node.size, b._node.size
    if sa != sb and sa != 1 and sb != 1:
        raise ValueError(f"replace_grad(): incompatible sizes {sa} and {sb}")
    node = a._node
    if sa == 1 and sb != 1:
        node = graph.broadcast(type(a)._from_node(node), sb, b._node)._node
    out = type(a)._from_node(node)
    v = b._ad
    if v is not None and graph.is_active(v):
        identity = _identity
        out._ad = Vertex(type(a), node.size, ((v, identity, identity),), node)
    return out


def _identity(g):
    return g


# ---------------------------------------------------------------------------
# Traversal

def _one(arg):
    return arg[0] if len(arg) == 1 else tuple(arg)


def _starts(arg, who: str, flags, seed: bool) -> list:
    """The distinct active vertices of ``arg``, after giving ``arg`` a gradient of 1 where needed.

    ``seed=True`` (``backward``/``forward``): always ``set_grad(arg, 1)``.  ``seed=False``
    (``backward_from``/``forward_from``): only if no array in ``arg`` has a gradient yet, so
    ``set_grad(b, 1000); backward_from(b)`` propagates 1000 (Dr.Jit's rule).
    """
    if not isinstance(arg, (ArrayBase, VectorBase)):
        raise TypeError(f"{who}(): expected a frostjit array, got {type(arg).__name__}")
    verts = {}
    for a in _leaves(arg, []):
        v = a._ad
        if v is not None and graph.is_active(v):
            verts[v.id] = v
    if not verts:
        if not flags & ADFlag.AllowNoGrad:
            raise RuntimeError(
                f"{who}(): the argument does not depend on any grad-enabled variable. This usually means that "
                "frostjit.enable_grad() was not called (or the computation used non-AD types). If this is "
                f"expected, pass flags=frostjit.ADFlag.Default | frostjit.ADFlag.AllowNoGrad.")
        return []
    if seed or all(v.grad is None for v in verts.values()):
        set_grad(arg, 1.0)
    return list(verts.values())


def _backward(arg, flags, who: str, seed: bool) -> None:
    starts = _starts(arg, who, flags, seed)
    if starts:
        graph.traverse_backward(starts, flags)


def backward_from(arg, flags: ADFlag = ADFlag.Default) -> None:
    """Propagate the gradient of ``arg`` backward to everything ``arg`` depends on.

    If no gradient was assigned to ``arg`` (:func:`set_grad`, :func:`accum_grad`),
    it is seeded with 1 first; otherwise the assigned gradient is propagated.
    Afterwards :func:`grad` of the grad-enabled leaves holds ``d arg / d leaf``
    (summed over ``arg``'s elements).  The gradient computations are traced,
    not run: they fuse into a few kernels when the gradients are evaluated.
    """
    _backward(arg, flags, "backward_from", seed=False)


def backward(arg, flags: ADFlag = ADFlag.Default) -> None:
    """``set_grad(arg, 1)`` followed by :func:`backward_from` (a gradient already on ``arg`` is replaced)."""
    _backward(arg, flags, "backward", seed=True)


def backward_to(*args, flags: ADFlag = ADFlag.Default):
    """Propagate the gradients set on later variables (``set_grad``) backward to ``args``; returns ``grad(args)``."""
    targets = _vertices(args)
    if not targets and not flags & ADFlag.AllowNoGrad:
        raise RuntimeError("backward_to(): the arguments are not grad-enabled")
    verts = graph.descendants(targets)
    starts = [v for v in verts if v.grad is not None]
    target_ids = {v.id for v in targets}
    graph.traverse_backward([v for v in starts if v.id not in target_ids], flags, targets=verts,
                            keep=target_ids)
    return _one([grad(a) for a in args])


def _forward(arg, flags, who: str, seed: bool) -> None:
    starts = _starts(arg, who, flags, seed)
    if starts:
        graph.traverse_forward(graph.descendants(starts), starts, flags)


def forward_from(arg, flags: ADFlag = ADFlag.Default) -> None:
    """Propagate the gradient of ``arg`` forward to everything depending on ``arg``.

    If no gradient was assigned to ``arg`` it is seeded with 1 first.  Afterwards
    :func:`grad` of a result ``y`` holds the directional derivative ``d y / d arg``.
    """
    _forward(arg, flags, "forward_from", seed=False)


def forward(arg, flags: ADFlag = ADFlag.Default) -> None:
    """``set_grad(arg, 1)`` followed by :func:`forward_from` (a gradient already on ``arg`` is replaced)."""
    _forward(arg, flags, "forward", seed=True)


def forward_to(*args, flags: ADFlag = ADFlag.Default):
    """Propagate the gradients set on earlier variables (``set_grad``) forward to ``args``; returns ``grad(args)``."""
    targets = _vertices(args)
    if not targets and not flags & ADFlag.AllowNoGrad:
        raise RuntimeError("forward_to(): the arguments are not grad-enabled")
    verts = graph.ancestors(targets)
    target_ids = {v.id for v in targets}
    sources = [v for v in verts if v.grad is not None and v.id not in target_ids]
    graph.traverse_forward(verts, sources, flags, keep=target_ids)
    return _one([grad(a) for a in args])


class _Queue(threading.local):
    """Vertices enqueued for the next :func:`traverse`, per thread (as in Dr.Jit)."""

    def __init__(self) -> None:
        self.todo = {ADMode.Forward: [], ADMode.Backward: []}


_queue = _Queue()


def enqueue(mode: ADMode, *args) -> None:
    """Mark the vertices of ``args`` as starting points of the next :func:`traverse` in ``mode``.

    Like Dr.Jit, this ignores ``suspend_grad`` scopes: every grad-enabled array is enqueued.
    """
    queue = _queue.todo[mode]
    for a in _leaves(args, []):
        if a._ad is not None:
            queue.append(a._ad)


def traverse(mode: ADMode, flags: ADFlag = ADFlag.Default) -> None:
    """Propagate the gradients of the enqueued vertices (see :func:`enqueue`)."""
    todo = _queue.todo
    starts, todo[mode] = list({v.id: v for v in todo[mode]}.values()), []
    if mode is ADMode.Backward:
        graph.traverse_backward(starts, flags)
    elif mode is ADMode.Forward:
        graph.traverse_forward(graph.descendants(starts), starts, flags)


# ---------------------------------------------------------------------------
# Scopes

@contextlib.contextmanager
def _enable_scope(suspend: bool, args, when: bool):
    if not when:
        yield
        return
    ids = None
    if args:
        # Arguments that are not grad-enabled arrays (scalars, plain arrays) are ignored.
        ids = {a._ad.id for a in _leaves(args, []) if a._ad is not None}
    scope = graph.current_scope().child(suspend, ids)
    scopes.enable.append(scope)
    try:
        yield
    finally:
        _pop(scopes.enable, scope)


def _pop(stack: list, scope) -> None:
    """Remove ``scope`` from the top of ``stack`` (scopes nest, so it is the innermost one)."""
    if stack and stack[-1] is scope:
        stack.pop()
    elif scope in stack:
        stack.remove(scope)


def suspend_grad(*args, when: bool = True):
    """Context manager: inside, operations are not recorded for AD.

    With arguments, only those variables are treated as non-differentiable.

    >>> with fj.suspend_grad():
    ...     y = x * 2          # not grad-enabled
    """
    return _enable_scope(True, args, when)


def resume_grad(*args, when: bool = True):
    """Context manager: undo an enclosing :func:`suspend_grad` (for ``args``, or for everything)."""
    return _enable_scope(False, args, when)


@contextlib.contextmanager
def isolate_grad(when: bool = True):
    """Context manager: a backward pass inside stops at variables created before the scope.

    Gradients that reach them are postponed, and propagated further when the
    scope ends (Dr.Jit's semantics; frozen functions run in such a scope).
    Inside, the gradients of those earlier variables are not cleared by a
    traversal, and forward mode may not propagate into them (RuntimeError, as
    Dr.Jit).  Variables created inside a ``suspend_grad``/``resume_grad``
    combination stay enabled only until the scope ends.
    """
    if not when:
        yield
        return
    scope = [graph.next_id(), {}]
    top = graph.current_scope()
    enable = graph.EnableScope(top.complement, set(top.ids))
    scopes.isolate.append(scope)
    scopes.enable.append(enable)
    ok = False
    try:
        yield
        ok = True
    finally:
        _pop(scopes.enable, enable)
        _pop(scopes.isolate, scope)
        if ok:
            graph.propagate_postponed(scope[1].values())
