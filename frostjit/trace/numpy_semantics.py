"""The NumPy reference semantics of every operation: the specification backends implement.

The op table (:mod:`frostjit.trace.optable`) points each operation at one function
here.  They are the *spec* of what a kernel computes, written over NumPy arrays so a
reader can run them, the generated tests can compare a backend against them, and the
NumPy reference backend can interpret a ``KernelSpec`` with them.

Contract of a lane-wise reference ``ref(vt, *args)``
---------------------------------------------------
* ``vt`` is the result's :class:`~frostjit.trace.dtypes.VarType` (``Instr.vt``);
  the result is a new array of dtype ``vt.np_dtype``.
* ``args`` are NumPy arrays (or NumPy scalars) whose dtypes are the operand types that
  the op's type rule gives after promotion (the types of the kernel instruction's
  operands: a comparison of two ``Float32`` takes two ``float32`` arrays; ``select`` a
  ``bool`` condition and two arrays of ``vt``; a bitwise op with a mask a ``bool``
  second operand).  Lengths are equal or 1 (size-1 operands broadcast, NumPy's rule).
* Vectorized, exact, and total: no Python loop over elements (except the rare fallback
  lanes of :func:`fma` on ``float64``), no warning and no exception for any input
  value, inputs are never modified.
* What a backend must match:

  - bit for bit, including the sign of zero, except that any NaN matches any NaN
    (payload and sign of a NaN are unspecified);
  - except on lanes where the op's ``unspecified(vt, *args)`` is true (float to
    integer conversions out of range or of NaN: the hardware decides);
  - transcendental functions (ops with an ``accuracy``) are computed here in
    ``float64`` (or better) and rounded once: a backend must stay within the op's
    documented bound in ULP over the documented domain and match the special values
    (NaN, +-inf, +-0 in and out, and what the C99 functions give at their poles).

Integer semantics (also NumPy's, where NumPy defines them): arithmetic wraps around;
``//`` and ``%`` are C's (as in Dr.Jit 1.5): the quotient rounds toward zero and the
remainder has the dividend's sign (``-7 // 2 == -3``, ``-7 % 2 == -1``; NumPy and Python
round toward -infinity), and ``x // 0 == x % 0 == 0`` (also for ``INT_MIN // -1``, which
wraps to ``INT_MIN``); shifts by the bit width or more (and by
negative counts, seen as huge unsigned counts) give 0, or -1 for a right shift of a
negative signed value; ``x ** n`` wraps and is 0 for a negative signed exponent.

Float semantics: IEEE 754 with round to nearest even; ``minimum``/``maximum``
propagate NaN and order ``-0 < +0`` (IEEE 754-2019 ``minimum``/``maximum``);
``floordiv``/``mod`` are NumPy's ``npy_divmod`` (a floor quotient, a remainder with the
divisor's sign, ``x // 0 == x / 0``); ``fma`` rounds once; ``rsqrt`` is
``1 / sqrt(x)`` (two roundings); ``round`` is ties-to-even (``numpy.rint``).

``Float16`` (a storage format, :attr:`VarType.compute` is ``Float32``): every operation is
computed in ``float32`` and rounded to half precision, as LLVM and Dr.Jit 1.5 do on CPUs
without native half arithmetic.  For ``+ - * / sqrt`` that is the correctly rounded half
result (``float32`` has more than twice half's precision); ``fma`` rounds twice (the
``float32`` fma, then to half), ``rsqrt`` is ``sqrt(1 / x)`` with both steps rounded to half,
a ``float64`` converts to half through ``float32`` (two roundings), and sums and prefix sums
accumulate in ``float32`` (all as Dr.Jit 1.5's LLVM backend, measured).

Memory operations (:func:`gather`, :func:`scatter`) and whole-array reductions
(:func:`reduce`) have their own signatures, given in their docstrings.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .dtypes import Bool, VarType

_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _in_compute_type(vt: VarType, args):
    """``args`` converted to the type ``vt``'s arithmetic is computed in (Float16: float32)."""
    ct = vt.compute.np_dtype
    return [np.asarray(a).astype(ct) if np.asarray(a).dtype == vt.np_dtype else a for a in args]


def _quiet(f):
    """``f`` with NumPy's floating-point warnings off (the spec never warns)."""
    def ref(*args):
        with np.errstate(all="ignore"):
            return f(*args)
    ref.__name__ = f.__name__
    ref.__qualname__ = f.__qualname__
    ref.__doc__ = f.__doc__
    return ref


def _out(vt: VarType, r) -> np.ndarray:
    return np.asarray(r).astype(vt.np_dtype, copy=False)


def _ufunc(uf, name: str):
    """A reference that is the NumPy ufunc ``uf`` in the result's dtype."""
    def ref(vt, *args):
        with np.errstate(all="ignore"):
            return _out(vt, uf(*args))
    ref.__name__ = ref.__qualname__ = name
    ref.__doc__ = f"``numpy.{uf.__name__}`` in the result type (integers wrap around)."
    return ref


add = _ufunc(np.add, "add")
sub = _ufunc(np.subtract, "sub")
mul = _ufunc(np.multiply, "mul")
truediv = _ufunc(np.true_divide, "truediv")
neg = _ufunc(np.negative, "neg")
sqrt = _ufunc(np.sqrt, "sqrt")
copysign = _ufunc(np.copysign, "copysign")
floor = _ufunc(np.floor, "floor")
ceil = _ufunc(np.ceil, "ceil")
trunc = _ufunc(np.trunc, "trunc")
round = _ufunc(np.rint, "round")    # noqa: A001 (ties to even)
isnan = _ufunc(np.isnan, "isnan")
isinf = _ufunc(np.isinf, "isinf")
isfinite = _ufunc(np.isfinite, "isfinite")
eq = _ufunc(np.equal, "eq")
ne = _ufunc(np.not_equal, "ne")     # true for NaN (unordered)
lt = _ufunc(np.less, "lt")
le = _ufunc(np.less_equal, "le")
gt = _ufunc(np.greater, "gt")
ge = _ufunc(np.greater_equal, "ge")


@_quiet
def rsqrt(vt, a):
    """``1 / sqrt(a)``, two roundings in the operand type (Float16: ``sqrt(1 / a)``, each
    step rounded to half, as Dr.Jit 1.5 computes it)."""
    one = a.dtype.type(1)
    if vt.compute is not None:
        return _out(vt, np.sqrt(one / a))
    return _out(vt, one / np.sqrt(a))


@_quiet
def rcp(vt, a):
    """``1 / a`` in the operand type."""
    return _out(vt, a.dtype.type(1) / a)


@_quiet
def abs(vt, a):  # noqa: A001
    """``|a|``: clears a float's sign bit; ``abs(INT_MIN) == INT_MIN``; unsigned and Bool unchanged."""
    if vt is Bool or (not vt.is_float and not vt.is_signed):
        return _out(vt, a).copy()
    return _out(vt, np.abs(a))


@_quiet
def logical_not(vt, a):
    """``~a``: logical not of a Bool, all bits flipped of an integer."""
    return _out(vt, np.invert(a))


def _safe_divisor(vt, b):
    """``b`` with 0 (and -1 for signed types, whose ``INT_MIN / -1`` overflows) replaced by 1."""
    bad = b == 0
    if vt.is_signed:
        bad = bad | (b == -1)
    return np.where(bad, b.dtype.type(1), b)


@_quiet
def floordiv(vt, a, b):
    """Integers: C's truncated quotient, as Dr.Jit (rounds toward zero), ``x // 0 == 0``,
    ``x // -1 == -x`` (wraps); floats are NumPy's ``floor_divide`` (``npy_divmod``;
    ``x // 0.0 == x / 0.0``)."""
    if vt.is_float:
        return _out(vt, np.floor_divide(a, b))
    a, b = np.broadcast_arrays(a, b)
    d = _safe_divisor(vt, b)
    q = np.floor_divide(a - np.fmod(a, d), d)       # a - fmod(a, d) is a multiple of d: exact
    if vt.is_signed:
        q = np.where(b == -1, np.negative(a), q)
    return _out(vt, np.where(b == 0, 0, q))


@_quiet
def mod(vt, a, b):
    """Integers: C's remainder, as Dr.Jit (the dividend's sign), ``x % 0 == 0`` and
    ``x % -1 == 0``; floats are NumPy's ``remainder`` (``npy_divmod``, the divisor's sign;
    ``x % 0.0`` is NaN)."""
    if vt.is_float:
        return _out(vt, np.remainder(a, b))
    a, b = np.broadcast_arrays(a, b)
    r = np.fmod(a, _safe_divisor(vt, b))
    if vt.is_signed:
        r = np.where(b == -1, 0, r)
    return _out(vt, np.where(b == 0, 0, r))


@_quiet
def pow_int(vt, a, b):
    """``a ** b`` for integers by repeated squaring, wrapping around; ``1 / a ** -b`` truncated
    toward zero for ``b < 0`` (1 for ``a == 1``, +-1 for ``a == -1``, else 0)."""
    a, b = np.broadcast_arrays(a, b)
    e = b.astype(_UNSIGNED[vt.bits])      # the exponent's bits
    result = np.ones(a.shape, vt.np_dtype)
    base = a.astype(vt.np_dtype)
    for k in range(vt.bits):
        on = ((e >> e.dtype.type(k)) & e.dtype.type(1)) != 0
        result = np.where(on, result * base, result)
        base = base * base
    if vt.is_signed:
        # the squarings above already give 1 and +-1 for bases 1 and -1 (and 0 for 0): only
        # bases of magnitude >= 2 truncate to 0
        a = a.astype(vt.np_dtype)
        result = np.where((b < 0) & (a != 1) & (a != -1), 0, result)
    return _out(vt, result)


def _ieee_minmax(vt, a, b, less: bool):
    if not vt.is_float:
        return _out(vt, np.minimum(a, b) if less else np.maximum(a, b))
    a, b = np.broadcast_arrays(a, b)
    first = a < b if less else a > b
    second = b < a if less else b > a
    # Equal values: only +-0 differ; minimum takes the negative zero, maximum the positive one.
    tie = np.signbit(a) if less else ~np.signbit(a)
    r = np.where(first, a, np.where(second, b, np.where(tie, a, b)))
    return _out(vt, np.where(np.isnan(a) | np.isnan(b), np.nan, r))


@_quiet
def minimum(vt, a, b):
    """Smaller operand; NaN if either is NaN; ``minimum(-0, +0) == -0`` (IEEE 754-2019)."""
    return _ieee_minmax(vt, a, b, True)


@_quiet
def maximum(vt, a, b):
    """Larger operand; NaN if either is NaN; ``maximum(-0, +0) == +0`` (IEEE 754-2019)."""
    return _ieee_minmax(vt, a, b, False)


def _nan_ignoring(vt, a, b, less: bool):
    """``fmin``/``fmax``: NaN only if both are NaN; on a tie (``-0`` vs ``+0``) the first operand."""
    if not vt.is_float:
        return _out(vt, np.minimum(a, b) if less else np.maximum(a, b))
    a, b = np.broadcast_arrays(a, b)
    take_b = (b < a if less else b > a) | np.isnan(a)
    return _out(vt, np.where(take_b, b, a))


@_quiet
def fmin(vt, a, b):
    """Smaller operand, ignoring a NaN operand (C's ``fmin``); ``fmin(-0, +0) == -0`` and
    ``fmin(+0, -0) == +0`` (the first operand on a tie, as Dr.Jit 1.5's Float32/Float64)."""
    return _nan_ignoring(vt, a, b, True)


@_quiet
def fmax(vt, a, b):
    """Larger operand, ignoring a NaN operand (C's ``fmax``); the first operand on a tie."""
    return _nan_ignoring(vt, a, b, False)


def _bits_of(vt, a):
    """``a`` seen as unsigned integers of ``vt``'s width (a copy, never a view of the input)."""
    return np.asarray(a).astype(vt.np_dtype).view(_UNSIGNED[vt.bits])


@_quiet
def popcnt(vt, a):
    """The number of set bits (of the two's complement pattern for signed types)."""
    return _out(vt, np.bitwise_count(_bits_of(vt, a)))


@_quiet
def lzcnt(vt, a):
    """The number of leading zero bits; the bit width for 0."""
    u = _bits_of(vt, a).copy()
    shift = 1
    while shift < vt.bits:          # smear the highest set bit into every lower position
        u |= u >> u.dtype.type(shift)
        shift *= 2
    return _out(vt, vt.bits - np.bitwise_count(u).astype(np.int64))


@_quiet
def tzcnt(vt, a):
    """The number of trailing zero bits; the bit width for 0."""
    u = _bits_of(vt, a)
    one = u.dtype.type(1)
    return _out(vt, np.bitwise_count(~u & (u - one)))


_BYTE_REVERSED = np.array([int(f"{k:08b}"[::-1], 2) for k in range(256)], np.uint8)


@_quiet
def brev(vt, a):
    """The bits in reverse order (bit 0 becomes the highest bit)."""
    u = np.ascontiguousarray(_bits_of(vt, a))
    by = _BYTE_REVERSED[u.view(np.uint8)].view(u.dtype)
    return _out(vt, (by.byteswap() if vt.bits > 8 else by).view(vt.np_dtype))


@_quiet
def mul_hi(vt, a, b):
    """The high half of the double-width product ``a * b`` (signed for signed types)."""
    a, b = np.broadcast_arrays(np.asarray(a).astype(vt.np_dtype), np.asarray(b).astype(vt.np_dtype))
    if vt.bits <= 32:
        wide = np.int64 if vt.is_signed else np.uint64
        p = a.astype(wide) * b.astype(wide)
        return _out(vt, p >> wide(vt.bits))
    # 64 bits: the unsigned 128-bit product from 32-bit halves, then the signed correction
    u64 = np.uint64
    ua, ub = a.view(u64), b.view(u64)
    mask, s32 = u64(0xFFFFFFFF), u64(32)
    a0, a1, b0, b1 = ua & mask, ua >> s32, ub & mask, ub >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> s32) + (p01 & mask) + (p10 & mask)
    hi = p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)
    if vt.is_signed:
        hi = hi - np.where(a < 0, ub, u64(0)) - np.where(b < 0, ua, u64(0))
    return _out(vt, hi.view(vt.np_dtype))


@_quiet
def select(vt, c, a, b):
    """``a`` where the Bool ``c`` holds, else ``b``."""
    return _out(vt, np.where(c, a, b))


# -- fused multiply-add ---------------------------------------------------------------

def _two_sum(a, b):
    """``(s, e)`` with ``s = RN(a + b)`` and ``s + e == a + b`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd_sum(hi, lo):
    """``hi + lo`` rounded to odd (truncate, then set the last bit if inexact); ``hi`` is
    ``RN(hi + lo)``.  Rounding to odd first and to nearest later rounds only once."""
    s, e = _two_sum(hi, lo)
    bits = s.view(np.int64 if s.dtype == np.float64 else np.int32)
    fix = (e != 0) & ((bits & 1) == 0) & np.isfinite(s)
    toward = np.where(e > 0, np.inf, -np.inf).astype(s.dtype)
    return np.where(fix, np.nextafter(s, toward), s)


def _two_prod(a, b):
    """``(p, e)`` with ``p = RN(a * b)`` and ``p + e == a * b`` exactly (Dekker/Veltkamp;
    valid when nothing overflows or underflows)."""
    p = a * b
    split = 134217729.0     # 2**27 + 1
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma_exact(a: float, b: float, c: float) -> float:
    """One ``float64`` fma with rational arithmetic (the lanes :func:`fma` cannot do fast)."""
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        return a * b + c            # an infinite (or NaN) product: IEEE arithmetic is exact
    if math.isinf(c):
        return c
    if a * b == 0 and (a == 0 or b == 0) and c == 0:
        return a * b + c            # signed zeros follow IEEE addition
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return 0.0
    try:
        return float(exact)          # int / int true division is correctly rounded
    except OverflowError:       # rounds beyond the largest float64
        return math.inf if exact > 0 else -math.inf


@_quiet
def fma(vt, a, b, c):
    """``a * b + c`` with one rounding (integers: wrapping ``a * b + c``).

    ``float16``: computed as ``float32`` and rounded to half (Dr.Jit 1.5 on the CPU).
    ``float32``: the product is exact in ``float64``; the sum is rounded to odd in
    ``float64`` and then to nearest in ``float32``, which is one correct rounding.
    ``float64``: Dekker's exact product and Boldo-Melquiond's rounding to odd where no
    intermediate can overflow or underflow, exact rational arithmetic elsewhere.
    """
    if not vt.is_float:
        return _out(vt, a * b + c)
    if vt.compute is not None:      # Float16: the float32 fma, rounded to half (two roundings)
        return _out(vt, fma(vt.compute, *_in_compute_type(vt, (a, b, c))))
    a, b, c = (np.asarray(x) for x in np.broadcast_arrays(a, b, c))
    if vt.itemsize == 4:
        p = a.astype(np.float64) * b.astype(np.float64)      # exact
        return _out(vt, _round_to_odd_sum(p, c.astype(np.float64)))
    a, b, c = (x.astype(np.float64) for x in (a, b, c))
    p, pe = _two_prod(a, b)
    th, tl = _two_sum(c, p)
    r = th + _round_to_odd_sum(tl, pe)
    ap, aa, ab, ac = np.abs(p), np.abs(a), np.abs(b), np.abs(c)
    safe = (np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (aa < 2.0**990) & (ab < 2.0**990)
            & (ac < 2.0**1000) & ((ac == 0) | (ac >= 2.0**-900))
            & (((a == 0) | (b == 0)) | ((ap >= 2.0**-900) & (ap < 2.0**1000))))
    zero_product = (a == 0) | (b == 0)
    # A zero product keeps IEEE's signed-zero addition (fma(-0, 1, -0) == -0).
    r = np.where(zero_product & (c == 0), p + c, r)
    slow = np.flatnonzero(~np.broadcast_to(safe, r.shape))
    if slow.size:
        r = np.array(r, copy=True).reshape(-1)
        af, bf, cf = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for k in slow:
            r[k] = _fma_exact(float(af[k]), float(bf[k]), float(cf[k]))
    return _out(vt, r)


# -- transcendental functions: float64 (or exact) references, rounded once ---------------

def _in_float64(f, name: str):
    def ref(vt, *args):
        with np.errstate(all="ignore"):
            return _out(vt, f(*(np.asarray(x, np.float64) for x in args)))
    ref.__name__ = ref.__qualname__ = name
    ref.__doc__ = f"``{name}`` computed in float64 and rounded to the result type."
    return ref


_erf64 = np.frompyfunc(math.erf, 1, 1)
sin = _in_float64(np.sin, "sin")
cos = _in_float64(np.cos, "cos")
tan = _in_float64(np.tan, "tan")
asin = _in_float64(np.arcsin, "asin")
acos = _in_float64(np.arccos, "acos")
atan = _in_float64(np.arctan, "atan")
atan2 = _in_float64(np.arctan2, "atan2")
exp = _in_float64(np.exp, "exp")
exp2 = _in_float64(np.exp2, "exp2")
def _x86_nan_below_zero(f):
    """``f`` with x86's default NaN (sign bit set, ``-nan``) for negative arguments, as the
    kernels and Dr.Jit give: NumPy's own loops return ``+nan`` there on CPUs without AVX-512."""
    def g(x):
        return np.where(x < 0, -np.nan, f(x))
    return g


log = _in_float64(_x86_nan_below_zero(np.log), "log")
log2 = _in_float64(_x86_nan_below_zero(np.log2), "log2")
sinh = _in_float64(np.sinh, "sinh")
cosh = _in_float64(np.cosh, "cosh")
tanh = _in_float64(np.tanh, "tanh")
cbrt = _in_float64(np.cbrt, "cbrt")
erf = _in_float64(lambda x: np.asarray(_erf64(x)).astype(np.float64), "erf")     # (a 0-d input gives a Python float)
power = _in_float64(np.power, "pow")
asinh = _in_float64(np.arcsinh, "asinh")
acosh = _in_float64(np.arccosh, "acosh")
atanh = _in_float64(np.arctanh, "atanh")


def _lgamma_scalar(x: float) -> float:
    """``log|gamma(x)|`` of one double: ``+inf`` at the poles (0, -0, negative integers) and at
    +-inf, as C99 ``lgamma`` (``math.lgamma`` raises at the poles)."""
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


_lgamma_py = np.frompyfunc(_lgamma_scalar, 1, 1)

#: lgamma(2 + t) = sum_k c_k t^k (c_1 = 1 - Euler's gamma, c_k = (-1)^k (zeta(k) - 1) / k), 25
#: digits (mpmath): enough for long double on |t| <= 1/2.
_LGAMMA2_TAYLOR_TEXT = (
    "0.4227843350984671393934879", "0.3224670334241132182362076", "-0.06735230105319809513324605",
    "0.02058080842778454787900092", "-0.007385551028673985266273097", "0.002890510330741523285752988",
    "-0.001192753911703260977113936", "0.0005096695247430424223356548", "-0.0002231547584535793797614188",
    "0.00009945751278180853371459589", "-0.0000449262367381331417002075", "0.0000205072127756706915531665",
    "-0.000009439488275268395903987425", "0.000004374866789907487804181793",
    "-0.000002039215753801366236781901", "0.000000955141213040741983285718",
    "-0.000000449246919876456604329429", "0.0000002120718480555466586923136",
    "-0.0000001004322482396809960872083", "4.769810169363980565760194e-8", "-2.271109460894316491031998e-8",
    "1.083865921489695409107491e-8", "-5.183475041970046655121251e-9", "2.483674543802478317185012e-9",
    "-1.192140140586091207442548e-9", "5.731367241678862013330223e-10", "-2.759522885124233145178154e-10",
    "1.330476437424448948149696e-10", "-6.422964563838100022082535e-11", "3.104424774732227276239467e-11",
    "-1.502138408075414217093286e-11", "7.275974480239079662506716e-12", "-3.52774247657591508361424e-12",
    "1.711991790559617908603163e-12", "-8.315385841420284819795141e-13", "4.042200525289440065550028e-13",
    "-1.966475631096616490407803e-13", "9.573630387838555763781322e-14", "-4.664076026428374224750932e-14",
    "2.273736960065972320719297e-14",
)
_LGAMMA2_TAYLOR = tuple(np.longdouble(c) for c in _LGAMMA2_TAYLOR_TEXT)


def _lgamma64(x):
    """``log|gamma(x)|`` in float64: ``math.lgamma``, except on (0, 10), where its error is up to
    ~1e-16 absolute (thousands of ULP of a small result around the roots 1 and 2, 15 ULP at
    2.6): there the Taylor series of ``lgamma(2 + t)`` in long double, with the recurrence
    ``lgamma(x) = lgamma(x + 1) - log x`` to reach ``[3/2, 5/2)`` from either side."""
    x = np.asarray(x, np.float64)
    out = np.asarray(_lgamma_py(x), np.float64).reshape(x.shape)
    near = (x > 0) & (x < 10)
    if near.any():
        xl = x[near].astype(np.longdouble)
        n = np.floor(xl - np.longdouble(1.5))              # -2 (x < 1/2) .. 8
        n = np.where(xl < 0.5, -2, n)
        t = xl - n - 2
        acc = np.zeros_like(t)
        for c in reversed(_LGAMMA2_TAYLOR):
            acc = (acc + c) * t
        shift = np.zeros_like(t)                          # log((x-1)...(x-n)), or -log(x (x+1) ...)
        for k in range(1, 9):
            shift += np.where(k <= n, np.log(np.where(k <= n, xl - k, 1)), 0)
        shift -= np.where(n <= -1, np.log(xl), 0) + np.where(n <= -2, np.log1p(xl), 0)
        out[near] = (acc + shift).astype(np.float64)
    return out


lgamma = _in_float64(_lgamma64, "lgamma")

_erfc64 = np.frompyfunc(math.erfc, 1, 1)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erfinv64(x):
    """``erfinv`` in float64: Winitzki's closed form (relative error < 2e-3), then Newton steps
    on ``erf(y) = |x|`` (``erfc(y) = 1 - |x|`` for ``|x| > 1/2``, where ``1 - |x|`` is exact, so
    the tail keeps its relative accuracy).  ``erfinv(+-1) = +-inf``; ``|x| > 1`` and NaN give NaN."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    inner = np.where(a < 1, a, 0.0)
    ln = np.log1p(-inner * inner)
    k = 0.147
    t = 2.0 / (math.pi * k) + ln / 2
    y = np.sqrt(np.sqrt(t * t - ln / k) - t)
    tail = inner > 0.5
    for _ in range(5):
        fy = np.where(tail, -(np.asarray(_erfc64(y), np.float64) - (1.0 - inner)),
                      np.asarray(_erf64(y), np.float64) - inner)
        y = y - fy / (_TWO_OVER_SQRT_PI * np.exp(-y * y))
    y = np.where(a == 1, np.inf, np.where(a > 1, np.nan, y))
    y = np.where(np.isnan(x), np.nan, y)
    return np.copysign(y, x)


erfinv = _in_float64(_erfinv64, "erfinv")


# -- bitwise operations and shifts ----------------------------------------------------------

def _bitwise(uf, name: str):
    def ref(vt, a, b):
        """``a OP b`` bit by bit (floats by their bits, Bool logically).  With a Bool mask
        ``b`` and a non-Bool ``a`` (Dr.Jit's masking idiom): ``a & m`` is ``a`` where ``m``
        and 0 elsewhere, ``a | m`` has every bit set where ``m`` (a NaN for floats)."""
        with np.errstate(all="ignore"):
            a, b = np.asarray(a), np.asarray(b)
            if vt is not Bool and b.dtype == np.bool_:
                if uf is np.bitwise_and:
                    return _out(vt, np.where(b, a, a.dtype.type(0)))
                ones = np.array(-1, np.int64).astype(_UNSIGNED[vt.bits]).view(vt.np_dtype)
                return _out(vt, np.where(b, ones, a))
            if vt.is_float:
                it = _UNSIGNED[vt.bits]
                return _out(vt, uf(a.view(it), b.view(it)).view(vt.np_dtype))
            return _out(vt, uf(a, b))
    ref.__name__ = ref.__qualname__ = name
    return ref


bitwise_and = _bitwise(np.bitwise_and, "and")
bitwise_or = _bitwise(np.bitwise_or, "or")
bitwise_xor = _bitwise(np.bitwise_xor, "xor")


def _shift(left: bool, name: str):
    def ref(vt, a, b):
        """Shift by ``b`` bits; counts >= the width (negative ones as huge unsigned counts)
        give 0, or -1 for a right shift of a negative signed value."""
        with np.errstate(all="ignore"):
            a, b = np.broadcast_arrays(a, b)
            count = b.astype(_UNSIGNED[vt.bits])
            big = count >= vt.bits
            safe = np.where(big, 0, count).astype(vt.np_dtype)
            if left:
                return _out(vt, np.where(big, 0, np.left_shift(a, safe)))
            if vt.is_signed:
                fill = np.right_shift(a, vt.np_dtype.type(vt.bits - 1))
                return _out(vt, np.where(big, fill, np.right_shift(a, safe)))
            return _out(vt, np.where(big, 0, np.right_shift(a, safe)))
    ref.__name__ = ref.__qualname__ = name
    return ref


shl = _shift(True, "shl")
shr = _shift(False, "shr")


# -- conversions ----------------------------------------------------------------------------

def _int_limits(vt: VarType) -> tuple[float, float]:
    """``[lo, hi)``, powers of two (exact in every float type): the truncated values in range."""
    return (-2.0 ** (vt.bits - 1), 2.0 ** (vt.bits - 1)) if vt.is_signed else (0.0, 2.0 ** vt.bits)


def cast_unspecified(vt, a):
    """Lanes whose conversion result is not specified: a float that is NaN or whose truncation
    lies outside the integer target's range (the hardware's answer, like C and Dr.Jit)."""
    a = np.asarray(a)
    if a.dtype.kind != "f" or vt.is_float or vt is Bool:
        return np.zeros(a.shape, bool)
    lo, hi = _int_limits(vt)
    with np.errstate(all="ignore"):
        t = np.trunc(a.astype(np.float64))
        return ~((t >= lo) & (t < hi))


@_quiet
def cast(vt, a):
    """Convert to ``vt``: to Bool ``a != 0`` (NaN is true); from Bool 0/1; float to integer
    truncates toward zero (see :func:`cast_unspecified`); integer to float and float to a
    narrower float round to nearest (overflow gives +-inf; float64 to Float16 rounds through
    float32, as Dr.Jit 1.5 does); integers wrap or extend."""
    a = np.asarray(a)
    if vt is Bool:
        return a != 0
    if vt.compute is not None and a.dtype.kind == "f" and a.dtype.itemsize > vt.compute.itemsize:
        a = a.astype(vt.compute.np_dtype)
    if a.dtype.kind == "f" and not vt.is_float:
        bad = cast_unspecified(vt, a)
        return np.where(bad, 0, np.trunc(a)).astype(vt.np_dtype)
    return a.astype(vt.np_dtype)


def bitcast(vt, a):
    """The same bits seen as ``vt`` (same width)."""
    return np.ascontiguousarray(a).view(vt.np_dtype).copy()


# -- sources and memory ------------------------------------------------------------------------

def counter(vt, size: int):
    """``0, 1, ..., size - 1`` as ``vt`` (the lane index of a launch)."""
    return np.arange(size, dtype=np.int64).astype(vt.np_dtype)


def _valid_lanes(n: int, index, active):
    index = np.asarray(index)
    signed = index.astype(np.int64) if index.dtype != np.uint64 else index
    ok = (signed >= 0) & (signed < n) if index.dtype != np.uint64 else index < n
    return ok & np.asarray(active, bool)


def gather(vt, src, index, active):
    """``src[index]`` where ``active`` holds and the index is in bounds, else 0."""
    src = np.asarray(src)
    index, active = np.broadcast_arrays(np.asarray(index), np.asarray(active, bool))
    ok = _valid_lanes(src.shape[0], index, active)
    safe = np.where(ok, index, 0).astype(np.int64)
    return np.where(ok, src[safe] if src.shape[0] else 0, 0).astype(vt.np_dtype)


_SCATTER_AT = {"add": np.add, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or}


def scatter(target, value, index, active, reduce_op=None):
    """Write ``value`` into a copy of ``target`` at ``index`` where ``active`` holds and the
    index is in bounds, and return it; out-of-bounds and inactive lanes write nothing.

    ``reduce_op`` None: plain writes (which of several writes to one index wins is
    unspecified); ``"add"``/``"mul"``: combined (float sums in unspecified order);
    ``"and"``/``"or"``: bitwise (integer targets);
    ``"min"``/``"max"``: NaN-ignoring for floats (``fmin``/``fmax``, Dr.Jit's
    ``scatter_reduce``).
    """
    out = np.array(target, copy=True)
    value, index, active = np.broadcast_arrays(np.asarray(value), np.asarray(index), np.asarray(active, bool))
    ok = _valid_lanes(out.shape[0], index, active)
    idx = index[ok].astype(np.int64)
    v = value[ok].astype(out.dtype)
    with np.errstate(all="ignore"):
        if reduce_op is None:
            out[idx] = v
        elif reduce_op in _SCATTER_AT:
            _SCATTER_AT[reduce_op].at(out, idx, v)
        elif out.dtype.kind == "f":
            (np.fmin if reduce_op == "min" else np.fmax).at(out, idx, v)
        else:
            (np.minimum if reduce_op == "min" else np.maximum).at(out, idx, v)
    return out


_REDUCE = {"add": np.add, "mul": np.multiply, "min": np.fmin, "max": np.fmax,
           "and": np.logical_and, "or": np.logical_or}


def reduce(op: str, a):
    """Reduce all of ``a`` with ``op`` (``add``, ``mul``, ``min``, ``max``, ``and``, ``or``) to
    a 1-element array of ``a``'s dtype (``count``: the true entries of a Bool array, ``uint32``) (``and``/``or``: logical for Bool, bitwise for integers).
    Starts from the identity (an empty array gives it;
    float ``min``/``max`` ignore NaN, so all-NaN gives +-inf); float sums in unspecified order;
    half-precision sums and products accumulate in float32 and are rounded once."""
    a = np.asarray(a)
    if op == "count":       # the true entries of a Bool array, as a UInt32 (Dr.Jit's count)
        return np.array([np.count_nonzero(a)], dtype=np.uint32)
    if a.dtype == np.float16 and op in ("add", "mul"):
        # (NumPy's own float16 reductions accumulate in float32 too, with the same result.)
        with np.errstate(all="ignore"):
            return reduce(op, a.astype(np.float32)).astype(np.float16)
    dt = a.dtype
    if op in ("and", "or") and dt.kind != "b":
        uf = np.bitwise_and if op == "and" else np.bitwise_or
        return np.array([uf.reduce(a, dtype=dt, initial=~dt.type(0) if op == "and" else dt.type(0))]).astype(dt)
    if op in ("add", "mul", "and", "or"):
        ident = {"add": 0, "mul": 1, "and": True, "or": False}[op]
    elif dt.kind == "f":
        ident = np.inf if op == "min" else -np.inf
    elif dt.kind == "b":
        ident = op == "min"
    else:
        info = np.iinfo(dt)
        ident = info.max if op == "min" else info.min
    with np.errstate(all="ignore"):
        return np.array([_REDUCE[op].reduce(a, dtype=dt, initial=ident)]).astype(dt)


def _identity(op: str, dt: np.dtype):
    """The identity of reduction ``op`` in ``dt`` (float min/max: +-inf)."""
    if op in ("add", "mul", "and", "or"):
        return {"add": 0, "mul": 1, "and": True, "or": False}[op]
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    if dt.kind == "b":
        return op == "min"
    info = np.iinfo(dt)
    return info.max if op == "min" else info.min


def axis_reduce(op: str, a, size: int, inner: int):
    """``op`` over the middle axis of ``a`` seen as ``(outer, size, inner)``: ``outer * inner``
    values (flat).  As :func:`reduce`: float min/max ignore NaN, integers wrap; ``and``/``or``
    are bitwise on integers.  Float sums in NumPy's order."""
    a = np.asarray(a)
    dt = a.dtype
    ident = _identity(op, dt)
    ufunc = _REDUCE[op]
    if op in ("and", "or") and dt.kind in "iu":
        ufunc = np.bitwise_and if op == "and" else np.bitwise_or
        ident = np.array(-1).astype(dt)[()] if op == "and" else 0
    with np.errstate(all="ignore"):
        return ufunc.reduce(a.reshape(-1, size, inner), axis=1, dtype=dt, initial=ident).reshape(-1)


def block_reduce(op: str, a, block: int, prefix: bool = False, exclusive: bool = True, reverse: bool = False):
    """``op`` over each run of ``block`` consecutive elements of ``a`` (the last run may be
    shorter): one value per run, or with ``prefix`` the (exclusive or inclusive, forward or
    ``reverse``) running reduction within each run.  As :func:`reduce`: float min/max ignore
    NaN, integers wrap, half precision accumulates in float32 (rounded once per output)."""
    a = np.asarray(a)
    dt = a.dtype
    if dt == np.float16 and op in ("add", "mul"):
        return block_reduce(op, a.astype(np.float32), block, prefix, exclusive, reverse).astype(np.float16)
    n = a.shape[0]
    full = n - n % block
    ident = _identity(op, dt)
    ufunc = _REDUCE[op]
    if op in ("and", "or") and dt.kind in "iu":      # bitwise on integers (Dr.Jit's ReduceOp.And/Or)
        ufunc = np.bitwise_and if op == "and" else np.bitwise_or
        ident = np.array(-1).astype(dt)[()] if op == "and" else 0
    with np.errstate(all="ignore"):
        if not prefix:
            out = np.empty(-(-n // block), dt)
            if full:
                ufunc.reduce(a[:full].reshape(-1, block), axis=1, dtype=dt, out=out[:full // block], initial=ident)
            if full < n:
                out[-1] = ufunc.reduce(a[full:], dtype=dt, initial=ident)
            return out
        out = np.empty(n, dt)
        for lo, rows, width in ((0, full // block, block), (full, 1 if full < n else 0, n - full)):
            if not rows:
                continue
            src = a[lo:lo + rows * width].reshape(rows, width)
            dst = out[lo:lo + rows * width].reshape(rows, width)
            if reverse:
                src, dst = src[:, ::-1], dst[:, ::-1]
            if exclusive:
                dst[:, 0] = ident
                ufunc.accumulate(src[:, :-1], axis=1, dtype=dt, out=dst[:, 1:])
            else:
                ufunc.accumulate(src, axis=1, dtype=dt, out=dst)
        return out


def argsort_keys(keys):
    """The stable ascending permutation (``uint32``) of the unsigned integer array ``keys``.

    Large arrays: least-significant-digit passes over 16-bit digits, each a stable NumPy sort of
    a ``uint16`` array (NumPy's radix sort, linear), ~1.4x less CPU than one stable sort of
    32-bit keys (a merge sort) at 1e6 elements; only the digits below the largest key's top bit
    (a row index, a histogram bin: one pass)."""
    keys = np.asarray(keys)
    n = keys.shape[0]
    if n < 65536 or keys.dtype.itemsize <= 2:
        return np.argsort(keys, kind="stable").astype(np.uint32)
    bits = int(keys.max()).bit_length()
    digit = keys.dtype.type(0xFFFF)
    perm = np.argsort((keys & digit).astype(np.uint16), kind="stable")
    for shift in range(16, bits, 16):
        d = ((keys[perm] >> keys.dtype.type(shift)) & digit).astype(np.uint16)
        perm = perm[np.argsort(d, kind="stable")]
    return perm.astype(np.uint32)


def prefix_sum(a, exclusive: bool):
    """Inclusive (or exclusive: shifted by one, starting at 0) running sum, wrapping for integers;
    half-precision sums accumulate in float32, each output rounded once."""
    a = np.asarray(a)
    if a.dtype == np.float16:
        with np.errstate(all="ignore"):
            return prefix_sum(a.astype(np.float32), exclusive).astype(np.float16)
    with np.errstate(all="ignore"):
        s = np.cumsum(a, dtype=a.dtype)
    if exclusive:
        s = np.concatenate([np.zeros(1, a.dtype), s[:-1]]) if a.shape[0] else s
    return s
