"""Creating tensors with a shape: ``fj.zeros(TensorXf, (2, 3))``, ``full``, ``ones``, ``empty``,
``arange``, ``linspace``.

The functions of :mod:`frostjit.functions.creation` hand a tensor type to these (through the
class's ``_fj_full`` / ``_fj_empty`` / ``_fj_arange`` / ``_fj_linspace`` hooks): the flat
array is made as for a 1-D array of ``size_of(shape)`` elements (a literal until written, for
``full``), and ``arange``/``linspace`` give 1-D tensors, as in Dr.Jit.
"""
from __future__ import annotations

from ..functions import creation as flat
from ..functions.evaluation import width
from .base import check_shape, size_of


def full(cls, value, shape=1):
    """A tensor of ``shape`` filled with ``value`` (``shape``: an int or a sequence of ints)."""
    dims = check_shape(shape, f"full({cls.__name__})")
    return cls._from_array(flat.full(cls._array_type, value, size_of(dims)), dims)


def empty(cls, shape=1):
    """A tensor of ``shape`` whose contents are unspecified until written."""
    dims = check_shape(shape, f"empty({cls.__name__})")
    return cls._from_array(flat.empty(cls._array_type, size_of(dims)), dims)


def arange(cls, start=None, stop=None, step=1, *, size=None):
    """A 1-D tensor of ``numpy.arange``'s values (see :func:`frostjit.arange`)."""
    a = flat.arange(cls._array_type, start, stop, step, size=size)
    return cls._from_array(a, (width(a),))


def linspace(cls, start, stop, num, endpoint=True):
    """A 1-D tensor of ``numpy.linspace``'s values (see :func:`frostjit.linspace`)."""
    a = flat.linspace(cls._array_type, start, stop, num, endpoint)
    return cls._from_array(a, (width(a),))
