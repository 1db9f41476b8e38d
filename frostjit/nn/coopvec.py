"""Cooperative vectors: a short vector of JIT values held per lane (Dr.Jit's ``drjit.nn.CoopVec``).

On a GPU, Dr.Jit maps a cooperative vector onto tensor-core instructions; on the CPU (Dr.Jit's
LLVM backend, and here) it is simply a list of 1-D arrays of one element type, one per
component.  frostjit builds it on its dynamic arrays (``ArrayXf``...), so every lane-wise
function (``fj.maximum``, ``fj.fma``, ``fj.tanh``, ``fj.step``, ...), AD, ``fj.freeze`` and the
PyTree walkers handle it without special cases; results of lane-wise operations stay
cooperative vectors.

>>> import frostjit as fj, frostjit.nn as nn
>>> from frostjit.llvm.ad import Float
>>> x = nn.CoopVec(Float(1, 2), 3.0, [Float(4, 5)])
>>> len(x), x.type.__name__
(3, 'Float')
"""
from __future__ import annotations

import dataclasses

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase, componentwise
from ..traits import is_diff_v
from ..tree import leaves
from ..functions.creation import full, zeros
from ..functions.evaluation import UNEVALUABLE, width
from ..ad.api import ENABLE_GRAD_CHECKS

_NUMBERS = (int, float)


class _AllOps(dict):
    """The ``_ops`` table of the cooperative-vector classes: every lane-wise op is computed
    component by component and the result re-wrapped as a cooperative vector, whichever operand
    came first (``fj.select(mask, x, 0)``, ``2 * x``)."""

    def __bool__(self) -> bool:         # (apply_vector asks ``if o._ops`` before ``.get``)
        return True

    def get(self, op, default=None):
        return lambda *operands: _rewrap(componentwise(op, operands))


def _rewrap(value):
    """A dynamic array of a non-mask element type as a cooperative vector (masks stay masks)."""
    if isinstance(value, VectorBase) and not isinstance(value, CoopVec) and value._n is None:
        elem = type(value)._elem
        if not elem._vt.is_bool:
            return _coop_class(elem)._from_components(value._c)
    return value


_CLASSES: dict = {}     # element class (Float, Float16, ...) -> its CoopVec subclass


def _coop_class(elem: type) -> type:
    """The cooperative-vector class of element type ``elem`` (a subclass of :class:`CoopVec` and
    of ``elem``'s dynamic array type), created once per element type."""
    cls = _CLASSES.get(elem)
    if cls is None:
        base = registry.array_type(elem, None, "dynamic")
        if base is None:
            raise TypeError(f"frostjit.nn.CoopVec: no dynamic array type of {elem.__name__}")
        cls = type(f"CoopVec[{elem.__name__}]", (CoopVec, base), {"__slots__": (), "_ops": _AllOps()})
        _CLASSES[elem] = cls
        # As Dr.Jit: a cooperative vector is unpacked, never evaluated as a whole (fj.eval,
        # fj.schedule and fj.make_opaque raise), and fj.enable_grad needs AD components
        UNEVALUABLE[cls] = "Cooperative vectors cannot be evaluated. They must be unpacked into regular variables."
        ENABLE_GRAD_CHECKS[cls] = CoopVec._check_enable_grad
    return cls


def _flatten(args, out: list) -> None:
    """Append the components of ``args`` (arrays, numbers, static/dynamic arrays, PyTrees)."""
    for a in args:
        if isinstance(a, ArrayBase) or isinstance(a, _NUMBERS):
            out.append(a)
        elif isinstance(a, VectorBase):
            _flatten(a._c, out)
        elif isinstance(a, (list, tuple)):
            _flatten(a, out)
        elif isinstance(a, dict):
            _flatten(a.values(), out)
        elif getattr(type(a), "IsTensor", False):
            raise TypeError("frostjit.nn.CoopVec(): tensors are not accepted (pass their rows, or use "
                            "the layers' tensor evaluation)")
        elif isinstance(getattr(type(a), "DRJIT_STRUCT", None), dict) or dataclasses.is_dataclass(a):
            _flatten(leaves(a), out)
        elif hasattr(type(a), "__iter__") and not isinstance(a, (str, bytes)):
            # a generator, iterator, map, ... (Dr.Jit's guide: ``CoopVec(dr.sin(v) for v in x)``)
            _flatten(list(a), out)
        else:
            raise TypeError(f"frostjit.nn.CoopVec(): unsupported argument of type {type(a).__name__}")


class CoopVec(VectorBase):
    """A cooperative vector: a short vector of 1-D JIT arrays of one element type.

    Parameters
    ----------
    *args
        1-D JIT arrays, Python numbers, static or dynamic arrays, PyTrees and iterables
        (generators) of them; they are flattened into the list of components.  At least one JIT
        array must be among them: the first gives the element type, the others are converted to
        it (as in Dr.Jit).  Numbers and width-1 arrays are widened to the components' common
        width (as in Dr.Jit).

    Notes
    -----
    Supports ``+``, ``-``, ``*``, ``abs``, iteration, ``len`` and the lane-wise functions
    (``fj.maximum``, ``fj.minimum``, ``fj.fma``, ``fj.exp2``, ``fj.tanh``, ``fj.step``,
    ``fj.select``, ``fj.clip``, ...), which return cooperative vectors; ``fj.sum`` adds the
    components.  Dr.Jit restricts cooperative vectors to the operations its GPU path supports;
    frostjit's (like Dr.Jit's LLVM backend underneath) are plain arrays, so the other lane-wise
    operations (``/``, ``fj.exp``, ``fj.sin``) work too (a documented extension).

    Examples
    --------
    >>> x = CoopVec(Float(1, 2), Float(3, 4))
    >>> [c.numpy().tolist() for c in fj.maximum(x, 2.5)]
    [[2.5, 2.5], [3.0, 4.0]]
    """

    __slots__ = ()

    def _check_enable_grad(self) -> None:
        """``fj.enable_grad(vec)``: Dr.Jit raises unless the components already carry gradients
        (a cooperative vector is differentiable through its components, made before packing)."""
        if any(c._ad is None and is_diff_v(c) for c in self._c):
            raise RuntimeError("enable_grad(): to create a differentiable cooperative vector, construct "
                               "it from grad-enabled components.")

    @staticmethod
    def _step(a, b):
        """``fj.step(a, b)``: 0 where ``a < b``, else 1, in the vector's own element type (Dr.Jit's
        cooperative vectors give float vectors; plain arrays give ``Int``)."""
        elem = type(a if isinstance(a, CoopVec) else b)._elem
        return _rewrap(componentwise("select", (a < b, elem(0), elem(1))))

    def __new__(cls, *args):
        if cls is not CoopVec:          # _from_components on a concrete class
            return object.__new__(cls)
        items: list = []
        _flatten(args, items)
        # The first JIT array gives the element type; the others are converted to it (Dr.Jit:
        # ``CoopVec(Float16(1), 3.0, Array2f(4, 5))`` is four Float16 components; conversions
        # between AD types keep the gradients flowing)
        elem = next((type(a) for a in items if isinstance(a, ArrayBase)), None)
        items = [elem(a) if isinstance(a, ArrayBase) and type(a) is not elem else a for a in items]
        if elem is None:
            raise TypeError("frostjit.nn.CoopVec(): at least one JIT-compiled 1D array is required as "
                            "input (e.g., of type 'frostjit.llvm.Float16')")
        # Dr.Jit widens numbers and width-1 arrays to the common width of the components.
        lanes = max(width(a) for a in items if isinstance(a, ArrayBase))
        comps = []
        for a in items:
            if not isinstance(a, ArrayBase):
                a = full(elem, a, lanes) if lanes != 1 else elem(a)
            elif lanes != 1 and width(a) == 1:
                a = a + zeros(elem, lanes)
            comps.append(a)
        return _coop_class(elem)._from_components(comps)

    def __init__(self, *args):
        pass                            # (built by __new__)

    @property
    def type(self) -> type:
        """The element type (a 1-D array class such as ``Float16``)."""
        return type(self)._elem

    def __repr__(self) -> str:
        e = type(self)._elem
        width = max((len(c) for c in self._c), default=0)
        return f"frostjit.nn.CoopVec[{e.__module__}.{e.__name__}, shape=({len(self._c)}, {width})]"

    __str__ = __repr__


def cast(vec: CoopVec, dtype: type) -> CoopVec:
    """Convert the components of a cooperative vector to another element type (Dr.Jit's
    ``drjit.nn.cast``).

    Parameters
    ----------
    vec : CoopVec
        The vector to convert.
    dtype : type
        A 1-D JIT array type (``Float16``, ``Float64``, ``UInt32``, ...; an AD type keeps the
        gradients flowing through the conversion).

    Returns
    -------
    CoopVec
        A new cooperative vector of ``dtype`` components (floats to integers truncate).

    Raises
    ------
    TypeError
        ``vec`` is not a cooperative vector or ``dtype`` not a 1-D JIT array type.
    """
    if not isinstance(vec, CoopVec):
        raise TypeError(f"frostjit.nn.cast(): 'vec' must be a CoopVec, got {type(vec).__name__}")
    if not (isinstance(dtype, type) and issubclass(dtype, ArrayBase) and getattr(dtype, "IsJIT", False)
            and dtype.Depth == 1):
        raise TypeError(f"frostjit.nn.cast(): 'dtype' must be a 1-D JIT array type (e.g. Float16), got "
                        f"{dtype!r}")
    return CoopVec(*[dtype(c) for c in vec])
