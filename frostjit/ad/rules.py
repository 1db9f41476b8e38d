"""Derivative rules: what each operation adds to the AD graph.

The engine tells the installed :class:`Hook` about every operation on a
grad-enabled array (``state.ad_hook``); the hook creates the result's
:class:`~frostjit.ad.graph.Vertex` with one edge per differentiable operand.

The rules themselves live in the op table (:mod:`frostjit.trace.optable`, each
entry's ``deriv``); this module is the machinery that applies them.  Elementwise
operations have one *partial* per operand: a function of the namespace
:data:`DERIVATIVE_MATH`, the detached operands ``a`` and the detached result ``z``
giving the partial derivative (a number, an array, or a :class:`Mask`).  Partials
are computed when the gradient flows (inside the backward pass), so the forward
kernels stay as they were and the derivative work fuses with the rest of the
backward pass.  Memory operations and reductions (``deriv`` is ``SPECIAL``) are
implemented here by hand.

Conventions (Dr.Jit 1.5's, measured side by side):

* A zero gradient times any partial is zero (:func:`scale`), even where the
  partial is infinite or NaN: a branch that ``select`` did not take, or a
  function at a point where its derivative does not exist, contributes nothing
  unless a nonzero gradient actually reaches it.
* At kinks: ``abs'(0) = 0``; ``maximum(a, b)`` sends the gradient to ``a`` only
  where ``a > b`` (ties and NaNs go to ``b``), ``minimum(a, b)`` to ``a`` where
  ``a <= b``; ``d/dx x**y = 0`` where ``y == 0``; ``d/dy x**y = 0`` where
  ``x**y == 0`` (no ``0 * log(0)``).
"""
from __future__ import annotations

import dataclasses
import math
import weakref

from ..array.flat import ArrayBase
from ..backend.base import OpenAxisReduction
from ..errors import GradArgumentError
from ..functions import math as fm
from ..array.registry import flat_type
from ..functions.block import axis_reduce, block_reduce, block_sum, block_prefix_sum
from ..functions.creation import arange
from ..functions.evaluation import width
from ..functions.memory import gather, scatter, scatter_add
from ..functions.reduce import sum as fsum, prefix_sum, prod
from ..trace import ops
from ..trace.dtypes import Bool, UInt32
from ..trace.optable import OPS, SPECIAL, ZERO
from ..trace.state import state
from . import graph as _graph
from .graph import ScatterAdjoint, Vertex, detached, is_active, scopes, broadcast, sized_literal


class Mask:
    """A 0/1 partial derivative: the gradient passes where ``cond`` holds (``select``, no ``0 * inf``)."""

    __slots__ = ("cond",)

    def __init__(self, cond):
        self.cond = cond


def scale(g, w):
    """``g * w`` for a gradient ``g`` and a partial derivative ``w``, with ``0 * w = 0`` for every ``w``.

    Dr.Jit's rule: where no gradient arrives, an infinite or NaN partial (the
    branch ``select`` did not take, ``sqrt'(0)``, ...) must not turn the zero
    into NaN.  Finite Python numbers need no guard.  Built directly from nodes
    (this runs once per edge of every backward pass): ``select(g == 0, 0, g * w)``,
    the test ``g == 0`` shared by the edges of one vertex.
    """
    if not isinstance(w, ArrayBase):
        # Exactly int/float: a width-derived number inside a frozen function is finite, and
        # testing it would make the recording depend on its value.
        if type(w) not in (int, float) or math.isfinite(w):
            return g * w
    p = g * w
    cls = type(p)
    is_zero, zero = _zero_test(g._node, cls._vt)
    return cls._from_node(ops.make("select", cls._vt, (is_zero, zero, p._node)))


# The last gradient tested by scale(): (weak ref to its node, recorder, "== 0" node, zero literal).
# The edges of a vertex are walked one after the other with the same gradient.
_last_zero_test = (None, None, None, None)


def _zero_test(gnode, vt):
    """``(g == 0, 0)`` as nodes, reused while the same gradient node is scaled again (same recorder)."""
    global _last_zero_test
    ref, rec, is_zero, zero = _last_zero_test
    if ref is not None and ref() is gnode and rec is state.recorder and zero.vt is vt:
        return is_zero, zero
    zero = ops.literal(vt, 0.0)
    is_zero = ops.make("eq", Bool, (gnode, zero))
    _last_zero_test = (weakref.ref(gnode), state.recorder, is_zero, zero)
    return is_zero, zero


def _py_rcp(d: float) -> float:
    """``1 / d`` for a Python number, IEEE style (``1 / 0.0 = inf``, ``1 / -0.0 = -inf``)."""
    if d == 0:
        return math.copysign(math.inf, d)
    return 1.0 / d


def _py_log(x: float) -> float:
    """``log(x)`` for a Python number, IEEE style (``log(0) = -inf``, ``log(-1) = nan``)."""
    if x == 0:
        return -math.inf
    if not x >= 0:
        return math.nan
    return math.log(x) if x != math.inf else math.inf


class _DerivativeMath:
    """The namespace ``f`` the op table's derivative rules are written over (see
    :mod:`frostjit.trace.optable`): the element-wise functions (on Python numbers they follow
    IEEE, ``f.rcp(0.0) == inf``), plus the few helpers the rules need."""

    select = staticmethod(fm.select)
    sin = staticmethod(fm.sin)
    cos = staticmethod(fm.cos)
    exp = staticmethod(fm.exp)
    sinh = staticmethod(fm.sinh)
    cosh = staticmethod(fm.cosh)
    rsqrt = staticmethod(fm.rsqrt)
    copysign = staticmethod(fm.copysign)
    mask = Mask

    # Operands that are not arrays may be a frozen function's symbolic width (not a float):
    # plain arithmetic, with IEEE's answers at 0.
    @staticmethod
    def log(x):
        return fm.log(x) if isinstance(x, ArrayBase) else _py_log(x)

    @staticmethod
    def rcp(x):
        return 1.0 / x if isinstance(x, ArrayBase) else _py_rcp(x)

    @staticmethod
    def floor(x):
        # (mod's rule: the '//' operator refuses float arrays, as Dr.Jit's does)
        return fm.floor(x) if isinstance(x, ArrayBase) else math.floor(x)

    @staticmethod
    def digamma(x):
        """The digamma function (lgamma's derivative) of an array: ten steps of the recurrence
        psi(y) = psi(y + 1) - 1/y, then the asymptotic series (relative error ~1e-14); the
        reflection psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0."""
        neg = x < 0
        y = fm.select(neg, 1.0 - x, x)
        acc = 0.0
        for k in range(10):
            acc = acc - 1.0 / (y + float(k))
        z = y + 10.0
        w = 1.0 / (z * z)
        tail = w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w * (1 / 132)))))
        psi = acc + fm.log(z) - 0.5 / z - tail
        return fm.select(neg, psi - math.pi / fm.tan(math.pi * x), psi)

    @staticmethod
    def is_array(x) -> bool:
        return isinstance(x, ArrayBase)

    @staticmethod
    def is_mask(x) -> bool:
        return isinstance(x, ArrayBase) and x._vt.is_bool

    @staticmethod
    def literal_value(x):
        return _constant(x)

    @staticmethod
    def is_symbolic(c) -> bool:
        return hasattr(c, "__symbolic_size__")


DERIVATIVE_MATH = _DerivativeMath()


def _constant(a):
    """The Python value of a size-1 literal operand, else None."""
    node = a._node
    if node.op == "literal" and node.size == 1:
        return node.value
    return None


class Diagonal:
    """Edge function of an elementwise operation: gradient times the partial derivative
    (``partial(f, a, z)`` from the op table, evaluated when the gradient flows)."""

    __slots__ = ("partial", "a", "z")

    def __init__(self, partial, a, z):
        self.partial = partial
        self.a = a
        self.z = z

    def __call__(self, g):
        w = self.partial(DERIVATIVE_MATH, self.a, self.z)
        if isinstance(w, ArrayBase):
            c = _constant(w)          # a scalar operand (x * 2.0): multiply by the number
            if c is not None:
                w = c
        if isinstance(w, Mask):
            return fm.select(w.cond, g, 0.0)
        if type(w) is int or type(w) is float:      # not a frozen function's symbolic width
            if w == 1:
                return g
            if w == -1:
                return -g
        return scale(g, w)


def _operand(cls, o):
    """Operand ``o`` as the partials see it: detached, of type ``cls`` (Bool masks stay Bool).

    Python scalars stay Python numbers (the partials that compute with them use
    ``f.rcp`` / ``f.log``, which give IEEE's inf and NaN for them, never an exception).
    """
    if isinstance(o, ArrayBase):
        return o if o._vt.is_bool else detached(cls, o)
    return o


_new = object.__new__


def _vertex(out, operand) -> Vertex | None:
    """The active AD vertex of an operand, or None."""
    if isinstance(operand, ArrayBase):
        v = operand._ad
        if v is not None and (not _graph.open_scopes or not scopes.enable or is_active(v)):
            return v
    return None


def _attach(out, edges) -> None:
    if edges:
        out._ad = Vertex(type(out), out._node.size, tuple(edges), out._node)


class Hook:
    """The object installed as ``state.ad_hook``: builds the AD graph as the program runs."""

    def on_op(self, op: str, out, operands) -> None:
        if op == "cast" and out._node is operands[0]._node and type(out) is type(operands[0]):
            # Float(x) of a Float: the same variable (Dr.Jit), not a copy; inside a suspend_grad
            # scope for x, a detached copy (Dr.Jit: it stays detached when the scope resumes x)
            out._ad = _vertex(out, operands[0])
            return
        if _graph.open_scopes:
            verts = [_vertex(out, o) for o in operands]
        else:
            # (no suspend/resume scope open: an operand's vertex is its _ad, as _vertex finds)
            verts = [o._ad if isinstance(o, ArrayBase) else None for o in operands]
        if verts.count(None) == len(verts):
            return
        entry = OPS.get(op)
        partials = None if entry is None else entry.deriv
        if partials is SPECIAL:
            _SPECIAL[op](out, operands[0], verts[0], op, *operands[1:])
            return
        if partials is ZERO:
            return
        if partials is None:
            raise NotImplementedError(f"frostjit AD: no derivative rule for operation {op!r}")
        cls = type(out)
        # (the detached operands and result that the partials read, and the edges, made by
        # object.__new__ and slot stores: an AD operation's hook cost ~3 us, a third of it in
        # the frames of _operand/detached/_from_node/Diagonal.__init__; same objects as those)
        same = None if cls._vt.is_bool else cls        # (a mask operand stays itself: _operand)
        a = []
        for o in operands:
            if type(o) is same:
                d = _new(same)
                d._node = o._node
                d._ad = None
                a.append(d)
            else:
                a.append(_operand(cls, o))
        a = tuple(a)
        z = _new(cls)
        z._node = out._node
        z._ad = None
        edges = []
        for v, partial in zip(verts, partials):
            if v is None or partial is None:
                continue
            f = _new(Diagonal)
            f.partial = partial
            f.a = a
            f.z = z
            edges.append((v, f, f))
        _attach(out, edges)

    def on_gather(self, out, source, index, active) -> None:
        v = _vertex(out, source)
        if v is None or not type(out)._is_ad:
            return
        cls = type(out)
        scls = v.cls
        index, active = _frozen_operand(index), _frozen_operand(active)

        def fwd(gs):
            return gather(cls, broadcast(gs, v.size, v), index, active)
        bwd = ScatterAdjoint(lambda: sized_literal(scls, 0, v.size, v),
                             lambda t, g: scatter_add(t, g, index, active))
        _attach(out, [(v, fwd, bwd)])

    def on_read_modify_write(self, who: str, operands: dict) -> None:
        """``scatter_exch``/``scatter_cas`` inside a symbolic loop body (one in-kernel atomic
        instruction, ``scatter_rmw``) with grad-enabled ``operands`` (name -> array): refused.
        Its old values and the target's new contents have no derivative rule there; Dr.Jit 1.5
        detaches them without a word, which leaves gradients silently wrong (a later
        ``backward`` would reach the target's old contents or miss ``value``)."""
        for name, x in operands.items():
            if _vertex(x, x) is not None:
                raise GradArgumentError(
                    f"{who}(): {name!r} is grad-enabled, but inside a symbolic loop (or a branch or "
                    f"function of one) the atomic {who} is not differentiable: its old values and "
                    f"the target's new contents would carry no derivatives. Pass fj.detach() of it "
                    f"(Dr.Jit 1.5 detaches silently), or call {who} outside the loop, where frostjit "
                    f"differentiates it")

    def on_scatter(self, who, reduce_op, target, value, index, active, before=None) -> None:
        """A scatter (``reduce_op`` None), ``scatter_add`` or ``scatter_reduce`` into ``target`` was
        queued; ``before`` holds the target's values before a Min/Max reduction."""
        if not type(target)._is_ad:
            return
        cls = type(target)
        vt_ = _vertex(target, target)
        vv = _vertex(target, value)
        if vt_ is None and vv is None:
            return
        if reduce_op in ("min", "max"):
            _scatter_minmax(target, value, index, active, before, vt_, vv)
            return
        if reduce_op not in (None, "add"):
            raise NotImplementedError(
                f"frostjit AD: scatter_reduce with ReduceOp.{reduce_op.capitalize()} is not differentiable "
                "(scatter, scatter_add and ReduceOp.Add, Min and Max are)")
        index, active = _frozen_operand(index), _frozen_operand(active)
        size = target._node.size
        tref = weakref.ref(target._node)
        edges = []
        if vt_ is not None:
            if reduce_op is None:
                def masked(g):
                    t = cls._from_node(broadcast(g, size, tref)._node)
                    scatter(t, 0.0, index, active)
                    return t
                edges.append((vt_, masked, masked))
            else:
                edges.append((vt_, _identity, _identity))
        if vv is not None:
            vcls = vv.cls

            def bwd(g):
                return gather(vcls, g, index, active)

            if reduce_op is None:
                fwd = _ScatterForward(cls, size, tref, index, active)
            else:
                def fwd(gv):
                    t = sized_literal(cls, 0, size, tref)
                    scatter_add(t, gv, index, active)
                    return t
            edges.append((vv, fwd, bwd))
        target._ad = Vertex(cls, size, tuple(edges), target._node)


def _identity(g):
    return g


def _scatter_minmax(target, value, index, active, before, vt_, vv) -> None:
    """The derivative of ``scatter_reduce(Min/Max)``, Dr.Jit 1.5's rule: an entry's gradient
    comes from whatever holds the winning value.  Backward: the target where its value
    before the reduction equals the result, every active value equal to the result at its
    index (ties all receive it).  Forward: the target's gradient, overwritten by that of a
    winning value (of the last one written, where several tie)."""
    cls = type(target)
    size = target._node.size
    tref = weakref.ref(target._node)
    result = _frozen_operand(target)           # a later scatter into target copies it first
    index, active = _frozen_operand(index), _frozen_operand(active)
    edges = []
    if vt_ is not None:
        kept = before == result

        def kept_part(g):
            return fm.select(kept, broadcast(g, size, tref), 0.0)
        edges.append((vt_, kept_part, kept_part))
    if vv is not None:
        vcls = vv.cls
        wins = active & (detached(vcls, value) == gather(vcls, detached(vcls, result), index, active))

        def bwd(g):
            return fm.select(wins, gather(vcls, g, index, active), 0.0)
        edges.append((vv, _ScatterForward(cls, size, tref, index, wins), bwd))
    target._ad = Vertex(cls, size, tuple(edges), target._node)


class _ScatterForward:
    """Forward edge from a ``scatter``'s value to its result: the written entries of the result's
    gradient *become* the value's gradient (``overwrites``: the traversal passes the current one).

    A gradient left on the result by an earlier forward pass is overwritten there, not added
    to (Dr.Jit: after ``forward(x, ADFlag.ClearVertices)``, a second ``forward(x)`` through the
    same scatter gives the same derivative, not twice it).
    """

    overwrites = True
    __slots__ = ("cls", "size", "tref", "index", "active")

    def __init__(self, cls, size, tref, index, active):
        self.cls, self.size, self.tref, self.index, self.active = cls, size, tref, index, active

    def __call__(self, gv, current=None):
        if current is None:
            t = sized_literal(self.cls, 0, self.size, self.tref)
        else:
            t = self.cls._from_node(current._node)     # a new handle: the scatter rebinds it only
        scatter(t, gv, self.index, self.active)
        return t


def _frozen_operand(x):
    """A handle on ``x``'s current value that later in-place updates of ``x`` cannot change."""
    if isinstance(x, ArrayBase):
        return type(x)._from_node(x._node)
    return x


# -- reductions and scans ------------------------------------------------------

def _reduce_add(out, x, v, op):
    _attach(out, [(v, fsum, _identity)])


def _reduce_mul(out, x, v, op):
    cls = type(out)
    xd = detached(cls, x)
    zd = cls._from_node(out._node)

    def weight():
        # d prod / d x_i = product of the others, also where x_i == 0.
        is_zero = xd == 0
        nz_prod = prod(fm.select(is_zero, 1.0, xd))
        zeros = fsum(fm.select(is_zero, 1.0, 0.0))
        return fm.select(zeros == 0, zd / xd, fm.select(is_zero & (zeros == 1), nz_prod, 0.0))

    _attach(out, [(v, lambda g: fsum(scale(g, weight())), lambda g: scale(g, weight()))])


def _reduce_minmax(out, x, v, op):
    cls = type(out)
    xd = detached(cls, x)
    zd = cls._from_node(out._node)
    _attach(out, [(v, lambda g: fsum(fm.select(xd == zd, g, 0.0)), lambda g: fm.select(xd == zd, g, 0.0))])


def _prefix_sum(out, x, v, op):
    exclusive = op == "prefix_sum_excl"

    def bwd(g):
        # d out_i / d x_j = 1 for j < i (exclusive) or j <= i: a suffix sum of g.
        return fsum(g) - prefix_sum(g, exclusive=not exclusive)

    _attach(out, [(v, lambda g: prefix_sum(g, exclusive=exclusive), bwd)])


def _block_reduce(out, x, v, op, block):
    """``fj.block_reduce``: a block's output against each of its inputs (Dr.Jit differentiates
    Add, Mul, Min and Max): sum -> 1 (the adjoint repeats the output gradient over its
    block), product -> the product of the block's other entries (out / x without zeros),
    min/max -> 1 where the input equals the output."""
    cls = type(out)
    n = _size(x)

    def spread(g):      # each output's value at every entry of its block
        return gather(cls, g, arange(flat_type(x._backend, UInt32), n) // block.size)

    if block.op == "add":
        _attach(out, [(v, lambda g: block_sum(g, block.size), spread)])
        return
    if block.op not in ("mul", "min", "max"):
        raise NotImplementedError(f"frostjit AD: block_reduce with {block.op!r} is not differentiable")
    xd = detached(cls, x)
    zd = spread(cls._from_node(out._node))
    if block.op == "mul":
        # d prod / d x_i = the product of the block's other entries, also where x_i == 0
        # (Dr.Jit 1.5's out / x is 0 / 0 = NaN there, also for a block of one: its derivative
        # is 1); out / x where the block holds no zero, as the fused axis reduction and prod()
        b = block.size
        is_zero = xd == 0
        zeros = spread(block_sum(fm.select(is_zero, cls(1), cls(0)), b))
        others = spread(block_reduce("mul", fm.select(is_zero, cls(1), xd), b))
        w = fm.select(zeros == 0, zd / xd, fm.select(is_zero & (zeros == 1), others, cls(0)))
    else:
        w = fm.select(xd == zd, 1.0, 0.0)
    _attach(out, [(v, lambda g: block_sum(scale(g, w), block.size), lambda g: scale(spread(g), w))])


def _axis_shape(x, red):
    """``(n, inner, total)``: the reduced axis's length, its rows' length and ``x``'s size.  For
    an :class:`~frostjit.backend.base.OpenAxisReduction` (a frozen function's recording: the
    axis or its rows follow the batch size) they are the recording's symbolic sizes, so the
    derivative's gathers and reductions follow each replay's length; ``total`` is symbolic
    whenever a frozen function records."""
    total = _size(x)
    if isinstance(red, OpenAxisReduction):
        outer, inner = red.symbols or (red.outer, red.inner)
        return total // (outer * inner), inner, total
    return red.size, red.inner, total


def _size(x):
    """``x``'s size; while a frozen function records, its symbolic size (a derivative's
    ``arange`` over it then follows the batch size instead of holding the recording to it)."""
    return width(x) if state.recorder is not None else x._node.size


def _axis_reduce(out, x, v, op, red):
    """A tensor's fused axis reduction (``fj.sum(t, axis=k)`` and friends: ``red`` is the
    backend's ``AxisReduction`` of ``x`` seen as ``(outer, red.size, red.inner)``, or a frozen
    function's ``OpenAxisReduction``, resolved by the backend at each call), with the
    derivatives of the flat reductions, row by row: a sum spreads each output gradient over its
    row; a product weighs it by the product of the row's other entries (exact where the row has
    zeros); min/max pass it to the entries equal to the result (every one of a tie)."""
    cls = type(out)
    n, inner, total = _axis_shape(x, red)
    add = dataclasses.replace(red, op="add")

    def spread(g):      # each output's value at every entry of its row
        k = arange(flat_type(x._backend, UInt32), total)
        row = k // n if inner == 1 else (k // (n * inner)) * inner + k % inner
        return gather(cls, g, row)

    def row_sum(g):
        return axis_reduce(g, add)

    if red.op == "add":
        _attach(out, [(v, row_sum, spread)])
        return
    if red.op not in ("mul", "min", "max"):
        raise NotImplementedError(f"frostjit AD: an axis reduction with {red.op!r} is not differentiable")
    xd = detached(cls, x)
    zd = cls._from_node(out._node)
    if red.op == "mul":
        def weight():
            # d prod / d x_i = the product of the row's other entries, also where x_i == 0
            is_zero = xd == 0
            zeros = spread(row_sum(fm.select(is_zero, cls(1), cls(0))))
            others = spread(axis_reduce(fm.select(is_zero, cls(1), xd), red))
            return fm.select(zeros == 0, spread(zd) / xd, fm.select(is_zero & (zeros == 1), others, cls(0)))
    else:
        def weight():
            return fm.select(xd == spread(zd), cls(1), cls(0))
    _attach(out, [(v, lambda g: row_sum(scale(g, weight())), lambda g: scale(spread(g), weight()))])


def _block_prefix_reduce(out, x, v, op, block):
    """``fj.block_prefix_reduce`` with Add: a prefix sum within blocks; its adjoint runs the
    other way (``reverse`` flipped)."""
    if block.op != "add":
        raise NotImplementedError(f"frostjit AD: block_prefix_reduce with {block.op!r} is not differentiable")
    if isinstance(block, OpenAxisReduction):    # (a frozen function's rows that follow the batch size)
        back = dataclasses.replace(block, reverse=not block.reverse)
        _attach(out, [(v, lambda g: axis_reduce(g, block), lambda g: axis_reduce(g, back))])
        return
    b, excl, rev = block.size, block.exclusive, block.reverse
    _attach(out, [(v, lambda g: block_prefix_sum(g, b, excl, rev), lambda g: block_prefix_sum(g, b, excl, not rev))])


_SPECIAL = {"block_reduce": _block_reduce, "axis_reduce": _axis_reduce, "block_prefix_reduce": _block_prefix_reduce,
            "reduce_add": _reduce_add, "reduce_mul": _reduce_mul, "reduce_min": _reduce_minmax,
            "reduce_max": _reduce_minmax, "prefix_sum_excl": _prefix_sum, "prefix_sum_incl": _prefix_sum}
