"""Complex numbers (``Complex2f``, ``Complex2f64``): static arrays of (real, imaginary).

Arithmetic follows Dr.Jit 1.5's formulas, so results match it bit for bit (measured on
random inputs): ``a * b`` is ``(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br))``, division
multiplies by the reciprocal ``conj(b) / |b|^2``, ``|z|^2`` is ``fma(zi, zi, zr * zr)``.
A Python number, 1-D array or Python ``complex`` combines with a complex number as the
complex number it stands for (``z + 1`` adds to the real part).  ``exp``, ``log``, ``sqrt``,
``pow``, the trigonometric and hyperbolic functions and their inverses have their complex
meaning (the principal branch); other lane-wise operations (``cbrt``, ``floor``, ...) apply to
both parts, as in Dr.Jit.  Inequality comparisons raise ``TypeError``.
"""
from __future__ import annotations

import math

import numpy as np

from ..trace import ops
from . import direct
from ..errors import IncompatibleArgumentsError
from .flat import ArrayBase, apply
from .vector import (VectorBase, apply_vector, componentwise, from_parts, is_plain_static, mixes_backends,
                     scalar_result)

_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)
_node1, _node2, _node3 = ops.make_unary, ops.make_binary, ops.make_ternary      # (the trace's doors)
_new = object.__new__


class ComplexBase(VectorBase):
    """Base class of the complex types: components ``real`` and ``imag``."""

    __slots__ = ()
    _family = "complex"
    _swizzle = False
    IsComplex = True

    @classmethod
    def _broadcast(cls, v) -> list:
        # A real number: the real part (Complex2f(5) is 5 + 0j).
        return [cls._elem(v), cls._elem(0)]

    @classmethod
    def _from_one(cls, v) -> list:
        if isinstance(v, complex):
            return [cls._elem(v.real), cls._elem(v.imag)]
        return super()._from_one(v)

    @classmethod
    def _from_numpy(cls, a: np.ndarray) -> list:
        if a.dtype.kind == "c":     # a complex NumPy array: one complex number per lane
            if a.ndim == 0:
                return cls._from_one(complex(a))
            return [cls._elem(np.ascontiguousarray(a.real)), cls._elem(np.ascontiguousarray(a.imag))]
        return super()._from_numpy(a)

    # The arithmetic operators are the complex formulas themselves (set below the class, once
    # they are defined): apply_vector would find the same function (the first operand's _ops
    # entry) after a loop over the operands, and a method calling them is one more call.

    @property
    def real(self):
        """The real part (the component itself: ``z.real += 1`` updates ``z``)."""
        return self._c[0]

    @real.setter
    def real(self, v):
        self[0] = v

    @property
    def imag(self):
        """The imaginary part."""
        return self._c[1]

    @imag.setter
    def imag(self, v):
        self[1] = v

    def numpy(self) -> np.ndarray:
        """Evaluate and return a complex NumPy array with one entry per lane (Dr.Jit's shape)."""
        a = self._static_numpy()
        dtype = np.complex128 if a.dtype == np.float64 else np.complex64
        out = np.empty(a.shape[1:], dtype)
        out.real, out.imag = a[0], a[1]
        return out



def _parts(z):
    """``(real, imag)`` of an operand: a complex number, or a real one (imag None: zero)."""
    if isinstance(z, ComplexBase):
        return z._c[0], z._c[1]
    if isinstance(z, complex):
        return z.real, z.imag
    if isinstance(z, ArrayBase) or isinstance(z, _NUMBERS):
        return z, None
    if is_plain_static(z, 2):      # Array2f: (real, imag), as Dr.Jit 1.5 combines them
        return z._c[0], z._c[1]
    if type(z) in (list, tuple) and len(z) == 2:       # a sequence likewise (Dr.Jit)
        return z[0], z[1]
    if isinstance(z, np.ndarray) and z.ndim == 0:       # a 0-d NumPy array: its number (Dr.Jit)
        v = z.item()
        return (v.real, v.imag) if isinstance(v, complex) else (v, None)
    raise IncompatibleArgumentsError(f"frostjit: cannot combine a complex number with a {type(z).__name__}: "
                                     "Incompatible arguments.")


def _like(*operands) -> type:
    return next(type(o) for o in operands if isinstance(o, ComplexBase))


def _make(like, re, im):
    return from_parts(like, (re, im))


def _fresh(cls, re, im):
    """The complex number ``(re, im)`` of class ``cls``, both parts new results of class
    ``cls._elem`` that nothing else holds (so, unlike :func:`_make`, not copied)."""
    out = cls.__new__(cls)
    out._c = [re, im]
    return out


def _fma(a, b, c):
    return apply("fma", a, b, c)


# The fast paths below (two complex numbers of one class: no promotion, every part a new
# result) skip _parts, _like and from_parts' promotion and copies: a complex chain's tracing
# cost was ~60% this bookkeeping.  When the four parts are of the element class with no
# gradient (the common case), each part's operation is one node made directly (:mod:`.direct`:
# none of apply()'s work per node).  A part of an unexpected class (an operator returning a
# subclass) takes the general path.

_kits: dict = {}        # complex class -> the direct.Kit of its parts' class (None: none applies)


def _kit(cls):
    """The :class:`.direct.Kit` of ``cls``'s part class if it makes every node of ``+``, ``-`` and
    ``*`` (``None`` otherwise: the scalar backend, a mask class)."""
    k = direct.kit(cls._elem)
    if k is not None and None in (k.add, k.sub, k.mul, k.neg, k.fma):
        k = None
    _kits[cls] = k
    return k


# (In the three operators below, the fast case is tested inline: parts of the kit's class with
# no gradient attached.  A helper function per test cost ~10% of a complex chain's tracing.)

def c_add(a, b):
    cls = type(a)
    if type(b) is cls and isinstance(a, ComplexBase):
        k = _kits[cls] if cls in _kits else _kit(cls)
        (ar, ai), (br, bi) = a._c, b._c
        if k is not None:
            e = k.elem
            if type(ar) is e and type(ai) is e and type(br) is e and type(bi) is e and \
                    ar._ad is None and ai._ad is None and br._ad is None and bi._ad is None:
                out, r, i = _new(cls), _new(e), _new(e)      # (the result made inline, as in c_mul)
                r._node, r._ad = _node2(k.add, k.vt, ar._node, br._node), None
                i._node, i._ad = _node2(k.add, k.vt, ai._node, bi._node), None
                out._c = [r, i]
                return out
        re, im = ar + br, ai + bi
        e = cls._elem
        if type(re) is e and type(im) is e:
            return _fresh(cls, re, im)
        return _make(cls, re, im)
    if mixes_backends((a, b)):        # (scalar-backend operands become JIT arrays first)
        return apply_vector("add", a, b)
    ar, ai = _parts(a)
    br, bi = _parts(b)
    return _make(_like(a, b), ar + br, ai if bi is None else bi if ai is None else ai + bi)


def c_sub(a, b):
    cls = type(a)
    if type(b) is cls and isinstance(a, ComplexBase):
        k = _kits[cls] if cls in _kits else _kit(cls)
        (ar, ai), (br, bi) = a._c, b._c
        if k is not None:
            e = k.elem
            if type(ar) is e and type(ai) is e and type(br) is e and type(bi) is e and \
                    ar._ad is None and ai._ad is None and br._ad is None and bi._ad is None:
                out, r, i = _new(cls), _new(e), _new(e)      # (the result made inline, as in c_mul)
                r._node, r._ad = _node2(k.sub, k.vt, ar._node, br._node), None
                i._node, i._ad = _node2(k.sub, k.vt, ai._node, bi._node), None
                out._c = [r, i]
                return out
        re, im = ar - br, ai - bi
        e = cls._elem
        if type(re) is e and type(im) is e:
            return _fresh(cls, re, im)
        return _make(cls, re, im)
    if mixes_backends((a, b)):        # (scalar-backend operands become JIT arrays first)
        return apply_vector("sub", a, b)
    ar, ai = _parts(a)
    br, bi = _parts(b)
    return _make(_like(a, b), ar - br, ai if bi is None else -bi if ai is None else ai - bi)


def c_mul(a, b):
    cls = type(a)
    if type(b) is cls and isinstance(a, ComplexBase):
        k = _kits[cls] if cls in _kits else _kit(cls)
        (ar, ai), (br, bi) = a._c, b._c
        if k is not None:
            e = k.elem
            if type(ar) is e and type(ai) is e and type(br) is e and type(bi) is e and \
                    ar._ad is None and ai._ad is None and br._ad is None and bi._ad is None:
                # (the nodes the general path below makes, in its order: Dr.Jit's formula)
                ar, ai, br, bi = ar._node, ai._node, br._node, bi._node
                vt, mul, fma = k.vt, k.mul, k.fma
                # (the result, its two parts on these nodes, made inline here and in c_add, c_sub:
                # a helper's frame per operator was ~3% of a complex chain's plain call)
                out, r, i = _new(cls), _new(e), _new(e)
                r._node, r._ad = _node3(fma, vt, ar, br, _node1(k.neg, vt, _node2(mul, vt, ai, bi))), None
                i._node, i._ad = _node3(fma, vt, ar, bi, _node2(mul, vt, ai, br)), None
                out._c = [r, i]
                return out
        re, im = _fma(ar, br, -(ai * bi)), _fma(ar, bi, ai * br)
        e = cls._elem
        if type(re) is e and type(im) is e:
            return _fresh(cls, re, im)
        return _make(cls, re, im)
    if mixes_backends((a, b)):        # (scalar-backend operands become JIT arrays first)
        return apply_vector("mul", a, b)
    ar, ai = _parts(a)
    br, bi = _parts(b)
    if ai is None:
        return _make(_like(a, b), ar * br, ar * bi)
    if bi is None:
        return _make(_like(a, b), ar * br, ai * br)
    return _make(_like(a, b), _fma(ar, br, -(ai * bi)), _fma(ar, bi, ai * br))


def c_squared_norm(z):
    zr, zi = _parts(z)
    return _fma(zi, zi, zr * zr)


def c_abs(z):
    """``|z|``: a real array (Dr.Jit: ``sqrt(fma(im, im, re * re))``); on the scalar backend a
    Python float rounded to the element type, as Dr.Jit's."""
    return scalar_result(type(z), apply("sqrt", c_squared_norm(z)))


def c_conj(z):
    zr, zi = _parts(z)
    return _make(type(z), zr, -zi)


def c_rcp(z):
    """``1 / z = conj(z) / |z|^2``."""
    zr, zi = _parts(z)
    r = apply("rcp", c_squared_norm(z))
    return _make(type(z), zr * r, -zi * r)


def c_truediv(a, b):
    if isinstance(b, ComplexBase):
        return c_mul(a, c_rcp(b))
    br, _ = _parts(b)
    ar, ai = _parts(a)
    return _make(_like(a, b), ar / br, ai / br)


def c_fma(a, b, c):
    """``a * b + c`` rounded as Dr.Jit 1.5: the addend enters the fma chains of the product
    (``re = fma(ar, br, fma(-ai, bi, cr))``, ``im = fma(ar, bi, fma(ai, br, ci))``); a real
    factor is one fma per part."""
    ar, ai = _parts(a)
    br, bi = _parts(b)
    cr, ci = _parts(c)
    like = _like(a, b, c)
    if ai is not None and bi is not None:
        return _make(like, _fma(ar, br, _fma(-ai, bi, cr)), _fma(ar, bi, ai * br if ci is None else _fma(ai, br, ci)))
    if ai is None and bi is None:
        return _make(like, _fma(ar, br, cr), 0.0 if ci is None else ci)
    s, zr, zi = (br, ar, ai) if bi is None else (ar, br, bi)
    return _make(like, _fma(zr, s, cr), zi * s if ci is None else _fma(zi, s, ci))


def c_arg(z):
    zr, zi = _parts(z)
    return apply("atan2", zi, zr)


def c_exp(z):
    zr, zi = _parts(z)
    e = apply("exp", zr)
    return _make(type(z), e * apply("cos", zi), e * apply("sin", zi))


def c_exp2(z):
    return c_exp(c_mul(z, math.log(2.0)))


def c_log(z):
    """Principal logarithm ``(log|z|, arg z)``; ``log|z|`` as ``0.5 log(|z|^2)``."""
    return _make(type(z), 0.5 * apply("log", c_squared_norm(z)), c_arg(z))


def c_log2(z):
    return c_mul(c_log(z), 1.0 / math.log(2.0))


def c_sqrt(z):
    """Principal square root: ``sqrt((|z| + |re|) / 2)`` on the larger side, the other part from
    it (no cancellation), the imaginary part with the sign of ``im``."""
    zr, zi = _parts(z)
    n = c_abs(z)
    t = apply("sqrt", 0.5 * (n + apply("abs", zr)))
    zero = t == 0
    other = apply("select", zero, 0.0 * t, 0.5 * zi / apply("select", zero, 1.0 + 0.0 * t, t))
    pos = zr >= 0
    re = apply("select", pos, t, apply("abs", other))
    im = apply("select", pos, other, apply("copysign", t, zi))
    return _make(type(z), re, im)


def c_rsqrt(z):
    return c_rcp(c_sqrt(z))


def c_pow(a, b):
    """``a ** b``: repeated products for a Python int exponent (exact for small powers),
    else ``exp(b log a)``."""
    if isinstance(b, (int, np.integer)) and not isinstance(b, bool) and isinstance(a, ComplexBase):
        n = int(b)
        if n == 0:
            return _make(type(a), 1.0 + 0.0 * a._c[0], 0.0 * a._c[1])
        result, base, k = None, a, abs(n)
        while k:
            if k & 1:
                result = base if result is None else c_mul(result, base)
            k >>= 1
            if k:
                base = c_mul(base, base)
        return c_rcp(result) if n < 0 else result
    if not isinstance(a, ComplexBase):
        a = _make(_like(a, b), *[p if p is not None else 0.0 for p in _parts(a)])
    return c_exp(c_mul(b, c_log(a)))


def c_sin(z):
    zr, zi = _parts(z)
    return _make(type(z), apply("sin", zr) * apply("cosh", zi), apply("cos", zr) * apply("sinh", zi))


def c_cos(z):
    zr, zi = _parts(z)
    return _make(type(z), apply("cos", zr) * apply("cosh", zi), -(apply("sin", zr) * apply("sinh", zi)))


def c_tan(z):
    return c_truediv(c_sin(z), c_cos(z))


def c_sinh(z):
    zr, zi = _parts(z)
    return _make(type(z), apply("sinh", zr) * apply("cos", zi), apply("cosh", zr) * apply("sin", zi))


def c_cosh(z):
    zr, zi = _parts(z)
    return _make(type(z), apply("cosh", zr) * apply("cos", zi), apply("sinh", zr) * apply("sin", zi))


def c_tanh(z):
    return c_truediv(c_sinh(z), c_cosh(z))


def _times_i(z):
    zr, zi = _parts(z)
    return _make(type(z), -zi, zr)


def _times_minus_i(z):
    zr, zi = _parts(z)
    return _make(type(z), zi, -zr)


def c_asin(z):
    """``-i log(iz + sqrt(1 - z^2))``."""
    w = c_sqrt(c_sub(1.0, c_mul(z, z)))
    return _times_minus_i(c_log(c_add(_times_i(z), w)))


def c_acos(z):
    """``pi/2 - asin(z)``."""
    return c_sub(math.pi / 2, c_asin(z))


def c_atan(z):
    """``(i/2) (log(1 - iz) - log(1 + iz))``."""
    iz = _times_i(z)
    d = c_sub(c_log(c_sub(1.0, iz)), c_log(c_add(1.0, iz)))
    return c_mul(_times_i(d), 0.5)


def c_asinh(z):
    """``log(z + sqrt(z^2 + 1))``."""
    return c_log(c_add(z, c_sqrt(c_add(c_mul(z, z), 1.0))))


def c_acosh(z):
    """``log(z + sqrt(z + 1) sqrt(z - 1))``."""
    return c_log(c_add(z, c_mul(c_sqrt(c_add(z, 1.0)), c_sqrt(c_sub(z, 1.0)))))


def c_atanh(z):
    """``(log(1 + z) - log(1 - z)) / 2``."""
    return c_mul(c_sub(c_log(c_add(1.0, z)), c_log(c_sub(1.0, z))), 0.5)


def _no_ordering(op):
    def raise_(*operands):
        raise TypeError(f"frostjit.{op}(): inequality comparisons are not defined for complex numbers "
                        f"({', '.join(type(o).__name__ for o in operands)})")
    return raise_


def _componentwise_eq(op):
    def f(*operands):
        # A real operand compares with the real part, 0 with the imaginary one.
        ops = [o if isinstance(o, ComplexBase) else _make(_like(*operands), *[p if p is not None else 0.0
                                                                              for p in _parts(o)])
               for o in operands]
        return componentwise(op, ops)
    return f


ComplexBase.__add__, ComplexBase.__sub__, ComplexBase.__mul__ = c_add, c_sub, c_mul
ComplexBase._ops = {
    "add": c_add, "sub": c_sub, "mul": c_mul, "truediv": c_truediv, "fma": c_fma, "abs": c_abs, "rcp": c_rcp,
    "rsqrt": c_rsqrt, "sqrt": c_sqrt, "exp": c_exp, "exp2": c_exp2, "log": c_log, "log2": c_log2, "pow": c_pow,
    "sin": c_sin, "cos": c_cos, "tan": c_tan, "sinh": c_sinh, "cosh": c_cosh, "tanh": c_tanh, "asin": c_asin,
    "acos": c_acos, "atan": c_atan, "asinh": c_asinh, "acosh": c_acosh, "atanh": c_atanh,
    "eq": _componentwise_eq("eq"), "ne": _componentwise_eq("ne"),
    **{op: _no_ordering(op) for op in ("lt", "le", "gt", "ge", "min", "max")},
}
