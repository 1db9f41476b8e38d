"""Complex and quaternion functions: ``real``, ``imag``, ``conj``, ``arg``; ``quat_to_matrix``,
``matrix_to_quat``, ``quat_to_euler``, ``euler_to_quat``, ``quat_apply``, ``rotate``, ``slerp``.

Quaternions are ``xi + yj + zk + w`` (Dr.Jit's component order, ``w`` real); rotation
quaternions are unit quaternions, and Euler angles are in Dr.Jit's "XYZ" order (roll about
x, pitch about y, yaw about z; the rotation ``Rz(yaw) Ry(pitch) Rx(roll)``).
"""
from __future__ import annotations

import math


from ..array import registry
from ..array.complex import ComplexBase, c_arg, c_conj
from ..array.flat import ArrayBase, apply
from ..array.matrix import MatrixBase, _is_square
from ..array.quaternion import QuaternionBase, q_conj
from ..array.vector import VectorBase, _copy, component_class, scalar_result
from .geometry import cross, normalize
from .math import atan2, clip, copysign, cos, fma, lerp, select, sin, sqrt
from .math import asin as _asin
from .math import acos as _acos
from .reduce import dot

__all__ = ["real", "imag", "conj", "arg", "quat_to_matrix", "matrix_to_quat", "quat_to_euler", "euler_to_quat",
           "quat_apply", "rotate", "slerp"]


# -- complex and quaternion parts -----------------------------------------------------------


def _div(a, b):
    """``a / b`` with IEEE semantics also for Python numbers (division by zero gives inf/NaN)."""
    return apply("truediv", a, b)

def real(x):
    """The real part of a complex number or quaternion (``w``); other inputs unchanged.

    Examples
    --------
    >>> fj.real(Complex2f(1, 2))
    [1]
    """
    if isinstance(x, ComplexBase):
        return _copy(x[0])
    if isinstance(x, QuaternionBase):
        return _copy(x[3])
    if isinstance(x, complex):
        return x.real
    return x


def imag(x):
    """The imaginary part: a complex number's, a quaternion's ``(x, y, z)`` (a 3-vector); zero
    for other inputs (an array of zeros of the input's type)."""
    if isinstance(x, ComplexBase):
        return _copy(x[1])
    if isinstance(x, QuaternionBase):
        cls = registry.array_type(x._elem, 3, "array")
        return cls._from_components([_copy(c) for c in x._c[:3]])
    if isinstance(x, complex):
        return x.imag
    if isinstance(x, (ArrayBase, VectorBase)):
        return x * 0
    return type(x)(0) if isinstance(x, (int, float)) else 0


def conj(x):
    """The conjugate of a complex number or quaternion; other inputs unchanged."""
    if isinstance(x, ComplexBase):
        return c_conj(x)
    if isinstance(x, QuaternionBase):
        return q_conj(x)
    if isinstance(x, complex):
        return x.conjugate()
    return x


def arg(z):
    """The argument of a complex number (``atan2(imag, real)``); for real inputs 0 or pi by
    the sign (NaN for NaN)."""
    if isinstance(z, ComplexBase):
        return c_arg(z)
    if isinstance(z, complex):
        return math.atan2(z.imag, z.real)
    if isinstance(z, QuaternionBase):
        raise TypeError("arg(): not defined for quaternions")
    if isinstance(z, (ArrayBase, VectorBase)):
        return select(z >= 0, 0.0 * z, math.pi + 0.0 * z)
    return 0.0 if z >= 0 else math.pi if z < 0 else math.nan


# -- rotations ------------------------------------------------------------------------------

def _require_quaternion(who, q):
    if not isinstance(q, QuaternionBase):
        raise TypeError(f"{who}(): expected a quaternion (e.g. Quaternion4f), got {type(q).__name__}")


def quat_to_matrix(dtype, q):
    """The 3x3 (``dtype`` ``Matrix3f``) or homogeneous 4x4 (``Matrix4f``) rotation matrix of the
    unit quaternion ``q``."""
    _require_quaternion("quat_to_matrix", q)
    if not (isinstance(dtype, type) and issubclass(dtype, MatrixBase) and dtype._n in (3, 4)):
        raise TypeError(f"quat_to_matrix(): 'dtype' must be a 3x3 or 4x4 matrix type, got {dtype!r}")
    x, y, z, w = q._c
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    xw, yw, zw = x * w, y * w, z * w
    rows = [[1 - 2 * (yy + zz), 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), 1 - 2 * (xx + zz), 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), 1 - 2 * (xx + yy)]]
    entry = dtype._elem._elem
    if dtype._n == 4:
        rows = [r + [entry(0)] for r in rows] + [[entry(0), entry(0), entry(0), entry(1)]]
    return dtype._from_components([dtype._elem._from_components([entry(v) if type(v) is not entry else v
                                                                 for v in r]) for r in rows])


def matrix_to_quat(m):
    """The unit quaternion of the rotation in a 3x3 matrix (or the upper-left 3x3 block of a
    4x4 one), by Shepperd's method: from the largest of ``w``, ``x``, ``y``, ``z`` (no
    cancellation)."""
    if not (_is_square(m) and len(m) in (3, 4)):
        raise TypeError(f"matrix_to_quat(): expected a 3x3 or 4x4 matrix, got {type(m).__name__}")
    a = [[m[i][j] for j in range(3)] for i in range(3)]
    tr = a[0][0] + a[1][1] + a[2][2]
    # the four candidates, each computed from its own (largest) diagonal combination
    sw = sqrt(1 + tr) * 2
    # (IEEE division: the candidates not selected may divide by zero, also on the scalar
    # backend's Python numbers, where '/' would raise)
    qw = [_div(a[2][1] - a[1][2], sw), _div(a[0][2] - a[2][0], sw), _div(a[1][0] - a[0][1], sw), 0.25 * sw]
    sx = sqrt(1 + a[0][0] - a[1][1] - a[2][2]) * 2
    qx = [0.25 * sx, _div(a[0][1] + a[1][0], sx), _div(a[0][2] + a[2][0], sx), _div(a[2][1] - a[1][2], sx)]
    sy = sqrt(1 + a[1][1] - a[0][0] - a[2][2]) * 2
    qy = [_div(a[0][1] + a[1][0], sy), 0.25 * sy, _div(a[1][2] + a[2][1], sy), _div(a[0][2] - a[2][0], sy)]
    sz = sqrt(1 + a[2][2] - a[0][0] - a[1][1]) * 2
    qz = [_div(a[0][2] + a[2][0], sz), _div(a[1][2] + a[2][1], sz), 0.25 * sz, _div(a[1][0] - a[0][1], sz)]
    use_w = tr > 0
    # (apply("not"): '~' of a Python bool, the scalar backend's mask, is an int)
    use_x = apply("not", use_w) & (a[0][0] > a[1][1]) & (a[0][0] > a[2][2])
    use_y = apply("not", use_w) & apply("not", use_x) & (a[1][1] > a[2][2])
    comps = [select(use_w, qw[k], select(use_x, qx[k], select(use_y, qy[k], qz[k]))) for k in range(4)]
    cls = registry.array_type(component_class(comps[0], type(m)._leaf), 4, "quaternion")
    return cls._from_components(comps)


def quat_to_euler(q):
    """Euler angles ``(roll, pitch, yaw)`` ("XYZ") of the unit quaternion ``q`` (a 3-vector);
    the pitch is clamped to [-pi/2, pi/2].

    At gimbal lock (``|sin(pitch)|`` rounds to 1, as in Dr.Jit 1.5: the threshold
    ``1 - 5e-8`` in the quaternion's precision) roll and yaw are not separable: the whole
    rotation about the x axis goes into the roll, ``2 atan2(x, w)``, the yaw is 0 and the
    pitch exactly +-pi/2.  (The general formulas there give roll = yaw = pi for a pitch just
    past pi/2: a different but also valid triple; Dr.Jit's test_matrix test16 checks this one.)
    """
    _require_quaternion("quat_to_euler", q)
    x, y, z, w = q._c
    # (sin(pitch) with one rounding, as Dr.Jit: near the lock the last bit decides; on the
    # scalar backend the double-precision value rounded to the element type, as Dr.Jit's C++
    # computes it, or a value within 5e-8 of 1 in double would flip the lock decision)
    sinp = scalar_result(type(q), clip(2 * fma(w, y, -(z * x)), -1.0, 1.0))
    lock = abs(sinp) > (1.0 - 5e-8)
    yy = y * y
    roll = select(lock, 2 * atan2(x, w), atan2(2 * fma(w, x, y * z), 1 - 2 * fma(x, x, yy)))
    pitch = select(lock, copysign(0.5 * math.pi, sinp), _asin(sinp))
    yaw = select(lock, 0.0, atan2(2 * fma(w, z, x * y), 1 - 2 * fma(z, z, yy)))
    cls = registry.array_type(component_class(roll, type(q)._leaf), 3, "array")
    return cls._from_components([roll, pitch, yaw])


def euler_to_quat(a):
    """The unit quaternion of Euler angles ``a = (roll, pitch, yaw)`` ("XYZ", radians)."""
    if not (isinstance(a, VectorBase) and len(a) == 3):
        raise TypeError(f"euler_to_quat(): expected a 3-vector of angles, got {type(a).__name__}")
    sr, cr = sin(a[0] * 0.5), cos(a[0] * 0.5)
    sp, cp = sin(a[1] * 0.5), cos(a[1] * 0.5)
    sy, cy = sin(a[2] * 0.5), cos(a[2] * 0.5)
    comps = [sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
             cr * cp * cy + sr * sp * sy]
    cls = registry.array_type(component_class(comps[0], type(a)._leaf), 4, "quaternion")
    return cls._from_components(comps)


def quat_apply(q, v):
    """``v`` rotated by the unit quaternion ``q`` (``quat_to_matrix(q) @ v``, computed as
    ``v + 2 w (u x v) + 2 u x (u x v)`` with ``u = (x, y, z)``)."""
    _require_quaternion("quat_apply", q)
    if not (isinstance(v, VectorBase) and len(v) == 3):
        raise TypeError(f"quat_apply(): expected a 3-vector, got {type(v).__name__}")
    u = registry.array_type(q._elem, 3, "array")._from_components([_copy(c) for c in q._c[:3]])
    t = cross(u, v) * 2
    return v + t * q[3] + cross(u, t)


def rotate(dtype, axis, angle):
    """The rotation quaternion of ``angle`` radians about the unit vector ``axis``:
    ``(axis sin(angle/2), cos(angle/2))``."""
    if not (isinstance(dtype, type) and issubclass(dtype, QuaternionBase)):
        raise TypeError(f"rotate(): 'dtype' must be a quaternion type, got {dtype!r}")
    s, c = sin(angle * 0.5), cos(angle * 0.5)
    return dtype(axis[0] * s, axis[1] * s, axis[2] * s, c)


def slerp(a, b, t):
    """Spherical linear interpolation between unit quaternions ``a`` and ``b`` (the shorter
    arc: ``b`` is negated when ``dot(a, b) < 0``); nearly equal quaternions are interpolated
    linearly and normalized."""
    _require_quaternion("slerp", a)
    _require_quaternion("slerp", b)
    cos_theta = dot(a, b)
    flip = cos_theta < 0
    b = select(flip, -b, b)
    cos_theta = abs(cos_theta)
    theta = _acos(clip(cos_theta, -1.0, 1.0))
    close = cos_theta > 0.9995
    perp = normalize(b - a * cos_theta)
    angle = theta * t
    spherical = a * cos(angle) + perp * sin(angle)
    linear = normalize(lerp(a, b, t))
    return select(close, linear, spherical)
