"""pow (in float64, log carried as a double-double) and cbrt (Halley steps in float64)."""
from __future__ import annotations

from .constants import INF, NAN, split_constant
from .emitter import Builder
from .exponential import clamp, exp_core, exp_limits
from .logarithm import log_parts

# pow -----------------------------------------------------------------------------------------

def _two_sum(b, a, c):
    s = b.add(a, c)
    bb = b.sub(s, a)
    err = b.add(b.sub(a, b.sub(s, bb)), b.sub(c, bb))
    return s, err


def _pow_core_f64(d: Builder, ax: str, y: str) -> str:
    """exp(y * log(ax)) for positive finite ax and finite y, log carried as double-double."""
    e, f, hfsq, s, R = log_parts(d, ax)
    h, l = split_constant("ln2_log", "double")
    hf_err = d.fma(d.mul(f, 0.5), f, d.neg(hfsq))  # exact rounding error of hfsq
    small = d.sub(d.fma(e, l, d.mul(s, d.add(hfsq, R))), hf_err)
    s1, err1 = _two_sum(d, d.mul(e, h), f)
    s2, err2 = _two_sum(d, s1, d.neg(hfsq))
    lo = d.add(d.add(err1, err2), small)
    lhi = d.add(s2, lo)
    llo = d.sub(lo, d.sub(lhi, s2))
    phi = d.mul(y, lhi)
    plo = d.fma(y, llo, d.fma(y, lhi, d.neg(phi)))
    lo_lim, hi_lim = exp_limits("double")
    pc = clamp(d, phi, lo_lim, hi_lim)
    inrange = d.cmp("oeq", pc, phi)
    v = exp_core(d, pc, lo_part=d.sel(inrange, plo, 0.0))
    return v


def pow(b, x, y):
    d = b if b.scalar == "double" else b.other("double")
    xd = x if d is b else d._v(f"fpext {b.F} {x} to {d.F}")
    yd = y if d is b else d._v(f"fpext {b.F} {y} to {d.F}")
    ax = d.abs(xd)
    ay = d.abs(yd)
    finite_x = d.band(d.cmp("ogt", ax, 0.0), d.cmp("olt", ax, INF))
    finite_y = d.cmp("olt", ay, INF)
    v = _pow_core_f64(d, d.sel(finite_x, ax, 1.0), d.sel(finite_y, yd, 0.0))
    # integer / odd-integer tests on y (every |y| >= 2^53 is an even integer)
    yint = d.band(d.cmp("oeq", d.floor(yd), yd), finite_y)
    half = d.mul(yd, 0.5)
    yodd = d.band(yint, d.cmp("one", d.floor(half), half))
    ylt0 = d.cmp("olt", yd, 0.0)
    v = d.sel(d.cmp("oeq", ax, 0.0), d.sel(ylt0, INF, 0.0), v)
    v = d.sel(d.cmp("oeq", ax, INF), d.sel(ylt0, 0.0, INF), v)
    one_or = lambda lt, gt: d.sel(d.cmp("olt", ax, 1.0), lt, d.sel(d.cmp("ogt", ax, 1.0), gt, 1.0))  # noqa: E731
    v = d.sel(d.cmp("oeq", yd, INF), one_or(0.0, INF), v)
    v = d.sel(d.cmp("oeq", yd, -INF), one_or(INF, 0.0), v)
    xneg = d.icmp("slt", d.as_int(xd), 0)
    v = d.flip_sign(v, d.band(xneg, yodd))
    neg_nonint = d.band(d.band(d.cmp("olt", xd, 0.0), d.cmp("one", ax, INF)), d.band(finite_y, d._v(f"xor {d.M} {yint}, {_true(d)}")))
    v = d.sel(neg_nonint, NAN, v)
    v = d.sel(d.cmp("uno", xd, yd), NAN, v)
    v = d.sel(d.bor(d.cmp("oeq", yd, 0.0), d.cmp("oeq", xd, 1.0)), 1.0, v)
    if d is b:
        return v
    return b._v(f"fptrunc {d.F} {v} to {b.F}")


def _true(b: Builder) -> str:
    return "true" if b.width == 1 else "splat (i1 true)"


# cbrt ----------------------------------------------------------------------------------------

def cbrt(b, x):
    # Work in double (float inputs are widened).  |x| = m 2^(3k) with m in [1, 8), so that the
    # iteration can neither overflow nor underflow; a bit-level estimate of cbrt(m) (~5 bits),
    # then Halley steps y <- y (y^3 + 2m) / (2 y^3 + m), each tripling the number of correct bits.
    d = b if b.scalar == "double" else b.other("double")
    xd = x if d is b else d._v(f"fpext {b.F} {x} to {d.F}")
    a = d.abs(xd)
    ok = d.band(d.cmp("ogt", a, 0.0), d.cmp("olt", a, INF))
    a = d.sel(ok, a, 1.0)
    sub = d.cmp("olt", a, 2.0**-1022)
    a = d.sel(sub, d.mul(a, 2.0**54), a)
    ia = d.as_int(a)
    e = d.isub(d.isub(d.lshr(ia, 52), 1023), d.seli(sub, 54, 0))
    k = d.isub(d._v(f"udiv {d.I} {d.iadd(e, 1200)}, {d.i(3)}"), 400)  # floor(e / 3)
    r = d.isub(e, d.iadd(d.iadd(k, k), k))
    m = d.as_float(d.ior(d.iand(ia, (1 << 52) - 1), d.shl(d.iadd(r, 1023), 52)))
    # bits/3 + 2/3 of the bias: exponent and mantissa both divided by three (roughly)
    y = d.as_float(d.iadd(d._v(f"udiv {d.I} {d.as_int(m)}, {d.i(3)}"), 682 << 52))
    for _ in range(3 if b.scalar == "double" else 2):
        y3 = d.mul(d.mul(y, y), y)
        y = d.mul(y, d.div(d.add(y3, d.add(m, m)), d.add(d.add(y3, y3), m)))
    if b.scalar == "double":
        # last Newton step on an fma residual: removes most of the rounding error of Halley
        y2 = d.mul(y, y)
        res = d.fma(y2, y, d.neg(m))
        y = d.sub(y, d.div(res, d.mul(y2, 3.0)))
    y = d.mul(y, d.pow2i(k))
    y = d.copysign(y, xd)
    y = d.sel(ok, y, d.add(xd, xd))  # 0, inf, NaN: x + x keeps sign of zero, inf, NaN
    if d is b:
        return y
    return b._v(f"fptrunc {d.F} {y} to {b.F}")
