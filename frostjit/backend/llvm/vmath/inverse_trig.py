"""atan, atan2, asin, acos."""
from __future__ import annotations

from .constants import INF, coeffs, split_constant
from .emitter import Builder

# inverse trigonometric -------------------------------------------------------------------------

def _atan_core(b: Builder, t: str) -> str:
    """atan(t) for t >= 0 (inf allowed): reduce to |u| <= tan(pi/8), then u + u^3 A(u^2)."""
    big = b.cmp("ogt", t, 2.414213562373095)
    mid = b.cmp("ogt", t, 0.41421356237309503)
    num = b.sel(big, -1.0, b.sel(mid, b.sub(t, 1.0), t))
    den = b.sel(big, t, b.sel(mid, b.add(t, 1.0), 1.0))
    u = b.div(num, den)
    z = b.mul(u, u)
    p = b.fma(b.mul(u, z), b.poly(z, coeffs("atan", b.scalar)), u)
    h2, l2 = split_constant("pio2", b.scalar)
    h4, l4 = split_constant("pio4", b.scalar)
    base = b.sel(big, h2, b.sel(mid, h4, 0.0))
    base_lo = b.sel(big, l2, b.sel(mid, l4, 0.0))
    return b.add(base, b.add(p, base_lo))


def atan(b, x):
    return b.copysign(_atan_core(b, b.abs(x)), x)


def atan2(b, y, x):
    ax, ay = b.abs(x), b.abs(y)
    swap = b.cmp("ogt", ay, ax)
    num = b.sel(swap, ax, ay)
    den = b.sel(swap, ay, ax)
    t = b.div(num, den)
    t = b.sel(b.cmp("oeq", num, INF), 1.0, t)  # both infinite
    t = b.sel(b.cmp("oeq", den, 0.0), 0.0, t)  # both zero
    a = _atan_core(b, t)
    h2, l2 = split_constant("pio2", b.scalar)
    a = b.sel(swap, b.add(b.sub(h2, a), l2), a)
    h, l = split_constant("pi", b.scalar)
    xneg = b.icmp("slt", b.as_int(x), 0)
    a = b.sel(xneg, b.add(b.sub(h, a), l), a)
    v = b.copysign(a, y)
    return b.sel(b.cmp("uno", x, y), b.add(x, y), v)


def _asin_parts(b, x):
    """(p, big): p = asin(s) with s = |x| (small) or sqrt((1-|x|)/2) (big, |x| > 1/2)."""
    a = b.abs(x)
    big = b.cmp("ogt", a, 0.5)
    z = b.sel(big, b.mul(b.sub(1.0, a), 0.5), b.mul(a, a))
    s = b.sel(big, b.sqrt(z), a)
    p = b.fma(b.mul(s, z), b.poly(z, coeffs("asin", b.scalar)), s)
    return p, big


def asin(b, x):
    p, big = _asin_parts(b, x)
    h2, l2 = split_constant("pio2", b.scalar)
    v = b.sel(big, b.add(b.fma(p, -2.0, h2), l2), p)  # asin|x| = pi/2 - 2 asin(sqrt((1-|x|)/2))
    return b.copysign(v, x)


def acos(b, x):
    p, big = _asin_parts(b, x)
    h2, l2 = split_constant("pio2", b.scalar)
    h, l = split_constant("pi", b.scalar)
    small_v = b.sub(h2, b.sub(b.copysign(p, x), l2))  # pi/2 - asin(x)
    neg = b.cmp("olt", x, 0.0)
    big_v = b.sel(neg, b.add(b.fma(p, -2.0, h), l), b.mul(p, 2.0))
    return b.sel(big, big_v, small_v)
