"""What each lane-wise operation computes, in NumPy: the reference backend's lowering.

The op table (:mod:`frostjit.trace.optable`) declares every operation once with its NumPy
reference (:mod:`frostjit.trace.numpy_semantics`), the specification every backend
implements: :func:`numpy_impl` returns that reference, so this backend computes exactly what
the spec says (bit for bit, Float16 computed in float32 and rounded after every operation),
and a new operation needs no lowering here.  Transcendental functions are computed in float64
and rounded once, within the bounds the LLVM backend's polynomials are held to
(docs/math_accuracy.md); float-to-integer conversions of NaN or out of range are undefined on
both backends (as in Dr.Jit).
"""
from __future__ import annotations

from ...trace.optable import OPS


def numpy_impl(op: str):
    """The NumPy reference ``ref(vt, *args)`` of the lane-wise operation ``op`` (the op table's).

    Raises
    ------
    NotImplementedError
        If ``op`` is not a lane-wise operation of the op table.
    """
    ref = getattr(OPS.get(op), "numpy", None)
    if ref is None:
        raise NotImplementedError(f"reference backend: no NumPy reference for operation '{op}' in the op table")
    return ref
