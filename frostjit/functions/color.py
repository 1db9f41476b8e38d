"""Colour conversions of Dr.Jit's API: the sRGB transfer curve and Oklab.

``srgb_to_linear``/``linear_to_srgb`` apply the standard sRGB curve (IEC 61966-2-1) element-wise;
``linear_srgb_to_oklab``/``oklab_to_linear_srgb`` convert colours (``Array3f``, or ``Array4f``
with alpha kept as it is) between linear sRGB and Björn Ottosson's Oklab space
(https://bottosson.github.io/posts/oklab/, whose published matrices are used).
"""
from __future__ import annotations

from ..array.vector import VectorBase
from ..traits import is_array_v
from .math import abs as _abs, cbrt, clip as _clip, fma, select, sign

__all__ = ["srgb_to_linear", "linear_to_srgb", "linear_srgb_to_oklab", "oklab_to_linear_srgb"]


def _curve(x, clip: bool, f):
    """``f`` on ``x`` clipped to [0, 1], or on ``|x|`` with the sign put back (``clip=False``)."""
    if clip:
        return f(_clip(x, 0, 1))
    return sign(x) * f(_abs(x))


def srgb_to_linear(x, clip: bool = True):
    """sRGB-encoded values to linear intensities: ``x / 12.92`` below 0.04045, else
    ``((x + 0.055) / 1.055) ** 2.4``.

    Parameters
    ----------
    x : array
        Encoded values (any float array or static vector of them).
    clip : bool
        Clamp ``x`` to [0, 1] first (default); ``False`` applies the curve to ``|x|`` and keeps
        the sign, so out-of-gamut colours round-trip.
    """
    return _curve(x, clip, lambda v: select(v < 0.04045, v / 12.92, fma(v, 1 / 1.055, 0.055 / 1.055) ** 2.4))


def linear_to_srgb(x, clip: bool = True):
    """Linear intensities to sRGB-encoded values: ``12.92 * x`` below 0.0031308, else
    ``1.055 * x ** (1 / 2.4) - 0.055``; ``clip`` as for :func:`srgb_to_linear`."""
    return _curve(x, clip, lambda v: select(v < 0.0031308, v * 12.92, fma(v ** (1.0 / 2.4), 1.055, -0.055)))


# Ottosson's matrices, row-major.
_SRGB_TO_LMS = ((0.4122214708, 0.5363325363, 0.0514459929),
                (0.2119034982, 0.6806995451, 0.1073969566),
                (0.0883024619, 0.2817188376, 0.6299787005))
_CBRT_LMS_TO_OKLAB = ((0.2104542553, 0.7936177850, -0.0040720468),
                      (1.9779984951, -2.4285922050, 0.4505937099),
                      (0.0259040371, 0.7827717662, -0.8086757660))
_OKLAB_TO_CBRT_LMS = ((1.0, 0.3963377774, 0.2158037573),
                      (1.0, -0.1055613458, -0.0638541728),
                      (1.0, -0.0894841775, -1.2914855480))
_LMS_TO_SRGB = ((4.0767416621, -3.3077115913, 0.2309699292),
                (-1.2684380046, 2.6097574011, -0.3413193965),
                (-0.0041960863, -0.7034186147, 1.7076147010))


def _apply(m, c):
    """The 3x3 matrix ``m`` times the components ``c`` (three arrays)."""
    return [fma(row[0], c[0], fma(row[1], c[1], row[2] * c[2])) for row in m]


def _color(who: str, value, convert):
    if not (is_array_v(value) and isinstance(value, VectorBase) and len(value) in (3, 4)):
        raise TypeError(f"{who}(): expected a static vector of 3 (RGB) or 4 (RGBA) components, "
                        f"got {type(value).__name__}")
    comps = convert(list(value)[:3])
    if len(value) == 4:
        comps.append(value[3])      # alpha is kept as it is
    return type(value)(*comps)


def linear_srgb_to_oklab(value):
    """Linear sRGB colours (``Array3f``, or ``Array4f`` with alpha) to Oklab ``(L, a, b)``.

    Raises
    ------
    TypeError
        ``value`` is not a static vector of 3 or 4 components.
    """
    return _color("linear_srgb_to_oklab", value,
                  lambda c: _apply(_CBRT_LMS_TO_OKLAB, [cbrt(x) for x in _apply(_SRGB_TO_LMS, c)]))


def oklab_to_linear_srgb(value):
    """Oklab colours ``(L, a, b)`` (``Array3f``, or ``Array4f`` with alpha) to linear sRGB; the
    inverse of :func:`linear_srgb_to_oklab`."""
    return _color("oklab_to_linear_srgb", value,
                  lambda c: _apply(_LMS_TO_SRGB, [x * x * x for x in _apply(_OKLAB_TO_CBRT_LMS, c)]))
