"""Dr.Jit 1.5's ``log``, ``log2``, ``erfinv`` and ``sincos``, operation for operation.

The normal variates of :class:`~frostjit.random.PCG32`, :class:`~frostjit.random.Philox4x32` and
:func:`frostjit.rng` go through a logarithm, an inverse error function or a sine/cosine.  To be
bit-exact with Dr.Jit for the same seed, these must round exactly as Dr.Jit's do, so they are
rebuilt here from the published approximations Dr.Jit uses -- Cephes ``logf``/``log`` and
``sinf``/``sin`` (Stephen L. Moshier, public domain) and Mike Giles' single-precision
``erfinv`` ("Approximating the erfinv function", GPU Computing Gems, 2011) -- evaluated in the
operation order that reproduces Dr.Jit's results bit for bit (Estrin's scheme with fused
multiply-adds, the same constants and range reductions; established by comparing outputs).
frostjit's own :func:`frostjit.log` etc. are different (more accurate) approximations and differ
from these in the last bit for a fraction of a percent of inputs.

Domains: only what the generators feed in, checked exhaustively for ``Float32`` and on millions
of samples for ``Float64`` (``tests/random/test_cephes.py``): ``log``/``log2`` of ``0`` (-inf)
and of positive normal numbers, ``erfinv`` on ``[-1, 1)``, ``sincos`` on ``[0, 2 pi]``.  They
are private helpers, not general-purpose math functions.

Every function takes and returns 1-D JIT float arrays (``Float32`` or ``Float64``, plain or AD
types) and is built from frostjit's elementwise operations, so it fuses into the caller's kernel.
"""
from __future__ import annotations

import math

from ..array import registry
from ..functions.math import fma, reinterpret_array, select, sqrt
from ..trace.dtypes import Float64, Int32, Int64, UInt32, UInt64

# Cephes logf: log(1 + t) = t - t^2/2 + t^3 P(t), coefficients from the highest power down.
_LOGF_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
           -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)
# Cephes log (double): log(1 + t) = t - t^2/2 + t^3 P(t) / Q(t), Q monic.
_LOG_P = (1.01875663804580931796E-4, 4.97494994976747001425E-1, 4.70579119878881725854E0,
          1.44989225341610930846E1, 1.79368678507819816313E1, 7.70838733755885391666E0)
_LOG_Q = (1.0, 1.12873587189167450590E1, 4.52279145837532221105E1, 8.29875266912776603211E1,
          7.11544750618563894466E1, 2.31251620126765340583E1)
_LN2_HI, _LN2_LO = 0.693359375, -2.121944400546905827679e-4     # ln 2 = HI + LO, HI exact in 9 bits
_LOG2E = 1.4426950408889634073599
_SQRT_HALF = 0.70710678118654752440

# Giles' single-precision erfinv, for w = -log(1 - x^2) < 5 and >= 5 (Dr.Jit uses them in
# double precision too).
_ERFINV_A = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_B = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

# Cephes sinf/cosf and sin/cos: Cody-Waite reduction by pi/4 in three parts, then polynomials
# in z = r^2 on [-pi/4, pi/4].
_SINF = (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)
_COSF = (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)
_DPF = (0.78515625, 2.4187564849853515625e-4, 3.77489497744594108e-8)
_SIN = (1.58962301576546568060E-10, -2.50507477628578072866E-8, 2.75573136213857245213E-6,
        -1.98412698295895385996E-4, 8.33333333332211858878E-3, -1.66666666666666307295E-1)
_COS = (-1.13585365213876817300E-11, 2.08757008419747316778E-9, -2.75573141792967388112E-7,
        2.48015872888517045348E-5, -1.38888888888730564116E-3, 4.16666666666665929218E-2)
_DP = (7.85398125648498535156E-1, 3.77489470793079817668E-8, 2.69515142907905952645E-15)
_FOUR_OVER_PI = 4.0 / math.pi


def _like(x, vt):
    """The array class of ``vt`` on ``x``'s backend (integer types are never AD types)."""
    return registry.flat_type(x._backend, vt, x._is_ad)


def _is_double(x) -> bool:
    return x._vt is Float64


def estrin(t, coeffs):
    """Polynomial ``coeffs[0] * t^(n-1) + ... + coeffs[-1]`` by Estrin's scheme.

    Neighbouring coefficients are paired with ``fma(t, hi, lo)``, then pairs of pairs with
    ``t^2``, ``t^4``, ... (each power the square of the last); an odd coefficient left over at
    a level is carried up unchanged.  This is Dr.Jit's evaluation order, which decides the
    rounding of the result.
    """
    level = list(reversed(coeffs))           # lowest power first
    power = t
    while len(level) > 1:
        nxt = [fma(power, level[k + 1], level[k]) for k in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
        if len(level) > 1:
            power = power * power
    return level[0]


def _log_parts(x):
    """``(t, z, y, e)`` with ``x = 2^e (1 + t)``, ``1 + t`` in ``[sqrt(1/2), sqrt(2))``,
    ``z = t^2`` and ``y = t^3 P(t) [/ Q(t)]`` (the higher-order part of ``log(1 + t)``)."""
    double = _is_double(x)
    uint = _like(x, UInt64 if double else UInt32)
    sint = _like(x, Int64 if double else Int32)
    bits = reinterpret_array(uint, x)
    if double:
        e = sint(bits >> 52) - 1022
        m = reinterpret_array(type(x), (bits & 0x800FFFFFFFFFFFFF) | 0x3FE0000000000000)
    else:
        e = sint(bits >> 23) - 126
        m = reinterpret_array(type(x), (bits & 0x807FFFFF) | 0x3F000000)
    small = m < _SQRT_HALF                      # m in [0.5, 1): move sqrt(1/2) <= 1 + t < sqrt(2)
    e = select(small, e - 1, e)
    t = select(small, m + m, m) - 1.0
    z = t * t
    if double:
        y = (t * z) * (estrin(t, _LOG_P) / estrin(t, _LOG_Q))
    else:
        y = estrin(t, _LOGF_P) * (t * z)
    return t, z, y, type(x)(e)


def log(x):
    """Natural logarithm as Dr.Jit 1.5 computes it (``x`` >= 0, normal or zero; ``log(0)`` is -inf)."""
    t, z, y, e = _log_parts(x)
    y = fma(e, _LN2_LO, y)
    y = fma(z, -0.5, y)
    r = fma(e, _LN2_HI, t + y)
    return select(x == 0.0, -math.inf, r)


def log2(x):
    """Base-2 logarithm as Dr.Jit 1.5 computes it (``x`` >= 0, normal or zero)."""
    t, z, y, e = _log_parts(x)
    y = fma(z, -0.5, y)
    r = fma(t + y, _LOG2E, e)
    return select(x == 0.0, -math.inf, r)


def erfinv(x):
    """Inverse error function as Dr.Jit 1.5 computes it, on ``[-1, 1)`` (``erfinv(-1)`` is NaN,
    as in Dr.Jit)."""
    w = -log((1.0 - x) * (1.0 + x))
    central = estrin(w - 2.5, _ERFINV_A)
    tail = estrin(sqrt(w) - 3.0, _ERFINV_B)
    return select(w < 5.0, central, tail) * x


def sincos(x):
    """``(sin(x), cos(x))`` as Dr.Jit 1.5 computes them, for ``0 <= x <= 2 pi``."""
    double = _is_double(x)
    sint = _like(x, Int64 if double else Int32)
    dp1, dp2, dp3 = _DP if double else _DPF
    j = sint(x * _FOUR_OVER_PI)                 # octant (truncation: x >= 0)
    j = (j + 1) & ~1                            # even octant: r in [-pi/4, pi/4]
    y = type(x)(j)
    # The reduction is three plain multiply-subtracts (not fused): this is where Dr.Jit's
    # rounding differs from an fma chain, next to multiples of pi/4.
    r = x - y * dp1
    r = r - y * dp2
    r = r - y * dp3
    z = r * r
    s = fma(estrin(z, _SIN if double else _SINF) * z, r, r)
    c = fma(estrin(z, _COS if double else _COSF) * z, z, fma(z, -0.5, 1.0))
    swap = (j & 2) != 0
    sin_x = select(swap, c, s)
    cos_x = select(swap, s, c)
    sin_x = select((j & 4) != 0, -sin_x, sin_x)
    cos_x = select(((j + 2) & 4) != 0, -cos_x, cos_x)
    return sin_x, cos_x
