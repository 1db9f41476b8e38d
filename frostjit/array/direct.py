"""Component arithmetic of static arrays, complex numbers and matrices, node by node.

A static array's operation is a handful of 1-D operations on its components, and in the
common case every component is of one class (``Float`` for ``Array4f``, ``Matrix4f``,
``Complex2f``) with no gradient attached.  Then each 1-D operation needs none of
:func:`~frostjit.array.flat.apply`'s work (promotion, operand kinds, broadcasting of static
arrays): it is one node of the type the operands already have.  The functions here make those
nodes through the trace's door (:func:`frostjit.trace.ops.make_binary`, :func:`~frostjit.trace.
ops.make`) and wrap them in the component class; a complex chain's tracing was ~60% of
``apply``'s bookkeeping per node before (docs/benchmarks.md, "Types").

Each function returns ``None`` when its fast case does not hold (a component of another class,
a gradient, an operation that changes the type): the caller then takes the general path, which
computes the same nodes.
"""
from __future__ import annotations

from ..errors import IncompatibleSizesError
from ..trace import ops
from ..trace.state import state
from .flat import ArrayBase, same_type_rule

_new = object.__new__
_make_binary = ops.make_binary
_make_ternary = ops.make_ternary
_literals = ops.literal_cache


class Kit:
    """The node operations of one component class whose results keep that class.

    Attributes ``add``, ``sub``, ``mul``, ``neg``, ``fma``: the node op names (``None`` where
    the operation changes the type, e.g. on a mask class); ``vt``: the element type.
    """

    __slots__ = ("elem", "vt", "add", "sub", "mul", "neg", "fma")

    def __init__(self, elem):
        self.elem = elem
        self.vt = elem._vt
        for op in ("add", "sub", "mul", "neg", "fma"):
            rule = same_type_rule(op, elem)
            setattr(self, op, rule[0] if rule is not None and rule[1] is elem else None)


_kits: dict = {}


def kit(elem) -> Kit | None:
    """The :class:`Kit` of the 1-D array class ``elem`` (``None`` for anything else: a static
    array class, the scalar backend's numbers)."""
    k = _kits.get(elem)
    if k is None and elem not in _kits:
        flat = isinstance(elem, type) and issubclass(elem, ArrayBase) and elem._vt is not None
        k = _kits[elem] = Kit(elem) if flat else None
    return k


def nodes(comps, elem) -> list | None:
    """The nodes of ``comps`` if each is exactly of class ``elem`` with no gradient attached."""
    out = []
    for c in comps:
        if type(c) is not elem or c._ad is not None:
            return None
        out.append(c._node)
    return out


def wrap(elem, node):
    """A new ``elem`` array on ``node``."""
    out = _new(elem)
    out._node = node
    out._ad = None
    return out


def binary(op: str, elem, xs: list, ys: list) -> list | None:
    """``[x op y for x, y in zip(xs, ys)]`` as arrays of class ``elem`` (``xs``, ``ys``: nodes of
    type ``elem``'s), or ``None`` if ``op`` changes the type or is not a kit operation."""
    k = kit(elem)
    name = getattr(k, op, None) if k is not None and op in _KIT_OPS else None
    if name is None:
        return None
    vt = k.vt
    for x, y in zip(xs, ys):
        if x.size != y.size:        # (two arrays: an empty one beside a non-empty one raises)
            try:
                ops.check_array_operands(name, (x, y))
            except IncompatibleSizesError as e:
                # Dr.Jit: the vector's error says a nested operation failed; the cause says why
                raise IncompatibleSizesError(f"frostjit.{op}(): nested operation failed ({e})") from e
    return [wrap(elem, _make_binary(name, vt, x, y)) for x, y in zip(xs, ys)]


_KIT_OPS = frozenset(("add", "sub", "mul"))


def fma(a, b, c):
    """``fma(a, b, c)`` where the static arrays among the operands are of one plain class
    (``Array3f``: no special ops, depth 2, static size) whose components are all of its element
    class with no gradient, and the others 1-D arrays of that class (no gradient) or Python
    floats of a float element type: a node per component, as
    :func:`~frostjit.array.vector.componentwise` makes them through ``apply``'s same-type
    door (a number's shared literal node, :func:`frostjit.trace.ops.operand_literal`).
    ``None`` otherwise (a Python number first: ``apply`` takes its general path there), and
    where the operands' sizes differ within a component (that path broadcasts them or names
    the error).  Transforms trace many of these: ~3x the cost of three 1-D fma before."""
    if type(a) is float:
        return None         # (apply's door is the first operand's: a number there takes the general path)
    cls = None
    for o in (a, b, c):
        t = type(o)
        if t is not float and not issubclass(t, ArrayBase):
            if not getattr(t, "IsVector", False) or (cls is not None and t is not cls):
                return None
            cls = t
    if cls is None or cls._ops or cls.Depth != 2 or cls._n is None:
        return None
    e = cls._elem
    k = kit(e)
    if k is None or k.fma is None or not k.vt.is_float:
        return None
    n = cls._n
    columns = []
    for o in (a, b, c):
        t = type(o)
        if t is cls:
            xs = nodes(o._c, e)
            if xs is None or len(xs) != n:
                return None
        elif t is e:
            if o._ad is not None:
                return None
            xs = [o._node] * n
        elif t is float:
            lit = _literals(k.vt).get(o) if state.recorder is None else None
            xs = [lit if lit is not None else ops.operand_literal(k.vt, o)] * n
            columns.append((xs, False))
            continue
        else:
            return None
        columns.append((xs, True))
    name, vt = k.fma, k.vt     # (the node op of apply's same-type door for fma on e)
    for j in range(n):
        arrays = [xs[j] for xs, is_array in columns if is_array]
        size = arrays[0].size
        for x in arrays:
            if x.size != size:
                if any(y.size == 0 for y in arrays):
                    return None     # (an empty operand beside others: that path names the error)
                # (size 1 beside n broadcasts; the check the door makes: a frozen function's
                # recording guards the widths)
                ops.check_array_operands(name, arrays)
                break
    (xs, _), (ys, _), (zs, _) = columns
    return cls._from_components([wrap(e, _make_ternary(name, vt, x, y, z)) for x, y, z in zip(xs, ys, zs)])


def dot(k: Kit, xs: list, ys: list):
    """``x0 * y0 + x1 * y1 + ...`` over nodes, as the fma chain of Dr.Jit's ``matmul``
    (``acc = x0 * y0``, then ``acc = fma(xk, yk, acc)``): the node of the sum."""
    vt, fma = k.vt, k.fma
    acc = _make_binary(k.mul, vt, xs[0], ys[0])
    for i in range(1, len(xs)):
        acc = _make_ternary(fma, vt, xs[i], ys[i], acc)
    return acc
