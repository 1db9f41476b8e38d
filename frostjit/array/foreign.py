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
