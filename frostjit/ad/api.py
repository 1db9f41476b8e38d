"""The gradient API (Dr.Jit names): ``enable_grad``, ``grad``, ``backward``, ``forward``, scopes, ...

Every function accepts arrays, static vectors and PyTrees of them (what a
PyTree is is defined once, in :mod:`frostjit.tree`: tuples, lists, dicts and their
subclasses, dataclasses, ``DRJIT_STRUCT`` classes, objects using the traversal
protocol), and the functions that return arrays return the same structure;
``backward``/``forward`` and their ``_from`` forms take an array or a static
vector, as in Dr.Jit.

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
import threading

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..errors import GradArgumentError, GradSizeError
from ..functions import math as fm
from ..functions.detach import detach  # noqa: F401  (part of the AD API: fj.detach)
from ..traits import is_tensor_v
from ..trace.ops import stored_literal as _stored_literal
from ..tree import leaves, transform, traverse2, map2, LeafError
from . import graph
from .graph import ADFlag, ADMode, Vertex, scopes


# ---------------------------------------------------------------------------
# PyTrees: every function here walks its arguments with frostjit.tree (one definition
# shared with eval, gather/scatter and freeze).

def _vertices(args) -> list:
    out = []
    for a in leaves(args):
        v = a._ad
        if v is not None and graph.is_active(v):
            out.append(v)
    return out


def _differentiable(a) -> bool:
    return isinstance(a, ArrayBase) and a._is_ad and a._vt.is_float


# ---------------------------------------------------------------------------
# Enabling gradients

# Checks that enable_grad runs on arguments of these classes first (frostjit.nn registers its
# cooperative vectors: Dr.Jit refuses to make one of non-differentiable components differentiable).
ENABLE_GRAD_CHECKS: dict = {}


def enable_grad(*args) -> None:
    """Make the float arrays in ``args`` differentiable: new AD leaves whose gradient can be read later.

    Everything else is skipped without an error, as in Dr.Jit: integer, mask and
    non-AD arrays (``enable_grad(UInt32(1))`` does nothing; import float types from
    ``frostjit.llvm.ad`` to differentiate), Python values, entries of PyTrees that
    cannot carry gradients.  Already grad-enabled arrays are left as they are.
    Inside ``suspend_grad()`` (no arguments, nothing resumed) this does nothing, as
    in Dr.Jit: no variable can become differentiable there.
    """
    if not graph.grad_allowed():
        return
    for a in args:      # (a class may refuse: Dr.Jit's cooperative vectors of non-AD components)
        check = ENABLE_GRAD_CHECKS.get(type(a))
        if check is not None:
            check(a)
    for a in leaves(args):
        if a._ad is None and _differentiable(a):
            a._ad = Vertex(type(a), a._node.size, (), a._node)


def disable_grad(*args) -> None:
    """Detach the arrays in ``args`` from the AD graph (in place)."""
    for a in leaves(args):
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


def _zero_value(v):
    """``grad`` of a Python number inside a PyTree is a zero of its type (Dr.Jit); other
    Python values stay as they are."""
    return type(v)(0) if isinstance(v, (int, float)) else v


def grad(arg, preserve_type: bool = True):
    """The gradient of ``arg`` (zeros where it is not grad-enabled or nothing reached it).

    Same type and structure as ``arg``: a PyTree gives a PyTree of gradients, a Python
    number a zero of its type.  ``preserve_type=False`` gives the arrays as their detached
    (non-AD) types, static vectors included (Dr.Jit).  Inside ``suspend_grad`` for a
    variable, its gradient reads as zero (Dr.Jit).
    """
    g = transform(arg, _grad_of, _zero_value, who="grad", root="arg")
    return g if preserve_type else detach(g, preserve_type=False)


_SEQUENCES = (list, tuple, np.ndarray)


def _pairs(dst, src, who: str) -> list:
    """``(array of dst, matching part of src)`` for every array of ``dst``; ``src`` has
    ``dst``'s structure or broadcasts over it (an array or a Python number)."""
    if isinstance(src, _SEQUENCES) and isinstance(dst, (ArrayBase, VectorBase)):
        # Dr.Jit converts the value with the array's constructor: ``x.grad = [1, 2, 3]``
        src = type(dst)(src)
    elif isinstance(dst, ArrayBase) and is_tensor_v(type(src)):
        src = type(dst)(src)            # a 1-D tensor gradient for a flat array (Dr.Jit)
    elif isinstance(src, _SEQUENCES) and is_tensor_v(type(dst)):
        # a list (flat or nested) of the tensor's size fills it in order (Dr.Jit: t.grad = [..])
        src = type(dst.array)(np.asarray(src).ravel())
    if isinstance(dst, ArrayBase) and isinstance(src, (ArrayBase, int, float)):
        return [(dst, src)]
    pairs = []

    def pair(a, g):
        if isinstance(a, ArrayBase):
            if isinstance(g, VectorBase):
                raise LeafError(f"cannot assign a {type(g).__name__} to a {type(a).__name__}")
            pairs.append((a, g))
    traverse2(dst, src, pair, broadcast=True, who=who, names=("dst", "src"))
    return pairs


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
    for a in leaves(args):
        if a._ad is not None:
            a._ad.grad = None


def replace_grad(a, b):
    """The value of ``a`` with the derivatives of ``b`` (``b``'s AD graph).

    ``a`` and ``b`` are arrays (a 1-D array broadcasts over a static vector, an array of
    size 1 over a larger one; beside a dynamic vector such as ``ArrayXf`` a 1-D array or a
    number is a vector of one component, and the lengths must match, as in Dr.Jit) or PyTrees
    of the same structure, replaced leaf by leaf.  A static and a dynamic vector give the
    dynamic type.  As
    in Dr.Jit, a Python number ``a`` takes ``b``'s type (``replace_grad(4.0, x)`` is 4 with
    ``x``'s derivatives), a Python number ``b`` gives ``a`` detached, and a ``b`` of another
    array type is converted to ``a``'s first.  Arguments that do not go together raise
    :class:`~frostjit.errors.GradArgumentError` (a ``RuntimeError`` and a ``TypeError``),
    incompatible sizes :class:`~frostjit.errors.GradSizeError` (a ``RuntimeError`` and a
    ``ValueError``).
    """
    if isinstance(a, (ArrayBase, VectorBase)) or isinstance(b, (ArrayBase, VectorBase)):
        return _replace_grad(a, b)
    try:
        return map2(a, b, _replace_leaf, who="replace_grad")
    except GradArgumentError:
        raise
    except TypeError as e:     # a structure mismatch found by the PyTree walker, or a leaf's error
        # A leaf's own error is the cause (Dr.Jit chains the leaf's "incompatible input types.")
        leaf = e.__context__
        raise GradArgumentError(str(e)) from (leaf.__cause__ if isinstance(leaf, LeafError) else None)


def _replace_leaf(x, y):
    if isinstance(x, (ArrayBase, VectorBase)) or isinstance(y, (ArrayBase, VectorBase)):
        try:
            return _replace_grad(x, y)
        except GradArgumentError as e:
            raise LeafError(str(e).removeprefix("replace_grad(): ")) from e
    return x


def _replace_grad(a, b):
    if isinstance(a, VectorBase) or isinstance(b, VectorBase):
        va, vb = isinstance(a, VectorBase), isinstance(b, VectorBase)
        # As in Dr.Jit: a number or flat array beside a *dynamic* vector is a dynamic vector of
        # one component, and dynamic lengths must match (no broadcast: replace_grad(ArrayXf of
        # 2, Float) raises); beside a static vector it broadcasts over the components.
        dynamic = (va and a.IsDynamic) or (vb and b.IsDynamic)
        la = len(a) if va else 1
        lb = len(b) if vb else 1
        if (va and vb or dynamic) and la != lb:
            raise GradArgumentError(f"replace_grad(): incompatible input lengths ({la} and {lb})")
        n = la if va else lb
        ca = a._c if va else [a] * n
        cb = b._c if vb else [b] * n
        comps = [_replace_grad(x, y) for x, y in zip(ca, cb)]
        # (a static and a dynamic vector give the dynamic type, as in Dr.Jit)
        vec = a if va and (a.IsDynamic or not dynamic) else b
        return type(vec)._from_components(comps)
    if isinstance(b, (int, float)) and isinstance(a, ArrayBase):
        return detach(a)             # no derivatives to take over (Dr.Jit)
    if isinstance(a, (int, float)) and isinstance(b, ArrayBase) and _differentiable(b):
        a = graph.sized_literal(type(b), a, 1)
    if not (isinstance(a, ArrayBase) and isinstance(b, ArrayBase)):
        raise GradArgumentError(f"replace_grad(): arguments of type {type(a).__name__} and "
                                f"{type(b).__name__}: incompatible input types.")
    if type(a) is not type(b):
        b = type(a)(b)               # Dr.Jit converts the derivative side (a cast keeps its AD edge)
    sa, sb = a._node.size, b._node.size
    if sa != sb and sa != 1 and sb != 1:
        raise GradSizeError(f"replace_grad(): incompatible input sizes ({sa} and {sb})")
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


def relative_grad(x):
    """A factor with value 1 whose derivative is the *relative* change of ``x`` (Dr.Jit's).

    Where ``x != 0`` it has the first-order derivative of ``x / detach(x)``, so gradients
    depend on ``dx / x`` rather than on the scale of ``x``; where ``x == 0`` the derivative
    is 0 (no division by zero).  Same type as ``x`` (an array or static vector); for a
    Python number, ``1.0``.

    >>> y = fj.relative_grad(x) * c       # d y / d x = c / x, y = c
    """
    if not isinstance(x, (ArrayBase, VectorBase)):
        return 1.0
    d = detach(x)
    inv = fm.select(d != 0, fm.rcp(d), 0)
    if isinstance(x, ArrayBase):
        one = _ones_like(x)
    else:
        one = type(x)._from_components([_ones_like(c) for c in x._c])
    return replace_grad(one, x * inv)


def _ones_like(a):
    return graph.sized_literal(type(a), 1.0, a._node.size, a._node)


# ---------------------------------------------------------------------------
# Traversal

def _one(arg):
    return arg[0] if len(arg) == 1 else tuple(arg)


def _no_grad_message(who: str) -> str:
    # (the first sentence is Dr.Jit's, which ported programs match)
    return (f"{who}(): the argument does not depend on the input variable(s) being differentiated: no "
            "array in it is grad-enabled. This usually means that frostjit.enable_grad() was not called "
            "(or the computation used non-AD types). If this is expected, pass "
            "flags=frostjit.ADFlag.Default | frostjit.ADFlag.AllowNoGrad.")


def _starts(arg, who: str, flags, seed: bool) -> list:
    """The distinct active vertices of ``arg``, after giving ``arg`` a gradient of 1 where needed.

    ``seed=True`` (``backward``/``forward``): always ``set_grad(arg, 1)``.  ``seed=False``
    (``backward_from``/``forward_from``): only if no array in ``arg`` has a gradient yet, so
    ``set_grad(b, 1000); backward_from(b)`` propagates 1000 (Dr.Jit's rule).
    """
    if isinstance(arg, ArrayBase):     # the common case, one array (a loss): set_grad(arg, 1) inlined
        v = arg._ad
        if v is not None and graph.is_active(v):
            if seed or v.grad is None:
                # (what set_grad(arg, 1.0) gives: a literal 1 of the vertex's type and size; for
                # a loss (size 1, a float type: 1.0 is exact) without converting the value)
                cls = v.cls
                v.grad = cls._from_node(_stored_literal(cls._vt, 1.0, 1)) if v.size == 1 and cls._vt.is_float \
                    else graph.sized_literal(cls, 1.0, v.size, v)
            return [v]
    elif not isinstance(arg, VectorBase) and not getattr(type(arg), "IsTensor", False):
        raise TypeError(f"{who}(): expected a frostjit array, got {type(arg).__name__}")
    verts = {}
    for a in leaves(arg):
        v = a._ad
        if v is not None and graph.is_active(v):
            verts[v.id] = v
    if not verts:
        if not flags & ADFlag.AllowNoGrad:
            raise RuntimeError(_no_grad_message(who))
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
        raise RuntimeError(_no_grad_message("backward_to"))
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
        raise RuntimeError(_no_grad_message("forward_to"))
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
    for a in leaves(args):
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
        ids = {a._ad.id for a in leaves(args) if a._ad is not None}
    scope = graph.current_scope().child(suspend, ids)
    graph.push_scope(scopes.enable, scope)
    try:
        yield
    finally:
        graph.pop_scope(scopes.enable, scope)


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
    graph.push_scope(scopes.isolate, scope)
    graph.push_scope(scopes.enable, enable)
    ok = False
    try:
        yield
        ok = True
    finally:
        graph.pop_scope(scopes.enable, enable)
        graph.pop_scope(scopes.isolate, scope)
        if ok:
            graph.propagate_postponed(scope[1].values())
