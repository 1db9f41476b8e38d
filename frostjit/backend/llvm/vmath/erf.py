"""erf: an odd polynomial near 0, 1 - exp(L(|x|)) with L a fit of log(erfc) beyond."""
from __future__ import annotations

from .coefficients import COEFFS, ERF_CENTRES, ERF_SPLIT
from .constants import coeffs
from .exponential import exp_core

# erf -----------------------------------------------------------------------------------------

def erf_small(b, a):
    """erf(a) for |a| < ERF_SPLIT: a F(a^2)."""
    return b.mul(a, b.poly(b.mul(a, a), coeffs("erfs", b.scalar)))


def log_erfc(b, a):
    """log(erfc(a)) for a >= 0, a polynomial fit valid on [ERF_SPLIT, 4] (float) / [ERF_SPLIT, 6]
    (double); a is clamped to that range (erfc(a) = exp of the result, to a few ULP)."""
    if b.scalar == "float":
        top = 4.0
        ac = b.sel(b.cmp("olt", a, top), a, top)
        ac = b.sel(b.cmp("ogt", ac, ERF_SPLIT), ac, ERF_SPLIT)
        L = b.poly(b.sub(ac, ERF_CENTRES["erfl_f"]), COEFFS["erfl_f"])
    else:
        top = 6.0
        ac = b.sel(b.cmp("olt", a, top), a, top)
        ac = b.sel(b.cmp("ogt", ac, ERF_SPLIT), ac, ERF_SPLIT)
        L1 = b.poly(b.sub(ac, ERF_CENTRES["erfl_d1"]), COEFFS["erfl_d1"])
        L2 = b.poly(b.sub(ac, ERF_CENTRES["erfl_d2"]), COEFFS["erfl_d2"])
        L = b.sel(b.cmp("olt", ac, 2.5), L1, L2)
    return L


def erf(b, x):
    # |x| < 0.875: x F(x^2); above: 1 - exp(L(|x|)) with L a fit of log(erfc) (smooth, so a
    # polynomial in |x| works where erfc itself would need exp(-x^2) factored out)
    a = b.abs(x)
    small_v = erf_small(b, a)
    large_v = b.sub(1.0, exp_core(b, log_erfc(b, a)))
    v = b.sel(b.cmp("olt", a, ERF_SPLIT), small_v, large_v)
    v = b.copysign(v, x)
    return b.sel(b.isnan(x), x, v)
