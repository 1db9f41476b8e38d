"""Element-wise operations on tensors with NumPy's broadcasting rules.

:func:`elementwise` applies a function of 1-D arrays (an operator, ``fj.sin``, ``fj.select``,
...) to tensors, 1-D arrays and Python scalars: the shapes broadcast as in NumPy (a 1-D array
of size ``n`` is a tensor of shape ``(n,)``, as in Dr.Jit), each operand whose shape differs
from the result's is expanded by a lazy gather over index arithmetic (fused into the
consumer's kernel), and the function runs on the flat arrays.  Same-shape operands and
single elements need no gather (the flat engine broadcasts size 1 by itself).
"""
from __future__ import annotations

import numpy as np

from ..array import registry as array_registry
from ..array.flat import ArrayBase, is_flat, sequence_type
from ..array.foreign import foreign_operand
from ..array.vector import VectorBase
from ..errors import IncompatibleArgumentsError
from ..functions.evaluation import width
from ..trace.dtypes import Bool, from_numpy_dtype
from . import registry
from .base import TensorBase, size_of
from .view import c_strides, strided

_PY_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def broadcast_shapes(who: str, *shapes) -> tuple:
    """The broadcast of ``shapes`` (NumPy's rule: align at the right, 1 stretches); ``ValueError``
    naming the shapes when they are incompatible."""
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(nd):
        d = 1
        for s in shapes:
            j = k - (nd - len(s))
            if j < 0:
                continue
            e = s[j]
            if e == 1:
                continue
            if d == 1:
                d = e
            elif e != d:
                raise IncompatibleArgumentsError(f"{who}: operands have incompatible shapes: "
                                                 + " and ".join(str(tuple(s)) for s in shapes) + ".")
        out.append(d)
    return tuple(out)


def expand(array: ArrayBase, shape: tuple, out_shape: tuple) -> ArrayBase:
    """``array`` (the elements of a tensor of ``shape`` in C order) broadcast to ``out_shape``:
    a strided view (:mod:`.view`) whose stretched axes have stride 0, so ``(2, 3) + (3,)``
    reads ``i % 3`` and ``(2, 1) + (2, 3)`` reads ``i // 3``."""
    shape = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides = tuple(0 if (s == 1 and o != 1) else st for s, o, st in zip(shape, out_shape, c_strides(shape)))
    return strided(array, out_shape, strides)


def _operand(x, backend, who: str):
    """``(flat value, shape)`` of one operand: arrays with their shape, scalars with ``None``."""
    if isinstance(x, TensorBase):
        return x._array, x.shape
    if is_flat(x):
        return x, (width(x),)
    if isinstance(x, _PY_SCALARS) or hasattr(x, "__symbolic_size__"):
        return x, None
    if not isinstance(x, VectorBase):
        x = foreign_operand(x)          # (Dr.Jit: t[0, 0] == torch_tensor, TensorXi * np.array(3))
        if isinstance(x, np.ndarray) and x.ndim == 0:
            # (a 0-d array: an operand of the flat function, which converts it to the tensor's
            # type as a one-element array, as Dr.Jit does: TensorXi * np.array(2.5) is a TensorXi;
            # fj.freeze then records it as an input, not as a constant of the recording)
            return x, None
    if isinstance(x, np.ndarray):
        cls = array_registry.flat_type(backend, from_numpy_dtype(x.dtype))
        return cls(np.ascontiguousarray(x).reshape(-1)), x.shape
    if isinstance(x, VectorBase):
        raise IncompatibleArgumentsError(f"{who}: Incompatible arguments: cannot combine a tensor with a static "
                                         f"vector ({type(x).__name__}); convert it first, e.g. TensorXf(v)")
    raise TypeError(f"{who}: unsupported operand type {type(x).__name__}")


def _sequence_as_tensor(x, like: TensorBase):
    """A list/tuple operand as a tensor of ``like``'s type (Dr.Jit: ``TensorXf([1, 2]) + [1, 3]``),
    the float twin for Python floats beside an integer tensor; any other operand as it is."""
    if type(x) not in (list, tuple):
        return x
    at = like._array_type
    vt = sequence_type("add", at._vt, x)
    if vt is not at._vt:
        at = array_registry.flat_type(at._backend, vt, at._is_ad)
    return registry.tensor_of(at)(x)


def _empty_result(fn, parts, out_shape):
    """The empty tensor of ``out_shape`` that ``fn`` gives: NumPy's rule for tensors (a number
    or a size-1 operand broadcasts to an empty shape), where 1-D arrays follow Dr.Jit's (an
    empty operand beside a non-empty one is an error, trace.ops.broadcast_size) and Dr.Jit's
    tensors raise too (a deliberate difference, docs/types.md).  ``fn`` runs on one-element
    literal stand-ins, only to learn the result's type: nothing is computed."""
    stand = [type(v)(v._vt.np_dtype.type(0)) if is_flat(v) else v for v, _ in parts]
    result = fn(*stand)
    return registry.tensor_of(type(result))._from_array(type(result)(), out_shape)


def elementwise(fn, *operands, who: str = "frostjit"):
    """``fn`` applied to the broadcast flat arrays of ``operands``, as a tensor.

    Parameters
    ----------
    fn : callable
        Takes one flat array (or Python scalar) per operand and returns a flat array.
    *operands : tensors, 1-D arrays, NumPy arrays or Python scalars
        At least one is a tensor.
    who : str
        The operation, for error messages.

    Returns
    -------
    A tensor of the broadcast shape, of the tensor type matching ``fn``'s result.
    """
    tensors = [x for x in operands if isinstance(x, TensorBase)]
    backend = tensors[0]._array._backend
    # (a list operand takes the type of a value tensor, not of a mask: select(mask, [1, 2], t))
    like = next((x for x in tensors if x._array_type._vt is not Bool), None)
    parts = [_operand(_sequence_as_tensor(x, like) if like is not None else x, backend, who) for x in operands]
    shapes = [s for _, s in parts if s is not None]
    first = shapes[0]
    same = True
    for s in shapes[1:]:
        if s is not first and s != first:
            same = False
            break
    out_shape = first if same else broadcast_shapes(who, *shapes)
    if 0 in out_shape:
        return _empty_result(fn, parts, out_shape)
    if same:
        flat = [v for v, _ in parts]
    else:
        total = size_of(out_shape)
        flat = [v if s is None or s == out_shape or size_of(s) == total or size_of(s) == 1
                else expand(v, s, out_shape) for v, s in parts]
    result = fn(*flat)
    return registry.tensor_of(type(result))._from_array(result, out_shape)
