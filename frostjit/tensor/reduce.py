"""Reductions (``sum``, ``prod``, ``min``, ``max``, ``mean``, ``all``, ``any``, ``count``, ...)
and prefix sums of tensors over any axis or tuple of axes.

``fj.sum(t, axis=...)`` reaches :func:`reduce` through the tensor's ``_fj_reduce`` hook
(:mod:`frostjit.functions.reduce` stays unaware of tensors).  Axes follow Dr.Jit: the default
(``...``) and ``None`` reduce every axis (a 0-dimensional tensor), an int or a tuple of ints
selects axes (negative ones count from the end), ``()`` reduces nothing, ``keepdims=True``
keeps the reduced axes with length 1.

**How an axis is reduced.**  Where the backend takes it (``Backend.axis_reduction``: the LLVM
backend where no SIMD chunk straddles two rows, see docs/tensor.md), a run of reduced axes is
one :class:`~frostjit.backend.base.AxisReduction` (:func:`frostjit.schedule.memops.axis_reduce`):
fused into the kernel that computes a pending tensor, the same order for an evaluated one, so
the bits agree.  Otherwise an axis reduction is a tree of lazy gathers: the tensor is
seen as ``(outer, n, inner)``; one level combines ``B`` entries ``j, j + m, j + 2m, ...``
(``m = ceil(n / B)``) of each row into entry ``j`` of a tensor ``(outer, m, inner)``, so for
``B = 16`` an axis of 4096 takes three levels (kernels).  Consecutive output lanes read
consecutive input elements, so the gathers are vector loads.  The whole tensor (every axis)
is the backend's flat reduction.  ``min``/``max`` ignore NaN as the flat reductions do.
Prefix sums along an axis double their span each level (Hillis-Steele), ``log2(n)`` levels.
Over the last (contiguous) axes, when their length is a plain int, a reduction is one
``block_reduce`` and a prefix sum one ``block_prefix_sum`` (blocks = rows: one pass over the
data, rows shared by the backend's threads, deterministic).  Inside a frozen function an axis
whose length (or whose rows' length) follows the batch size takes the plain call's path for
each call's length: an :class:`~frostjit.backend.base.OpenAxisReduction` that the backend
resolves per call, or levels whose tree is the plain call's (see :func:`_reduce_axis`).
Everything is made of gathers, ``select`` and arithmetic, so AD and frozen functions work as
for any other expression.
"""
from __future__ import annotations


from ..array import registry as array_registry
from ..array.flat import apply
from ..backend import current_backend
from ..backend.base import OpenAxisReduction
from ..errors import AxisError
from ..functions.block import axis_reduce, block_prefix_reduce, block_prefix_sum, block_reduce
from ..functions.creation import arange, full, zeros
from ..functions.evaluation import width
from ..functions.math import select
from ..functions.memory import gather, scatter_add
from ..functions import reduce as flat_reduce
from ..functions.scan import identity as scan_identity
from ..trace.dtypes import Bool, UInt32
from . import registry
from .axes import normalize_axes, normalize_axis
from .base import handle, size_of
from .broadcast import elementwise
from .view import index_type, strided

_FANIN = 16             # entries combined per level (an axis up to this long: one level)
_ROW_SUM = 64           # sums over a contiguous axis at least this long scatter_add into their rows


def _identity(op: str, vt):
    """The value a masked lane contributes (the identity of ``op`` in type ``vt``; ``and`` of
    integers is bitwise: every bit set)."""
    return scan_identity(op, vt)


def _combine(op: str, values: list):
    """``values[0] op values[1] op ...``, pairwise (a balanced tree: sums lose less precision)."""
    for v in values:
        if getattr(getattr(v, "_node", None), "size", 1) == 0:
            # an empty slice of an empty tensor: the result is empty too (the operators
            # would refuse a size-1 identity beside it, Dr.Jit's rule for array operands)
            return v
    while len(values) > 1:
        nxt = [flat_reduce._pair(op, values[k], values[k + 1]) for k in range(0, len(values) - 1, 2)]
        if len(values) % 2:
            nxt.append(values[-1])
        values = nxt
    return values[0]


def _symbolic(n) -> bool:
    """Whether ``n`` is a width inside a frozen function (its exact value must not steer the code)."""
    return hasattr(n, "__symbolic_size__")


def _level(op: str, x, outer, n, inner, fanin: int):
    """One level: ``(outer, n, inner)`` -> ``(outer, m, inner)`` with ``m = ceil(n / fanin)``,
    entry ``j`` combining entries ``j, j + m, ..., j + (fanin - 1) m`` that exist."""
    m = (n + fanin - 1) // fanin
    at = type(x)
    total = outer * m * inner
    w = width(x)
    idx = arange(index_type(x._backend, w if w > total else total), total)
    if outer == 1:
        base, j = idx, (idx // inner if inner != 1 else idx)
    else:
        rows = idx // (m * inner) if m * inner != 1 else idx
        base = idx + rows * ((n - m) * inner)
        j = idx // inner if inner != 1 else idx
        j = j % m if m != 1 else None
    vt = at._vt
    exact = not _symbolic(n)        # a symbolic axis masks every tap (no decision on its length)
    values = []
    for k in range(fanin):
        src = base if k == 0 else base + k * m * inner
        if exact and (k + 1) * m <= n:      # every lane of this tap exists
            values.append(gather(at, x, src))
            continue
        if exact and k * m >= n:            # no lane of this tap exists
            continue
        # (j + k m < n, not j < n - k m: the index is unsigned and n - k m may be negative)
        valid = (j + k * m < n) if j is not None else (k * m < n)
        g = gather(at, x, src, valid)
        if op == "add" and vt.is_float:
            # -0.0, not +0.0: x + -0 is x for every x, so a column of -0.0 keeps its sign as
            # in the tree of the taps that exist (the plain call's at a concrete length)
            g = select(valid, g, -0.0)
        elif op not in ("add", "or"):       # (a masked gather reads 0: their identity)
            g = select(valid, g, _identity(op, vt))
        values.append(g)
    if op in ("min", "max") and vt.is_float:            # NaN never wins: start from the identity
        values = [at(_identity(op, vt))] + values
    return _combine(op, values), m


def _sum_rows(x, outer, n):
    """Each row of ``x`` seen as ``(outer, n)`` summed: one ``scatter_add`` of every element into
    its row.  The elements are read in order (no gather) and the ``W`` lanes of a SIMD step that
    share a row add into it once (the backend's uniform scatter_add), so this is one pass over
    the data; it serves ``sum`` over the contiguous (last) axes, where a level's gathers could
    not be vector loads."""
    idx = arange(index_type(x._backend, outer * n), outer * n)
    out = zeros(type(x), outer)
    scatter_add(out, x, idx // n)
    return out


def _fusable_axis(x, n, inner, mode) -> bool:
    """Whether the backend may reduce this axis as one :class:`~frostjit.backend.base.
    AxisReduction` (a JIT array, lengths known, not symbolic mode; a grad-enabled one too:
    ``ad/rules.py`` differentiates it)."""
    return not (mode == "symbolic" or getattr(type(x), "_eager_flat", False) or _symbolic(n) or _symbolic(inner))


def _open_axis(x, outer, n, inner, mode) -> bool:
    """Whether the axis or its rows follow a frozen function's batch size (``n`` or ``inner``
    symbolic) and it may be recorded as an :class:`~frostjit.backend.base.OpenAxisReduction`
    (a grad-enabled one too: ``ad/rules.py`` differentiates it with the recording's symbolic
    sizes)."""
    return ((_symbolic(n) or _symbolic(inner)) and
            not (mode == "symbolic" or getattr(type(x), "_eager_flat", False))
            and outer >= 1 and inner >= 1)     # (an empty row: no length to find at replay)


def _open_reduction(op: str, outer, inner) -> OpenAxisReduction:
    """The recorded call's :class:`~frostjit.backend.base.OpenAxisReduction`; where its rows
    follow the batch size too, with their symbols (the replay rebuilds it for its numbers)."""
    if _symbolic(outer) or _symbolic(inner):
        return OpenAxisReduction(op, _value(outer), _value(inner), symbols=(outer, inner))
    return OpenAxisReduction(op, outer, inner)


def _value(n) -> int:
    """The recorded call's number behind a (maybe symbolic) size, with no guard: the
    recording keeps the symbol beside it."""
    return n.__symbolic_size__ if _symbolic(n) else n


def _reduce_axis(op: str, x, outer, n, inner, mode=None):
    """Reduce the middle axis of ``x`` seen as ``(outer, n, inner)``: an array of ``outer * inner``.

    An axis of up to :data:`_FANIN` entries is one level; longer ones take levels of
    :data:`_FANIN` taps.  Inside a frozen function an axis whose length (or whose rows' length)
    follows the batch size takes the plain call's path for the length of each call: where the
    backend reduces it as one ``AxisReduction`` (or, over the last axes, as rows), an
    ``OpenAxisReduction`` that the backend resolves for the replay's length (a guard records
    the backend's choice, so a length for which it chooses the gathers records again; with a
    gradient, the AD rule of the axis reduction follows the symbolic length); otherwise levels
    of :data:`_FANIN` masked taps, which give the bits of the plain call's levels (a masked tap
    adds the identity; the tree is the same), and the recording depends only on the number of
    levels (a replay at another batch size traces again only when that number changes, at
    powers of 16).  ``mode="symbolic"`` takes the plain call's choice between the levels and a
    ``scatter_add`` into the rows (a guard on the axis length)."""
    if n == 1:
        return x
    if n == 0:
        return full(type(x), _identity(op, type(x)._vt), outer * inner)
    if _open_axis(x, outer, n, inner, mode) and \
            (inner == 1 or current_backend().axis_fusable(op, x._vt, n, inner)):
        # (the backend resolves the reduction at each call; the AD edge where x has a gradient)
        return axis_reduce(x, _open_reduction(op, outer, inner))
    if _fusable_axis(x, n, inner, mode):
        red = current_backend().axis_reduction(op, x._vt, n, inner)
        if red is not None:     # one kernel, fused into the one computing x where it is pending
            return axis_reduce(x, red)
    if inner == 1 and not _symbolic(n) and mode != "symbolic":
        return block_reduce(op, x, n)       # the contiguous last axes: one pass, rows in parallel
    if op == "add" and inner == 1 and outer != 1 and n >= _ROW_SUM:
        return _sum_rows(x, outer, n)
    while n > 1:
        fanin = n if not _symbolic(n) and n <= _FANIN else _FANIN
        x, n = _level(op, x, outer, n, inner, fanin)
    return x


def _runs(shape: tuple, axes: tuple) -> list:
    """The reduced axes as ``[(first, last)]`` runs of neighbouring axes, innermost first."""
    runs = []
    for a in sorted(axes):
        if runs and runs[-1][1] == a - 1:
            runs[-1][1] = a
        else:
            runs.append([a, a])
    return runs[::-1]


def reduce(op: str, name: str, t, axis, mode=None, keepdims: bool = False, leaf=None, check=None):
    """``fj.sum``/``prod``/``min``/``max``/``all``/``any``/``none``/``count`` of a tensor over
    ``axis`` (see the module docstring)."""
    who = f"frostjit.{name}()"
    if mode not in flat_reduce._MODES:
        raise ValueError(f"{who}: 'mode' must be 'evaluated', 'symbolic' or None, got {mode!r}")
    shape = t.shape
    nd = len(shape)
    if axis is ... or axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, tuple) and not axis:
        axes = ()
    else:
        axes = normalize_axes(axis, nd, who) if nd else _no_axes(axis, who)
    x = t._array
    if check is not None:
        check(x)
    else:
        flat_reduce._check_operand(name, op, x)
    kept = tuple(1 if k in axes else d for k, d in enumerate(shape)) if keepdims else \
        tuple(d for k, d in enumerate(shape) if k not in axes)
    if axes and len(axes) == nd:        # every axis: the flat reduction (count: of the mask itself)
        return _tensor_of(flat_reduce._reduce_leaf(op, x, leaf or _same), kept)
    if leaf is not None:
        x = leaf(x)
    if not axes:
        return _tensor_of(handle(x), shape)
    cur = list(shape)
    for first, last in _runs(shape, axes):          # innermost run first: outer indices stay valid
        outer = size_of(cur[:first])
        n = size_of(cur[first:last + 1])
        inner = size_of(cur[last + 1:])
        x = _reduce_axis(op, x, outer, n, inner, mode)
        cur[first:last + 1] = [1] * (last - first + 1)
    return _tensor_of(x, kept)


def _same(x):
    return x


def _no_axes(axis, who: str):
    """A 0-dimensional tensor has no axis: only ``None``/``...``/``()`` select anything."""
    raise AxisError(f"{who}: axis {axis!r} is out of bounds for a 0-dimensional tensor")


def _tensor_of(array, shape: tuple):
    return registry.tensor_of(type(array))._from_array(array, shape)


def mean(t, axis=..., mode=None, keepdims: bool = False):
    """``sum(t, axis) / (number of entries reduced)``; a Float tensor for integer input."""
    s = reduce("add", "mean", t, axis, mode, keepdims)
    shape = t.shape
    nd = len(shape)
    if axis is ... or axis is None:
        axes = range(nd)
    elif isinstance(axis, tuple) and not axis:
        return s
    else:
        axes = normalize_axes(axis, nd, "frostjit.mean()")
    count = size_of([shape[k] for k in axes])
    # (apply, not '/': the operator refuses integer operands as Dr.Jit's does; count stays an int,
    # symbolic inside a frozen function)
    return elementwise(lambda a, b: apply("truediv", a, b), s, count, who="frostjit.mean()")


def scan(name: str, t, axis=0, reverse: bool = False, exclusive: bool = True, op: str = "add"):
    """``prefix_sum`` (exclusive) / ``cumsum`` (inclusive) of a tensor along ``axis``: an int, or a
    tuple of axes scanned one after the other (Dr.Jit: ``cumsum(t, axis=(0, 1))`` is a summed-area
    table; ``()`` returns the input).  ``op`` (``prefix_reduce``): the reduction, ``"add"`` by
    default."""
    who = f"frostjit.{name}()"
    if axis is None:
        raise TypeError(f"{who}: 'axis' must be an int or a tuple of ints, got None")
    shape = t.shape
    x = t._array
    if x._vt is Bool and op == "add":
        x = array_registry.flat_type(x._backend, UInt32)(x)
    if isinstance(axis, tuple):
        axes = normalize_axes(axis, len(shape), who) if axis else ()
    else:
        if not shape:
            raise ValueError(f"{who}: a 0-dimensional tensor has no axis to scan")
        axes = (normalize_axis(axis, len(shape), who),)
    if not axes:
        return _tensor_of(handle(x), shape)
    for k in axes:
        outer, n, inner = size_of(shape[:k]), shape[k], size_of(shape[k + 1:])
        if inner == 1 and n:
            # the last axis: one block prefix reduction (inside a frozen function, an axis that
            # follows the batch size is an open one, rows of each call's length: the plain call's)
            if _symbolic(n):
                x = axis_reduce(x, OpenAxisReduction(op, _value(outer), 1, True, exclusive, reverse,
                                                     symbols=(outer, 1) if _symbolic(outer) else ()))
            else:
                x = (block_prefix_sum(x, n, exclusive, reverse) if op == "add" else
                     block_prefix_reduce(op, x, n, exclusive, reverse))
            continue
        if reverse:
            x = _flip(x, outer, n, inner)
        x = _inclusive(x, outer, n, inner, op)
        if exclusive:
            x = _shift(x, outer, n, inner, op)
        if reverse:
            x = _flip(x, outer, n, inner)
    return _tensor_of(x, shape)


def _lanes(x, outer, n, inner):
    """The lane counter and each lane's position along the scanned axis."""
    total = width(x)
    idx = arange(index_type(x._backend, total), total)
    j = idx // inner if inner != 1 else idx
    return idx, (j % n if outer != 1 else j)


def _inclusive(x, outer, n, inner, op="add"):
    """Inclusive scan along the middle axis: entry ``j`` adds the ``r - 1`` partial sums
    ``d, 2d, ...`` before it, and the span ``d`` grows ``r`` times per level (``r = 2``; 16
    inside a frozen function for an axis that follows the batch size, so a replay traces again
    only when the number of levels changes; radix 2 for a grad-enabled ``x``, below)."""
    at = type(x)
    # (radix 16 gives the forward bits of radix 2, not the backward's: the adjoints of the taps
    # add in the transposed tree's order, so a grad-enabled scan keeps the plain call's levels)
    radix = _FANIN if _symbolic(n) and x._ad is None else 2
    d = 1
    while d < n:
        idx, j = _lanes(x, outer, n, inner)
        terms = [x]
        for q in range(1, radix):
            has = j >= q * d
            g = gather(at, x, idx - q * d * inner, has)      # 0 where missing: the identity of add
            terms.append(g if op == "add" else select(has, g, _identity(op, x._vt)))
        x = _combine(op, terms)
        d = d * radix
    return x


def _shift(x, outer, n, inner, op="add"):
    """Exclusive from inclusive: entry ``j`` takes entry ``j - 1`` (the identity at ``j = 0``)."""
    idx, j = _lanes(x, outer, n, inner)
    has = j >= 1
    g = gather(type(x), x, idx - inner, has)
    return g if op == "add" else select(has, g, _identity(op, x._vt))


def _flip(x, outer, n, inner):
    """The axis reversed (a strided view with a negative stride)."""
    return strided(x, (outer, n, inner), (n * inner, -inner, 1), (n - 1) * inner)
