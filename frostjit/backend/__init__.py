"""Compute backends.  ``current_backend()`` returns the active one (created on first use)."""
from __future__ import annotations

import threading

from ..trace.state import JitBackend

_backends: dict = {}
_lock = threading.Lock()


def get_backend(which: JitBackend = JitBackend.LLVM):
    """Return (creating on first use) the backend instance for ``which``."""
    b = _backends.get(which)
    if b is None:
        with _lock:
            b = _backends.get(which)
            if b is None:
                if which is JitBackend.LLVM:
                    from .llvm.backend import LLVMBackend
                    b = LLVMBackend()
                elif which is JitBackend.CUDA:
                    raise RuntimeError("frostjit: the CUDA backend is not implemented yet (use JitBackend.LLVM)")
                else:
                    raise ValueError(f"frostjit: unknown backend {which!r}")
                _backends[which] = b
    return b


def current_backend():
    """The backend that evaluates traced work (only LLVM exists so far)."""
    b = _backends.get(JitBackend.LLVM)
    return b if b is not None else get_backend(JitBackend.LLVM)
