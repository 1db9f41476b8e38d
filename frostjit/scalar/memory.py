"""Memory operations on the scalar backend's 1-D arrays (``ArrayXf``, ``ArrayXu``, ...), computed now.

In Dr.Jit's ``drjit.scalar`` the dynamic arrays are the 1-D arrays: ``dr.gather(ArrayXf, src,
ArrayXu([0, 2]))``, ``dr.scatter``, ``dr.block_sum`` work on them, and the tensors hold one
(``TensorXf.array`` is an ``ArrayXf``).  frostjit's engine functions (``fj.gather``,
``fj.scatter*``, ``fj.block_*``) hand such an array to the hooks of
:class:`frostjit.scalar.arrays.ScalarDynamic`, which call these NumPy implementations of the
same contract as the JIT's: an inactive or out-of-bounds gather reads 0, such a scatter writes
nothing, reductions combine in the element type.  Because of this contract the tensor and
texture code of :mod:`frostjit.tensor` / :mod:`frostjit.texture` runs unchanged on the scalar
backend.
"""
from __future__ import annotations

import numpy as np

from ..errors import ReductionTypeError
from ..trace import numpy_semantics as ns
from ..trace import ops
from ..trace.dtypes import Bool

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def values(a) -> np.ndarray:
    """The elements of the scalar 1-D array ``a`` as a NumPy array of its element type."""
    return np.array(a._c, dtype=type(a)._vt.np_dtype)


def of(cls, v: np.ndarray):
    """A scalar 1-D array of class ``cls`` holding the NumPy values ``v`` (of its element type)."""
    out = cls.__new__(cls)
    out._c = v.tolist()
    return out


def _index(index, who: str) -> np.ndarray:
    if isinstance(index, _SCALARS) and not isinstance(index, (bool, np.bool_)):
        return np.array([int(index)], dtype=np.int64)
    if isinstance(index, (list, tuple)) and all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))
                                                for i in index):
        return np.array(index, dtype=np.int64)      # a Python sequence of ints, as Dr.Jit takes
    vt = getattr(type(index), "_vt", None)
    if getattr(type(index), "_eager_flat", False) and vt.is_integral and vt is not Bool:
        return values(index).astype(np.int64)
    raise TypeError(f"{who}(): the index must be an integer array of the scalar backend or an int, got "
                    f"{type(index).__name__}")


def _active(active, who: str) -> np.ndarray:
    if isinstance(active, (bool, np.bool_)):
        return np.array([bool(active)])
    if getattr(type(active), "_eager_flat", False) and type(active)._vt is Bool:
        return values(active)
    if isinstance(active, (list, tuple)) and all(isinstance(b, (bool, np.bool_)) for b in active):
        return np.array(active, dtype=bool)
    raise TypeError(f"{who}(): 'active' must be a Bool array of the scalar backend or a bool, got "
                    f"{type(active).__name__}")


def gather(dtype, source, index, active=True):
    """``fj.gather(dtype, source, index, active)`` for a scalar 1-D ``source`` (``dtype`` its class)."""
    if not (isinstance(dtype, type) and hasattr(dtype, "_vt")):
        raise TypeError(f"gather(): unsupported dtype {getattr(dtype, '__name__', dtype)!r}: expected a frostjit "
                        "array or PyTree type")
    if dtype is not type(source):
        raise TypeError(f"gather(): 'dtype' {getattr(dtype, '__name__', dtype)} does not match the type of "
                        f"'source' ({type(source).__name__})")
    vt = dtype._vt
    return of(dtype, ns.gather(vt, values(source), _index(index, "gather"), _active(active, "gather")))


def scatter(who: str, reduce_op, target, value, index, active=True) -> None:
    """``fj.scatter`` / ``scatter_add`` / ``scatter_reduce`` (``reduce_op``: None or the op name)
    into the scalar 1-D array ``target``, in place."""
    cls = type(target)
    vt = cls._vt
    if reduce_op is not None and vt is Bool:
        raise TypeError(f"{who}(): reductions into Bool arrays are not supported")
    if reduce_op in ("and", "or") and vt.is_float:
        raise TypeError(f"{who}(): ReduceOp.And/Or are bitwise: they need an integer target, got {cls.__name__}")
    if isinstance(value, _SCALARS):
        val = np.array([ops.convert_scalar(vt, value, f"{who}()")], dtype=vt.np_dtype)
    elif type(value) is cls:
        val = values(value)
    else:
        raise TypeError(f"{who}(): the value type {type(value).__name__} does not match the target type "
                        f"{cls.__name__}; convert it first, e.g. {cls.__name__}(value)")
    idx, act = _index(index, who), _active(active, who)
    sizes = {len(a) for a in (val, idx, act) if len(a) != 1}
    if len(sizes) > 1:
        raise ValueError(f"{who}(): incompatible sizes {sorted(sizes)} of value, index and mask")
    target._c = ns.scatter(values(target), val, idx, act, reduce_op).tolist()


def block(x, reduction):
    """``fj.block_reduce`` / ``block_prefix_reduce`` (a ``BlockReduction``) of the scalar 1-D ``x``."""
    cls = type(x)
    vt, op = cls._vt, reduction.op
    who = "block_prefix_reduce" if reduction.prefix else "block_reduce"
    if op in ("and", "or") and vt.is_float:
        raise ReductionTypeError(f"frostjit.{who}(): ReduceOp.{op.capitalize()} needs an integer or Bool "
                                 f"array, got {cls.__name__}")
    if vt is Bool and op not in ("and", "or"):      # (as on the JIT backends)
        raise ReductionTypeError(f"frostjit.{who}(): ReduceOp.{op.capitalize()} of a Bool array; convert it "
                                 "to an integer type first")
    return of(cls, ns.block_reduce(op, values(x), reduction.size, reduction.prefix, reduction.exclusive,
                                   reduction.reverse))


def argsort(keys, index_type):
    """The stable ascending permutation (an ``index_type`` array) of the unsigned keys ``keys``."""
    return of(index_type, ns.argsort_keys(values(keys)))


def reduce_all(x, op: str):
    """All elements of the scalar 1-D ``x`` reduced with ``op``: a one-element array of its class
    (what a tensor reduction over every axis builds on)."""
    return of(type(x), ns.reduce(op, values(x)))
