"""Arrays of other frameworks (PyTorch, JAX, CuPy, ...) read through DLPack.

One door for every constructor, so that each accepts the same foreign arrays.
"""
from __future__ import annotations

import numpy as np


def is_foreign_array(value) -> bool:
    """Whether ``value`` exports DLPack and is not a Python sequence (handled elsewhere)."""
    return hasattr(value, "__dlpack__") and not isinstance(value, (list, tuple))


def foreign_to_numpy(value) -> np.ndarray:
    """A NumPy view of ``value``'s memory (a copy only where DLPack cannot share it).

    Converting data never carries another framework's derivative tracking (as Dr.Jit:
    ``Float(torch_tensor)`` is not grad-enabled); PyTorch refuses to export a tensor that
    requires gradients, so such a tensor is read through its detached view.
    """
    try:
        return np.from_dlpack(value)
    except BufferError:
        detach = getattr(value, "detach", None)
        if detach is None:
            raise
        return np.from_dlpack(detach())


def foreign_operand(value):
    """An operand of an arithmetic operation as Dr.Jit reads it: a PyTorch/JAX array as its
    NumPy view; anything else unchanged.  (A 0-d array types the result as the Python number it
    holds: ``Int(1, 2) * np.array(3)`` is an ``Int``; the callers see to that.)"""
    if isinstance(value, np.ndarray) or not is_foreign_array(value) or hasattr(value, "__symbolic_size__"):
        return value
    return foreign_to_numpy(value)
