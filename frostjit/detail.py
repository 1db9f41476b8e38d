"""``fj.detail``: the few of Dr.Jit's ``drjit.detail`` helpers that programs written for Dr.Jit
call directly (its test suites and PyTorch interop code do, at import time).

>>> with fj.detail.scoped_rtld_deepbind():
...     import torch
>>> s = fj.detail.scope(fj.JitBackend.LLVM)
>>> fj.detail.new_scope(fj.JitBackend.LLVM) > s
True

The rest of ``drjit.detail`` is Dr.Jit's C++ machinery (variable trackers, registries, the
freezing internals) and has no counterpart here (docs/api_coverage.md).
"""
from __future__ import annotations

import threading

import llvmlite.binding

from .trace.state import JitBackend

__all__ = ["scoped_rtld_deepbind", "scope", "new_scope", "set_scope", "llvm_version", "cuda_version"]


class scoped_rtld_deepbind:
    """Context manager under which Dr.Jit imports extension modules (PyTorch, ...) with
    ``RTLD_DEEPBIND``, so that their copies of shared libraries do not clash with Dr.Jit's.

    frostjit loads no native library of its own besides llvmlite's, which keeps its LLVM
    symbols private, so there is nothing to separate: the context manager changes nothing.
    """

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        return None


def llvm_version() -> tuple:
    """The version of the LLVM that compiles frostjit's kernels (llvmlite's), e.g. ``(20, 1, 8)``."""
    return tuple(llvmlite.binding.llvm_version_info)


def cuda_version() -> tuple:
    """The CUDA driver's version: ``(0, 0)``, as Dr.Jit reports without CUDA (frostjit has no
    CUDA backend)."""
    return (0, 0)


class _Scopes(threading.local):
    """The current scope identifier per backend, per thread (Dr.Jit keeps one per thread state)."""

    def __init__(self) -> None:
        self.current: dict[JitBackend, int] = {}


_scopes = _Scopes()
_counter = 0              # new identifiers are unique across threads
_counter_lock = threading.Lock()


def _backend(backend, who: str) -> JitBackend:
    if not isinstance(backend, JitBackend):
        raise TypeError(f"{who}(): 'backend' must be a JitBackend, got {type(backend).__name__}")
    return backend


def scope(backend: JitBackend) -> int:
    """The current scope identifier of ``backend`` on this thread (see :func:`new_scope`)."""
    return _scopes.current.get(_backend(backend, "scope"), 0)


def new_scope(backend: JitBackend) -> int:
    """Start a new scope on ``backend`` and return its identifier (larger than every earlier one).

    In Dr.Jit a scope bounds a basic block: common subexpression elimination and reordering
    stay within it, which matters when threads share arrays.  frostjit merges only the
    operations a program shares by reference (and equal literals; it never unifies two
    separately traced operations), so here a scope is an identifier and nothing depends on it.
    """
    global _counter
    b = _backend(backend, "new_scope")
    with _counter_lock:
        _counter = max(_counter, _scopes.current.get(b, 0)) + 1
        _scopes.current[b] = _counter
        return _counter


def set_scope(backend: JitBackend, scope: int) -> None:
    """Make ``scope`` (an identifier from :func:`scope` / :func:`new_scope`) the current scope."""
    b = _backend(backend, "set_scope")
    if not isinstance(scope, int) or scope < 0:
        raise TypeError(f"set_scope(): 'scope' must be a non-negative int, got {scope!r}")
    _scopes.current[b] = scope
