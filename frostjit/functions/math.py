"""Elementwise mathematical functions (``fj.sin``, ``fj.fma``, ``fj.select``, ...).

Each accepts 1-D arrays, static vectors (component-wise) and Python scalars
(computed in double precision as Dr.Jit does: the op table's ``py`` implementation,
with IEEE special values, e.g. ``fj.log(0.0) == -inf``).
"""
from __future__ import annotations

import math as _m

import numpy as np

from ..array import eager_python
from ..array.eager import python_numbers
from ..array.flat import ArrayBase, apply, apply_select
from ..array.vector import VectorBase, apply_vector
from ..trace import ops
from ..trace.optable import OPS
from ..traits import mask_t
from ..tree import LeafError, map2


def _py(op: str):
    """The Python-number implementation of ``op`` (the op table's ``py``)."""
    return OPS[op].py


def _jit(x) -> bool:
    return isinstance(x, (ArrayBase, VectorBase)) or getattr(type(x), "IsTensor", False)


def _tensor(*xs):
    """The first tensor among ``xs``, else None.  Tensors (frostjit/tensor, which sits above this
    module) broadcast NumPy-style: ``t._fj_map(fn, *xs)`` applies ``fn`` to the flat arrays."""
    for x in xs:
        # the common operands first: a failed getattr raises (and catches) an AttributeError
        if not isinstance(x, _NO_TENSOR) and getattr(type(x), "IsTensor", False):
            return x
    return None


def _unary(op: str, x):
    if isinstance(x, ArrayBase):
        return apply(op, x)
    if isinstance(x, VectorBase):
        return apply_vector(op, x)
    if isinstance(x, (int, float, np.number)):
        return _py(op)(x)
    if _tensor(x) is not None:
        return x._fj_map(lambda a: apply(op, a), x, who=f"frostjit.{op}()")
    raise TypeError(f"frostjit.{op}(): unsupported argument type {type(x).__name__}")


def _integral(x) -> bool:
    t = x.Type if _jit(x) else None
    return t is not None and not t.is_float


def abs(x):  # noqa: A001
    """Absolute value, element-wise."""
    return _unary("abs", x)


def sqrt(x):
    """Square root (correctly rounded, IEEE), element-wise."""
    return _unary("sqrt", x)


def rsqrt(x):
    """Reciprocal square root ``1 / sqrt(x)``, element-wise."""
    return _unary("rsqrt", x)


def rcp(x):
    """Reciprocal ``1 / x``, element-wise."""
    return _unary("rcp", x)


def square(x):
    """``x * x``, element-wise."""
    return x * x


def cbrt(x):
    """Cube root, element-wise."""
    return _unary("cbrt", x)


def _make_math(name: str):
    """The public function of transcendental op ``name``, documented from the op table."""
    entry = OPS[name]

    def f(x):
        return _unary(name, x)
    f.__name__ = name
    f.__qualname__ = name
    b32, b64 = entry.accuracy.float32, entry.accuracy.float64
    f.__doc__ = (f"{entry.doc[0].upper()}{entry.doc[1:]}, element-wise.\n\n"
                 f"    A vectorized polynomial approximation (docs/math_accuracy.md), at most\n"
                 f"    {b32.ulp:g} ULP in Float32 on {b32.text},\n"
                 f"    {b64.ulp:g} ULP in Float64 on {b64.text}.\n"
                 f"    On a Python number: double precision, IEEE special values.\n\n"
                 f"    Parameters\n    ----------\n    x : array, static vector or float\n\n"
                 f"    Returns\n    -------\n    array, static vector or float\n")
    return f


exp = _make_math("exp")
exp2 = _make_math("exp2")
log = _make_math("log")
log2 = _make_math("log2")
sin = _make_math("sin")
cos = _make_math("cos")
tan = _make_math("tan")
asin = _make_math("asin")
acos = _make_math("acos")
atan = _make_math("atan")
sinh = _make_math("sinh")
cosh = _make_math("cosh")
tanh = _make_math("tanh")
erf = _make_math("erf")
asinh = _make_math("asinh")
acosh = _make_math("acosh")
atanh = _make_math("atanh")
lgamma = _make_math("lgamma")
erfinv = _make_math("erfinv")


def sincos(x):
    """Return ``(sin(x), cos(x))``."""
    return sin(x), cos(x)


def sincosh(x):
    """Return ``(sinh(x), cosh(x))``, element-wise (Dr.Jit's ``sincosh``).

    Parameters
    ----------
    x : array, static vector, tensor or float

    Returns
    -------
    tuple
        ``(sinh(x), cosh(x))``; inside one kernel both share their loads.
    """
    return sinh(x), cosh(x)


def atan2(y, x):
    """Four-quadrant arctangent of ``y / x``, element-wise."""
    if not (_jit(y) or _jit(x)):
        return _py("atan2")(y, x)
    return _binary("atan2", y, x)


def _binary(op, a, b):
    if not (isinstance(a, _NO_TENSOR) and isinstance(b, _NO_TENSOR)) and _tensor(a, b) is not None:
        return _tensor(a, b)._fj_map(lambda x, y: apply(op, x, y), a, b, who=f"frostjit.{op}()")
    if isinstance(a, VectorBase) or isinstance(b, VectorBase):
        return apply_vector(op, a, b)
    return apply(op, a, b)


def _rounding(op: str, x):
    if _integral(x):
        return x
    return _unary(op, x)


def floor(x):
    """Round toward -infinity, element-wise (integers are returned unchanged)."""
    return _rounding("floor", x)


def ceil(x):
    """Round toward +infinity, element-wise."""
    return _rounding("ceil", x)


def trunc(x):
    """Round toward zero, element-wise."""
    return _rounding("trunc", x)


def round(x):  # noqa: A001
    """Round to the nearest integer, ties to even (like ``numpy.rint``), element-wise."""
    return _rounding("round", x)


def isnan(x):
    """``True`` where ``x`` is NaN."""
    return _float_test("isnan", x)


def isinf(x):
    """``True`` where ``x`` is +-infinity."""
    return _float_test("isinf", x)


def isfinite(x):
    """``True`` where ``x`` is neither NaN nor infinite."""
    return _float_test("isfinite", x)


def _float_test(op, x):
    if _tensor(x) is not None:
        return x._fj_map(lambda a: _float_test(op, a), x, who=f"frostjit.{op}()")
    if _integral(x):
        # Integers are finite and never NaN: a constant, of x's size.
        value = op == "isfinite"
        if isinstance(x, VectorBase):
            return apply_vector("eq" if value else "ne", x, x)
        return x == x if value else x != x
    if isinstance(x, ArrayBase):
        return apply(op, x)
    if isinstance(x, VectorBase):
        if op != "isnan" and type(x)._family in ("complex", "quaternion"):
            # one answer per number, from its magnitude (Dr.Jit: abs(z) == inf, abs(z) < inf);
            # isnan stays per component, as in Dr.Jit
            m = abs(x)
            return m == _m.inf if op == "isinf" else m < _m.inf
        return apply_vector(op, x)
    return _py(op)(x)


def minimum(a, b):
    """Element-wise minimum, NaN-propagating like Dr.Jit's and ``numpy.minimum`` (the
    reduction :func:`frostjit.min` ignores NaN instead)."""
    if not (_jit(a) or _jit(b)):
        return _scalar_minmax("minimum", "min", a, b)
    return _binary("min", a, b)


def maximum(a, b):
    """Element-wise maximum, NaN-propagating like Dr.Jit's and ``numpy.maximum``."""
    if not (_jit(a) or _jit(b)):
        return _scalar_minmax("maximum", "max", a, b)
    return _binary("max", a, b)


def fmin(a, b):
    """Element-wise minimum ignoring NaN (C's ``fmin``, Dr.Jit's ``fmin``).

    Where exactly one operand is NaN the other is returned; both NaN give NaN; on a tie
    (``-0`` against ``+0``) the first operand.  On integers it is :func:`minimum`.  The
    gradient goes to the operand the value came from.

    Parameters
    ----------
    a, b : array, static vector, tensor or number

    Returns
    -------
    array, static vector, tensor or number
        Of the promoted type.

    Examples
    --------
    >>> fj.fmin(Float(nan, 1, nan), Float(2, nan, nan))
    [2, 1, nan]
    """
    if not (_jit(a) or _jit(b)):
        return _scalar_minmax("fmin", "fmin", a, b)
    return _binary("fmin", a, b)


def fmax(a, b):
    """Element-wise maximum ignoring NaN (C's ``fmax``, Dr.Jit's ``fmax``); see :func:`fmin`."""
    if not (_jit(a) or _jit(b)):
        return _scalar_minmax("fmax", "fmax", a, b)
    return _binary("fmax", a, b)


def _scalar_minmax(name, op, a, b):
    """Two Python numbers: NaN if either is NaN (Python's ``min`` depends on the order); a
    float if either is one, as Dr.Jit computes."""
    numbers = (int, float, np.number)
    if not (isinstance(a, numbers) and isinstance(b, numbers)):
        raise TypeError(f"frostjit.{name}(): expects arrays or numbers, got {type(a).__name__} "
                        f"and {type(b).__name__}")
    return _py(op)(a, b)


def clip(x, lo, hi):
    """Clamp ``x`` to ``[lo, hi]``: ``minimum(maximum(x, lo), hi)``."""
    return minimum(maximum(x, lo), hi)




def copysign(a, b):
    """Magnitude of ``a`` with the sign of ``b``.

    Two integer operands give an integer, as in Dr.Jit 1.5: ``copysign(Int(1, -2), Int(-1, 1))``
    is ``Int(-1, 2)`` (``abs(a)`` where ``b >= 0``, ``-abs(a)`` where ``b < 0``; an unsigned
    ``a`` is returned as it is when ``b`` is unsigned too).  Otherwise the result is floating
    point (integers are converted).
    """
    if not (_jit(a) or _jit(b)):
        return _py("copysign")(a, b)
    if _int_like(a) and _int_like(b):
        a, b = _same_int_type(a, b)
        m = abs(a)
        if not _jit(b):
            return -m if b < 0 else m
        if not b.Type.is_signed:
            return m
        return select(b < 0, -m, m)
    return _binary("copysign", a, b)


def _int_like(x) -> bool:
    """An integer array (not Bool) or a Python/NumPy integer (not bool)."""
    if _jit(x):
        t = x.Type
        return not t.is_float and not t.is_bool
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _same_int_type(a, b):
    """Two flat integer arrays of different types converted to their promoted type
    (``Int`` and ``Int64``: ``Int64``), as an arithmetic operator would."""
    if isinstance(a, ArrayBase) and isinstance(b, ArrayBase) and a.Type is not b.Type:
        t = type(a + b)         # (the promotion rule of arithmetic; a node nothing uses)
        a = a if type(a) is t else t(a)
        b = b if type(b) is t else t(b)
    return a, b


def sign(x):
    """Dr.Jit's sign of ``x``, element-wise: ``1`` where ``x >= 0`` (``-0.0`` and ``0`` included),
    ``-1`` elsewhere (negative numbers and NaN), in ``x``'s type.

    Unlike ``numpy.sign`` there is no 0: ``x / sign(x)`` and ``mulsign`` never lose ``x``
    (Dr.Jit 1.5's definition; the result carries no gradient).
    """
    t = type(x)
    if not _jit(x):
        return t(1) if x >= 0 else t(-1)
    return select(x >= 0, t(1), t(-1))


def fma(a, b, c):
    """Fused multiply-add ``a * b + c`` with a single rounding."""
    if isinstance(a, ArrayBase) and isinstance(b, _FLAT_OR_NUMBER) and isinstance(c, _FLAT_OR_NUMBER):
        # (the hot case, 1-D arrays and numbers: what the checks below conclude, in three tests;
        # cross(), dot() and traced expressions call fma on Float components)
        return apply("fma", a, b, c)
    if not (_jit(a) or _jit(b) or _jit(c)):
        return python_numbers("fma", (a, b, c))     # (a fast path for float32 factors)
    if not (isinstance(a, _NO_TENSOR) and isinstance(b, _NO_TENSOR) and isinstance(c, _NO_TENSOR)) \
            and _tensor(a, b, c) is not None:
        return _tensor(a, b, c)._fj_map(fma, a, b, c, who="frostjit.fma()")
    if any(isinstance(v, VectorBase) for v in (a, b, c)):
        return apply_vector("fma", a, b, c)
    return apply("fma", a, b, c)


def lerp(a, b, t):
    """Linear interpolation ``a + (b - a) * t``, computed as ``fma(b, t, fma(-a, t, a))``."""
    if not (_jit(a) or _jit(t)):
        return fma(b, t, a - a * t)
    # negate the float operand when ``a`` is unsigned: -a would wrap before the promotion to
    # float (lerp(UInt32(3), UInt32(3), 0.5) gave 2**31); else -a, as Dr.Jit (which NaN a NaN
    # ``t`` gives: +NaN for t = +NaN, r16)
    t_float = isinstance(t, float) or (_jit(t) and t.Type.is_float)
    unsigned = _jit(a) and not a.Type.is_float and not a.Type.is_signed
    return fma(b, t, fma(a, -t, a) if t_float and unsigned else fma(-a, t, a))


def select(condition, a, b):
    """Element-wise ``a if condition else b`` (``condition`` is a Bool array or a bool).

    ``a`` and ``b`` may be PyTrees of the same structure (Dr.Jit): the result has that
    structure, each array selected lane by lane; equal Python values are kept, differing
    numbers become arrays, other differing Python values raise ``TypeError``.
    """
    if isinstance(condition, ArrayBase) and (isinstance(a, ArrayBase) or isinstance(b, ArrayBase)):
        # (the hot case: a mask and 1-D arrays of one class or a number; what the general
        # path below would conclude, without its PyTree, tensor and special-array checks)
        out = apply_select(condition, a, b)
        if out is not None:
            return out
    if isinstance(condition, (bool, np.bool_)) and not (_is_array(a) or _is_array(b)):
        return a if condition else b
    if type(condition) in (list, tuple):
        condition = _sequence_mask(condition, a, b)
    # (a Python bool beside an array selects as a mask would: select(True, 1, ArrayXf(5, 6)) is
    # ArrayXf(1, 1), the operands' promoted type, as in Dr.Jit)
    if not (isinstance(condition, _NO_TENSOR) and isinstance(a, _NO_TENSOR) and isinstance(b, _NO_TENSOR)) \
            and _tensor(condition, a, b) is not None:
        return _tensor(condition, a, b)._fj_map(_select, condition, a, b, who="frostjit.select()")
    # a Python sequence or a NumPy array against an array is an array (Dr.Jit), not a PyTree:
    # the lane-wise door converts it, promoted by its numbers or typed by its dtype
    # (select(ArrayXb, ArrayXf, np.array([5., 6.])) is an ArrayXf64, as in Dr.Jit)
    if (type(b) in _ARRAY_LIKE and isinstance(a, (ArrayBase, VectorBase))) or \
            (type(a) in _ARRAY_LIKE and isinstance(b, (ArrayBase, VectorBase))):
        return _select(condition, a, b)
    if not (isinstance(a, _JIT_OR_NUMBER) and isinstance(b, _JIT_OR_NUMBER)):     # PyTrees, None, strings, ...
        return map2(a, b, lambda x, y: _select_leaf(condition, x, y), who="select")
    a, b = _as_special(a, b), _as_special(b, a)
    return _select(condition, a, b)


def _sequence_mask(condition, a, b):
    """A list/tuple as ``select``'s condition: the mask type of the array branch, its entries bools
    or masks (Dr.Jit: ``select([True, False], ArrayXf(1, 2), ArrayXf(3, 4))`` is ``ArrayXf(1, 4)``,
    ``select([m0, m1], Array2f, Array2f)`` takes a mask per component); numbers and what the mask
    type does not take raise, as Dr.Jit's "Could not promote type 'list'" does.  Without an array
    branch the sequence is left to the PyTree rules."""
    arr = a if _is_array(a) else b if _is_array(b) else None
    if arr is None:
        return condition
    mask = mask_t(type(arr))
    try:
        if any(isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in condition):
            raise TypeError("numbers are no mask values")
        return mask(list(condition)) if getattr(mask, "IsTensor", False) else mask(*condition)
    except (TypeError, ValueError) as e:
        raise TypeError(f"frostjit.select(): cannot convert the condition {condition!r} to {mask.__name__} "
                        f"(the mask type of {type(arr).__name__}): {e}") from e


def _as_special(x, other):
    """``x`` as the complex number / quaternion / matrix ``other`` where ``x`` is a number or a
    1-D array: ``x + 0i`` or ``x`` times the identity (Dr.Jit), not ``x`` in every part
    (select(False, Complex2f(1, 2), 1) was 1+1i)."""
    if isinstance(other, VectorBase) and type(other)._family in ("complex", "quaternion", "matrix") \
            and (isinstance(x, (ArrayBase, int, float)) and not isinstance(x, (bool, np.bool_))):
        if isinstance(x, ArrayBase) and x._is_ad and not other.__meta__.is_diff:
            return x        # (a gradient-carrying array is not detached into a plain matrix)
        return type(other)(x)
    return x


def floor_mod(i, n: int):
    """``i mod n`` in ``[0, n)`` for a signed integer array ``i`` and a positive Python ``n``
    (Python's and NumPy's ``%``; the arrays' ``%`` is C's, as in Dr.Jit: ``-1 % n == -1``).
    Wrapping texel and sample indices use it."""
    r = i % n
    return select(r < 0, r + n, r)


def _select(condition, a, b):
    if any(isinstance(v, VectorBase) for v in (condition, a, b)):
        return apply_vector("select", condition, a, b)
    return apply("select", condition, a, b)


def _select_leaf(condition, x, y):
    """``select`` of two matching leaves of PyTrees."""
    if _jit(x) or _jit(y) or (isinstance(x, _NUMBERS) and isinstance(y, _NUMBERS) and x != y):
        return _select(condition, x, y)
    try:
        same = type(x) is type(y) and (x is y or bool(x == y))
    except (TypeError, ValueError):         # e.g. NumPy arrays: no single truth value
        same = False
    if not same:
        raise LeafError(f"cannot choose lane by lane between the Python values {x!r} and {y!r}")
    return x


_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)
_ARRAY_LIKE = (list, tuple, np.ndarray)
_NO_TENSOR = (ArrayBase, VectorBase) + _NUMBERS
_FLAT_OR_NUMBER = (ArrayBase,) + _NUMBERS


def _is_array(x) -> bool:
    """A JIT or scalar-backend array or a tensor (what a Python bool condition selects between lane-wise)."""
    return isinstance(x, (ArrayBase, VectorBase)) or getattr(type(x), "IsTensor", False)


_JIT_OR_NUMBER = (ArrayBase, VectorBase) + _NUMBERS      # what select() takes without walking a PyTree


def reinterpret_array(dtype, value):
    """Reinterpret the bits of ``value`` as type ``dtype`` (same bit width), like a C bit cast."""
    if isinstance(value, VectorBase) and not value.IsJIT and value.Depth == 1:
        # The scalar backend: the numbers' bits in their element type, seen as dtype's.
        out = eager_python.bitcast(type(value)._leaf._vt, dtype._leaf._vt, value._c)
        if out is not None:
            return dtype._from_components(out)
        bits = np.array(value._c, dtype=type(value)._leaf._vt.np_dtype)
        return dtype._from_components(bits.view(dtype._leaf._vt.np_dtype).tolist())
    if isinstance(value, VectorBase):
        comps = [reinterpret_array(dtype._elem, c) for c in value]
        return dtype._from_components(comps)
    if _tensor(value) is not None:
        return dtype._from_array(reinterpret_array(dtype._array_type, value.array), value.shape)
    if not isinstance(value, ArrayBase):
        raise TypeError(f"reinterpret_array(): expected a JIT array, got {type(value).__name__}")
    node = ops.bitcast(value._node, dtype._vt)
    return dtype._from_node(node)


def _without_grad(a):
    """A new handle on ``a``'s value that carries no derivative (the engine's view of a detach)."""
    return type(a)._from_node(a._node)


def _half_epsilon(x) -> float:
    """Dr.Jit's ``epsilon`` of ``x``'s type: half the spacing of the floats just above 1."""
    return float(np.finfo(x._vt.np_dtype).eps) / 2


def _grad_safe(f, x):
    """``f(x)`` for a differentiable flat array, component-wise for static vectors, else None."""
    if isinstance(x, VectorBase):
        # (the leaf class: components may be nested arrays, or numbers on the scalar backend)
        if not (x._c and type(x)._leaf._is_ad and type(x)._leaf._vt.is_float):
            return None
        return type(x)._from_components([_grad_safe(f, c) if isinstance(c, VectorBase) else f(c) for c in x._c])
    if isinstance(x, ArrayBase) and x._is_ad and x._vt.is_float:
        return f(x)
    if _tensor(x) is not None:          # element-wise: the same function on the flat array
        r = _grad_safe(f, x.array)
        return None if r is None else x._fj_map(lambda a: r, x)
    return None


def _safe_sqrt_ad(x):
    # Derivative 1 / (2 sqrt(x)) where x > epsilon and 0 below, finite at 0 (Dr.Jit's values).
    return sqrt(select(x > _half_epsilon(x), x, _without_grad(maximum(x, 0.0))))


def safe_sqrt(x):
    """``sqrt(maximum(x, 0))``: no NaN for slightly negative inputs.

    Under AD the derivative is finite: ``1 / (2 sqrt(x))`` where ``x`` exceeds
    ``epsilon`` (2**-24 for Float32, 2**-53 for Float64), 0 below, as in Dr.Jit.
    """
    if _special_number(x):
        return sqrt(_clamp_parts(x, lambda c, real: maximum(c, 0.0)))
    out = _grad_safe(_safe_sqrt_ad, x)
    return sqrt(maximum(x, 0.0)) if out is None else out


def _special_number(x) -> bool:
    """Whether ``x`` is a complex number or a quaternion (whose functions are not per component)."""
    return isinstance(x, VectorBase) and type(x)._family in ("complex", "quaternion")


def _clamp_parts(x, clamp):
    """The complex number / quaternion ``x`` with ``clamp(part, is_real)`` of each part.  Dr.Jit's
    safe functions clamp per part, a bound ``b`` standing for ``b + 0i``: safe_sqrt(-2+0.5i) is
    sqrt(0.5i), safe_asin(1+3i) is asin(1)."""
    parts = list(x)
    real = 0 if type(x)._family == "complex" else len(parts) - 1
    return type(x)(*[clamp(c, k == real) for k, c in enumerate(parts)])


def _unit_part(c, real: bool):
    return clip(c, -1.0, 1.0) if real else clip(c, 0.0, 0.0)


def _clip_unit_ad(x):
    # x itself strictly inside (-1 + eps, 1 - eps] (so the derivative flows), else the clamped
    # value without a derivative: asin'/acos' stay finite at and beyond +-1 (Dr.Jit's values).
    eps = _half_epsilon(x)
    inside = (x > eps - 1.0) & (x <= 1.0 - eps)
    return select(inside, x, _without_grad(clip(x, -1.0, 1.0)))


def safe_asin(x):
    """``asin`` of ``x`` clamped to [-1, 1].

    Under AD the derivative is that of ``asin`` inside ``(-1 + eps, 1 - eps]``
    and 0 outside, so it stays finite at the domain edges (Dr.Jit's values).
    """
    if _special_number(x):
        return asin(_clamp_parts(x, _unit_part))
    out = _grad_safe(lambda c: asin(_clip_unit_ad(c)), x)
    return asin(clip(x, -1.0, 1.0)) if out is None else out


def safe_acos(x):
    """``acos`` of ``x`` clamped to [-1, 1] (derivative finite at +-1, as :func:`safe_asin`)."""
    if _special_number(x):
        return acos(_clamp_parts(x, _unit_part))
    out = _grad_safe(lambda c: acos(_clip_unit_ad(c)), x)
    return acos(clip(x, -1.0, 1.0)) if out is None else out


def hypot(a, b):
    """``sqrt(a*a + b*b)`` without overflow or underflow in the squares.

    Computed as ``hi * sqrt(1 + (lo/hi)**2)`` with ``hi = max(|a|, |b|)``.  Where
    ``hi`` is 0, infinite or NaN the result is ``|a| + |b|`` (0, inf, NaN), so
    under AD the derivative at the origin is 0, as in Dr.Jit.
    """
    if not (_jit(a) or _jit(b)):
        return _m.hypot(a, b)
    ax, ay = abs(a), abs(b)
    hi, lo = maximum(ax, ay), minimum(ax, ay)
    r = lo / hi
    return select((hi > 0) & (hi < _m.inf), hi * sqrt(fma(r, r, 1.0)), ax + ay)


def power(a, b):
    """``a ** b``; on two Python numbers in double precision with IEEE special values, as
    Dr.Jit (``power(2, 3) == 8.0``, ``power(-8.0, 1/3)`` is NaN, not a complex number)."""
    if not (_jit(a) or _jit(b)):
        return _py("pow")(a, b)
    return a ** b


def log10(x):
    """Base-10 logarithm (``log2(x) * log10(2)``)."""
    return log2(x) * 0.30102999566398119521


def deg2rad(x):
    """Degrees to radians."""
    return x * (_m.pi / 180.0)


def rad2deg(x):
    """Radians to degrees."""
    return x * (180.0 / _m.pi)
