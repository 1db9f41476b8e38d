"""NumPy references for the IEEE 754-2019 ``minimum``/``maximum`` that frostjit (and Dr.Jit's
compiled ``dr.minimum``/``dr.maximum``) follow: ``minimum(-0, +0) == -0`` and
``maximum(-0, +0) == +0`` in either operand order, NaN if either operand is NaN.

NumPy's ``np.minimum``/``np.maximum`` return their *second* operand on a signed-zero tie (NumPy
2.4), so a differential test whose later steps read the sign (``copysign``, ``1/x``) must use
these instead."""
import numpy as np


def ieee_minimum(a, b):
    """Elementwise IEEE ``minimum`` of two NumPy arrays or scalars (integers: ``np.minimum``)."""
    return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b)).astype(np.result_type(a, b))


def ieee_maximum(a, b):
    """Elementwise IEEE ``maximum`` (see ``ieee_minimum``)."""
    return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b)).astype(np.result_type(a, b))
