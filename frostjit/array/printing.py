"""How arrays print: Dr.Jit 1.5's format, for ``repr``/``str`` and :func:`frostjit.format`.

* Numbers as C's ``%g`` prints them (6 significant digits: ``0.333333``, ``1e+10``, ``-0``,
  ``inf``, ``nan`` and ``-nan`` for a NaN whose sign bit is set), in every precision; integers
  in full; masks as ``True``/``False``.
* A JIT array prints its lanes outermost: ``Array3f([1, 2], [3, 4], [5, 6])`` is
  ``[[1, 3, 5],\\n [2, 4, 6]]`` (one line per lane, the components in it).
* A dimension longer than ``limit`` (default 20) shows its first and last three entries around
  ``.. N skipped ..``.
* Complex numbers and quaternions print as one entry each (``1-3j``, ``1i+2j-3k+4``; zero terms
  left out, ``0`` when every term is zero; a NaN term as ``+nan`` whatever its sign, as Dr.Jit).

What a type is comes from its ``__meta__`` (:mod:`.meta`), so every array family prints
through :func:`format_array`.
"""
from __future__ import annotations

import math

import numpy as np

from .export import read
from .meta import meta_of

#: Entries shown at each end of an abbreviated dimension.
EDGE = 3


def format_scalar(v) -> str:
    """One element as Dr.Jit prints it (``%g`` for floats, with ``-nan`` for negative NaNs)."""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if f != f:
        return "-nan" if math.copysign(1.0, f) < 0 else "nan"
    return "%g" % f


def _special_entry(parts, suffixes) -> str:
    """A complex number / quaternion from its parts: nonzero terms with their suffixes, or ``0``."""
    out = ""
    for v, suffix in zip(parts, suffixes):
        if v == 0:          # also -0.0; NaN terms are kept
            continue
        # (a NaN term prints as "+nan" whatever its sign bit, as Dr.Jit 1.5 prints complex
        # numbers and quaternions: 0/0 on x86 gives a NaN with the sign bit set)
        s = "nan" if v != v else format_scalar(v)
        if out and not s.startswith("-"):
            s = "+" + s
        out += s + suffix
    return out or "0"


def _suffixes(meta):
    if meta is not None and meta.is_complex:
        return ("", "j")
    if meta is not None and meta.is_quaternion:
        return ("i", "j", "k", "")
    return None


def _format_nested(a: np.ndarray, depth: int, limit: int, suffixes) -> str:
    """Format ``a`` (lanes first) at nesting ``depth``; the last axis of a special type is one entry."""
    if suffixes is not None and a.ndim == 1:
        return _special_entry(a.tolist(), suffixes)
    if a.ndim == 0:
        return format_scalar(a.item())
    n = a.shape[0]
    # Items that are themselves arrays (or complex numbers, quaternions) go one per line, lined
    # up under the opening bracket; numbers go on one line.
    sep = ",\n" + " " * (depth + 1) if a.ndim > 1 else ", "

    def item(k):
        return _format_nested(a[k], depth + 1, limit, suffixes)

    if n > limit and n > 2 * EDGE:     # (Dr.Jit crashes when nothing would be skipped)
        items = [item(k) for k in range(EDGE)] + [f".. {n - 2 * EDGE} skipped .."] + \
                [item(k) for k in range(n - EDGE, n)]
    else:
        items = [item(k) for k in range(n)]
    return "[" + sep.join(items) + "]"


def lanes_first(x) -> np.ndarray:
    """``x`` as a NumPy array with a JIT array's lanes as the first axis (evaluates ``x``; a
    literal stays one, as printing leaves it in Dr.Jit)."""
    a = read(x)
    if np.iscomplexobj(a):
        # A complex array exports one complex entry per lane (Dr.Jit's shape): print its parts.
        return np.stack([a.real, a.imag], axis=-1)
    meta = meta_of(type(x))
    if meta is not None and meta.is_jit and not meta.is_tensor and a.ndim > 1:
        a = np.moveaxis(a, -1, 0)      # (a tensor has no lane axis: its shape is printed as it is)
    return a


def format_lanes(a: np.ndarray, meta, limit: int = 20) -> str:
    """A NumPy array laid out as :func:`lanes_first` gives it, printed as an array of the type
    ``meta`` describes (its kind decides how complex numbers and quaternions print)."""
    return _format_nested(a, 0, limit, _suffixes(meta))


def format_array(x, limit: int = 20) -> str:
    """``x`` (any frostjit array) as Dr.Jit prints it; see the module docstring.

    Parameters
    ----------
    x : array
        A frostjit array of any family (its type declares ``__meta__``).
    limit : int
        Dimensions with more entries than this are abbreviated.
    """
    return format_lanes(lanes_first(x), meta_of(type(x)), limit)
