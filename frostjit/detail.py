"""``fj.detail``: the few helpers of Dr.Jit's ``drjit.detail`` that user code and tests call
(the rest of that module is Dr.Jit's internals).

>>> fj.detail.reduce_identity(UInt32, fj.ReduceOp.Min)
[4294967295]
>>> fj.detail.can_scatter_reduce(Float, fj.ReduceOp.And)
False
"""
from __future__ import annotations

from .functions.creation import full
from .functions.memory import ReduceOp
from .functions.scan import identity
from .trace.dtypes import Bool


def _leaf_vt(dtype, who: str):
    leaf = getattr(dtype, "_leaf", None) or getattr(dtype, "_array_type", None) or dtype
    vt = getattr(leaf, "_vt", None)
    if vt is None:
        raise TypeError(f"detail.{who}(): expected a frostjit array type, got {dtype!r}")
    return vt


def _op(op, who: str) -> str:
    if not isinstance(op, ReduceOp) or op.value is None:
        raise TypeError(f"detail.{who}(): 'op' must be a ReduceOp other than Identity, got {op!r}")
    return op.value


def reduce_identity(dtype, op, size: int = 1):
    """The identity of reduction ``op`` as an array of type ``dtype`` and width ``size``: what
    an empty reduction gives and where a scatter-reduction's target starts (0 for ``Add``, 1 for
    ``Mul``, the largest / smallest value (``inf`` / ``-inf``) for ``Min`` / ``Max``, every bit
    set for ``And``, 0 for ``Or``).

    Parameters
    ----------
    dtype : type
        A frostjit array type (``UInt32``, ``Float``, ``Array3f``, ...).
    op : ReduceOp
    size : int
        The width.

    Examples
    --------
    >>> fj.detail.reduce_identity(Float, fj.ReduceOp.Max)
    [-inf]
    """
    return full(dtype, identity(_op(op, "reduce_identity"), _leaf_vt(dtype, "reduce_identity")), size)


def can_scatter_reduce(dtype, op) -> bool:
    """Whether ``scatter_reduce(op, target, ...)`` supports a target of type ``dtype`` here:
    every reduction of integer and float arrays but ``And``/``Or`` (bitwise) of floats; none
    into ``Bool`` arrays.  (Dr.Jit's LLVM backend also refuses ``Mul`` and half-precision
    ``Min``/``Max``; frostjit computes them.)"""
    name = _op(op, "can_scatter_reduce")
    vt = _leaf_vt(dtype, "can_scatter_reduce")
    if vt is Bool:
        return False
    return not (name in ("and", "or") and vt.is_float)
