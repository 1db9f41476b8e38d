"""exp, exp2, expm1 and the hyperbolic functions built on expm1."""
from __future__ import annotations

from .constants import LOG2E_STR, coeffs, split_constant
from .emitter import Builder

# exp family ----------------------------------------------------------------------------------

def exp_limits(scalar):
    # clamp bounds: beyond them the result is inf / 0 anyway, and n stays in int range
    return (-104.0, 89.0) if scalar == "float" else (-746.0, 710.0)


def clamp(b: Builder, x, lo, hi):
    """min(max(x, lo), hi); NaN becomes lo (so later fptosi never sees NaN)."""
    x = b.sel(b.cmp("ogt", x, hi), hi, x)
    return b.sel(b.cmp("oge", x, lo), x, lo)


def _scale(b: Builder, p: str, n: str, extra: int = 0) -> str:
    """p * 2**(n + extra) in two steps, so that subnormal results and overflow come out right."""
    n1 = b.ashr(n, 1)
    n2 = b.iadd(b.isub(n, n1), extra) if extra else b.isub(n, n1)
    return b.mul(b.mul(p, b.pow2i(n1)), b.pow2i(n2))


def exp_core(b: Builder, x: str, lo_part: str | None = None, extra: int = 0) -> str:
    """exp(x [+ lo_part]) * 2**extra for x already clamped (finite)."""
    l1, l2 = split_constant("ln2_cw", b.scalar)
    n = b.rint(b.mul(x, float(LOG2E_STR)))
    r = b.fma(n, -l1, x)  # exact: the product is exact inside the fma and r is small
    r = b.fma(n, -l2, r)
    if lo_part is not None:
        r = b.add(r, lo_part)
    p = b.add(b.fma(b.mul(r, r), b.poly(r, coeffs("exp", b.scalar)), r), 1.0)
    return _scale(b, p, b.to_int(n), extra)


def exp(b, x):
    lo, hi = exp_limits(b.scalar)
    v = exp_core(b, clamp(b, x, lo, hi))
    return b.sel(b.isnan(x), x, v)


def exp2(b, x):
    lo, hi = (-152.0, 129.0) if b.scalar == "float" else (-1077.0, 1025.0)
    xc = clamp(b, x, lo, hi)
    n = b.rint(xc)
    r = b.sub(xc, n)  # exact
    p = b.fma(r, b.poly(r, coeffs("exp2", b.scalar)), 1.0)
    v = _scale(b, p, b.to_int(n))
    return b.sel(b.isnan(x), x, v)


def _expm1_core(b: Builder, x: str, big_extra: int = 0) -> tuple[str, str]:
    """(value, big) for x clamped to [-lo, hi] finite.

    value = expm1(x) where n = rint(x/ln2) is small, and exp(x) * 2**big_extra where n is so
    large that the -1 no longer matters (mask ``big``); the second form cannot overflow early.
    """
    l1, l2 = split_constant("ln2_cw", b.scalar)
    n = b.rint(b.mul(x, float(LOG2E_STR)))
    r = b.fma(n, -l1, x)
    r = b.fma(n, -l2, r)
    # q = expm1(r) = r + r^2/2 + r^3 M(r)
    q = b.fma(b.mul(r, r), b.fma(r, b.poly(r, coeffs("expm1", b.scalar)), 0.5), r)
    ni = b.to_int(n)
    big = b.icmp("sgt", ni, b.mant + 2)
    nsmall = b.seli(big, 0, ni)
    s = b.pow2i(nsmall)
    # 2^n (1 + q) - 1 = 2^n q + (2^n - 1); 2^n - 1 is exact for the n used here
    small_v = b.fma(s, q, b.sub(s, 1.0))
    big_v = _scale(b, b.add(q, 1.0), ni, big_extra)
    return b.sel(big, big_v, small_v), big


def expm1(b, x):
    lo, hi = (-40.0, 89.0) if b.scalar == "float" else (-60.0, 710.0)
    v, _ = _expm1_core(b, clamp(b, x, lo, hi))
    v = b.sel(b.cmp("oeq", x, 0.0), x, v)  # -0 stays -0
    return b.sel(b.isnan(x), x, v)


def sinh(b, x):
    # sinh|x| = (t + t/(t+1)) / 2 with t = expm1|x|: all terms positive, no cancellation
    a = b.abs(x)
    hi = 90.0 if b.scalar == "float" else 711.0
    ac = b.sel(b.cmp("olt", a, hi), a, hi)  # NaN -> hi (fixed below)
    t, big = _expm1_core(b, ac, big_extra=-1)
    small_v = b.mul(b.add(t, b.div(t, b.add(t, 1.0))), 0.5)
    v = b.sel(big, t, small_v)
    v = b.copysign(v, x)
    return b.sel(b.isnan(x), x, v)


def cosh(b, x):
    a = b.abs(x)
    hi = 90.0 if b.scalar == "float" else 711.0
    ac = b.sel(b.cmp("olt", a, hi), a, hi)
    t, big = _expm1_core(b, ac, big_extra=-1)
    e = b.add(t, 1.0)
    small_v = b.fma(e, 0.5, b.div(0.5, e))
    v = b.sel(big, t, small_v)
    return b.sel(b.isnan(x), x, v)


def tanh(b, x):
    # tanh|x| = t / (t + 2) with t = expm1(2|x|); |x| >= 10 (float) / 20 (double) rounds to 1
    a = b.abs(x)
    hi = 10.0 if b.scalar == "float" else 20.0
    ac = b.sel(b.cmp("olt", a, hi), a, hi)
    t, _ = _expm1_core(b, b.add(ac, ac))
    v = b.div(t, b.add(t, 2.0))
    v = b.copysign(v, x)
    return b.sel(b.isnan(x), x, v)
