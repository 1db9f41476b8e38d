"""The scalar backend's array families: Dr.Jit's ``drjit.scalar`` types over Python numbers.

The classes come from the same table as ``frostjit.llvm``'s (:mod:`frostjit.array.families`),
made with the element classes of :mod:`.elements` and the bases below: a static array's
components are Python numbers (``Array3f(1, 2, 3)[0]`` is the ``float`` 1.0) or, nested, scalar
static arrays; nothing is traced.  What differs from the JIT families, and only that, lives
here:

* lane-wise operations on the numbers (:func:`leafwise`: :mod:`.kernel`, the op table's
  reference semantics in the element type), wired into the shared component-wise code by the
  ``_leafwise`` class attribute;
* conversion between element types (``Array3i8(Array3i(200, 0, 0))`` wraps, as a cast does);
* the shape (no lanes: ``Array3f`` is ``(3,)``, ``Array33f`` ``(3, 3)``), ``.numpy()``,
  ``.state`` (``VarState.Invalid``: no variable behind it, as in Dr.Jit).
"""
from __future__ import annotations

import numpy as np

from ..array import registry
from ..array.complex import ComplexBase
from ..array.dynamic import DynamicBase
from ..array.flat import not_one_entry
from ..array.families import make_families
from ..array.matrix import MatrixBase
from ..array.meta import VarState
from ..array.quaternion import QuaternionBase
from ..array.vector import VectorBase
from ..trace import numpy_semantics as ns
from ..trace import ops
from ..trace.dtypes import Bool as _BOOL, Float32, promote
from ..trace.state import JitBackend
from ..array import eager as kernel
from . import memory
from .elements import ScalarElement, make_elements


class ScalarArray:
    """Mixin of every scalar-backend array class (see the module docstring)."""

    __slots__ = ()
    IsJIT = False

    @classmethod
    def _cast(cls, v):
        """``v``'s components converted as a cast converts (integers wrap, floats truncate), or
        None unless ``v`` is a scalar array of numbers of another element type (and as many
        components, for a static ``cls``)."""
        if isinstance(v, ScalarArray) and v.Depth == cls.Depth and issubclass(cls._elem, ScalarElement) \
                and (cls._n is None or len(v) == cls._n) and v._leaf is not cls._leaf:
            vt, src = cls._leaf._vt, v._leaf._vt
            if len(v._c) <= kernel.eager_python.MAX_COMPONENTS:
                out = kernel.eager_python.cast(src, vt, v._c)
                if out is not None:
                    return out
            return ns.cast(vt, np.array(v._c, dtype=src.np_dtype)).tolist()
        return None

    @classmethod
    def _from_one(cls, v) -> list:
        out = cls._cast(v)
        return super()._from_one(v) if out is None else out

    @classmethod
    def _from_components(cls, comps):
        # Numbers computed outside the element type (Python arithmetic on components: a
        # cross product, a complex product) are rounded / wrapped to it, as arithmetic is.
        out = cls.__new__(cls)
        if cls.Depth == 1:
            vt = cls._leaf._vt
            comps = [ops.normalize_literal(vt, c) for c in comps]
        out._c = list(comps)
        return out

    @property
    def shape(self) -> tuple:
        """The static sizes, outermost first (``Array33f``: ``(3, 3)``); ``ValueError`` if ragged."""
        if issubclass(type(self)._elem, ScalarElement):
            return (len(self._c),)
        inner = {c.shape for c in self._c}
        if len(inner) > 1:
            raise ValueError(f"{type(self).__name__}.shape: the components have different shapes "
                             f"({', '.join(map(str, sorted(inner)))}): the array is ragged")
        return (len(self._c),) + (inner.pop() if inner else (0,) * (self.Depth - 1))

    def _nested(self) -> list:
        return [c._nested() if isinstance(c, ScalarArray) else c for c in self._c]

    def _static_numpy(self) -> np.ndarray:
        self.shape  # noqa: B018  (reading it raises for ragged arrays)
        return np.array(self._nested(), dtype=self._leaf._vt.np_dtype).reshape(self.shape)

    def numpy(self) -> np.ndarray:
        """A NumPy array of shape :attr:`shape` (a complex number: a 0-d complex array)."""
        a = self._static_numpy()
        if type(self).IsComplex:
            # (parts set one by one: re + 1j * im makes the real part NaN for an infinite or
            # NaN imaginary part, 1j * inf being nan + inf j)
            out = np.empty(a.shape[:-1], dtype=np.result_type(a.dtype, np.complex64))
            out.real, out.imag = a[..., 0], a[..., 1]
            return out
        return a

    @property
    def state(self):
        """``VarState.Invalid``: no JIT variable stands behind a scalar array (Dr.Jit)."""
        return VarState.Invalid

    @property
    def label(self):
        """``None``: scalar arrays carry no labels."""
        return None


class ScalarVector(ScalarArray, VectorBase):
    """Static (and nested) arrays of the scalar backend."""
    __slots__ = ()


class ScalarDynamic(ScalarArray, DynamicBase):
    """Dynamic arrays (``ArrayXf``) of the scalar backend: a list of numbers.

    They are the scalar backend's 1-D arrays (as in Dr.Jit): ``_vt`` is the element type,
    ``_backend`` :data:`SCALAR_ARRAYS` (under which ``registry.flat_type`` finds them), and the
    engine's memory functions (``fj.gather``, ``fj.scatter*``, ``fj.block_*``) call the ``_fj_*``
    hooks below (:mod:`.memory`), so that tensors and textures are built on them.
    """
    __slots__ = ()
    _eager_flat = True      # the engine's memory functions call the hooks below
    _vt = None              # set per class by make_types
    _backend = None
    _is_ad = False
    _ad = None

    def _fj_gather(self, dtype, index, active):
        return memory.gather(dtype, self, index, active)

    def _fj_scatter(self, who: str, reduce_op, value, index, active) -> None:
        memory.scatter(who, reduce_op, self, value, index, active)

    def _fj_block(self, reduction):
        return memory.block(self, reduction)

    def _fj_argsort(self, index_type):
        return memory.argsort(self, index_type)

    def _fj_reduce_all(self, op: str):
        return memory.reduce_all(self, op)

    def item(self):
        """The only element as a Python scalar (``RuntimeError`` unless the size is 1), as a JIT
        array's ``item()`` and Dr.Jit's ``ArrayXf.item()``."""
        if len(self) != 1:
            raise not_one_entry("item()", self, len(self))
        return self[0]

    @classmethod
    def _components(cls, args) -> list:
        # ArrayXu(ArrayXu64(...)) casts as a static array does (Dr.Jit: 2^40 + 5 -> 5).
        out = cls._cast(args[0]) if len(args) == 1 else None
        if out is None and len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].ndim == 1:
            out = _from_numpy_fast(cls._leaf._vt, args[0])
        return super()._components(args) if out is None else out


def _from_numpy_fast(vt, a: np.ndarray):
    """The entries of the 1-D NumPy array ``a`` as element type ``vt`` stores them, converted at
    once where no entry can fail the constructor's range check (the same type; any number to a
    float type, through float64 and float32 as ``ops.convert_scalar`` rounds one); None
    otherwise (entry by entry, with the check).  A tensor of an image is built from one."""
    if a.dtype == vt.np_dtype:
        return a.tolist()
    if vt.is_float and a.dtype.kind in "biuf":
        with np.errstate(over="ignore"):        # beyond the type's range: +-inf, as a constructor
            wide = a.astype(np.float64)
            if vt.itemsize != 8:
                wide = wide.astype(np.float32)
            return wide.astype(vt.np_dtype).tolist()
    return None


class ScalarMatrix(ScalarArray, MatrixBase):
    """Matrices of the scalar backend."""
    __slots__ = ()


class ScalarComplex(ScalarArray, ComplexBase):
    """Complex numbers of the scalar backend."""
    __slots__ = ()


class ScalarQuaternion(ScalarArray, QuaternionBase):
    """Quaternions of the scalar backend."""
    __slots__ = ()


class _ArrayBackend:
    """The key under which ``registry.flat_type`` finds the scalar 1-D arrays (``ArrayXf``...):
    not a ``JitBackend`` (their ``__meta__`` says ``JitBackend.Invalid``, as Dr.Jit's)."""

    name = "scalar"

    def __repr__(self) -> str:
        return "frostjit.scalar arrays"


#: ``ArrayXf._backend``: the 1-D array classes of the scalar backend are registered under it.
SCALAR_ARRAYS = _ArrayBackend()

BASES = {"array": ScalarVector, "dynamic": ScalarDynamic, "matrix": ScalarMatrix, "complex": ScalarComplex,
         "quaternion": ScalarQuaternion}


#: The element class of each element type (what :func:`leafwise` returns), filled by make_types.
_ELEMENT: dict = {}


def leafwise(op: str, operands, columns):
    """The shared component-wise code's hook (``VectorBase._leafwise``): ``op`` on scalar
    arrays whose components are numbers; ``columns[k]`` is operand k's component list (None:
    the operand broadcasts).  Returns ``(components, element class)``."""
    key = (op, *map(type, operands))
    plan = _FAST.get(key, _UNKNOWN)
    if plan is _UNKNOWN:
        plan = _FAST[key] = _fast_plan(op, operands, columns)
    if plan is not None:
        out = _fast(plan, op, operands, columns)
        if out is not None:
            return out
    args = []
    k0 = next(k for k, c in enumerate(columns) if c is not None)
    like, c0 = type(operands[k0]), columns[k0]
    for o, c in zip(operands, columns):
        if c is not None:
            leaf = type(o)._leaf
            if leaf.IsJIT:
                raise TypeError(f"frostjit.{op}(): cannot mix scalar and JIT arrays "
                                f"({', '.join(type(x).__name__ for x in operands)})")
            args.append(kernel.Column(c if type(c) is list else list(c), leaf._vt))
        elif isinstance(o, (list, tuple, range)) and len(o) == len(c0):
            # A sequence as an operand: an array of the first array operand's type (Dr.Jit),
            # of Float32 or wider if it holds a float and that type is integral.
            vt = like._leaf._vt
            if not vt.is_float and any(type(x) is float for x in o):
                vt = promote(vt, Float32)
                args.append(kernel.Column([float(x) for x in o], vt))
            else:
                args.append(kernel.Column(list(like(o)._c), vt))
        elif getattr(type(o), "IsJIT", False) or isinstance(o, VectorBase):
            raise TypeError(f"frostjit.{op}(): cannot combine a {type(o).__name__} with scalar arrays "
                            f"({', '.join(type(x).__name__ for x in operands)})")
        else:
            args.append(o)
    values, vt = kernel.compute(op, args, lambda: ", ".join(type(x).__name__ for x in operands))
    return values, _ELEMENT[vt]


# The hot path of :func:`leafwise`: per (op, operand classes), the typing of
# :func:`frostjit.array.eager.fast_plan` and the result's element class, or None (that op on
# those classes goes through kernel.compute).  The classes fix every operand's element type and
# which operands are columns; a Python int operand is checked against the plan's span per call.
_FAST: dict = {}
_UNKNOWN = object()


def _fast_plan(op: str, operands, columns):
    stand_ins = []
    for o, c in zip(operands, columns):
        t = type(o)
        if c is not None:
            leaf = t._leaf
            if leaf.IsJIT:
                return None
            stand_ins.append(kernel.Column([], leaf._vt))
        elif t is int or t is float or t is bool:
            stand_ins.append(t())
        else:
            return None
    plan = kernel.fast_plan(op, stand_ins)
    if plan is None:
        return None
    in_vt, out_vt, targets, span = plan
    return in_vt, out_vt, targets, span, _ELEMENT[out_vt]


def _fast(plan, op: str, operands, columns):
    in_vt, out_vt, targets, (lo, hi), elem = plan
    n = 0
    args = []
    for o, c, t in zip(operands, columns, targets):
        if c is not None:
            n = len(c)
            args.append(c)
        else:
            if type(o) is int and not lo <= o < hi:
                return None         # (an int that widens the type: kernel.compute types it)
            args.append(kernel.literal(t if t is not None else _BOOL, o))
    if n > kernel.eager_python.MAX_COMPONENTS:
        return None
    values = kernel.eager_python.compute(op, in_vt, out_vt, args, n)
    return None if values is None else (values, elem)


def make_types(module: str) -> dict:
    """Create (and register) the scalar backend's classes; returns ``{name: class}``."""
    elements = make_elements()
    _ELEMENT.update(elements)
    for vt, cls in elements.items():
        registry.register_flat(JitBackend.Invalid, vt, False, cls)
    out = make_families(JitBackend.Invalid, module, False, elements, BASES)
    for cls in out.values():
        if issubclass(cls._elem, ScalarElement):
            cls._leafwise = staticmethod(leafwise)
            if issubclass(cls, ScalarDynamic):
                cls._vt, cls._backend = cls._leaf._vt, SCALAR_ARRAYS
                registry.register_flat(SCALAR_ARRAYS, cls._vt, False, cls)
    return out
