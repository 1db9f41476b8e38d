"""Exception types of the array API.

Each derives from the built-in exceptions that NumPy and Dr.Jit raise in the
same situation, so code written against either keeps catching them.
"""
from __future__ import annotations


class AxisError(ValueError, IndexError):
    """An ``axis=`` argument outside ``[-ndim, ndim)`` of the array it reduces
    (like ``numpy.exceptions.AxisError``)."""


class ConversionOverflowError(OverflowError, TypeError):
    """A Python scalar that does not fit the element type it is converted to,
    e.g. ``UInt32(2**40)`` or ``UInt32(-1)``.

    An ``OverflowError`` as in Python and NumPy 2 (``np.uint32(2**40)``), and a
    ``TypeError`` as in Dr.Jit, which rejects such a value as not convertible.
    """
