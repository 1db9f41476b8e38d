"""Array creation: ``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``opaque``."""
from __future__ import annotations

import dataclasses
import math
import operator
import typing

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..array import registry
from ..backend import current_backend
from ..errors import ShapeMismatchError
from ..schedule import memops
from ..trace import ops
from ..trace.dtypes import Float64, UInt32, Int64
from ..trace.state import state
from ..tree import leaves, transform
from .evaluation import make_opaque, width
from .math import select



def _is_tensor_type(dtype) -> bool:
    """A tensor type (frostjit/tensor sits above this module: its classes carry the hooks)."""
    return isinstance(dtype, type) and not issubclass(dtype, (ArrayBase, VectorBase)) \
        and getattr(dtype, "IsTensor", False)


def _is_scalar_element(dtype) -> bool:
    """A 1-D type of the scalar backend: Python's ``float``/``int``/``bool`` (``frostjit.scalar.Float``)
    or the element class of a scalar static array (its components are numbers)."""
    return dtype in (float, int, bool) or (isinstance(dtype, type) and not issubclass(dtype, VectorBase)
                                          and getattr(dtype, "IsJIT", True) is False)


def _is_scalar_dynamic(dtype) -> bool:
    """``frostjit.scalar.ArrayXf`` and friends: the scalar backend's 1-D arrays of numbers."""
    return issubclass(dtype, VectorBase) and dtype._n is None and not dtype.IsJIT and dtype.Depth == 1


def _one_d(dtype, vt):
    """The 1-D type of ``dtype``'s backend with element type ``vt`` (the scalar backend: ArrayX)."""
    if issubclass(dtype, VectorBase):
        return registry.array_type(registry.flat_type(dtype._leaf._backend, vt), None, "dynamic")
    return registry.flat_type(dtype._backend, vt)


def _check_type(who, dtype):
    if not (isinstance(dtype, type) and issubclass(dtype, (ArrayBase, VectorBase))):
        raise TypeError(f"{who}(): 'dtype' must be a frostjit array type (e.g. Float), got {dtype!r}")


def _is_struct_type(dtype) -> bool:
    """A PyTree class with fixed field types: a ``DRJIT_STRUCT`` class or a dataclass."""
    return isinstance(dtype, type) and not issubclass(dtype, (ArrayBase, VectorBase)) and (
        isinstance(getattr(dtype, "DRJIT_STRUCT", None), dict) or dataclasses.is_dataclass(dtype))


def _make_struct(who, dtype, make, plain_default: bool):
    """An instance of the struct type ``dtype`` whose fields are ``make(field_type)`` (Dr.Jit:
    a ``DRJIT_STRUCT`` class is default-constructed, then its fields are set; a dataclass is
    constructed from its fields).  A field of a plain Python type (``str``, ``int``, ``list``)
    is default-constructed where ``plain_default`` (zeros, empty: Dr.Jit gives ``''``, ``0``,
    ``[]``) and refused otherwise (``ones``, ``full(.., 2)``: Dr.Jit raises too)."""
    name = dtype.__name__

    def field_value(field, t):
        if not _is_plain_python_type(t):
            return make(t)
        if not plain_default:
            raise TypeError(f"{who}(): field {name}.{field} has the plain Python type {t.__name__}, which "
                            f"only zeros() and empty() can fill (with {t.__name__}())")
        try:
            return t()
        except TypeError as e:
            raise TypeError(f"{who}(): field {name}.{field}: cannot default-construct {t.__name__} ({e})") from e

    struct = getattr(dtype, "DRJIT_STRUCT", None)
    if isinstance(struct, dict):
        try:
            obj = dtype()
        except TypeError as e:
            raise TypeError(f"{who}(): the DRJIT_STRUCT class {name} must be constructible without "
                            f"arguments ({e})") from e
        for field, t in struct.items():
            setattr(obj, field, field_value(field, t))
        return obj
    hints = typing.get_type_hints(dtype)          # resolves string annotations (PEP 563)
    return dtype(**{f.name: field_value(f.name, hints.get(f.name, f.type))
                    for f in dataclasses.fields(dtype) if f.init})


def _is_plain_python_type(t) -> bool:
    """A struct field type that holds no arrays: ``str``, ``int``, ``list``, a user class."""
    return (isinstance(t, type) and not issubclass(t, (ArrayBase, VectorBase)) and not _is_tensor_type(t)
            and not _is_struct_type(t))


def _is_zero(value) -> bool:
    """``full(dtype, value)`` fills with zeros (``zeros()`` is ``full(dtype, 0)``)."""
    return isinstance(value, (int, float)) and value == 0


def _static_dims(dtype) -> tuple:
    """The static sizes of an array type, outermost first (``Array34f``: ``(3, 4)``; 1-D: ``()``)."""
    if isinstance(dtype, type) and issubclass(dtype, VectorBase):
        return (dtype._n,) + _static_dims(dtype._elem)
    return ()


def _check_size(who, size, dtype=None):
    """The number of lanes that ``shape`` asks for: an int >= 0, a 1-tuple for a 1-D type, or
    the static sizes followed by the width for a static array type (``(3, n)`` for an
    ``Array3f``, ``(2, 2, n)`` for an ``Array22f``: Dr.Jit's shape sequences)."""
    if isinstance(size, (tuple, list)):
        dims = _static_dims(dtype)
        if len(size) == len(dims) + 1 and not any(hasattr(s, "__symbolic_size__") for s in size[:-1]) \
                and tuple(size[:-1]) == dims:
            size = size[-1]
        else:
            name = dtype.__name__ if isinstance(dtype, type) else "this type"
            want = "(" + "".join(f"{d}, " for d in dims) + ("n)" if dims else "n,)")
            raise ShapeMismatchError(f"{who}(): the shape {tuple(size)!r} does not fit {name} (expected "
                                     f"{want} or an int): the provided \"shape\" and \"dtype\" parameters "
                                     "are incompatible.")
    if hasattr(size, "__symbolic_size__") and isinstance(size, int):
        n = size        # a width inside a frozen function stays symbolic; the check below is guarded
    else:
        try:
            n = operator.index(size)    # not int(): a float size such as 2.5 must not truncate
        except TypeError:
            raise TypeError(f"{who}(): the size must be an integer, got {type(size).__name__} {size!r}") from None
    if n < 0:
        raise ValueError(f"{who}(): the size must be >= 0, got {n}")
    return n


def _sized_literal(who, dtype, value, size):
    if not hasattr(value, "__symbolic_size__"):
        if not isinstance(value, (bool, int, float, np.number)):
            raise TypeError(f"{who}(): 'value' must be a Python or NumPy scalar, got {type(value).__name__}")
        value = ops.convert_scalar(dtype._vt, value, f"{who}({dtype.__name__})")
    rec = state.recorder
    if rec is not None and hasattr(size, "__symbolic_size__"):
        return dtype._from_node(rec.sized_literal(dtype._vt, value, size))
    return dtype._from_node(ops.literal(dtype._vt, value, int(size)))


def _dynamic_shape(who, dtype, shape) -> tuple:
    """``(components, width)`` of a dynamic array type's shape: an int is one component of that
    width, ``(n, width)`` n components (Dr.Jit)."""
    if isinstance(shape, (tuple, list)):
        if len(shape) != 2:
            raise ValueError(f"{who}(): the shape {tuple(shape)!r} does not fit {dtype.__name__} "
                             "(expected (n, width) or an int)")
        return _check_size(who, shape[0]), _check_size(who, shape[1])
    return 1, _check_size(who, shape)


def full(dtype, value, shape=1):
    """An array of ``shape`` elements all equal to ``value`` (a literal: no memory until needed).

    For a tensor type, ``shape`` is the tensor's shape (an int or a sequence of ints).  For a
    static array type every entry is ``value`` (a matrix too); a complex number or quaternion
    gets ``value`` as its real part (Dr.Jit: ``full(Complex2f, 3)`` is ``3 + 0j``).  A dynamic
    type takes ``(components, width)`` or a width (one component).  A ``DRJIT_STRUCT`` class or
    a dataclass gets each field filled this way (as Dr.Jit)."""
    if _is_tensor_type(dtype):
        return dtype._fj_full(value, shape)
    if _is_scalar_element(dtype):
        return dtype(value)         # the scalar backend: a Python number (Dr.Jit ignores the shape)
    if not (isinstance(dtype, type) and issubclass(dtype, (ArrayBase, VectorBase))):   # (inline: a hot path)
        if _is_struct_type(dtype):
            return _make_struct("full", dtype, lambda t: full(t, value, shape),
                                plain_default=_is_zero(value))
        _check_type("full", dtype)
    if _is_scalar_dynamic(dtype):
        # The scalar backend's ArrayXf: the shape is the number of entries (Dr.Jit).
        n = _check_size("full", shape[0] if isinstance(shape, (tuple, list)) and len(shape) == 1 else shape)
        return dtype._from_components([dtype._elem(value)] * n)
    if issubclass(dtype, VectorBase) and not dtype.IsJIT:
        shape = 1                   # a scalar static array has no width (Dr.Jit ignores it)
    if issubclass(dtype, VectorBase) and dtype._n is None:
        n, size = _dynamic_shape("full", dtype, shape)
        return dtype._from_components([full(dtype._elem, value, size) for _ in range(n)])
    size = _check_size("full", shape, dtype)
    if issubclass(dtype, VectorBase):
        if dtype.IsComplex or dtype.IsQuaternion:
            # value as the real part (first of a complex number, last of a quaternion), zeros
            # elsewhere, every part with ``size`` lanes (as Dr.Jit: a one-lane imaginary part
            # would be one AD variable whose gradient sums the lanes)
            parts = [full(dtype._elem, 0, size) for _ in range(dtype._n)]
            parts[0 if dtype.IsComplex else -1] = full(dtype._elem, value, size)
            return dtype(*parts)
        return dtype._from_components([full(dtype._elem, value, size) for _ in range(dtype._n)])
    return _sized_literal("full", dtype, value, size)


def zeros(dtype, shape=1):
    """An array of zeros."""
    return full(dtype, 0, shape)


def ones(dtype, shape=1):
    """An array of ones."""
    return full(dtype, 1, shape)


def empty(dtype, shape=1):
    """An uninitialized array (its contents are unspecified until written); a struct type
    (``DRJIT_STRUCT``, dataclass) gets each field made this way."""
    if _is_tensor_type(dtype):
        return dtype._fj_empty(shape)
    if _is_scalar_element(dtype) or (isinstance(dtype, type) and issubclass(dtype, VectorBase) and not dtype.IsJIT):
        return zeros(dtype, shape)      # the scalar backend: nothing to leave uninitialized
    if _is_struct_type(dtype):
        return _make_struct("empty", dtype, lambda t: empty(t, shape), plain_default=True)
    _check_type("empty", dtype)
    if issubclass(dtype, VectorBase) and dtype._n is None:
        n, size = _dynamic_shape("empty", dtype, shape)
        return dtype._from_components([empty(dtype._elem, size) for _ in range(n)])
    size = _check_size("empty", shape, dtype)
    if issubclass(dtype, VectorBase):
        return dtype._from_components([empty(dtype._elem, size) for _ in range(dtype._n)])
    if hasattr(size, "__symbolic_size__"):
        return zeros(dtype, size)
    return dtype._from_node(ops.data(dtype._vt, current_backend().alloc(dtype._vt, size), size))


_NO_VALUE = object()


def opaque(dtype, value=_NO_VALUE, shape=1):
    """An opaque array: stored in memory, so its values are never folded into kernels.

    Two forms, as Dr.Jit 1.5's: ``opaque(arg)`` returns an opaque copy of an array, tensor or
    PyTree (each array a new handle, evaluated; grad tracking carries over, Python values are
    returned as they are), and ``opaque(dtype, value, shape=1)`` is :func:`full` made opaque.

    Parameters
    ----------
    dtype : type, or array / tensor / PyTree
        The array type of the constant-valued form, or what to copy (one argument).
    value : int, float or bool
        The constant (constant-valued form).
    shape : int or sequence of int
        As for :func:`full`.

    Raises
    ------
    TypeError
        ``opaque(T)`` with a type and no value.

    Examples
    --------
    >>> i = fj.opaque(Int(0))       # a counter that does not recompile kernels as it changes
    >>> fj.opaque(Float, 2, 3)
    [2, 2, 2]
    """
    if value is _NO_VALUE:
        if isinstance(dtype, type):
            raise TypeError(f"opaque(): expected an array, tensor, or PyTree, but received a type object "
                            f"({dtype.__name__}); did you mean opaque(dtype, value, shape)?")
        # fj.copy (new handles: writes into the result leave the argument alone)
        r = transform(dtype, lambda a: type(a)(a), who="opaque", root="arg")
        make_opaque(r)
        for a in leaves(r):
            if a._ad is None and a._node.op == "data":
                # storage of its own, as Dr.Jit's: a new variable (index), not a shared buffer
                a._node = memops.copy(a._node)
        return r
    r = full(dtype, value, shape)
    make_opaque(r)
    return r


def opaque_width(arg):
    """The width of ``arg`` (:func:`width`) as an opaque 1-element ``UInt32`` array.

    Inside :func:`freeze` the value follows the width of each call (a replay at another width
    computes with that width), which a Python ``int`` from :func:`width` folded into a kernel
    would not do where the function is not re-traced. The array type is the ``UInt32`` of
    ``arg``'s first array (its backend, AD or not), as Dr.Jit 1.5.

    Parameters
    ----------
    arg : array or PyTree
        Must hold at least one JIT array.

    Raises
    ------
    TypeError
        ``arg`` holds no JIT array (Dr.Jit 1.5 fails with an internal error there).
    """
    arrays = leaves(arg)
    if not arrays:
        raise TypeError(f"opaque_width(): the argument ({type(arg).__name__}) holds no JIT array, so it has no "
                        "backend to make the width array on")
    first = arrays[0]
    cls = registry.flat_type(first._backend, UInt32, first._is_ad)
    return opaque(cls, width(arg))


def _counter(dtype, size):
    """The lane index 0, 1, ..., size-1 as ``dtype``."""
    if issubclass(dtype, VectorBase):       # the scalar backend's ArrayX types
        return dtype._from_components([dtype._elem(i) for i in range(int(size))])
    rec = state.recorder
    if rec is not None and hasattr(size, "__symbolic_size__"):
        node = rec.sized_counter(size)
    else:
        n = int(size)
        idx_vt = UInt32 if n <= 2**32 else Int64
        node = ops.literal(idx_vt, 0, 1) if n == 1 else ops.make("counter", idx_vt, (), size=n)
    idx_cls = registry.flat_type(dtype._backend, node.vt)
    return dtype(idx_cls._from_node(node)) if dtype._vt is not node.vt else dtype._from_node(node)


def arange(dtype, start=None, stop=None, step=1, *, size=None):
    """``[start, start + step, ...)`` up to ``stop`` (exclusive), like ``numpy.arange``.

    ``arange(T, n)`` (or ``arange(T, size=n)``) gives ``0, 1, ..., n-1``.  Integer types need
    integer arguments, and every value must fit the type; float types also take float
    arguments (NumPy's rule: ``ceil((stop - start) / step)`` values ``start + i * delta``,
    where ``delta`` is ``(start + step) - start`` rounded to the type).  ``stop <= start``
    gives an empty array, as in NumPy.

    Raises
    ------
    TypeError
        A float argument for an integer type, or a static vector type.
    ValueError
        ``step == 0`` or a non-finite argument.
    OverflowError
        A value outside an integer type's range (``arange(UInt32, -3, 1)``).
    """
    if _is_tensor_type(dtype):
        return dtype._fj_arange(start, stop, step, size=size)
    _check_type("arange", dtype)
    if issubclass(dtype, VectorBase) and not _is_scalar_dynamic(dtype):
        raise TypeError(f"arange(): expects a 1-D array type such as UInt32 or Float, got {dtype.__name__}")
    if size is not None:
        if start is not None or stop is not None:
            raise TypeError("arange(): pass either 'size' or 'start'/'stop', not both")
        start = size
    if stop is None:
        start, stop = 0, (start if start is not None else 0)
    if hasattr(stop, "__symbolic_size__") or hasattr(start, "__symbolic_size__"):
        # A width inside a frozen function: the same count as the plain path (empty when
        # stop <= start), in symbolic arithmetic, so the recording follows the width.
        if step == 0:
            raise ValueError("arange(): 'step' must be non-zero")
        if type(start) is int and start == 0 and type(step) is int and step == 1:
            # (the count is ``stop`` itself, the same symbol as the width it came from: no
            # ceiling arithmetic whose new symbol would need guards against it)
            n = stop if stop >= 0 else 0
        elif isinstance(start, int) and isinstance(stop, int) and isinstance(step, int):
            n = max(0, -(-(stop - start) // step))
        else:
            n = max(0, math.ceil((stop - start) / step))
        n = _check_size("arange", n)
        if n == 0:      # (no arithmetic on an empty counter: an empty operand does not broadcast)
            return dtype()
        r = _counter(dtype, n)
        if step != 1:
            r = r * step
        return r + start if not (isinstance(start, int) and start == 0) else r
    vt = dtype._leaf._vt if issubclass(dtype, VectorBase) else dtype._vt
    if vt.is_float:
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool) or not math.isfinite(v):
                raise (ValueError if isinstance(v, (float, np.floating)) else TypeError)(
                    f"arange(): '{name}' must be a finite number, got {v!r}")
        if step == 0:
            raise ValueError("arange(): 'step' must be non-zero")
        n = max(0, math.ceil((stop - start) / step))
        # NumPy stores start and start + step (rounded to the type), then fills on from them.
        first, second = vt.np_dtype.type(start), vt.np_dtype.type(start + step)
        delta = second - first
        if n == 0:
            return dtype()
        idx = _counter(dtype, _check_size("arange", n))
        r = idx * float(delta) if delta != 1 else idx
        r = r + float(first) if first != 0 else r
        if n > 1 and first + delta != second:
            r = select(idx == 1, float(second), r)
        return r
    try:
        start, stop, step = (operator.index(v) for v in (start, stop, step))
    except TypeError:
        raise TypeError(f"arange(): {dtype.__name__} needs integer start/stop/step, got "
                        f"({start!r}, {stop!r}, {step!r})") from None
    if step == 0:
        raise ValueError("arange(): 'step' must be non-zero")
    n = max(0, -(-(stop - start) // step))
    if n:
        who = f"arange({dtype.__name__})"
        ops.convert_scalar(vt, start, who)                    # the first and the last value must fit
        ops.convert_scalar(vt, start + (n - 1) * step, who)
    if n == 0:
        return dtype()
    r = _counter(dtype, _check_size("arange", n))
    if step != 1:
        r = r * step
    return r + start if start != 0 else r


def linspace(dtype, start, stop, num, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop``, like ``numpy.linspace``.

    Computed in double precision as NumPy does (``start + i * step``, then rounded to
    ``dtype``); with ``endpoint=True`` (default) the last value is exactly ``stop``, else
    the values stop one step short of it.

    Parameters
    ----------
    dtype : type
        A 1-D floating point array type (``Float``, ``Float64``).
    start, stop : float
    num : int
        Number of values (>= 0).
    endpoint : bool
        Include ``stop`` (divide the interval into ``num - 1`` steps) or not (``num`` steps).
    """
    if _is_tensor_type(dtype):
        return dtype._fj_linspace(start, stop, num, endpoint)
    _check_type("linspace", dtype)
    if not (issubclass(dtype, ArrayBase) or _is_scalar_dynamic(dtype)) or \
            not (dtype._leaf._vt if issubclass(dtype, VectorBase) else dtype._vt).is_float:
        raise TypeError(f"linspace(): 'dtype' must be a 1-D floating point type such as Float, got "
                        f"{dtype.__name__}")
    num = _check_size("linspace", num)
    if num == 0:    # (no arithmetic on an empty counter: an empty operand does not broadcast)
        return dtype()
    steps = (num - 1) if endpoint else num
    rec = state.recorder
    if rec is not None and hasattr(num, "__symbolic_size__"):
        steps = rec.symbolic_max(steps, 1)
    else:
        steps = max(steps, 1)
    step = (stop - start) / steps
    f64 = _one_d(dtype, Float64)
    i = _counter(f64, num)
    y = i * step + start            # two roundings in double, as numpy.linspace
    if endpoint:                    # numpy.linspace: the last value is stop itself (when num > 1)
        y = select(i == steps, float(stop) if not hasattr(stop, "__symbolic_size__") else stop, y)
    return y if f64 is dtype else dtype(y)
