"""Reductions and scans: ``sum``, ``prod``, ``min``, ``max``, ``mean``, ``dot``, ``all``,
``any``, ``none``, ``count``, ``prefix_sum``, ``cumsum``, ``compress``.

Axes follow Dr.Jit 1.5.  A 1-D array (``Float``) has one axis; a static vector
(``Array3f``) has two: axis 0 over its components, axis 1 over the lanes of
each component (the trailing, dynamic axis).  The default ``axis=...`` is axis
0, the outermost one:

* ``sum(Float(1, 2, 3))`` is ``Float([6])`` (a size-1 array, never a Python scalar);
* ``sum(Array3f)`` adds the components lane by lane (``x + y + z``, a ``Float``);
* ``sum(Array3f, axis=1)`` sums each component: an ``Array3f`` of width 1;
* ``axis=None`` reduces every axis: ``sum(Array3f, axis=None)`` is a size-1 ``Float``;
* ``axis=()`` reduces nothing.  Negative axes count from the innermost one.

Python sequences reduce along axis 0 (their elements, which may be arrays)
and, with ``axis=None``, further; Python scalars are returned as they are.

``min``/``max`` ignore NaN, as Dr.Jit's do (an all-NaN array reduces to
+inf / -inf, like an empty one), unlike the element-wise ``minimum``/``maximum``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase, apply
from ..array.foreign import is_foreign_array
from ..array.vector import VectorBase
from ..tree.kinds import vector_from_components
from ..errors import AxisError, KeepdimsError, ReductionTypeError
from ..schedule import memops
from ..trace.dtypes import Bool, UInt32
from ..trace.state import state
from .creation import zeros
from .evaluation import width
from .math import select, isnan, minimum, maximum, fma
from .shape import reverse as flip

_MODES = (None, "evaluated", "symbolic")
_IDENTITY = {"add": 0, "mul": 1, "min": math.inf, "max": -math.inf, "and": True, "or": False}


# -- axes ----------------------------------------------------------------------

def _axes(name: str, value, axis, ndim: int | None) -> frozenset:
    """The axes of ``value`` (with ``ndim`` axes) that ``axis`` selects, each in ``[0, ndim)``.

    ``ndim=None`` (a Python scalar) only checks the type of ``axis``: Dr.Jit returns a
    scalar unchanged whatever the axis.
    """
    if ndim is None:
        if axis is not ... and axis is not None:
            for a in (axis if isinstance(axis, tuple) else (axis,)):
                _axis_index(name, axis, a)
        return frozenset()
    if axis is ...:
        return frozenset({0})           # Dr.Jit: the outermost axis for everything but tensors
    if axis is None:
        return frozenset(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = set()
    for a in items:
        k = _axis_index(name, axis, a)
        if not -ndim <= k < ndim:
            raise AxisError(f"frostjit.{name}(): axis {k} is out of bounds for {_describe(value)}, which has "
                            f"{ndim} {'axis' if ndim == 1 else 'axes'} (valid: {-ndim} to {ndim - 1}, or None; "
                            f"Dr.Jit: out-of-bounds axis)")
        out.add(k % ndim)
    return frozenset(out)


def _axis_index(name: str, axis, a) -> int:
    try:
        return operator.index(a)
    except TypeError:
        raise TypeError(f"frostjit.{name}(): 'axis' must be an int, a tuple of ints, None or ..., "
                        f"got {axis!r}") from None


def _describe(value) -> str:
    if isinstance(value, ArrayBase):
        return f"a 1-D {type(value).__name__}"
    if isinstance(value, VectorBase):
        return f"an {type(value).__name__} (axis 0: its {len(value)} components, axis 1: their lanes)"
    return f"a Python {type(value).__name__} (axis 0 only)"


def _check_options(name: str, value, axes, mode, keepdims) -> None:
    if mode not in _MODES:
        raise ValueError(f"frostjit.{name}(): 'mode' must be 'evaluated', 'symbolic' or None, got {mode!r}")
    # keepdims=True changes nothing where the trailing (dynamic) axis is the one reduced: that axis
    # is never removed.  Keeping a reduced axis of static size (a vector's components) is impossible.
    if keepdims and axes and not (isinstance(value, ArrayBase)
                                  or (isinstance(value, VectorBase) and axes == {value.Depth - 1})):
        raise KeepdimsError(f"frostjit.{name}(): keepdims=True is only supported for reductions of the trailing "
                         f"(dynamic) axis, not axis={sorted(axes)} of {_describe(value)}")


# -- element types -------------------------------------------------------------

def _is_jit(x) -> bool:
    return isinstance(x, (ArrayBase, VectorBase))


def _is_mask(x) -> bool:
    return x.Type is Bool if _is_jit(x) else isinstance(x, (bool, np.bool_))


def _is_other_array(x) -> bool:
    """A NumPy/PyTorch/JAX array (an item of a sequence reduced, or the sequence itself)."""
    return (isinstance(x, np.ndarray) or is_foreign_array(x)) and not hasattr(type(x), "IsJIT")


def _check_operand(name: str, op: str, x) -> None:
    """Arithmetic reductions reject masks, Boolean ones need them (Dr.Jit)."""
    if isinstance(x, ArrayBase) and (x._vt is Bool) == (op in ("and", "or")):
        return
    if op in ("and", "or"):
        # another framework's Boolean array (an item of a PyTorch tensor reduced) combines with & / |
        if not _is_mask(x) and not (_is_other_array(x) and str(x.dtype).endswith("bool")):
            error = ReductionTypeError(f"frostjit.{name}(): expects a Bool array or bool, got {type(x).__name__}")
            if _is_jit(x):
                raise error
            # Dr.Jit combines a sequence's items with & / |: the cause names the operands
            sign = "&" if op == "and" else "|"
            raise error from TypeError(f"unsupported operand type(s) for {sign}: 'bool' and '{type(x).__name__}'")
    elif _is_jit(x):
        if x.Type is Bool:
            raise ReductionTypeError(f"frostjit.{name}(): not defined for Bool arrays (use count/all/any), "
                                     f"got {type(x).__name__}")
    elif isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.number)):
        raise ReductionTypeError(f"frostjit.{name}(): expects an array, a sequence or a number, "
                                 f"got {type(x).__name__}")


# -- combining values ----------------------------------------------------------

def _pair(op: str, a, b):
    """``a op b`` for arrays, static vectors and Python scalars alike."""
    if op == "add":
        return a + b
    if op == "mul":
        return a * b
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    return _nan_ignoring_minmax(op, a, b)


def _nan_ignoring_minmax(op: str, a, b):
    """Element-wise min/max that ignores NaN in either operand (both NaN: NaN), as Dr.Jit's
    reductions over components do; ``fj.minimum`` propagates NaN instead."""
    if not (_is_jit(a) or _is_jit(b)):
        if b != b:
            r = a
        elif a != a:
            r = b
        else:
            r = (a if a <= b else b) if op == "min" else (a if a >= b else b)
        # an int beside a float is compared as one (Dr.Jit: min([1.5, -2]) is -2.0)
        return float(r) if isinstance(a, float) or isinstance(b, float) else r
    if not (a.Type.is_float if _is_jit(a) else isinstance(a, float)) and \
            not (b.Type.is_float if _is_jit(b) else isinstance(b, float)):
        return minimum(a, b) if op == "min" else maximum(a, b)      # integers: no NaN
    if not _is_jit(b) and b != b:
        return a
    keep_a = (a <= b) if op == "min" else (a >= b)
    if _is_jit(b):
        keep_a = keep_a | isnan(b)
    return select(keep_a, a, b)


def _fold(op: str, items: list):
    """``items[0] op items[1] op ...`` (the identity of ``op`` for no items)."""
    if not items:
        return _IDENTITY[op]
    acc = items[0]
    for x in items[1:]:
        acc = _pair(op, acc, x)
    return acc


def _reduce_array(op: str, x: ArrayBase):
    """All elements of a 1-D array: a size-1 array of its type (an evaluated reduction)."""
    if getattr(type(x), "_eager_flat", False):      # the scalar backend's 1-D arrays (ArrayXf)
        return x._fj_reduce_all(op)
    node = memops.reduce(op, x._node)
    out = type(x)._from_node(node)
    if x._ad is not None and state.ad_hook is not None:
        state.ad_hook.on_op("reduce_" + op, out, (x,))
    return out


def _reduce_leaf(op: str, x: ArrayBase, leaf):
    """All elements of ``leaf(x)`` reduced with ``op``; a JIT mask counted (``leaf`` is
    :func:`_as_count`) is counted as it is, never turned into a ``UInt32`` array first."""
    if leaf is _as_count and not getattr(type(x), "_eager_flat", False):
        return registry.flat_type(x._backend, UInt32)._from_node(memops.count(x._node))
    return _reduce_array(op, leaf(x))


def _vector_of(comps: list, like=None):
    """A static vector of ``comps``: of ``like``'s family where given (an ``ArrayXf`` input gives
    an ``ArrayXf``, as in Dr.Jit), else the ``Array<n>`` type of their element type."""
    if like is not None:
        return vector_from_components(like, comps)
    c = comps[0]
    cls = registry.vector_type(c._backend, c._vt, len(comps), c._is_ad)
    if cls is None:
        raise TypeError(f"frostjit: no static vector type with {len(comps)} components of {c._vt.name}")
    return cls._from_components(comps)


def _reduce_vector(op: str, value, axes, leaf):
    """Reduce a JIT static vector or 1-D array along ``axes`` (0: the outermost; the last: the lanes).

    A static axis combines its components lane by lane, so size-1 entries count once per lane of
    the whole array, as in Dr.Jit (``Matrix2f(1, 2, Float(3, 1), 4)`` sums to 18 over every axis).
    Nested arrays (``Array22f``, ``Matrix3f``) take any of their axes.
    """
    if not axes:
        return value
    if isinstance(value, ArrayBase):
        return _reduce_leaf(op, value, leaf)
    inner = frozenset(a - 1 for a in axes if a)
    if 0 in axes:
        comps = [c if leaf is _identity else _map_leaves(c, leaf) for c in value]
        return _reduce_vector(op, _fold(op, comps), inner, _identity)
    # the input's own type where the components keep theirs (an ArrayXf stays an ArrayXf)
    return vector_from_components(type(value), [_reduce_vector(op, c, inner, leaf) for c in value])


def _identity(v):
    return v


def _map_leaves(value, leaf):
    """``leaf`` of each 1-D array of ``value`` (a JIT static vector or 1-D array)."""
    if isinstance(value, ArrayBase):
        return leaf(value)
    return vector_from_components(type(value), [_map_leaves(c, leaf) for c in value])


def _reduce_static(op: str, value, axes, leaf):
    """Reduce a scalar-backend array (components are numbers or such arrays) along ``axes``."""
    if not axes:
        return value
    if 0 in axes:
        r = _fold(op, [leaf(c) for c in value])
        inner = frozenset(a - 1 for a in axes if a)
        return _reduce_static(op, r, inner, lambda v: v) if inner and isinstance(r, VectorBase) else r
    inner = frozenset(a - 1 for a in axes)
    results = [_reduce_static(op, c, inner, leaf) for c in value]
    if all(isinstance(r, (bool, int, float)) for r in results) and type(value).Depth > 1:
        # the rows of a Matrix2f reduced to numbers: an Array2f of them (Dr.Jit)
        lf = type(value)._leaf
        cls = registry.vector_type(lf._backend, lf._vt, len(results), False)
        if cls is not None:
            return cls._from_components(results)
    return vector_from_components(type(value), results)


def _reduce(op: str, name: str, value, axis, mode=None, keepdims=False, leaf=None, check=None):
    """Reduce ``value`` with ``op`` along ``axis`` (see the module docstring).

    ``leaf`` maps each element before combining (``count`` turns masks into ``UInt32``);
    ``check`` validates the input and each element of a sequence (default: by ``op``).
    """
    if isinstance(value, ArrayBase) and axis is ... and mode is None and leaf is None and check is None:
        _check_operand(name, op, value)         # the common case, kept short: a 1-D array, axis 0
        return _reduce_array(op, value)
    leaf = leaf or _identity
    item_check = check      # sequences of Python numbers may hold bools (Dr.Jit: sum([True, False]) == 1)
    check = check or (lambda v: _check_operand(name, op, v))
    if isinstance(value, ArrayBase):
        axes = _axes(name, value, axis, 1)
        _check_options(name, value, axes, mode, keepdims)
        check(value)
        return _reduce_leaf(op, value, leaf) if axes else value
    if isinstance(value, VectorBase) and not value.IsJIT:
        # The scalar backend: numbers, no lane axis (Array3f has one axis, Array33f two).
        axes = _axes(name, value, axis, value.Depth)
        _check_options(name, value, axes, mode, keepdims)
        check(value)
        return _reduce_static(op, value, axes, leaf)
    if isinstance(value, VectorBase):
        axes = _axes(name, value, axis, value.Depth)
        _check_options(name, value, axes, mode, keepdims)
        check(value)
        return _reduce_vector(op, value, axes, leaf)
    if isinstance(value, (bool, int, float, np.bool_, np.number)):
        _axes(name, value, axis, None)
        _check_options(name, value, frozenset(), mode, keepdims)
        check(value)
        return leaf(value)
    if getattr(type(value), "IsTensor", False):     # tensors reduce every axis by default (Dr.Jit)
        return value._fj_reduce(op, name, axis, mode, keepdims, leaf, check)
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"frostjit.{name}(): expects an array, a sequence or a number, "
                        f"got {type(value).__name__}") from None
    axes = _axes(name, value, axis, 1)
    _check_options(name, value, axes, mode, keepdims)
    if not axes:
        return value
    for x in items:
        if item_check is not None or _is_jit(x) or op in ("and", "or"):
            check(x)
        elif not isinstance(x, (bool, int, float, np.bool_, np.number)) and not _is_other_array(x):
            raise ReductionTypeError(f"frostjit.{name}(): cannot reduce a sequence holding a {type(x).__name__}")
    r = _fold(op, [leaf(x) for x in items])
    if axis is None and _is_jit(r):
        r = _reduce(op, name, r, None)      # the elements' own axes too
    return r


# -- public reductions ---------------------------------------------------------

_AXIS_DOC = """
    Parameters
    ----------
    value : array, static vector, sequence or number
    axis : int, tuple of ints, None or ...
        Axes to reduce (Dr.Jit's convention, see :mod:`frostjit.functions.reduce`):
        the default ``...`` is axis 0, ``None`` every axis.  An axis outside
        ``[-ndim, ndim)`` raises :class:`~frostjit.errors.AxisError`.
"""
_MODE_DOC = """    mode : None, "evaluated" or "symbolic"
        Dr.Jit's evaluation strategy.  Both give the same result here: frostjit
        always evaluates the input and reduces it with the backend.
"""
_KEEPDIMS_DOC = """    keepdims : bool
        Accepted where it changes nothing (the trailing, dynamic axis is
        never removed); ``ValueError`` for a reduction over a vector's components.
"""


def sum(value, axis=..., mode=None, keepdims=False):  # noqa: A001
    """Sum along ``axis`` (1-D array -> size-1 array; static vector -> sum of its components)."""
    return _reduce("add", "sum", value, axis, mode, keepdims)


def prod(value, axis=..., mode=None, keepdims=False):
    """Product along ``axis``."""
    return _reduce("mul", "prod", value, axis, mode, keepdims)


def min(value, axis=..., mode=None, keepdims=False):  # noqa: A001
    """Smallest element along ``axis``, ignoring NaN (Dr.Jit); +inf for an empty or all-NaN
    float array, the type's largest value for an empty integer array."""
    return _reduce("min", "min", value, axis, mode, keepdims)


def max(value, axis=..., mode=None, keepdims=False):  # noqa: A001
    """Largest element along ``axis``, ignoring NaN (Dr.Jit); -inf for an empty or all-NaN
    float array."""
    return _reduce("max", "max", value, axis, mode, keepdims)


def _divide(total, n):
    """``total / n`` for the mean: integer sums too (a ``Float``), which the ``/`` operator
    refuses as Dr.Jit's does (its ``mean`` of an ``Int`` raises)."""
    if isinstance(total, (int, float)) and isinstance(n, (int, float)):
        return total / n            # Python numbers (the scalar backend): Python's division
    return apply("truediv", total, n)


def mean(value, axis=..., mode=None, keepdims=False):
    """Arithmetic mean along ``axis``: the sum divided by the number of reduced entries
    (NaN for an empty array).  Integer input gives a ``Float`` result.
    """
    if not isinstance(value, (ArrayBase, VectorBase)) and getattr(type(value), "IsTensor", False):
        return value._fj_mean(axis, mode, keepdims)
    total = _reduce("add", "mean", value, axis, mode, keepdims)
    if isinstance(value, ArrayBase):
        return _divide(total, width(value)) if _axes("mean", value, axis, 1) else total
    if isinstance(value, VectorBase):
        return _mean_vector(total, value, _axes("mean", value, axis, value.Depth))
    if not isinstance(value, (bool, int, float, np.bool_, np.number)):
        items = list(value)
        if not _axes("mean", value, axis, 1):
            return total
        n = len(items)
        if axis is None and _is_jit(total):
            n = n * width(*items)
        return _divide(total, n)
    return total / 1.0


def _mean_vector(total, value, axes):
    """``total`` (the sum of the static vector ``value`` over ``axes``) divided by the number of
    entries summed: the sizes of the reduced axes of ``value.shape``, the whole array's width for
    the lanes (Dr.Jit: ``mean(Array3f(1, Float(2, 3), -1), axis=1)`` is ``[0.5, 2.5, -0.5]``)."""
    if not axes:
        return total
    return _divide(total, math.prod(n for k, n in enumerate(value.shape) if k in axes))


def dot(a, b):
    """Dot product: of the components for static vectors (a 1-D array, lane by lane), of the
    elements for 1-D arrays (a size-1 array) and for Python sequences (a number)."""
    if isinstance(a, VectorBase) or isinstance(b, VectorBase):
        if not (isinstance(a, VectorBase) and isinstance(b, VectorBase)) or len(a) != len(b):
            raise TypeError(f"dot(): needs two static vectors of one size, got {type(a).__name__} "
                            f"and {type(b).__name__}")
        return _dot_items(a._c, b._c)      # (read, not changed: no copies)
    if _is_jit(a) or _is_jit(b) or getattr(type(a), "IsTensor", False) or getattr(type(b), "IsTensor", False):
        return sum(a * b, axis=0)       # tensors: over the outermost axis, as Dr.Jit
    numbers = (int, float, np.number)
    if isinstance(a, numbers) or isinstance(b, numbers):
        if not (isinstance(a, numbers) and isinstance(b, numbers)):
            raise TypeError(f"dot(): cannot combine a {type(a).__name__} and a {type(b).__name__}")
        return a * b
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"dot(): the sequences have different lengths ({len(a)} and {len(b)})")
    return _dot_items(a, b) if a else 0


def _dot_items(a: list, b: list):
    acc = a[0] * b[0]
    for k in range(1, len(a)):
        acc = fma(a[k], b[k], acc)
    return acc


def all(value, axis=..., keepdims=False):  # noqa: A001
    """``True`` where every entry along ``axis`` is true (a size-1 ``Bool`` for a 1-D array;
    lane by lane for a static vector; ``True`` when empty).
    """
    return _reduce("and", "all", value, axis, None, keepdims)


def any(value, axis=..., keepdims=False):  # noqa: A001
    """``True`` where some entry along ``axis`` is true (``False`` when empty)."""
    return _reduce("or", "any", value, axis, None, keepdims)


def none(value, axis=..., keepdims=False):
    """``True`` where no entry along ``axis`` is true: ``~any(value, axis)``."""
    r = _reduce("or", "none", value, axis, None, keepdims)
    return not r if isinstance(r, (bool, np.bool_)) else ~r


def count(value, axis=..., keepdims=False):
    """Number of true entries along ``axis`` (``UInt32`` arrays; an ``int`` for Python input).

    A JIT static array that is not a mask (``Array3f``, ``Array3i``, ``ArrayXf``, a matrix)
    is counted across its components (``axis`` 0 or ``None``) as Dr.Jit 1.5 counts it: an entry
    counts when it is nonzero (a float NaN does not, as Dr.Jit's ``select`` on a float
    condition), and the counts have the value's type when it is floating point
    (``count(Array3f([1, 0], [0, 0], [2, 3]))`` is ``Float([2, 1])``) or a 64-bit integer,
    ``UInt32`` otherwise.  A tensor that is not a mask is counted the same way along a given
    ``axis`` (``TensorXf`` counts of a ``TensorXf``, ``TensorXi64`` of a ``TensorXi64``,
    ``TensorXu`` of a ``TensorXi``); over every axis it raises, as in Dr.Jit.
    """
    if isinstance(value, VectorBase) and value.IsJIT and not _is_mask(value) and (axis is None or axis in (..., 0)):
        if keepdims:
            return _reduce("add", "count", value, axis, None, keepdims, check=_check_mask)   # (raises)
        return _count_nonzero(value, axis is None)
    if _is_nonmask_tensor(value) and axis is not None and axis is not ...:
        # Dr.Jit 1.5 counts a tensor that is not a mask along the given axes: its nonzero
        # entries (NaN not counted), as a tensor of the value's type when floating point
        # (``TensorXf``), ``TensorXu`` otherwise; over every axis it raises (as here, below)
        vt = value.Type
        m = (value > 0) | (value < 0) if vt.is_float else value != 0
        counts = _reduce("add", "count", m, axis, None, keepdims, leaf=_as_count, check=_check_mask)
        return type(value)(counts) if _counts_in_own_type(vt) else counts
    return _reduce("add", "count", value, axis, None, keepdims, leaf=_as_count, check=_check_mask)


def _counts_in_own_type(vt) -> bool:
    """Dr.Jit 1.5 counts a non-mask value in its own type when it is floating point or a 64-bit
    integer (``Int64``, ``UInt64``), in ``UInt32`` otherwise (measured side by side)."""
    return vt.is_float or vt.itemsize == 8


def _is_nonmask_tensor(value) -> bool:
    return getattr(type(value), "IsTensor", False) and not isinstance(value, (ArrayBase, VectorBase)) \
        and not _is_mask(value)


def _count_nonzero(value, whole: bool):
    """Dr.Jit's count of a JIT static array that is not a mask: the nonzero entries of its
    components, lane by lane (``whole``: all of them, a 1-element array)."""
    from ..traits import replace_type_t     # (traits imports the function modules)
    vt = value.Type
    out = replace_type_t(type(value[0]), vt if _counts_in_own_type(vt) else UInt32)
    total = None
    for c in value:                         # (a matrix's rows: no comparisons on matrices)
        m = (c > 0) | (c < 0) if vt.is_float else c != 0    # NaN is not counted (Dr.Jit)
        term = out(m)
        total = term if total is None else total + term
    return sum(total, axis=None) if whole else total


def _check_mask(m) -> None:
    if not _is_mask(m):
        raise ReductionTypeError(f"frostjit.count(): expects a Bool array or bool, got {type(m).__name__}")


def _as_count(m):
    """A mask as counts: ``UInt32`` per lane (per component of a static vector), ``int`` for a bool.
    (A module-level function: a recursive closure would be a reference cycle per call.)"""
    if isinstance(m, ArrayBase) or getattr(type(m), "_eager_flat", False):
        # (the scalar backend's ArrayXb, a scalar TensorXb's storage: as one UInt32 array, not
        # component by component, which kept the mask type and summed to True)
        return registry.flat_type(m._backend, UInt32)(m)
    if isinstance(m, VectorBase):
        return _vector_of([_as_count(c) for c in m], type(m))
    return int(m)


for _f in (sum, prod, min, max, mean):
    _f.__doc__ += _AXIS_DOC + _MODE_DOC + _KEEPDIMS_DOC
for _f in (all, any, none, count):      # no 'mode' (Dr.Jit's signatures)
    _f.__doc__ += _AXIS_DOC + _KEEPDIMS_DOC
del _f


def reduce(op, value, axis=..., mode=None, keepdims=False):  # noqa: A001
    """Reduce ``value`` along ``axis`` with ``op`` (a :class:`~frostjit.ReduceOp`), Dr.Jit 1.5's
    general form of :func:`sum`, :func:`prod`, :func:`min`, :func:`max`.

    ``And``/``Or`` are bitwise on integer arrays (``reduce(And, UInt32(7, 3, 6))`` is ``[2]``,
    an empty array gives every bit set / 0) and logical on Bool arrays (:func:`all`/:func:`any`).
    ``Identity`` raises ``ValueError``; a float array with ``And``/``Or`` raises ``TypeError``.
    """
    # (functions.scan imports this module: name the ops here, as scan.op_name does)
    name = _reduce_op_name(op)
    if name in ("and", "or"):
        def check(v):
            if _is_jit(v) and v.Type.is_float or not _is_jit(v) and isinstance(v, (float, np.floating)):
                raise ReductionTypeError(f"frostjit.reduce(): And/Or reductions need integer or Bool arrays, "
                                f"got {type(v).__name__}")
        return _reduce(name, "reduce", value, axis, mode, keepdims, check=check)
    return _reduce(name, "reduce", value, axis, mode, keepdims)


def _reduce_op_name(op) -> str:
    value = getattr(op, "value", op)
    if isinstance(op, str):
        value = _REDUCE_OP_NAMES.get(op)
    if value not in _IDENTITY:
        raise ValueError(f"frostjit.reduce(): unsupported reduction {op!r} (expects a ReduceOp other than "
                         f"Identity)")
    return value


_REDUCE_OP_NAMES = {"Add": "add", "Mul": "mul", "Min": "min", "Max": "max", "And": "and", "Or": "or"}


# -- scans ---------------------------------------------------------------------

def prefix_sum(value, axis=0, reverse=False, *, exclusive=True):
    """Exclusive prefix sum (``[0, x0, x0+x1, ...]``), as Dr.Jit's ``prefix_sum``.

    Parameters
    ----------
    value : 1-D array or static vector
        A ``Bool`` array is counted as ``UInt32`` (compaction offsets).
    axis : int
        0 (default): along a 1-D array, or across a static vector's components
        (lane by lane); 1 / -1 along each component of a static vector.
    reverse : bool
        Accumulate from the end: ``out[i]`` sums the entries after ``i``.
    exclusive : bool
        ``False`` includes entry ``i`` itself (that is :func:`cumsum`).
    """
    return _scan("prefix_sum", value, axis, reverse, exclusive)


def cumsum(value, axis=0, reverse=False):
    """Inclusive prefix sum (``numpy.cumsum``); see :func:`prefix_sum`."""
    return _scan("cumsum", value, axis, reverse, False)


def _scan(name: str, value, axis, reverse: bool, exclusive: bool):
    if not isinstance(value, (ArrayBase, VectorBase)) and getattr(type(value), "IsTensor", False):
        return value._fj_scan(name, axis, reverse, exclusive)      # (also a tuple of axes)
    if axis is None or isinstance(axis, tuple):
        raise TypeError(f"frostjit.{name}(): 'axis' must be a single int, got {axis!r}")
    if isinstance(value, VectorBase) and not value.IsJIT:
        # The scalar backend (numbers, no lane axis): along axis k of the static dimensions.
        (k,) = _axes(name, value, axis, value.Depth)
        if k > 0:
            return vector_from_components(type(value), [_scan(name, c, k - 1, reverse, exclusive) for c in value])
        comps = list(value)[::-1] if reverse else list(value)
        out, acc = [], None
        for c in comps:
            total = c if acc is None else acc + c
            out.append(total if not exclusive else zeros(type(c)) if acc is None else acc)
            acc = total
        return vector_from_components(type(value), out[::-1] if reverse else out)
    if isinstance(value, VectorBase):
        (k,) = _axes(name, value, axis, 2)
        if k == 1:
            return _vector_of([_scan(name, c, 0, reverse, exclusive) for c in value], type(value))
        # Across the components, lane by lane: out[j] = sum of the components before j.
        comps = list(value)[::-1] if reverse else list(value)
        out, acc = [], None
        for c in comps:
            total = c if acc is None else acc + c
            out.append(total if not exclusive else zeros(type(c), width(c)) if acc is None else acc)
            acc = total
        return _vector_of(out[::-1] if reverse else out, type(value))
    if isinstance(value, (list, tuple)):        # Dr.Jit: a Python sequence gives a list
        _axes(name, value, axis, 1)
        items = value[::-1] if reverse else list(value)
        out, acc = [], 0
        for x in items:
            out.append(acc if exclusive else acc + x)
            acc = acc + x
        return out[::-1] if reverse else out
    if not isinstance(value, ArrayBase):
        raise TypeError(f"frostjit.{name}(): expects a 1-D JIT array, a static vector or a sequence, "
                        f"got {type(value).__name__}")
    _axes(name, value, axis, 1)
    if value._vt is Bool:       # counting a mask (compaction offsets): as UInt32
        value = registry.flat_type(value._backend, UInt32)(value)
    if reverse:
        return flip(_scan(name, flip(value), 0, False, exclusive))
    out = type(value)._from_node(memops.prefix_sum(value._node, exclusive))
    if value._ad is not None and state.ad_hook is not None:
        state.ad_hook.on_op("prefix_sum_excl" if exclusive else "prefix_sum_incl", out, (value,))
    return out


def compress(mask):
    """Indices (``UInt32``) of the true entries of a Bool array; the size depends on the data."""
    if isinstance(mask, VectorBase) and not mask.IsJIT and mask.IsDynamic and type(mask)._leaf._vt is Bool:
        # The scalar backend's ArrayXb: an ArrayXu of the indices (Dr.Jit)
        leaf = registry.flat_type(type(mask)._leaf._backend, UInt32)
        return registry.array_type(leaf, None, "dynamic")([k for k, b in enumerate(mask) if b])
    if not (isinstance(mask, ArrayBase) and mask._vt is Bool):
        raise ReductionTypeError(f"compress(): expects a flat (1-D) Bool array, got {type(mask).__name__}")
    return registry.flat_type(mask._backend, UInt32)._from_node(memops.compress(mask._node))
