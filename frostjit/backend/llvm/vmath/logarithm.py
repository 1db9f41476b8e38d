"""log and log2: exponent split, then log(1+f) with s = f/(2+f)."""
from __future__ import annotations

import math

from .constants import INF, NAN, coeffs, split_constant
from .emitter import Builder

# log family ----------------------------------------------------------------------------------

def log_parts(b: Builder, x: str):
    """For positive finite x (subnormals allowed) return (e, f, hfsq, s, R) with
    x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), log(1+f) = f - (hfsq - s (hfsq + R))."""
    tiny = 2.0**-126 if b.scalar == "float" else 2.0**-1022
    shift = 25 if b.scalar == "float" else 54
    sub = b.cmp("olt", x, tiny)
    x = b.sel(sub, b.mul(x, 2.0**shift), x)  # subnormals: scale into the normal range
    ix = b.as_int(x)
    e = b.isub(b.lshr(ix, b.mant), b.bias)
    e = b.isub(e, b.seli(sub, shift, 0))
    m = b.as_float(b.ior(b.iand(ix, (1 << b.mant) - 1), b.bias << b.mant))  # in [1, 2)
    hi = b.cmp("ogt", m, math.sqrt(2.0))
    m = b.sel(hi, b.mul(m, 0.5), m)
    e = b.iadd(e, b.zext_mask(hi))
    f = b.sub(m, 1.0)  # exact (Sterbenz)
    s = b.div(f, b.add(f, 2.0))
    z = b.mul(s, s)
    R = b.mul(z, b.poly(z, coeffs("log", b.scalar)))
    hfsq = b.mul(b.mul(f, f), 0.5)
    return b.to_float(e), f, hfsq, s, R


def _log_special(b, x, v):
    v = b.sel(b.cmp("oeq", x, 0.0), -INF, v)
    v = b.sel(b.cmp("oeq", x, INF), INF, v)
    return b.sel(b.cmp("oge", x, 0.0), v, NAN)  # negative or NaN -> NaN


def _log_sanitize(b, x):
    ok = b.band(b.cmp("ogt", x, 0.0), b.cmp("olt", x, INF))
    return b.sel(ok, x, 1.0)


def log(b, x):
    e, f, hfsq, s, R = log_parts(b, _log_sanitize(b, x))
    h, l = split_constant("ln2_log", b.scalar)  # h has trailing zeros: e*h is exact
    inner = b.fma(e, l, b.mul(s, b.add(hfsq, R)))
    v = b.fma(e, h, b.sub(f, b.sub(hfsq, inner)))
    return _log_special(b, x, v)


def log2(b, x):
    e, f, hfsq, s, R = log_parts(b, _log_sanitize(b, x))
    L = b.sub(f, b.sub(hfsq, b.mul(s, b.add(hfsq, R))))
    h, l = split_constant("log2e", b.scalar)
    y = b.fma(L, h, b.mul(L, l))
    return _log_special(b, x, b.add(e, y))
