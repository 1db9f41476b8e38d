"""What each lane-wise operation computes, in NumPy: the reference backend's lowering.

:func:`numpy_impl` returns, for an operation name of a kernel spec (``Instr.op``), a function
``ref(vt, *args)``: ``vt`` is the result's :class:`VarType`, ``args`` are NumPy arrays (or
0-d arrays: literals and size-1 inputs) whose dtypes are the operand types, and the result is
an array of ``vt``'s dtype, computed over whole arrays at once, without warnings.  They follow
the LLVM backend's semantics (``backend/llvm/codegen.py``) bit for bit, except for

* transcendental functions: computed in float64 and rounded once (float32) or by NumPy's libm
  (float64), so within about half an ULP, where the LLVM backend's polynomials are within the
  bounds of docs/math_accuracy.md;
* float to integer conversions of NaN or of values out of the target's range, which the
  hardware decides on both backends (undefined, as in Dr.Jit).

Integer arithmetic wraps around; ``x // 0 == x % 0 == 0``; shifts by the bit width or more
give 0 (-1 for a right shift of a negative value); float ``minimum``/``maximum`` propagate NaN
and order ``-0 < +0``; ``fma`` rounds once; ``round`` is ties-to-even.

When the op table (``frostjit/trace/optable.py``, each operation's NumPy reference with this
same contract) is in place, :func:`numpy_impl` returns its entry's reference instead of
:data:`LOWERING`'s: ``ref = getattr(OPS.get(op), "numpy", None)`` (``from ...trace.optable
import OPS``), and this table goes.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...trace.dtypes import Bool, VarType

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def numpy_impl(op: str):
    """The NumPy reference ``ref(vt, *args)`` of the lane-wise operation ``op``.

    Raises
    ------
    NotImplementedError
        If ``op`` is not a lane-wise operation this backend knows.
    """
    ref = LOWERING.get(op)
    if ref is None:
        raise NotImplementedError(f"reference backend: no NumPy lowering for operation '{op}'")
    return ref


def _out(vt: VarType, r) -> np.ndarray:
    return np.asarray(r).astype(vt.np_dtype, copy=False)


def _bits(a: np.ndarray) -> np.ndarray:
    """The bits of ``a`` as unsigned integers of the same width."""
    a = np.asarray(a)
    return a.view(_UNSIGNED[a.dtype.itemsize])


# -- arithmetic ---------------------------------------------------------------------------------
def _add(vt, a, b):
    return _out(vt, np.add(a, b))


def _sub(vt, a, b):
    return _out(vt, np.subtract(a, b))


def _mul(vt, a, b):
    return _out(vt, np.multiply(a, b))


def _truediv(vt, a, b):
    return _out(vt, np.true_divide(a, b))


def _int_divisor(vt, b):
    """The divisor with 0 (and -1 of a signed type, whose INT_MIN / -1 overflows) replaced by 1."""
    bad = b == 0
    if vt.is_signed:
        bad = bad | (b == -1)
    return np.where(bad, np.ones((), vt.np_dtype), b)


def _floordiv(vt, a, b):
    if vt.is_float:     # NumPy's npy_divmod: a floor quotient; x // 0 == x / 0
        return _out(vt, np.floor_divide(a, b))
    q = np.floor_divide(a, _int_divisor(vt, b))
    if vt.is_signed:
        q = np.where(b == -1, np.negative(a), q)        # x // -1 == -x, wrapping
    return _out(vt, np.where(b == 0, np.zeros((), vt.np_dtype), q))


def _mod(vt, a, b):
    if vt.is_float:     # npy_divmod: the remainder has the divisor's sign; x % 0 is NaN
        return _out(vt, np.remainder(a, b))
    r = np.remainder(a, _int_divisor(vt, b))
    return _out(vt, np.where(b == 0, np.zeros((), vt.np_dtype), r))


def _pow_int(vt, a, b):
    """``a ** b`` by repeated squaring over every bit of ``b`` (wrapping); 0 for ``b < 0``."""
    e = _bits(b)
    result = np.ones(np.broadcast(a, b).shape, vt.np_dtype)
    base = np.asarray(a, vt.np_dtype)
    one = e.dtype.type(1)
    for k in range(vt.bits):
        on = ((e >> e.dtype.type(k)) & one) != 0
        result = np.where(on, np.multiply(result, base), result)
        base = np.multiply(base, base)
    if vt.is_signed:
        result = np.where(np.asarray(b) < 0, np.zeros((), vt.np_dtype), result)
    return _out(vt, result)


def _neg(vt, a):
    return _out(vt, np.negative(a))


def _not(vt, a):
    return _out(vt, np.logical_not(a) if vt is Bool else np.invert(a))


def _abs(vt, a):
    return _out(vt, a if (not vt.is_float and not vt.is_signed) else np.abs(a))


def _fma(vt, a, b, c):
    if not vt.is_float:
        return _out(vt, np.add(np.multiply(a, b), c))
    return _fma_float(vt, a, b, c)


def _fma_float(vt, a, b, c):
    """``a * b + c`` rounded once.

    float32: the product is exact in float64; the float64 sum is rounded to odd (its last bit
    set when inexact), which makes the final rounding to float32 correct.  float64: the exact
    product as a sum of two doubles (Dekker), the exact sum of three terms rounded to odd, then
    rounded once (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums", 2008); lanes
    with a zero term are exact in plain arithmetic, and the rare lanes where a step could
    overflow or underflow are computed exactly with fractions.
    """
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    if vt.itemsize == 4:
        p = a.astype(np.float64) * b.astype(np.float64)
        s, err = _two_sum(p, c.astype(np.float64))
        return _out(vt, _round_to_odd(s, err))
    p, ep = _two_product(a, b)
    th, tl = _two_sum(c, p)
    v, ev = _two_sum(tl, ep)
    fast = th + _round_to_odd(v, ev)
    plain = a * b + c
    # A zero term: one rounding in plain arithmetic too (a product that underflows to zero
    # keeps its sign, whatever the sign of a zero c).
    with_zero = np.where((c == 0) & (a != 0) & (b != 0), a * b, plain)
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    zero_term = (a == 0) | (b == 0) | (c == 0)
    aa, ab, ac, ap = np.abs(a), np.abs(b), np.abs(c), np.abs(p)
    small = 2.0 ** -900
    hard = finite & ~zero_term & ((np.minimum(aa, ab) < small) | (np.maximum(aa, ab) > 2.0 ** 500) | (ap < small)
                                  | (ac < small) | (ac > 2.0 ** 1000) | ~np.isfinite(fast))
    # an infinite c and a finite product (which may overflow in plain arithmetic): c
    plain = np.where(np.isfinite(a) & np.isfinite(b) & np.isinf(c), c, plain)
    r = np.where(finite & ~zero_term, fast, np.where(finite, with_zero, plain))
    if hard.any():
        r = np.array(r, dtype=np.float64)
        for i in zip(*np.nonzero(hard)):
            r[i] = _fma_exact(float(a[i]), float(b[i]), float(c[i]))
    return _out(vt, r)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    t = a * 134217729.0          # 2^27 + 1 (Veltkamp)
    hi = t - (t - a)
    return hi, a - hi


def _two_product(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_to_odd(s, err):
    """``s``, moved one ULP toward ``s + err`` when inexact and even (round to odd)."""
    s = np.asarray(s, np.float64)
    inexact = (err != 0) & np.isfinite(s)
    even = (_bits(s) & np.uint64(1)) == 0
    fix = inexact & even
    if not fix.any():
        return s
    return np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _fma_exact(a: float, b: float, c: float) -> float:
    """``a * b + c`` for finite non-zero terms, exactly, rounded once (an exact zero is +0)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact)     # correctly rounded
    except OverflowError:       # beyond the largest double
        return math.inf if exact > 0 else -math.inf


# -- floats ---------------------------------------------------------------------------------------
def _ufunc(f):
    def ref(vt, *args):
        return _out(vt, f(*args))
    ref.__name__ = f.__name__
    return ref


def _rsqrt(vt, a):
    return _out(vt, np.divide(np.ones((), vt.np_dtype), np.sqrt(a)))      # two roundings, as the LLVM backend


def _rcp(vt, a):
    return _out(vt, np.divide(np.ones((), vt.np_dtype), a))


def _min(vt, a, b):
    if not vt.is_float:
        return _out(vt, np.minimum(a, b))
    r = np.minimum(a, b)                        # NaN propagates
    zeros = (a == 0) & (b == 0)
    return _out(vt, np.where(zeros, np.where(np.signbit(a), a, b), r))      # -0 < +0


def _max(vt, a, b):
    if not vt.is_float:
        return _out(vt, np.maximum(a, b))
    r = np.maximum(a, b)
    zeros = (a == 0) & (b == 0)
    return _out(vt, np.where(zeros, np.where(np.signbit(a), b, a), r))


def _transcendental(f64):
    """A math function: float64 computes with NumPy's libm; float32 computes in float64 and
    rounds once."""
    def ref(vt, *args):
        return _out(vt, f64(*[np.asarray(x, np.float64) for x in args]))
    ref.__name__ = getattr(f64, "__name__", "math")
    return ref


_erf = np.frompyfunc(math.erf, 1, 1)


def _erf64(x):
    return np.asarray(_erf(x)).astype(np.float64)     # (a 0-d input gives a Python float)


# -- bits and comparisons -------------------------------------------------------------------------
def _bitwise(uf, mask_rule):
    def ref(vt, a, b):
        a = np.asarray(a)
        b = np.asarray(b)
        if vt is not Bool and b.dtype == np.bool_:
            # Masking a value with a Bool (Dr.Jit): x & m keeps x where m, else 0; x | m sets
            # every bit where m.
            if mask_rule == "and":
                return _out(vt, np.where(b, a, np.zeros((), vt.np_dtype)))
            if mask_rule == "or":
                ones = np.array(-1, np.int64).astype(_UNSIGNED[vt.itemsize]).view(vt.np_dtype)
                return _out(vt, np.where(b, ones, a))
        if vt.is_float:
            return _out(vt, uf(_bits(a), _bits(b)).view(vt.np_dtype))
        return _out(vt, uf(a, b))
    return ref


def _shift(left: bool):
    def ref(vt, a, b):
        a = np.asarray(a)
        big = _bits(b) >= vt.bits            # negative counts are huge unsigned counts
        safe = np.where(big, np.zeros((), vt.np_dtype), b)
        if left:
            return _out(vt, np.where(big, np.zeros((), vt.np_dtype), np.left_shift(a, safe)))
        r = np.right_shift(a, safe)
        fill = np.right_shift(a, np.asarray(vt.bits - 1, vt.np_dtype)) if vt.is_signed else np.zeros((), vt.np_dtype)
        return _out(vt, np.where(big, fill, r))
    return ref


def _select(vt, c, a, b):
    return _out(vt, np.where(c, a, b))


def _cast(vt, a):
    a = np.asarray(a)
    if vt is Bool:
        return np.not_equal(a, 0)           # NaN converts to True
    return _out(vt, a)


def _bitcast(vt, a):
    return np.asarray(a).view(vt.np_dtype)


def _quiet(f):
    def ref(vt, *args):
        with np.errstate(all="ignore"):     # (the semantics are defined for every input)
            return f(vt, *args)
    ref.__name__ = getattr(f, "__name__", "ref")
    return ref


#: operation name -> ``ref(vt, *args)`` (see the module docstring).
LOWERING = {name: _quiet(f) for name, f in {
    "add": _add, "sub": _sub, "mul": _mul, "truediv": _truediv, "floordiv": _floordiv, "mod": _mod,
    "pow_int": _pow_int, "neg": _neg, "not": _not, "abs": _abs, "fma": _fma,
    "sqrt": _ufunc(np.sqrt), "rsqrt": _rsqrt, "rcp": _rcp,
    "floor": _ufunc(np.floor), "ceil": _ufunc(np.ceil), "trunc": _ufunc(np.trunc), "round": _ufunc(np.rint),
    "isnan": _ufunc(np.isnan), "isinf": _ufunc(np.isinf), "isfinite": _ufunc(np.isfinite),
    "min": _min, "max": _max, "copysign": _ufunc(np.copysign),
    "and": _bitwise(np.bitwise_and, "and"), "or": _bitwise(np.bitwise_or, "or"),
    "xor": _bitwise(np.bitwise_xor, "xor"),
    "shl": _shift(True), "shr": _shift(False),
    "eq": _ufunc(np.equal), "ne": _ufunc(np.not_equal), "lt": _ufunc(np.less), "le": _ufunc(np.less_equal),
    "gt": _ufunc(np.greater), "ge": _ufunc(np.greater_equal),
    "select": _select, "cast": _cast, "bitcast": _bitcast,
    "sin": _transcendental(np.sin), "cos": _transcendental(np.cos), "tan": _transcendental(np.tan),
    "asin": _transcendental(np.arcsin), "acos": _transcendental(np.arccos), "atan": _transcendental(np.arctan),
    "atan2": _transcendental(np.arctan2), "exp": _transcendental(np.exp), "exp2": _transcendental(np.exp2),
    "log": _transcendental(np.log), "log2": _transcendental(np.log2), "sinh": _transcendental(np.sinh),
    "cosh": _transcendental(np.cosh), "tanh": _transcendental(np.tanh), "erf": _transcendental(_erf64),
    "pow_float": _transcendental(np.power), "cbrt": _transcendental(np.cbrt),
}.items()}
LOWERING["pow"] = LOWERING["pow_float"]       # (the op table's name of float ** float)
