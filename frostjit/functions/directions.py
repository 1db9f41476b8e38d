"""Directions and angles of Dr.Jit's API: ``abs_dot``, ``unit_angle``, ``sphdir``."""
from __future__ import annotations

from ..array.meta import Dynamic
from ..traits import is_array_v, replace_shape_t
from ..constants import pi
from .math import abs as _abs, asin, select, sincos, sqrt
from .reduce import dot

__all__ = ["abs_dot", "unit_angle", "sphdir"]


def abs_dot(a, b, /):
    """``|dot(a, b)|``: the absolute value of the dot product (lane by lane for static vectors)."""
    return _abs(dot(a, b))


def unit_angle(a, b, /):
    """The angle between unit vectors ``a`` and ``b``, accurate also for nearly (anti)parallel
    vectors (``acos(dot(a, b))`` loses precision there).

    Computed as ``2 asin(|b - a| / 2)``, or ``pi -`` that with ``-a`` when the vectors point
    apart.
    """
    d = dot(a, b)
    e = b - select(d >= 0, a, -a)
    t = 2 * asin(0.5 * sqrt(dot(e, e)))
    return select(d >= 0, t, pi - t)


def sphdir(theta, phi):
    """The unit vector at polar angle ``theta`` (from +z) and azimuth ``phi`` (from +x):
    ``(cos phi sin theta, sin phi sin theta, cos theta)``, as a 3-vector of ``theta``'s type.

    Raises
    ------
    TypeError
        ``theta`` is not a 1-D frostjit float array.
    """
    if not is_array_v(theta) or len(type(theta).__meta__.shape) != 1:
        raise TypeError(f"sphdir(): 'theta' must be a 1-D frostjit float array, got {type(theta).__name__}")
    st, ct = sincos(theta)
    sp, cp = sincos(phi)
    return replace_shape_t(type(theta), (3, Dynamic))(cp * st, sp * st, ct)
