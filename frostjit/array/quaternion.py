"""Quaternions (``Quaternion4f``, ``Quaternion4f16``, ``Quaternion4f64``): ``xi + yj + zk + w``.

Static arrays of four components ``x, y, z`` (the imaginary part) and ``w`` (the real
part), in Dr.Jit's order.  ``*`` is the Hamilton product, ``/`` multiplies by the inverse
``conj(q) / |q|^2``, ``abs`` is the norm (a real array); ``exp``, ``log``, ``sqrt``, ``pow``
and ``rcp`` have their quaternion meaning; other lane-wise operations (``sin``, ``floor``,
...) apply to each component, as in Dr.Jit.  A Python number or 1-D array stands for the
real quaternion ``w`` (``q + 1`` adds to ``w``).  Inequality comparisons raise ``TypeError``.
"""
from __future__ import annotations

import math

import numpy as np

from ..trace import ops
from . import direct
from .flat import ArrayBase, apply
from .vector import VectorBase, componentwise, from_parts, is_plain_static, scalar_result

_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)
_node1, _node2, _node3 = ops.make_unary, ops.make_binary, ops.make_ternary      # (the trace's doors)


class QuaternionBase(VectorBase):
    """Base class of the quaternion types: components ``x, y, z, w`` (``w`` real)."""

    __slots__ = ()
    _family = "quaternion"
    IsQuaternion = True

    @classmethod
    def _broadcast(cls, v) -> list:
        # A real number: the real part (Quaternion4f(5) is 5, i.e. w = 5).
        e = cls._elem
        return [e(0), e(0), e(0), e(v)]



def _parts(q):
    """``(x, y, z, w)`` of an operand: a quaternion, or a real number (x, y, z None: zero)."""
    if isinstance(q, QuaternionBase):
        return tuple(q._c)
    if isinstance(q, ArrayBase) or isinstance(q, _NUMBERS):
        return None, None, None, q
    if is_plain_static(q, 4):      # Array4f: (x, y, z, w), as Dr.Jit 1.5 combines them
        return tuple(q._c)
    raise TypeError(f"frostjit: cannot combine a quaternion with a {type(q).__name__}")


def _like(*operands) -> type:
    return next(type(o) for o in operands if isinstance(o, QuaternionBase))


def _fma(a, b, c):
    return apply("fma", a, b, c)


def _plus(a, b, sign):
    pa, pb = _parts(a), _parts(b)
    out = []
    for x, y in zip(pa, pb):
        if y is None:
            out.append(x if x is not None else 0.0)
        elif x is None:
            out.append(y if sign > 0 else -y)
        else:
            out.append(x + y if sign > 0 else x - y)
    return from_parts(_like(a, b), out)


def _plain_nodes(a, b):
    """``(kit, component nodes of a, of b)`` for two quaternions of one class whose components
    are of its element class with no gradient attached (:mod:`.direct`: a node per 1-D
    operation, none of apply()'s work), else ``None``: the general path."""
    cls = type(a)
    if type(b) is not cls or not isinstance(a, QuaternionBase):
        return None
    e = cls._elem
    k = direct.kit(e)
    if k is None or None in (k.add, k.sub, k.mul, k.neg, k.fma):
        return None
    xs = direct.nodes(a._c, e)
    ys = None if xs is None else direct.nodes(b._c, e)
    return None if ys is None else (k, xs, ys)


def _from_nodes(like, k, nodes):
    return like._from_components([direct.wrap(k.elem, n) for n in nodes])


def q_add(a, b):
    plain = _plain_nodes(a, b)
    if plain is not None:
        k, xs, ys = plain
        return _from_nodes(type(a), k, [_node2(k.add, k.vt, x, y) for x, y in zip(xs, ys)])
    return _plus(a, b, 1)


def q_sub(a, b):
    plain = _plain_nodes(a, b)
    if plain is not None:
        k, xs, ys = plain
        return _from_nodes(type(a), k, [_node2(k.sub, k.vt, x, y) for x, y in zip(xs, ys)])
    return _plus(a, b, -1)


def _direct_mul(k, xs, ys) -> list:
    """The nodes of the Hamilton product's components (those of the general path of
    :func:`q_mul`, made in its order)."""
    vt, mul, neg, fma, add = k.vt, k.mul, k.neg, k.fma, k.add
    x1, y1, z1, w1 = xs
    x2, y2, z2, w2 = ys

    def fms(a, b, c, d):         # fma(a, b, -(c * d)): the left half of each component
        return _node3(fma, vt, a, b, _node1(neg, vt, _node2(mul, vt, c, d)))

    out = []
    for (a, b, c, d), (e, f, g, h) in (((w1, x2, z1, y2), (x1, w2, y1, z2)),
                                       ((w1, y2, x1, z2), (y1, w2, z1, x2)),
                                       ((w1, z2, y1, x2), (z1, w2, x1, y2))):
        left = fms(a, b, c, d)
        out.append(_node2(add, vt, left, _node3(fma, vt, e, f, _node2(mul, vt, g, h))))
    left = fms(w1, w2, z1, z2)
    nx1 = _node1(neg, vt, x1)
    out.append(_node2(add, vt, left, _node3(fma, vt, nx1, x2, _node1(neg, vt, _node2(mul, vt, y1, y2)))))
    return out


def q_mul(a, b):
    """The Hamilton product (a real operand scales every component)."""
    if not isinstance(a, QuaternionBase) or not isinstance(b, QuaternionBase):
        q, s = (a, b) if isinstance(a, QuaternionBase) else (b, a)
        if not is_plain_static(s, 4):
            return from_parts(type(q), [c * s for c in q._c])
        s = from_parts(type(q), list(s._c))          # an Array4f is the quaternion (x, y, z, w)
        a, b = (q, s) if a is q else (s, q)
    plain = _plain_nodes(a, b)
    if plain is not None:
        return _from_nodes(type(a), plain[0], _direct_mul(*plain))
    x1, y1, z1, w1 = a._c
    x2, y2, z2, w2 = b._c
    # Two fma pairs per component, summed: Dr.Jit 1.5's rounding (bit for bit).
    return from_parts(type(a), [
        _fma(w1, x2, -(z1 * y2)) + _fma(x1, w2, y1 * z2),
        _fma(w1, y2, -(x1 * z2)) + _fma(y1, w2, z1 * x2),
        _fma(w1, z2, -(y1 * x2)) + _fma(z1, w2, x1 * y2),
        _fma(w1, w2, -(z1 * z2)) + _fma(-x1, x2, -(y1 * y2)),
    ])


def q_squared_norm(q):
    x, y, z, w = q._c
    return _fma(w, w, _fma(z, z, _fma(y, y, x * x)))


def q_abs(q):
    """``|q|``: a real array; on the scalar backend a Python float rounded to the element type,
    as Dr.Jit's."""
    return scalar_result(type(q), apply("sqrt", q_squared_norm(q)))


def q_conj(q):
    x, y, z, w = q._c
    return from_parts(type(q), [-x, -y, -z, w])


def q_rcp(q):
    """``1 / q = conj(q) / |q|^2``."""
    r = apply("rcp", q_squared_norm(q))
    x, y, z, w = q._c
    return from_parts(type(q), [-x * r, -y * r, -z * r, w * r])


def q_truediv(a, b):
    if isinstance(b, QuaternionBase):
        return q_mul(a, q_rcp(b))
    return from_parts(type(a), [c / b for c in a._c])


def q_fma(a, b, c):
    """``a * b + c`` rounded as Dr.Jit 1.5: each component of the Hamilton product is two fma
    pairs, and the addend enters the first pair's chain; a real second factor scales ``x, y, z``
    and adds (two roundings) but fuses ``w``; a real first factor is one fma per component."""
    pa, pb, pc = _parts(a), _parts(b), _parts(c)
    like = _like(a, b, c)

    def plus(k, p):                     # p + c[k] (c's missing parts are zero)
        return p if pc[k] is None else p + pc[k]

    def fused(k, x, y):                 # fma(x, y, c[k])
        return x * y if pc[k] is None else _fma(x, y, pc[k])

    if isinstance(a, QuaternionBase) and isinstance(b, QuaternionBase):
        x1, y1, z1, w1 = pa
        x2, y2, z2, w2 = pb
        return from_parts(like, [
            _fma(w1, x2, fused(0, -z1, y2)) + _fma(x1, w2, y1 * z2),
            _fma(w1, y2, fused(1, -x1, z2)) + _fma(y1, w2, z1 * x2),
            _fma(w1, z2, fused(2, -y1, x2)) + _fma(z1, w2, x1 * y2),
            _fma(w1, w2, fused(3, -z1, z2)) + _fma(-x1, x2, -(y1 * y2)),
        ])
    if isinstance(a, QuaternionBase):
        s = pb[3]
        return from_parts(like, [plus(k, pa[k] * s) for k in range(3)] + [fused(3, pa[3], s)])
    if isinstance(b, QuaternionBase):
        s = pa[3]
        return from_parts(like, [fused(k, s, pb[k]) for k in range(4)])
    return from_parts(like, [0.0 if pc[k] is None else pc[k] for k in range(3)] + [fused(3, pa[3], pb[3])])


def _imag_norm(q):
    x, y, z, _ = q._c
    return apply("sqrt", _fma(z, z, _fma(y, y, x * x)))


def _nonzero(x):
    """``x`` with 1 for 0: a divisor whose 0 lanes are selected away (the scalar backend's
    Python floats would raise ZeroDivisionError: log(Quaternion4f(0, 0, 0, 2)))."""
    return apply("select", x == 0, 1.0, x)


def q_exp(q):
    """``exp(w) (cos|v| + v/|v| sin|v|)`` with ``v = (x, y, z)`` (``v/|v| sin|v|`` is 0 for ``v = 0``)."""
    x, y, z, w = q._c
    theta = _imag_norm(q)
    s, c = apply("sin", theta), apply("cos", theta)
    e = apply("exp", w)
    scale = apply("select", theta == 0, 0.0 * theta, e * s / _nonzero(theta))
    return from_parts(type(q), [x * scale, y * scale, z * scale, e * c])


def q_log(q):
    """``(log|q|, v/|v| acos(w/|q|))``.  For ``v = 0`` the imaginary part is the limit 0 when
    ``w > 0``, and NaN when ``w < 0`` (a negative real number has no principal axis: Dr.Jit's
    ``normalize(0)`` is NaN there too; 0 made ``exp(log(q))`` be ``|q|``, and ``sqrt(-4)`` 2)."""
    x, y, z, w = q._c
    sq = q_squared_norm(q)
    n = apply("sqrt", sq)
    vn = _imag_norm(q)
    # ("truediv": IEEE for the scalar backend's Python floats too, log(0) has n = 0)
    angle = apply("acos", apply("min", apply("max", apply("truediv", w, n), -1.0), 1.0))
    scale = apply("select", vn == 0, apply("select", w < 0, math.nan, 0.0 * vn), angle / _nonzero(vn))
    return from_parts(type(q), [x * scale, y * scale, z * scale, 0.5 * apply("log", sq)])


def q_pow(a, b):
    """``exp(log(a) b)`` (a real exponent, or a quaternion: ``exp(log(a) * b)``)."""
    if isinstance(b, (int, np.integer)) and not isinstance(b, bool) and isinstance(a, QuaternionBase) and b >= 1:
        result, base, k = None, a, int(b)
        while k:
            if k & 1:
                result = base if result is None else q_mul(result, base)
            k >>= 1
            if k:
                base = q_mul(base, base)
        return result
    if not isinstance(a, QuaternionBase):
        # a real base (2 ** q, Float(..) ** q): the quaternion (0, 0, 0, a) (raised AttributeError)
        a = from_parts(_like(a, b), [0.0 if p is None else p for p in _parts(a)])
    return q_exp(q_mul(q_log(a), b))


def q_exp2(q):
    """``exp(q log 2)`` (Dr.Jit's ``exp2`` of a quaternion; per component it was ``2**x`` each)."""
    return q_exp(q_mul(q, math.log(2.0)))


def q_log2(q):
    """``log(q) / log 2``."""
    return q_mul(q_log(q), 1.0 / math.log(2.0))


def q_sqrt(q):
    return q_exp(q_mul(q_log(q), 0.5))


def _no_ordering(op):
    def raise_(*operands):
        raise TypeError(f"frostjit.{op}(): inequality comparisons are not defined for quaternions "
                        f"({', '.join(type(o).__name__ for o in operands)})")
    return raise_


def _componentwise_eq(op):
    def f(*operands):
        like = _like(*operands)
        qs = [o if isinstance(o, QuaternionBase) else from_parts(like, [p if p is not None else 0.0
                                                                       for p in _parts(o)])
              for o in operands]
        return componentwise(op, qs)
    return f


def q_rsqrt(q):
    """``1 / sqrt(q)`` in the quaternion sense (Dr.Jit's ``rsqrt`` of a quaternion), not per component."""
    return q_rcp(q_sqrt(q))


QuaternionBase._ops = {
    "add": q_add, "sub": q_sub, "mul": q_mul, "truediv": q_truediv, "fma": q_fma, "abs": q_abs, "rcp": q_rcp,
    "exp": q_exp, "log": q_log, "exp2": q_exp2, "log2": q_log2, "pow": q_pow, "sqrt": q_sqrt, "rsqrt": q_rsqrt,
    "eq": _componentwise_eq("eq"), "ne": _componentwise_eq("ne"),
    **{op: _no_ordering(op) for op in ("lt", "le", "gt", "ge", "min", "max")},
}
