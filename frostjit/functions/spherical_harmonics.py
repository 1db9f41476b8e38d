"""``fj.sh_eval``: real spherical harmonics of a direction, every basis function up to an order."""
from __future__ import annotations

import math
import operator

from ..array.flat import ArrayBase
from ..array.vector import VectorBase


def _norm(l: int, m: int) -> float:
    """``sqrt((2l + 1) / (4 pi) (l - m)! / (l + m)!)``."""
    return math.sqrt((2 * l + 1) / (4 * math.pi) * math.factorial(l - m) / math.factorial(l + m))


def sh_eval(d, order: int) -> list:
    """Real spherical harmonics ``Y_lm(d)`` for ``l = 0 .. order``, ``m = -l .. l`` (Dr.Jit 1.5's
    basis and order: entry ``l (l + 1) + m``; SciPy's ``sph_harm`` with the Condon-Shortley phase,
    ``sqrt(2) Re`` for ``m > 0`` and ``sqrt(2) Im`` of ``|m|`` for ``m < 0``).

    Computed without trigonometry: the associated Legendre recurrence in ``z`` times
    ``Re/Im (x + iy)^|m|`` (which is ``sin(theta)^|m| cos/sin(|m| phi)`` for a unit vector).

    Parameters
    ----------
    d : Array3f (or Array3f64, Array3f16) or a sequence of three floats
        A unit vector.
    order : int
        ``>= 0`` (Dr.Jit 1.5 stops at 9; any order works here).

    Returns
    -------
    list
        ``(order + 1)**2`` arrays (Python floats for a sequence); the constant ``Y_00`` is a size-1
        array, as in Dr.Jit.

    Examples
    --------
    >>> fj.sh_eval(Array3f(0, 0, 1), 1)
    [[0.282095], [0], [0.488603], [0]]
    """
    order = operator.index(order)
    if order < 0:
        raise ValueError(f"sh_eval(): 'order' must be >= 0, got {order}")
    if isinstance(d, VectorBase):
        if len(d) != 3:
            raise TypeError(f"sh_eval(): 'd' must have 3 components, got {type(d).__name__}")
        x, y, z = d[0], d[1], d[2]
        const = type(z)
    elif isinstance(d, ArrayBase):
        raise TypeError(f"sh_eval(): 'd' must be a 3D vector (e.g. Array3f), got {type(d).__name__}")
    else:
        x, y, z = (float(v) for v in d)
        const = float
    n = (order + 1) ** 2
    out: list = [None] * n
    # C_m + i S_m = (x + iy)^m
    c, s = [1.0], [0.0]
    for m in range(1, order + 1):
        c.append(x * c[m - 1] - y * s[m - 1] if m > 1 else x)
        s.append(x * s[m - 1] + y * c[m - 1] if m > 1 else y)
    for m in range(order + 1):
        # Q_l^m(z) = P_l^m(z) / sin(theta)^m, Condon-Shortley phase included
        q_mm = (-1.0) ** m * math.prod(range(1, 2 * m, 2))
        q_prev, q = None, q_mm
        for l in range(m, order + 1):
            if l == m + 1:
                q_prev, q = q, z * ((2 * m + 1) * q_mm)
            elif l > m + 1:
                q_prev, q = q, (z * ((2 * l - 1) * q) - (l + m - 1) * q_prev) * (1.0 / (l - m))
            k = l * (l + 1)
            if m == 0:
                out[k] = q * _norm(l, 0) if l else const(_norm(0, 0))
            else:
                w = math.sqrt(2.0) * _norm(l, m)
                out[k + m] = (q * w) * c[m]
                out[k - m] = (q * w) * s[m]
    return out
