"""Mathematical constants and the precision-dependent limits of floating-point types.

The constants are Python floats (double precision) with Dr.Jit 1.5's values
(``frostjit.pi``, ``frostjit.two_pi``, ...); an array operation rounds them to the array's
precision, as any Python float operand is.  The limits (:func:`epsilon`, :func:`largest`, ...)
are functions of an array or array type, as in Dr.Jit: ``frostjit.epsilon(Float)`` is
``2**-24``, ``frostjit.epsilon(Float64)`` is ``2**-53``.

>>> import frostjit as fj
>>> from frostjit.llvm import Float, Float64
>>> fj.largest(Float), fj.one_minus_epsilon(Float64)
(3.4028234663852886e+38, 0.9999999999999999)
"""
from __future__ import annotations

from .array.meta import VarType
from .traits import type_v

__all__ = ["e", "log_two", "inv_log_two", "pi", "inv_pi", "sqrt_pi", "inv_sqrt_pi", "two_pi", "inv_two_pi",
           "sqrt_two_pi", "inv_sqrt_two_pi", "four_pi", "inv_four_pi", "sqrt_four_pi", "inv_sqrt_four_pi",
           "sqrt_two", "inv_sqrt_two", "inf", "nan", "epsilon", "one_minus_epsilon", "largest", "smallest",
           "recip_overflow"]

e = 2.718281828459045
log_two = 0.6931471805599453
inv_log_two = 1.4426950408889634

pi = 3.141592653589793
inv_pi = 0.3183098861837907
sqrt_pi = 1.772453850905516
inv_sqrt_pi = 0.5641895835477563

two_pi = 6.283185307179586
inv_two_pi = 0.15915494309189535
sqrt_two_pi = 2.5066282746310007
inv_sqrt_two_pi = 0.3989422804014327

four_pi = 12.566370614359172
inv_four_pi = 0.07957747154594767
sqrt_four_pi = 3.544907701811032
inv_sqrt_four_pi = 0.28209479177387814

sqrt_two = 1.4142135623730951
inv_sqrt_two = 0.7071067811865476

inf = float("inf")
nan = float("nan")

# Per precision: (epsilon, one_minus_epsilon, largest, smallest normal, reciprocal overflow), exact.
_LIMITS = {
    VarType.Float16: (2.0 ** -11, 1 - 2.0 ** -11, 65504.0, 2.0 ** -14, 2.0 ** -16),
    VarType.Float32: (2.0 ** -24, 1 - 2.0 ** -24, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -128),
    VarType.Float64: (2.0 ** -53, 1 - 2.0 ** -53, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022, 2.0 ** -1024),
}


def _limit(name: str, index: int, arg) -> float:
    limits = _LIMITS.get(type_v(arg)) if arg is not None else None
    if limits is None:
        raise TypeError(f"{name}(): expected a floating-point frostjit array or array type, "
                        f"got {arg if isinstance(arg, type) else type(arg)!r}")
    return limits[index]


def epsilon(arg, /) -> float:
    """The machine epsilon (half the distance from 1 to the next float) of ``arg``'s precision.

    Parameters
    ----------
    arg : array or array type
        A floating-point frostjit array (``Float``, ``Array3f64``, ...) or its type.

    Returns
    -------
    float
        ``2**-24`` for single precision, ``2**-53`` for double precision.

    Raises
    ------
    TypeError
        ``arg`` is not a floating-point array (type): an integer array, a Python number.
    """
    return _limit("epsilon", 0, arg)


def one_minus_epsilon(arg, /) -> float:
    """The largest float below 1 in ``arg``'s precision (``1 - 2**-24`` for ``Float``).

    Raises ``TypeError`` like :func:`epsilon`.
    """
    return _limit("one_minus_epsilon", 1, arg)


def largest(arg, /) -> float:
    """The largest finite float of ``arg``'s precision (``3.4028234663852886e+38`` for ``Float``).

    Raises ``TypeError`` like :func:`epsilon`.
    """
    return _limit("largest", 2, arg)


def smallest(arg, /) -> float:
    """The smallest positive normal float of ``arg``'s precision (``2**-126`` for ``Float``).

    Raises ``TypeError`` like :func:`epsilon`.
    """
    return _limit("smallest", 3, arg)


def recip_overflow(arg, /) -> float:
    """The threshold at and below which ``1 / x`` overflows to infinity in ``arg``'s precision
    (``2**-128`` for ``Float``).

    Raises ``TypeError`` like :func:`epsilon`.
    """
    return _limit("recip_overflow", 4, arg)
