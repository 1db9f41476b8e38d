"""Prefix reductions with any :class:`~frostjit.ReduceOp`: ``fj.prefix_reduce``.

``Add`` is the backend's prefix sum (:func:`frostjit.prefix_sum`); the other operations
(``Mul``, ``Min``, ``Max``, ``And``, ``Or``) are a Hillis-Steele scan made of gathers and
``select``: ``ceil(log2(n))`` steps, each combining every entry with the partial result
``d`` entries before it (``d = 1, 2, 4, ...``).  Being plain array expressions they work in
frozen functions (a replay whose width needs another number of steps traces again) and
under AD.  ``Min``/``Max`` ignore NaN as the reductions do.
"""
from __future__ import annotations

import math

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..trace import ops
from ..trace.dtypes import Bool, UInt32
from .creation import arange, full
from .evaluation import width
from .math import select
from .memory import ReduceOp, gather
from .reduce import _axes, _pair, _scan, _vector_of
from .shape import reverse as flip


def identity(op: str, vt):
    """The identity of reduction ``op`` in element type ``vt`` (what a missing entry contributes):
    0 / 1 for sums and products, +-inf (floats) or the extreme values (integers) for min/max,
    every bit set / none for ``and``/``or`` (``True``/``False`` for Bool)."""
    if op == "add":
        return False if vt is Bool else 0
    if op == "mul":
        return True if vt is Bool else 1
    if op in ("and", "or"):
        if vt is Bool:
            return op == "and"
        if op == "or":
            return 0
        return -1 if vt.is_signed else ops.int_range(vt)[1]
    if vt.is_float:
        return math.inf if op == "min" else -math.inf
    if vt is Bool:
        return op == "min"
    lo, hi = ops.int_range(vt)
    return hi if op == "min" else lo


def op_name(op, who: str) -> str:
    """The op-table name (``"add"``, ...) of a :class:`ReduceOp` or its name as a string."""
    if isinstance(op, str):
        try:
            op = ReduceOp[op]
        except KeyError:
            raise ValueError(f"{who}: unknown reduction {op!r}; expected one of "
                             f"{[m.name for m in ReduceOp if m.value is not None]}") from None
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{who}: 'op' must be a frostjit.ReduceOp, got {op!r}")
    if op.value is None:
        raise ValueError(f"{who}: ReduceOp.Identity is not a reduction")
    return op.value


def check_bitwise(who: str, x) -> None:
    """``And``/``Or`` need integer (or Bool) arrays or Python ints."""
    t = x.Type if isinstance(x, (ArrayBase, VectorBase)) else None
    if t is not None:
        if t.is_float:
            raise TypeError(f"{who}: And/Or reductions need integer or Bool arrays, got {type(x).__name__}")
    elif not isinstance(x, (bool, int, np.bool_, np.integer)):
        raise TypeError(f"{who}: And/Or reductions need integers, got {type(x).__name__}")


def _inclusive(op: str, x: ArrayBase) -> ArrayBase:
    n = width(x)
    cls = type(x)
    index_t = registry.flat_type(x._backend, UInt32)
    idx = arange(index_t, n)
    ident = identity(op, x._vt)
    d = 1
    while d < n:
        has = idx >= d
        earlier = select(has, gather(cls, x, idx - d, has), ident)
        x = _pair(op, earlier, x)
        d *= 2
    return x


def _shift(op: str, x: ArrayBase) -> ArrayBase:
    """Exclusive from inclusive: entry ``i`` takes entry ``i - 1``, the identity at 0."""
    n = width(x)
    idx = arange(registry.flat_type(x._backend, UInt32), n)
    has = idx >= 1
    return select(has, gather(type(x), x, idx - 1, has), identity(op, x._vt))


def _scan_array(op: str, x: ArrayBase, exclusive: bool, reverse: bool) -> ArrayBase:
    if reverse:
        return flip(_scan_array(op, flip(x), exclusive, False))
    out = _inclusive(op, x)
    return _shift(op, out) if exclusive else out


def prefix_reduce(op, value, axis=0, exclusive=True, reverse=False):
    """Exclusive (default) or inclusive prefix reduction of ``value`` with ``op`` (Dr.Jit 1.5).

    Parameters
    ----------
    op : ReduceOp
        ``Add``, ``Mul``, ``Min``, ``Max`` (NaN-ignoring), ``And``, ``Or`` (integers).
    value : 1-D array, static vector, tensor, list or tuple
    axis : int or tuple of ints
        0 (default): along a 1-D array, across a static vector's components (lane by lane),
        along a tensor's first axis; 1 / -1 along each component of a static vector; tensors
        take any axis or a tuple of axes (scanned one after the other).
    exclusive : bool
        ``True``: ``[identity, a0, a0 op a1, ...]``; ``False``: ``[a0, a0 op a1, ...]``.
    reverse : bool
        Accumulate from the end.

    Returns
    -------
    The same type and shape as ``value`` (a list for a Python sequence).

    Examples
    --------
    >>> fj.prefix_reduce(fj.ReduceOp.Mul, Float(1, 2, 3))
    [1, 1, 2]
    >>> fj.prefix_reduce(fj.ReduceOp.Max, Float(3, 1, 2, 0), exclusive=False, reverse=True)
    [3, 2, 2, 0]
    """
    who = "frostjit.prefix_reduce()"
    name = op_name(op, who)
    if name in ("and", "or"):
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            check_bitwise(who, v) if not getattr(type(v), "IsTensor", False) else check_bitwise(who, v.array)
    if getattr(type(value), "IsTensor", False):
        return value._fj_scan("prefix_reduce", axis, reverse, exclusive, op=name)
    if name == "add" and isinstance(value, (ArrayBase, VectorBase)):
        return _scan("prefix_reduce", value, axis, reverse, exclusive)
    if axis is None or isinstance(axis, tuple):
        raise TypeError(f"{who}: 'axis' must be a single int for arrays and sequences, got {axis!r}")
    if isinstance(value, VectorBase):
        (k,) = _axes("prefix_reduce", value, axis, 2)
        if k == 1:
            return _vector_of([_scan_array(name, c, exclusive, reverse) for c in value], type(value))
        comps = list(value)[::-1] if reverse else list(value)
        out, acc = [], None
        for c in comps:
            total = c if acc is None else _pair(name, acc, c)
            out.append(total if not exclusive else full(type(c), identity(name, c._vt), width(c)) if acc is None
                       else acc)
            acc = total
        return _vector_of(out[::-1] if reverse else out, type(value))
    if isinstance(value, (list, tuple)):
        _axes("prefix_reduce", value, axis, 1)
        items = list(value)[::-1] if reverse else list(value)
        out, acc = [], None
        for x in items:
            total = x if acc is None else _pair(name, acc, x)
            out.append(total if not exclusive else (_python_identity(name, x) if acc is None else acc))
            acc = total
        return out[::-1] if reverse else out
    if not isinstance(value, ArrayBase):
        raise TypeError(f"{who}: expects a 1-D JIT array, a static vector, a tensor or a sequence, "
                        f"got {type(value).__name__}")
    _axes("prefix_reduce", value, axis, 1)
    return _scan_array(name, value, exclusive, reverse)


def _python_identity(op: str, x):
    if isinstance(x, ArrayBase):
        return full(type(x), identity(op, x._vt), width(x))
    if op in ("and", "or"):
        return -1 if op == "and" else 0
    return {"add": 0, "mul": 1, "min": math.inf, "max": -math.inf}[op]
