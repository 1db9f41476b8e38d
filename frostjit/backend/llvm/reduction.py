"""The reduction operations of the CPU backend: their NumPy ufuncs and identities.

Shared by whole-array reductions (``fj.sum`` ...), frozen-function replays of them,
and the per-thread private copies of scatter-reduction targets.

``min`` and ``max`` ignore NaN, as Dr.Jit 1.5's reductions and
``scatter_reduce(Min/Max)`` do: they are ``numpy.fmin``/``numpy.fmax``, and a
whole-array reduction starts from the identity, so an array whose entries are
all NaN reduces to it (+inf / -inf), like an empty array.  (The element-wise
``fj.minimum``/``fj.maximum`` propagate NaN, as Dr.Jit's do.)
"""
from __future__ import annotations

import numpy as np

# A whole-array reduction of at least this many elements runs as a compiled block reduction into
# one partial per row of REDUCE_ROW elements (the rows shared by the threads), then NumPy reduces
# the partials (LLVMBackend.reduce_value); smaller arrays are reduced by NumPy directly, on one
# thread.  Figures: docs/benchmarks.md (bench_random's 1e7-float sum).
REDUCE_ROWS_FROM = 1 << 20
REDUCE_ROW = 1 << 14


def fusable(op: str, vt) -> bool:
    """Whether a reduction ``op`` over ``vt`` can be fused into a kernel (``reduce``, see
    :mod:`.codegen.reductions`): not Bool (``count`` sums a ``UInt32`` cast), not a type computed
    in a wider one (Float16 partials would round each row's sum to half precision), no
    bitwise ``and``/``or`` of floats."""
    if vt.is_bool or vt.compute is not None or op not in ("add", "mul", "min", "max", "and", "or"):
        return False
    return not (vt.is_float and op in ("and", "or"))


def result_dtype(op: str, vt) -> np.dtype:
    """The element type of a whole-array reduction's result: ``count`` (of a Bool buffer) gives
    ``uint32`` (Dr.Jit's ``count`` returns a ``UInt32``), every other operation ``vt``'s."""
    return np.dtype(np.uint32) if op == "count" else vt.np_dtype


def reduce_identity(op: str, dtype: np.dtype):
    """The value ``x`` with ``op(x, y) == y`` for every ``y`` of ``dtype``."""
    dt = np.dtype(dtype)
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if op == "and":         # Bool: logical; integers: bitwise (every bit set)
        return True if dt.kind == "b" else ~dt.type(0)
    if op == "or":
        return False if dt.kind == "b" else dt.type(0)
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    if dt.kind == "b":
        return op == "min"
    info = np.iinfo(dt)
    return info.max if op == "min" else info.min


def private_identity(op: str, dtype: np.dtype):
    """The fill of a thread's private copy of a scatter-reduction target: a value the final
    combination with the target leaves unchanged.  For float ``min``/``max`` that is NaN
    (``fmin(t, nan) == t``, also for a NaN target, which +inf would overwrite)."""
    if op in ("min", "max") and np.dtype(dtype).kind == "f":
        return np.nan
    return reduce_identity(op, dtype)


class NanIgnoringReduction:
    """``numpy.fmin``/``numpy.fmax`` with the interface of a ufunc (call and ``reduce``);
    ``reduce`` starts from the identity, so all-NaN input gives +-inf as in Dr.Jit."""

    __slots__ = ("ufunc", "op", "initial")

    def __init__(self, ufunc, op: str):
        self.ufunc = ufunc
        self.op = op
        self.initial: dict = {}     # dtype -> identity (a reduction is on the path of every replay)

    def __call__(self, *args, **kwargs):
        return self.ufunc(*args, **kwargs)

    def reduce(self, a: np.ndarray, dtype=None):
        dt = a.dtype if dtype is None else dtype
        initial = self.initial.get(dt)
        if initial is None:
            initial = self.initial[dt] = reduce_identity(self.op, dt)
        return self.ufunc.reduce(a, dtype=dtype, initial=initial)


class LogicalOrBitwise:
    """``and``/``or``: logical on Bool arrays (``all``/``any``), bitwise on integer arrays
    (``fj.reduce(fj.ReduceOp.And, UInt32(...))``, ``scatter_reduce(And/Or)``), with the
    interface of a ufunc (call and ``reduce``)."""

    __slots__ = ("logical", "bitwise")

    def __init__(self, logical, bitwise):
        self.logical, self.bitwise = logical, bitwise

    def __call__(self, a, b, *args, **kwargs):
        return (self.logical if np.asarray(a).dtype.kind == "b" else self.bitwise)(a, b, *args, **kwargs)

    def reduce(self, a: np.ndarray, dtype=None):
        if a.dtype.kind == "b":
            return self.logical.reduce(a)
        return self.bitwise.reduce(a, dtype=dtype)


REDUCE_UFUNC = {"add": np.add, "mul": np.multiply,
                "min": NanIgnoringReduction(np.fmin, "min"), "max": NanIgnoringReduction(np.fmax, "max"),
                "and": LogicalOrBitwise(np.logical_and, np.bitwise_and),
                "or": LogicalOrBitwise(np.logical_or, np.bitwise_or)}
