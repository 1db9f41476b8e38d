"""sin, cos, tan (and sincos): reduction by pi/2 and the sin/cos polynomials."""
from __future__ import annotations

from functools import lru_cache

from .constants import INF, NAN, TWO_OVER_PI, coeffs, split_constant
from .emitter import Body, Builder


# float32 fast-path limit for sin/cos/tan: below it rint(x*2/pi) in float32 is off by at most a
# tiny fraction, so the reduced argument stays inside the fitted interval (pi/4 * 1.002).
_TRIG_FAST_LIMIT_F32 = 16384.0
# float64 Cody-Waite reduction with a 3 x 53-bit pi/2 is accurate up to about 2**40 (documented).


def _reduce_pio2_f32(b: Builder, x: str, state: dict) -> tuple[str, str]:
    """(r, q): x = q*pi/2 + r with |r| <= ~pi/4; q an integer vector (only q mod 4 matters).

    Fast path in float32 with a 3-part Cody-Waite constant and fma.  If any lane is large
    (|x| > 16384, finite) a uniform branch runs the same reduction in float64 for all lanes and
    those lanes take its result; float64 keeps r exact for |x| < 2**43.
    """
    c1, c2, c3 = split_constant("pio2_cw", "float")
    ax = b.abs(x)
    small = b.cmp("ole", ax, _TRIG_FAST_LIMIT_F32)  # false for NaN and inf
    xs = b.sel(small, x, 0.0)
    j = b.rint(b.mul(xs, TWO_OVER_PI))
    r = b.fma(j, -c1, xs)
    r = b.fma(j, -c2, r)
    r = b.fma(j, -c3, r)
    q = b.to_int(j)
    # uniform branch to the rare large-argument path
    big = b.band(b.cmp("une", ax, INF), b.cmp("ogt", ax, _TRIG_FAST_LIMIT_F32))
    anybig = big if b.width == 1 else b._v(f"call i1 @llvm.vector.reduce.or.v{b.width}i1({b.M} {big})")
    if b.width > 1:
        b.body.decls.add(f"declare i1 @llvm.vector.reduce.or.v{b.width}i1({b.M})")
    n = state.setdefault("blocks", 0) + 1
    state["blocks"] = n
    lines = b.body.lines
    lines.append(f"  br i1 {anybig}, label %big{n}, label %join{n}")
    lines.append(f"big{n}:")
    # The rare path lives in its own non-inlined function: inlined into every sin/cos of a
    # kernel it would double the compile time of trigonometry-heavy kernels.
    helper = _big_reduce_helper(b.width)
    state.setdefault("helpers", {})[helper[0]] = helper[1]
    b.body.decls.update(helper[2])
    pair = b._v(f"call {{ {b.F}, {b.I} }} @{helper[0]}({b.F} {x}, {b.M} {big}, {b.F} {r}, {b.I} {q})")
    r2 = b._v(f"extractvalue {{ {b.F}, {b.I} }} {pair}, 0")
    q2 = b._v(f"extractvalue {{ {b.F}, {b.I} }} {pair}, 1")
    lines.append(f"  br label %join{n}")
    lines.append(f"join{n}:")
    entry = state.get("cur", "entry")
    r = b._v(f"phi {b.F} [ {r}, %{entry} ], [ {r2}, %big{n} ]")
    q = b._v(f"phi {b.I} [ {q}, %{entry} ], [ {q2}, %big{n} ]")
    state["cur"] = f"join{n}"
    return r, q


@lru_cache(maxsize=None)
def _big_reduce_helper(width: int) -> tuple[str, str, frozenset]:
    """(symbol, definition, declarations) of the float64 reduction for lanes with |x| > 16384.

    Takes (x, big, r, q) and returns {r, q} with the ``big`` lanes replaced; float64 keeps r
    exact for |x| < 2**43.
    """
    body = Body()
    b = Builder(body, "float", width)
    d = b.other("double")
    xd = d._v(f"fpext {b.F} {b.sel('%big', '%x', 0.0)} to {d.F}")
    jd = d.rint(d.mul(xd, TWO_OVER_PI))
    d1, d2, d3 = split_constant("pio2_cw_d", "double")
    rd = d.fma(jd, -d1, xd)
    rd = d.fma(jd, -d2, rd)
    rd = d.fma(jd, -d3, rd)
    jm = d.fma(d.floor(d.mul(jd, 0.25)), -4.0, jd)  # j mod 4, exact, no int overflow
    rb = d._v(f"fptrunc {d.F} {rd} to {b.F}")
    qb = d._v(f"fptosi {d.F} {jm} to {b.I}")
    r2 = b.sel("%big", rb, "%r")
    q2 = b.seli("%big", qb, "%q")
    rt = f"{{ {b.F}, {b.I} }}"
    body.lines.append(f"  %p0 = insertvalue {rt} poison, {b.F} {r2}, 0")
    body.lines.append(f"  %p1 = insertvalue {rt} %p0, {b.I} {q2}, 1")
    symbol = f"fj_rpio2_big_{b.sfx}"
    text = "\n".join([f"define internal {rt} @{symbol}({b.F} %x, {b.M} %big, {b.F} %r, {b.I} %q) noinline {{",
                      "entry:", *body.lines, f"  ret {rt} %p1", "}", ""])
    return symbol, text, frozenset(body.decls)


def _reduce_pio2_f64(b: Builder, x: str) -> tuple[str, str]:
    """(r, q) for float64: 3-part Cody-Waite with fma; q = j mod 4 computed in floating point."""
    c1, c2, c3 = split_constant("pio2_cw", "double")
    xs = b.sel(b.cmp("one", b.abs(x), INF), x, 0.0)  # NaN/inf -> 0 (fixed by the caller)
    j = b.rint(b.mul(xs, TWO_OVER_PI))
    r = b.fma(j, -c1, xs)
    r = b.fma(j, -c2, r)
    r = b.fma(j, -c3, r)
    jm = b.fma(b.floor(b.mul(j, 0.25)), -4.0, j)
    return r, b.to_int(jm)


def _reduce_pio2(b, x, state):
    return _reduce_pio2_f32(b, x, state) if b.scalar == "float" else _reduce_pio2_f64(b, x)


def _sin_cos_poly(b: Builder, r: str) -> tuple[str, str]:
    """sin(r), cos(r) for |r| <= pi/4: r + r^3 S(r^2) and 1 - r^2/2 + r^4 C(r^2)."""
    z = b.mul(r, r)
    s = b.fma(b.mul(r, z), b.poly(z, coeffs("sin", b.scalar)), r)
    hz = b.mul(z, 0.5)
    w = b.sub(1.0, hz)
    # (1 - w) - hz recovers the rounding error of w, which matters near |r| = pi/4
    corr = b.sub(b.sub(1.0, w), hz)
    c = b.add(w, b.fma(b.mul(z, z), b.poly(z, coeffs("cos", b.scalar)), corr))
    return s, c


def sincos(b: Builder, x: str, state: dict, want=("sin", "cos")) -> dict:
    r, q = _reduce_pio2(b, x, state)
    s, c = _sin_cos_poly(b, r)
    odd = b.icmp("ne", b.iand(q, 1), 0)
    out = {}
    bad = b.cmp("ueq", b.abs(x), INF)  # NaN or inf -> NaN
    if "sin" in want:
        v = b.sel(odd, c, s)
        v = b.flip_sign(v, b.icmp("ne", b.iand(q, 2), 0))
        v = b.sel(b.cmp("oeq", x, 0.0), x, v)  # keep the sign of zero
        out["sin"] = b.sel(bad, NAN, v)
    if "cos" in want:
        v = b.sel(odd, s, c)
        v = b.flip_sign(v, b.icmp("ne", b.iand(b.iadd(q, 1), 2), 0))
        out["cos"] = b.sel(bad, NAN, v)
    if "tan" in want:
        # tan = s/c in even quadrants, -c/s in odd ones (period pi, so q&2 does not matter)
        v = b.div(b.sel(odd, b.neg(c), s), b.sel(odd, s, c))
        v = b.sel(b.cmp("oeq", x, 0.0), x, v)
        out["tan"] = b.sel(bad, NAN, v)
    return out
