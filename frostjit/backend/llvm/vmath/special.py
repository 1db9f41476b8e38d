"""log1p, the inverse hyperbolic functions, lgamma and erfinv.

``asinh``/``acosh``/``atanh`` are the classic log1p formulations (no cancellation near 0 or 1)
in the operand's precision.  ``lgamma`` and ``erfinv`` are computed in double precision (a
``Float32`` operand is extended and the result rounded once), which keeps the float32 result
within one ULP without separate single-precision fits.
"""
from __future__ import annotations

import math

from .constants import INF, NAN, split_constant
from .emitter import Builder
from .erf import ERF_SPLIT, erf_small, log_erfc
from .exponential import clamp, exp, exp_core, exp_limits
from .logarithm import log
from .trig import _sin_cos_poly

_LN2 = math.log(2.0)


def log1p(b: Builder, x: str) -> str:
    """log(1 + x): log(u) + (x - (u - 1)) / u with u = 1 + x rounded (the correction restores
    the bits of x that the rounding of u dropped)."""
    u = b.add(x, 1.0)
    corr = b.div(b.sub(x, b.sub(u, 1.0)), u)
    ok = b.band(b.cmp("ogt", u, 0.0), b.cmp("olt", u, INF))
    v = b.add(log(b, u), b.sel(ok, corr, 0.0))
    return b.sel(b.cmp("oeq", x, 0.0), x, v)      # -0 stays -0


def _huge(b: Builder) -> float:
    # beyond it, sqrt(x^2 + 1) == x to working precision: asinh/acosh are log(2x)
    return 2.0 ** 28 if b.scalar == "double" else 2.0 ** 12


def asinh(b: Builder, x: str) -> str:
    a = b.abs(x)
    a2 = b.mul(a, a)
    small_v = log1p(b, b.add(a, b.div(a2, b.add(b.sqrt(b.add(a2, 1.0)), 1.0))))
    big_v = b.add(log(b, a), _LN2)
    v = b.sel(b.cmp("ogt", a, _huge(b)), big_v, small_v)
    return b.copysign(v, x)


def acosh(b: Builder, x: str) -> str:
    t = b.sub(x, 1.0)
    small_v = log1p(b, b.add(t, b.sqrt(b.fma(t, t, b.add(t, t)))))   # x < 1: sqrt of a negative: NaN
    big_v = b.add(log(b, x), _LN2)
    return b.sel(b.cmp("ogt", x, _huge(b)), big_v, small_v)


def atanh(b: Builder, x: str) -> str:
    # 0.5 log1p(2a / (1 - a)), rewritten for a < 1/2 so the argument keeps a's low bits
    a = b.abs(x)
    t = b.add(a, a)
    one_minus = b.sub(1.0, a)
    small_arg = b.add(t, b.div(b.mul(t, a), one_minus))
    big_arg = b.div(t, one_minus)
    arg = b.sel(b.cmp("olt", a, 0.5), small_arg, big_arg)
    v = b.mul(log1p(b, arg), 0.5)
    return b.copysign(v, x)


# -- computed in double ---------------------------------------------------------------------------

def _in_double(kernel):
    """``kernel(d, x, state)`` on a double builder; a float operand is extended and the result
    rounded once."""
    def run(b: Builder, x: str, state: dict) -> str:
        if b.scalar == "double":
            return kernel(b, x, state)
        d = b.other("double")
        xd = d._v(f"fpext {b.F} {x} to {d.F}")
        return b._v(f"fptrunc {d.F} {kernel(d, xd, state)} to {b.F}")
    return run


#: lgamma(2 + t) = sum_k c_k t^k, c_1 = 1 - Euler's gamma, c_k = (-1)^k (zeta(k) - 1) / k (radius
#: of convergence 2; 42 terms reach double precision for |t| <= 3/4), and lgamma(1 + t), c_1 = -gamma,
#: c_k = (-1)^k zeta(k) / k (radius 1; 28 terms for |t| <= 1/4).  Computed with mpmath at 40 digits.
_LGAMMA2_TAYLOR = (
    0.0, 0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
    -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
    -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05,
    -9.439488275268397e-06, 4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
    -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
    -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09,
    -1.1921401405860912e-09, 5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
    -6.4229645638381e-11, 3.1044247747322276e-11, -1.5021384080754142e-11, 7.275974480239079e-12,
    -3.527742476575915e-12, 1.711991790559618e-12, -8.315385841420285e-13, 4.04220052528944e-13,
    -1.9664756310966165e-13, 9.573630387838556e-14, -4.6640760264283744e-14, 2.2737369600659724e-14,
    -1.1091399470834522e-14, 5.413659156725363e-15,
)
_LGAMMA1_TAYLOR = (
    0.0, -0.5772156649015329, 0.8224670334241132, -0.40068563438653143, 0.27058080842778454,
    -0.20738555102867398, 0.1695571769974082, -0.1440498967688461, 0.12550966952474304, -0.11133426586956469,
    0.1000994575127818, -0.09095401714582904, 0.083353840546109, -0.0769325164113522, 0.07143294629536133,
    -0.06666870588242046, 0.06250095514121304, -0.058823978658684585, 0.055555767627403614,
    -0.05263167937961666, 0.05000004769810169, -0.047619070330142226, 0.04545455629320467,
    -0.04347826605304026, 0.04166666915034121, -0.04000000119214014, 0.03846153903467518,
    -0.037037037312989324, 0.035714285847333355,
)
#: Stirling's series: lgamma(y) = (y - 1/2)(log y - 1) + (log(2 pi) - 1) / 2 + sum_k s_k / y^(2k-1),
#: s_k = B_2k / (2k (2k - 1)); nine terms reach double precision for y >= 10.
_STIRLING = (0.08333333333333333, -0.002777777777777778, 0.0007936507936507937, -0.0005952380952380953,
             0.0008417508417508417, -0.0019175269175269176, 0.00641025641025641, -0.029550653594771242,
             0.17964437236883057)
_HALF_LOG_2PI_MINUS_HALF = 0.9189385332046728 - 0.5
_LOG_PI = 1.1447298858494002
_STIRLING_FROM = 10.0


def _lgamma_positive(b: Builder, y: str):
    """lgamma(y) for y >= 0 (0 gives +inf; +inf gives +inf).

    [0, 1/2): lgamma(y + 2) - log(y (y + 1)); [1/2, 3/4): lgamma(y + 1) - log y (no cancellation:
    both terms positive); [3/4, 5/4): the series around 1; [5/4, 5/2): the series around 2 (so
    the roots 1 and 2 and the minimum near 1.46 keep their relative accuracy); [5/2, 10): the
    recurrence down to [3/2, 5/2); from 10: Stirling."""
    r1 = b.cmp("olt", y, 0.5)
    r2 = b.cmp("olt", y, 0.75)
    r2b = b.cmp("olt", y, 1.25)
    r3 = b.cmp("olt", y, 2.5)
    r5 = b.cmp("oge", y, _STIRLING_FROM)
    # 2.5 <= y < 10: lgamma(y) = lgamma(y - n) + log((y-1)(y-2)...(y-n)), y - n in [1.5, 2.5)
    n = b.floor(b.sub(y, 1.5))
    prod = None
    for k in range(1, int(_STIRLING_FROM)):
        factor = b.sel(b.cmp("ole", float(k), n), b.sub(y, float(k)), 1.0)
        prod = factor if prod is None else b.mul(prod, factor)
    # the one logarithm every range needs (log 1 = 0 where none is)
    arg = b.sel(r1, b.mul(y, b.add(y, 1.0)), b.sel(r2, y, b.sel(r3, 1.0, b.sel(r5, y, prod))))
    L = log(b, arg)
    t = b.sel(r1, y, b.sel(r2b, b.sub(y, 1.0), b.sel(r3, b.sub(y, 2.0), b.sub(b.sub(y, n), 2.0))))
    around2 = b.poly(t, _LGAMMA2_TAYLOR)
    around1 = b.poly(t, _LGAMMA1_TAYLOR)
    T = b.sel(b.band(b.cmp("oge", y, 0.75), r2b), around1, around2)
    small = b.sel(r2, b.sub(T, L), b.add(T, L))          # r1, r2: T - L; elsewhere T + L (L = 0 up to 2.5)
    w = b.div(1.0, y)
    series = b.mul(w, b.poly(b.mul(w, w), _STIRLING))
    stirling = b.add(b.fma(b.sub(y, 0.5), b.sub(L, 1.0), _HALF_LOG_2PI_MINUS_HALF), series)
    return b.sel(r5, stirling, small)


def _lgamma(b: Builder, x: str, state: dict) -> str:
    z = b.abs(x)
    positive = _lgamma_positive(b, z)
    # x < 0: reflection, lgamma(x) = log(pi / |z sin(pi z)|) - lgamma(z) with z = -x
    r = b.abs(b.sub(z, b.rint(z)))                        # in [0, 1/2], exact
    upper = b.cmp("ogt", r, 0.25)
    w = b.sel(upper, b.sub(0.5, r), r)                    # sin(pi r) = cos(pi (1/2 - r))
    ph, pl = split_constant("pi", b.scalar)
    theta = b.fma(w, ph, b.mul(w, pl))
    s, c = _sin_cos_poly(b, theta)
    # two logarithms: z * sin(pi z) underflows for tiny z, where lgamma(x) ~ -log(z)
    reflected = b.sub(b.sub(b.sub(_LOG_PI, log(b, z)), log(b, b.sel(upper, c, s))), positive)
    pole = b.cmp("oeq", b.floor(z), z)                    # 0, the negative integers, -inf
    v = b.sel(b.cmp("olt", x, 0.0), b.sel(pole, INF, reflected), positive)
    return b.sel(b.isnan(x), x, v)


lgamma = _in_double(_lgamma)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_WINITZKI = 0.147
_CF_FROM = 3.0          # erfc by its continued fraction from here on
_CF_DEPTH = 28          # relative error < 4e-16 for y >= 3 (measured against mpmath)


def _erfc_cf(b: Builder, y: str) -> str:
    """erfc(max(y, 3)) to double precision: exp(-y^2) / (sqrt(pi) K), K the continued fraction
    y + (1/2) / (y + 1 / (y + (3/2) / ...)) evaluated from depth 28 (log_erfc's fit serves erf,
    whose value rounds to 1 out there, and loses erfc's relative accuracy beyond ~3)."""
    yc = b.sel(b.cmp("ogt", y, _CF_FROM), y, _CF_FROM)
    k = yc
    for n in range(_CF_DEPTH, 0, -1):
        k = b.add(yc, b.div(n / 2.0, k))
    h = b.mul(yc, yc)
    lo = b.fma(yc, yc, b.neg(h))                          # y^2 = h + lo exactly
    lo_lim, hi_lim = exp_limits(b.scalar)
    e = exp_core(b, clamp(b, b.neg(h), lo_lim, hi_lim), b.neg(lo))
    return b.div(b.mul(e, 1.0 / math.sqrt(math.pi)), k)


def _erfinv(b: Builder, x: str, state: dict) -> str:
    a = b.abs(x)
    inside = b.cmp("olt", a, 1.0)
    a = b.sel(inside, a, 0.0)                             # +-1, beyond and NaN: fixed at the end
    one_minus = b.sub(1.0, a)                             # exact where it matters (a >= 1/2)
    # Winitzki's closed form (relative error < 2e-3) ...
    ln = log(b, b.mul(one_minus, b.add(a, 1.0)))
    t = b.add(2.0 / (math.pi * _WINITZKI), b.mul(ln, 0.5))
    y = b.sqrt(b.sub(b.sqrt(b.sub(b.mul(t, t), b.mul(ln, 1.0 / _WINITZKI))), t))
    # ... then Newton steps on erf(y) = a; beyond 1/2 on erfc(y) = 1 - a, whose relative
    # accuracy survives where erf(y) rounds to 1.  Two steps with erf's own fit of log(erfc)
    # (accurate to ~1e-6 far out), two with the continued fraction there.
    tail = b.cmp("ogt", a, 0.5)
    lo, hi = exp_limits(b.scalar)
    for step in range(4):
        erf_y = erf_small(b, y)
        erfc_y = exp_core(b, clamp(b, log_erfc(b, y), lo, hi))
        if step >= 2:
            erfc_y = b.sel(b.cmp("olt", y, _CF_FROM), erfc_y, _erfc_cf(b, y))
        erfc_y = b.sel(b.cmp("olt", y, ERF_SPLIT), b.sub(1.0, erf_y), erfc_y)
        resid = b.sel(tail, b.sub(one_minus, erfc_y), b.sub(erf_y, a))
        slope = b.mul(exp(b, b.neg(b.mul(y, y))), _TWO_OVER_SQRT_PI)
        y = b.sub(y, b.div(resid, slope))
    v = b.copysign(b.sel(inside, y, INF), x)                     # +-1 -> +-inf
    v = b.sel(b.cmp("ogt", b.abs(x), 1.0), abs(NAN), v)         # outside [-1, 1]: +NaN, as Dr.Jit 1.5
    return b.sel(b.isnan(x), x, v)


erfinv = _in_double(_erfinv)
