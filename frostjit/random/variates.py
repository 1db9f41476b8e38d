"""Random bits to floats: Dr.Jit 1.5's uniform and normal transforms, shared by every generator.

Uniform floats fill the mantissa of a number in ``[1, 2)`` with the top random bits and
subtract 1 (so every value is a multiple of ``2^-23`` or ``2^-52``, and 0 is possible, 1 is not).
Normal floats use the inverse error function (:class:`~frostjit.random.PCG32`, one uniform per
variate) or the Box-Muller transform (:class:`~frostjit.random.Philox4x32`, two uniforms per two
variates), with the math of :mod:`frostjit.random.cephes` so that they round as Dr.Jit's do.
"""
from __future__ import annotations

import math

from ..array import registry
from ..functions.math import fma, maximum, minimum, reinterpret_array, sqrt
from ..trace.dtypes import Float32, Float64, UInt64
from . import cephes

_SQRT_TWO = math.sqrt(2.0)
_TWO_PI = 2.0 * math.pi
# sqrt(2 ln 2): -log2(1 - u) * 2 ln 2 = -2 ln(1 - u), Box-Muller's squared radius.
_SQRT_TWO_LN_TWO = math.sqrt(2.0 * math.log(2.0))


def float_type(backend, vt, ad: bool):
    """The 1-D float array class for ``vt`` (``Float32``/``Float64``) on ``backend``."""
    return registry.flat_type(backend, vt, ad)


def float32_from_uint32(u, float_cls):
    """Uniform ``float_cls`` (a ``Float32`` type) on ``[0, 1)`` from the top 23 bits of ``UInt32`` ``u``."""
    return reinterpret_array(float_cls, (u >> 9) | 0x3F800000) - 1.0


def float64_from_uint32(u, float_cls):
    """Uniform ``Float64`` on ``[0, 1)`` from all 32 bits of ``u`` (PCG32's ``next_float64``)."""
    u64 = registry.flat_type(u._backend, UInt64)(u)
    return reinterpret_array(float_cls, (u64 << 20) | 0x3FF0000000000000) - 1.0


def float64_from_uint64(u, float_cls):
    """Uniform ``Float64`` on ``[0, 1)`` from the top 52 bits of ``UInt64`` ``u``."""
    return reinterpret_array(float_cls, (u >> 12) | 0x3FF0000000000000) - 1.0


def normal_from_uniform(u):
    """Standard normal variate ``-sqrt(2) erfinv(1 - 2u)`` from a uniform ``u`` on ``[0, 1)``.

    As in Dr.Jit, ``u`` is first clamped to ``[eps, 1 - eps]`` (``eps`` = 2^-24 for Float32,
    2^-53 for Float64), so ``u = 0`` gives a finite variate rather than ``-inf``, and the sign
    is applied last, so ``u = 0.5`` gives ``-0.0``.
    """
    eps = 2.0**-53 if u._vt is Float64 else 2.0**-24
    u = minimum(maximum(u, eps), 1.0 - eps)
    return cephes.erfinv(fma(u, -2.0, 1.0)) * -_SQRT_TWO


def box_muller(angle, radius):
    """Two standard normal variates ``(r cos(2 pi a), r sin(2 pi a))`` with
    ``r = sqrt(-2 ln(1 - radius))``, from two uniforms on ``[0, 1)``."""
    s, c = cephes.sincos(angle * _TWO_PI)
    scale = sqrt(-cephes.log2(1.0 - radius)) * _SQRT_TWO_LN_TWO
    return c * scale, s * scale


def is_float_type(vt) -> bool:
    return vt is Float32 or vt is Float64
