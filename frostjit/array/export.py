"""NumPy views of evaluated arrays: ``.numpy()``, ``np.asarray(x)`` and DLPack share memory.

As Dr.Jit 1.5's LLVM backend, ``Float([1, 2, 3]).numpy()`` is a writable view of the array's
buffer: a write into it changes the array, two views of one array share memory, and a view
outlives the array.  The view is made through ``__array_interface__`` of a :class:`_Holder`
that keeps the array's data *node*; NumPy makes the holder the ``base`` of the view and of every
view taken from it (slices, reshapes), so while any of them lives:

* the node, and with it the backend buffer, stays alive: a pooled buffer
  (``backend/llvm/memory.py`` ``HostBuffer``) or a replay's slab piece is never reused under a
  view (the DLPack export of ``.torch()`` goes through the same view);
* the node counts one reference more, so a later ``scatter`` into the array copies it first
  (copy-on-write, ``functions/memory.py`` ``_prepare_target``) and the view keeps the values it
  had, as Dr.Jit's view (which holds a variable reference) does.
"""
from __future__ import annotations

import numpy as np

from ..backend import current_backend as _backend
from ..trace.node import Node


class _Holder:
    """The ``base`` of an exported view: the interface NumPy reads, and the node it keeps."""

    __slots__ = ("__array_interface__", "node", "buffer")


def share(node: Node) -> np.ndarray:
    """A writable 1-D NumPy view of the evaluated data node ``node`` (see module docstring)."""
    h = _Holder()
    h.node = node
    h.buffer = buf = node.value     # (the memory itself, whatever later becomes of the node)
    # (the interface built here, not read from a NumPy view of the buffer: 0.8 us against 2)
    h.__array_interface__ = {"data": (_backend().host_address(buf), False), "shape": (node.size,),
                             "typestr": node.vt.np_dtype.str, "version": 3}
    return np.asarray(h)


def to_numpy(a, dtype=None, copy=None) -> np.ndarray:
    """The NumPy 2 ``__array__`` protocol over ``a.numpy()`` (a view): ``copy=True`` or a
    different ``dtype`` copies (``copy=False`` then raises, as NumPy's own arrays do)."""
    out = a.numpy()
    if dtype is not None and np.dtype(dtype) != out.dtype:
        if copy is False:
            raise ValueError(f"np.asarray({type(a).__name__}, dtype={np.dtype(dtype)}, copy=False): "
                             f"the array holds {out.dtype} values, a conversion copies")
        return out.astype(dtype)
    return out.copy() if copy else out


def read(x) -> np.ndarray:
    """The contents of any array ``x`` for reading inside frostjit (printing, checks): as
    ``x.numpy()``, but a literal stays a literal (Dr.Jit's ``print`` leaves it one, its
    ``.numpy()`` does not): a check or a print must not change the array's state."""
    values = getattr(x, "_values", None)
    return values() if values is not None else np.asarray(x.numpy())
