"""The arithmetic of texture lookups, one axis at a time: texel coordinates, wrap rules,
interpolation weights (nearest, linear, cubic B-spline and its derivatives).

Conventions (Dr.Jit's, checked against ``drjit`` bit for bit for nearest and linear
filtering, see ``tests/texture/drjit_reference.py``): a position ``p`` in ``[0, 1]`` along an
axis of ``res`` texels has texel coordinate ``p * res``; texel ``i`` covers ``[i, i + 1)``
and its center is ``i + 0.5``.

* nearest: texel ``floor(p * res)``;
* linear: ``x = fma(p, res, -0.5)``, texels ``floor(x)`` and ``floor(x) + 1`` with weights
  ``1 - f`` and ``f`` where ``f = x - floor(x)``;
* cubic: texels ``floor(x) - 1 .. floor(x) + 2`` with the uniform cubic B-spline weights of
  ``f`` (their derivatives, times ``res``, for the gradient; times ``res**2`` for the hessian).

A texel index outside ``[0, res)`` is mapped back by the wrap mode: ``Clamp`` to the nearest
edge texel, ``Repeat`` modulo ``res``, ``Mirror`` reflects at each edge with the edge texel
repeated (period ``2 res``: ``-1 -> 0``, ``res -> res - 1``).
"""
from __future__ import annotations

import enum

from ..array import registry
from ..array.flat import ArrayBase, apply
from ..functions.math import floor, floor_mod, fma, maximum, minimum, select
from ..trace.dtypes import Int32


# lanewise()'s public functions, for operands that are not 1-D JIT arrays
_PUBLIC = {"fma": fma, "floor": floor, "max": maximum, "min": minimum, "select": select}


class FilterMode(enum.Enum):
    """How :meth:`Texture.eval` combines texels (Dr.Jit's names and values)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``FilterMode.Member``

    Nearest = 0
    Linear = 1


class WrapMode(enum.Enum):
    """How texel indices outside the texture are mapped back (Dr.Jit's names and values)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``WrapMode.Member``

    Repeat = 0
    Clamp = 1
    Mirror = 2


def lanewise(op: str, *operands):
    """``op`` of the lookup's operands: ``apply`` for 1-D JIT arrays (the first operand one), the
    public function otherwise (the scalar backend's numbers and arrays).

    A lookup's operands are 1-D arrays of one type and Python numbers, so the public functions'
    checks for tensors, static vectors and numbers only cost time (a fifth of a bilinear
    lookup's trace, with the clamps)."""
    if isinstance(operands[0], ArrayBase):
        return apply(op, *operands)
    return _PUBLIC[op](*operands)


def _int(x):
    """``x`` (a float array holding whole numbers) as an Int32 array."""
    return registry.flat_type(x._backend, Int32)(x)


def wrap(i, res, mode: WrapMode):
    """Texel index array ``i`` (Int32) mapped into ``[0, res)`` by ``mode``."""
    if mode is WrapMode.Clamp:
        return lanewise("min", lanewise("max", i, 0), res - 1)
    if mode is WrapMode.Repeat:
        return floor_mod(i, res)        # -1 -> res - 1
    p = floor_mod(i, 2 * res)
    return select(p >= res, (2 * res - 1) - p, p)


def nearest(p, res, mode: WrapMode):
    """The texel nearest to position ``p`` along an axis of ``res`` texels."""
    return wrap(_int(floor(p * res)), res, mode)


def _linear_texel(p, res):
    """``(i, f)``: the unwrapped texel index ``floor(x)`` (Int32) of ``x = p * res - 0.5`` (one
    fma) and the weight ``f = x - floor(x)`` of texel ``i + 1``."""
    x = lanewise("fma", p, res, -0.5)
    x0 = lanewise("floor", x)
    return _int(x0), x - x0


def linear(p, res, mode: WrapMode):
    """``([i0, i1], [w0, w1])``: the two texels around ``p`` and their weights."""
    i, f = _linear_texel(p, res)
    return [wrap(i, res, mode), wrap(i + 1, res, mode)], [1.0 - f, f]


def linear_clamp_pair(p, res):
    """``(b, [low0, low1], [w0, w1])`` of a linear lookup along an axis of ``res >= 2`` texels
    with ``Clamp`` wrap: both texels are in the pair ``(b, b + 1)`` for ``b = clip(i, 0, res -
    2)``, texel ``k`` its low half where ``low_k`` (a Bool array) holds.

    For ``i = floor(x)`` the texels are ``x0 = clip(i, 0, res - 1)`` and ``x1 = clip(i + 1,
    0, res - 1)``: ``x0 == b`` exactly where ``i < res - 1``, ``x1 == b`` where ``i < 0``
    (else both are ``b + 1``).  Four nodes instead of the eight of wrapping both texels and
    comparing them with ``b`` (the texture's row pairs, ``texture._pair_rows``)."""
    i, f = _linear_texel(p, res)
    b = lanewise("min", lanewise("max", i, 0), res - 2)
    return b, [i < res - 1, i < 0], [1.0 - f, f]


def cubic(p, res, mode: WrapMode, order: int = 0):
    """``(texels, weights)`` of the cubic B-spline at ``p``: 4 texels, and per derivative order
    ``0..order`` the 4 weights (order 1 scaled by ``res``, order 2 by ``res**2``)."""
    x = fma(p, res, -0.5)
    x0 = floor(x)
    t = x - x0
    i = _int(x0)
    texels = [wrap(i + k, res, mode) for k in (-1, 0, 1, 2)]
    t2 = t * t
    t3 = t2 * t
    s = 1.0 - t
    weights = [[s * s * s * (1 / 6), fma(t3, 0.5, 2 / 3) - t2, fma(t2 + t - t3, 0.5, 1 / 6), t3 * (1 / 6)]]
    if order >= 1:
        d = [s * s * -0.5, fma(t2, 1.5, -2.0 * t), fma(t2, -1.5, t + 0.5), t2 * 0.5]
        weights.append([w * res for w in d])
    if order >= 2:
        r2 = res * res
        dd = [s, fma(t, 3.0, -2.0), fma(t, -3.0, 1.0), t]
        weights.append([w * r2 for w in dd])
    return texels, weights
