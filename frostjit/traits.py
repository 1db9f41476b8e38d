"""Dr.Jit's type traits: ``is_float_v``, ``value_t``, ``float_array_t``, ``expr_t``, ...

Every trait takes an array type, an array instance (read as its type) or a Python value, as
Dr.Jit 1.5's do, and answers from the class's declared metadata (``cls.__meta__``, an
:class:`~frostjit.array.meta.ArrayMeta`): this module holds rules, never per-type tables, so a
new array family answers every trait once its classes declare ``__meta__`` and are registered
(:func:`frostjit.array.registry.register_type`).

>>> import frostjit as fj
>>> from frostjit.llvm import Array3f, Float
>>> fj.value_t(Array3f) is Float, fj.mask_t(Array3f).__name__, fj.depth_v(Array3f)
(True, 'Array3b', 2)

Conventions (Dr.Jit's): a trait that maps a type to another type returns a Python type for a
non-array input; a conversion to a type frostjit does not have raises ``RuntimeError``
naming it (Dr.Jit raises the same for combinations it lacks, e.g. ``int32_array_t(Matrix4f)``);
``None`` is rejected with ``TypeError`` by every trait but :func:`is_array_v` and
:func:`expr_t`.
"""
from __future__ import annotations

import abc

from .array import registry
from .array.meta import VARTYPE_INFO, ArrayMeta, Dynamic, VarState, VarType, meta_of, vartype_of
from .trace import dtypes
from .trace.state import JitBackend

__all__ = [
    "ArrayBase", "VarType", "VarState", "Dynamic",
    "is_array_v", "is_float_v", "is_jit_v", "is_diff_v", "is_matrix_v", "is_complex_v", "is_quaternion_v",
    "is_tensor_v", "is_dynamic_v", "is_mask_v", "is_signed_v", "is_unsigned_v", "is_integral_v",
    "is_arithmetic_v", "is_struct_v", "is_vector_v", "is_special_v", "is_half_v", "depth_v", "size_v",
    "itemsize_v", "type_v", "backend_v", "value_t", "scalar_t", "mask_t", "leaf_t", "array_t", "detached_t",
    "diff_array_t", "expr_t", "float_array_t", "float16_array_t", "float32_array_t", "float64_array_t",
    "int_array_t", "int8_array_t", "int32_array_t", "int64_array_t", "uint_array_t", "uint8_array_t",
    "uint32_array_t", "uint64_array_t", "reinterpret_array_t", "replace_type_t", "replace_shape_t",
    "tensor_t", "matrix_t",
]


class ArrayBase(abc.ABC):
    """The class every frostjit array type is a subclass of (``isinstance(x, fj.ArrayBase)``).

    A class belongs to it when it declares array metadata (``__meta__``), whatever its family:
    1-D arrays, static vectors, and the types other families add.
    """

    # Dr.Jit's base class answers ``__meta__`` too (this string), so code that walks a module
    # and reads ``cls.__meta__`` of every array class, the base included, works unchanged.
    # It is not an ArrayMeta, so meta_of() still treats the base as "not an array type".
    __meta__ = "ArrayMeta[invalid]"

    @classmethod
    def __subclasshook__(cls, other):
        return True if meta_of(other) is not None else NotImplemented


# -- reading an argument ---------------------------------------------------------------

def _type(arg):
    return arg if isinstance(arg, type) else type(arg)


def _meta(name: str, arg) -> ArrayMeta | None:
    """The metadata of ``arg``'s type, ``None`` for a non-array; ``None`` itself is refused."""
    if arg is None:
        raise TypeError(f"{name}(): expected a value or a type, got None")
    return meta_of(_type(arg))


def _python_type(vt) -> type:
    """The Python type of one element of ``vt`` (Dr.Jit's ``scalar_t``)."""
    return bool if vt is dtypes.Bool else float if vt.is_float else int


def _element_type(name: str, vartype: VarType):
    """The engine's element type for a public :class:`VarType` (``RuntimeError`` if it has none)."""
    if isinstance(vartype, dtypes.VarType):
        return vartype
    if not isinstance(vartype, VarType):
        raise TypeError(f"{name}(): expected a frostjit.VarType, got {type(vartype).__name__}")
    for vt in dtypes.ALL_TYPES:
        if vt.name == vartype.name:
            return vt
    raise RuntimeError(f"{name}(): frostjit has no arrays of {vartype.name} (yet)")


def _find(name: str, meta: ArrayMeta):
    """The class ``meta`` describes; ``RuntimeError`` naming it when frostjit has none."""
    cls = registry.find_type(meta)
    if cls is None:
        dims = ", ".join("*" if s == Dynamic else str(s) for s in meta.shape)
        raise RuntimeError(f"{name}(): frostjit has no {'AD ' if meta.is_diff else ''}{meta.kind} type "
                           f"with {meta.vt.name} elements and shape ({dims}) on backend {meta.backend.name}")
    return cls


# -- predicates ------------------------------------------------------------------------

def is_array_v(arg) -> bool:
    """Whether ``arg`` is a frostjit array or array type (``None`` is not)."""
    return arg is not None and meta_of(_type(arg)) is not None


def is_jit_v(arg) -> bool:
    """Whether ``arg`` is (or is) a type traced by the JIT (``frostjit.llvm``)."""
    m = _meta("is_jit_v", arg)
    return m is not None and m.is_jit


def is_diff_v(arg) -> bool:
    """Whether ``arg``'s type is AD-capable (``frostjit.llvm.ad`` float types).

    frostjit's integer and mask types are the same classes in ``llvm`` and ``llvm.ad``, so
    ``is_diff_v(llvm.ad.UInt)`` is ``False`` (Dr.Jit: ``True``).
    """
    m = _meta("is_diff_v", arg)
    return m is not None and m.is_diff


def is_matrix_v(arg) -> bool:
    """Whether ``arg`` is a matrix type or instance."""
    m = _meta("is_matrix_v", arg)
    return m is not None and m.is_matrix


def is_complex_v(arg) -> bool:
    """Whether ``arg`` is a complex-number type or instance."""
    m = _meta("is_complex_v", arg)
    return m is not None and m.is_complex


def is_quaternion_v(arg) -> bool:
    """Whether ``arg`` is a quaternion type or instance."""
    m = _meta("is_quaternion_v", arg)
    return m is not None and m.is_quaternion


def is_tensor_v(arg) -> bool:
    """Whether ``arg`` is a tensor type or instance."""
    m = _meta("is_tensor_v", arg)
    return m is not None and m.is_tensor


def is_special_v(arg) -> bool:
    """Whether ``arg`` is a matrix, complex number or quaternion (arithmetic differs)."""
    m = _meta("is_special_v", arg)
    return m is not None and m.is_special


def is_vector_v(arg) -> bool:
    """Whether ``arg`` is a vectorial array type (``Array3f``, ``ArrayXf``; not ``Float``)."""
    m = _meta("is_vector_v", arg)
    return m is not None and m.is_vector


def is_dynamic_v(arg) -> bool:
    """Whether ``arg``'s type has a dimension of dynamic size (every JIT array does)."""
    m = _meta("is_dynamic_v", arg)
    return m is not None and (m.is_tensor or Dynamic in m.shape)


def is_float_v(arg) -> bool:
    """Whether ``arg`` is a floating-point array (type) or a Python ``float`` (type)."""
    m = _meta("is_float_v", arg)
    return m.vt.is_float if m is not None else _type(arg) is float


def is_half_v(arg) -> bool:
    """Whether ``arg`` is a half-precision array (type); a Python ``float`` counts, as in Dr.Jit."""
    m = _meta("is_half_v", arg)
    return m.vt.name == "Float16" if m is not None else _type(arg) is float


def is_mask_v(arg) -> bool:
    """Whether ``arg`` is a mask (Bool) array (type) or a Python ``bool`` (type)."""
    m = _meta("is_mask_v", arg)
    return m.vt is dtypes.Bool if m is not None else _type(arg) is bool


def is_integral_v(arg) -> bool:
    """Whether ``arg`` is an integer array (type) or a Python ``int`` (type); masks are not."""
    m = _meta("is_integral_v", arg)
    return m.vt.is_integral if m is not None else _type(arg) is int


def is_arithmetic_v(arg) -> bool:
    """Whether ``arg`` is an arithmetic (non-mask) array (type) or a Python ``int``/``float``."""
    m = _meta("is_arithmetic_v", arg)
    return m.vt is not dtypes.Bool if m is not None else _type(arg) in (int, float)


def is_signed_v(arg) -> bool:
    """Whether ``arg`` is a signed (integer or float) array (type) or a Python ``int``/``float``."""
    m = _meta("is_signed_v", arg)
    return m.vt.is_signed if m is not None else _type(arg) in (int, float)


def is_unsigned_v(arg) -> bool:
    """Whether ``arg`` is an unsigned integer or mask array (type) or a Python ``bool``."""
    m = _meta("is_unsigned_v", arg)
    return not m.vt.is_signed if m is not None else _type(arg) is bool


def is_struct_v(arg) -> bool:
    """Whether ``arg``'s type declares a ``DRJIT_STRUCT`` (a custom PyTree class)."""
    if arg is None:
        raise TypeError("is_struct_v(): expected a value or a type, got None")
    return hasattr(_type(arg), "DRJIT_STRUCT")


# -- sizes and types ---------------------------------------------------------------------

def depth_v(arg) -> int:
    """The number of nested levels of ``arg``'s type (``Float``: 1, ``Array3f``: 2); 0 otherwise."""
    m = _meta("depth_v", arg)
    return len(m.shape) if m is not None else 0


def size_v(arg) -> int:
    """The static size of the outermost dimension, :data:`Dynamic` (-1) when it is dynamic, 1 for
    non-arrays (and 0 for tensors, as in Dr.Jit)."""
    m = _meta("size_v", arg)
    if m is None:
        return 1
    return m.shape[0] if m.shape else 0


def itemsize_v(arg) -> int:
    """Bytes per element of ``arg``'s type (``Bool``: 1); ``TypeError`` for non-arrays."""
    m = _meta("itemsize_v", arg)
    if m is None:
        raise TypeError(f"itemsize_v(): {_type(arg).__name__} is not a frostjit array type")
    return m.vt.itemsize


def type_v(arg) -> VarType:
    """The element :class:`VarType` of ``arg``'s type; ``VarType.Void`` for non-arrays."""
    m = _meta("type_v", arg)
    return vartype_of(m.vt) if m is not None else VarType.Void


def backend_v(arg) -> JitBackend:
    """The backend of ``arg``'s type; ``JitBackend.Invalid`` for non-JIT types and non-arrays."""
    m = _meta("backend_v", arg)
    return m.backend if m is not None else JitBackend.Invalid


def scalar_t(arg) -> type:
    """The Python type of one element (``float``, ``int``, ``bool``); the input's type otherwise."""
    m = _meta("scalar_t", arg)
    return _python_type(m.vt) if m is not None else _type(arg)


def value_t(arg) -> type:
    """The type of ``x[i]``: one level down (``Array3f`` -> ``Float``, ``Float`` -> ``float``)."""
    m = _meta("value_t", arg)
    if m is None:
        return _type(arg)
    if m.is_tensor or len(m.shape) <= 1:
        return _python_type(m.vt)
    return _find("value_t", m.with_(kind="array", shape=m.shape[1:]))


def mask_t(arg) -> type:
    """The type of a comparison's result (``Array3f`` -> ``Array3b``, ``Matrix4f`` -> ``Array44b``);
    ``bool`` for non-arrays."""
    m = _meta("mask_t", arg)
    if m is None:
        return bool
    return _find("mask_t", m.with_(vt=dtypes.Bool, kind="tensor" if m.is_tensor else "array"))


def array_t(arg) -> type:
    """The plain-array form: special types as plain arrays of the same shape, a tensor's storage
    array; other types unchanged."""
    m = _meta("array_t", arg)
    if m is None:
        return _type(arg)
    if m.is_tensor:
        return _find("array_t", m.with_(kind="array", shape=(Dynamic,)))
    if m.is_special:
        return _find("array_t", m.with_(kind="array"))
    return _type(arg)


def leaf_t(arg) -> type:
    """The innermost type that is still an array (``Array3f`` -> ``Float``); the input's type for
    non-arrays."""
    m = _meta("leaf_t", arg)
    if m is None:
        return _type(arg)
    if m.is_tensor:
        return array_t(arg)
    return _find("leaf_t", m.with_(kind="array", shape=m.shape[-1:]))


def detached_t(arg) -> type:
    """The non-differentiable version of ``arg``'s type (``llvm.ad.Float`` -> ``llvm.Float``)."""
    m = _meta("detached_t", arg)
    if m is None or not m.is_diff:
        return _type(arg)
    return _find("detached_t", m.with_(is_diff=False))


def diff_array_t(arg) -> type:
    """The differentiable version of a JIT array type (``llvm.Float`` -> ``llvm.ad.Float``)."""
    m = _meta("diff_array_t", arg)
    if m is None or m.is_diff or not m.is_jit:
        return _type(arg)
    return _find("diff_array_t", m.with_(is_diff=True))


def replace_type_t(arg, vartype: VarType):
    """``arg``'s type with elements of ``vartype`` (``Array3u``, ``VarType.Float32`` -> ``Array3f``);
    the input's type for non-arrays."""
    m = _meta("replace_type_t", arg)
    if m is None:
        return _type(arg)
    return _find("replace_type_t", m.with_(vt=_element_type("replace_type_t", vartype)))


def reinterpret_array_t(arg, vartype: VarType):
    """The array type :func:`frostjit.reinterpret_array` produces from ``arg``'s type for
    ``vartype``; the Python type of such an element for non-arrays."""
    m = _meta("reinterpret_array_t", arg)
    if m is None:
        size_kind = VARTYPE_INFO.get(vartype)
        if size_kind is None:
            raise TypeError(f"reinterpret_array_t(): unsupported type {vartype!r}")
        return {"bool": bool, "float": float}.get(size_kind[1], int)
    return _find("reinterpret_array_t", m.with_(vt=_element_type("reinterpret_array_t", vartype)))


def replace_shape_t(arg, shape, kind: str | None = None):
    """``arg``'s type with another shape (``Array1f``, ``(3, -1)`` -> ``Array3f``), optionally of
    another kind (``"array"``, ``"matrix"``, ``"complex"``, ``"quaternion"``)."""
    m = _meta("replace_shape_t", arg)
    if m is None:
        return _type(arg)
    if kind not in (None, "array", "matrix", "complex", "quaternion"):
        raise ValueError(f"replace_shape_t(): unknown kind {kind!r} (expected 'array', 'matrix', "
                         "'complex' or 'quaternion')")
    return _find("replace_shape_t", m.with_(shape=tuple(shape), kind=kind or "array"))


def tensor_t(arg):
    """The tensor type with ``arg``'s element type and AD status; ``None`` when there is none."""
    m = _meta("tensor_t", arg)
    if m is None:
        return None
    return registry.find_type(m.with_(kind="tensor", shape=()))


def matrix_t(arg):
    """The square matrix type built from ``arg``'s type (``Array3f`` -> ``Matrix3f``, as
    ``frostjit.diag`` needs it); ``None`` when there is none (complex numbers and quaternions
    have none either, as in Dr.Jit)."""
    m = _meta("matrix_t", arg)
    if m is None or m.is_tensor or m.is_complex or m.is_quaternion or not m.shape or m.shape[0] == Dynamic:
        return None
    n, rest = m.shape[0], m.shape[1:]
    if rest and rest[0] != Dynamic:
        rest = rest[1:]         # Array34f, Array44f: the second static size becomes n
    return registry.find_type(m.with_(kind="matrix", shape=(n, n) + rest))


# -- conversions by element type ------------------------------------------------------

def _convert(name: str, arg, vartype: VarType | None, kind: str | None = None):
    """``arg``'s type with element type ``vartype``, or with the ``kind`` ("float"/"int"/"uint")
    of the same size as its own; the Python type of such an element for a non-array."""
    m = _meta(name, arg)
    if vartype is None:
        if m is None:
            raise TypeError(f"{name}(): {_type(arg).__name__} is not a frostjit array type")
        size = m.vt.itemsize
        vartype = next((v for v, (s, k) in VARTYPE_INFO.items() if s == size and k == kind), None)
        if vartype is None:
            raise TypeError(f"{name}(): there is no {size}-byte {kind} type for {m.vt.name}")
    elif m is None:
        return float if VARTYPE_INFO[vartype][1] == "float" else int
    return _find(name, m.with_(vt=_element_type(name, vartype)))


def float_array_t(arg):
    """``arg``'s type with float elements of the same size (``Array3u64`` -> ``Array3f64``)."""
    return _convert("float_array_t", arg, None, "float")


def int_array_t(arg):
    """``arg``'s type with signed integer elements of the same size (``Float64`` -> ``Int64``)."""
    return _convert("int_array_t", arg, None, "int")


def uint_array_t(arg):
    """``arg``'s type with unsigned integer elements of the same size (``Float`` -> ``UInt``)."""
    return _convert("uint_array_t", arg, None, "uint")


def float16_array_t(arg):
    """``arg``'s type with ``Float16`` elements (``float`` for non-arrays)."""
    return _convert("float16_array_t", arg, VarType.Float16)


def float32_array_t(arg):
    """``arg``'s type with ``Float32`` elements (``float`` for non-arrays)."""
    return _convert("float32_array_t", arg, VarType.Float32)


def float64_array_t(arg):
    """``arg``'s type with ``Float64`` elements (``float`` for non-arrays)."""
    return _convert("float64_array_t", arg, VarType.Float64)


def int8_array_t(arg):
    """``arg``'s type with ``Int8`` elements (``int`` for non-arrays)."""
    return _convert("int8_array_t", arg, VarType.Int8)


def int32_array_t(arg):
    """``arg``'s type with ``Int32`` elements (``int`` for non-arrays)."""
    return _convert("int32_array_t", arg, VarType.Int32)


def int64_array_t(arg):
    """``arg``'s type with ``Int64`` elements (``int`` for non-arrays)."""
    return _convert("int64_array_t", arg, VarType.Int64)


def uint8_array_t(arg):
    """``arg``'s type with ``UInt8`` elements (``int`` for non-arrays)."""
    return _convert("uint8_array_t", arg, VarType.UInt8)


def uint32_array_t(arg):
    """``arg``'s type with ``UInt32`` elements (``int`` for non-arrays)."""
    return _convert("uint32_array_t", arg, VarType.UInt32)


def uint64_array_t(arg):
    """``arg``'s type with ``UInt64`` elements (``int`` for non-arrays)."""
    return _convert("uint64_array_t", arg, VarType.UInt64)


# -- the type of an expression ----------------------------------------------------------

_PY_RANK = {bool: 0, int: 1, float: 2}


def expr_t(*args):
    """The type of an arithmetic expression over ``args`` (arrays, array types, Python numbers).

    ``expr_t(Float, UInt)`` is ``Float``, ``expr_t(Array3u, Float)`` is ``Array3f``,
    ``expr_t(1, 2.0)`` is ``float``.  A single argument is returned as it is and no argument
    gives ``None`` (Dr.Jit's behaviour).

    Raises
    ------
    TypeError
        An argument is neither an array nor a Python number, static sizes disagree
        (``Array3f`` with ``Array2f``), or backends differ.
    """
    if len(args) == 0:
        return None
    if len(args) == 1:
        return args[0]
    metas, python = [], []
    for a in args:
        tp = _type(a)
        m = meta_of(tp)
        if m is not None:
            metas.append((m, tp))
        elif tp in _PY_RANK:
            python.append(tp)
        else:
            raise TypeError(f"expr_t(): unsupported argument type {tp.__name__}")
    if not metas:
        return max(python, key=_PY_RANK.__getitem__)
    deepest, out_tp = max(metas, key=lambda mt: len(mt[0].shape))
    vt, diff = None, False
    for m, tp in metas:
        if m.backend is not deepest.backend:
            raise TypeError(f"expr_t(): cannot combine backends {deepest.backend.name} and {m.backend.name}")
        if len(m.shape) == len(deepest.shape) and m.shape != deepest.shape:
            raise TypeError(f"expr_t(): incompatible shapes of {out_tp.__name__} and {tp.__name__}")
        vt = m.vt if vt is None else dtypes.promote(vt, m.vt)
        diff = diff or m.is_diff
    for p in python:
        if p is float and not vt.is_float:
            vt = dtypes.Float32 if vt.rank < dtypes.Float32.rank else vt
        elif p is int and vt is dtypes.Bool:
            vt = dtypes.Int32
    return _find("expr_t", deepest.with_(vt=vt, is_diff=diff))
