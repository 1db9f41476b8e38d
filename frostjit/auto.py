"""``fj.auto`` and ``fj.set_backend``: Dr.Jit's "types of the default backend".

Dr.Jit code written against ``drjit.auto`` (``from drjit.auto import Float``) picks its backend
at run time.  ``fj.auto`` is the module of the chosen backend's types: ``frostjit.llvm`` by
default, ``frostjit.scalar`` after ``fj.set_backend("scalar")``.  As in Dr.Jit 1.5 the name is
rebound (``fj.auto``, and ``sys.modules["frostjit.auto"]`` for imports made afterwards): a type
imported before the switch stays the type it was.

This module is replaced in ``sys.modules`` by the backend module when ``frostjit`` is imported
(see :func:`install`); it only ever runs as the place these two functions live.
"""
from __future__ import annotations

import importlib
import sys

from .trace.state import JitBackend

_PACKAGE = __name__.rsplit(".", 1)[0]
_NAMES = ("cuda", "llvm", "metal", "scalar")


def _module_name(backend) -> str:
    if isinstance(backend, JitBackend):
        if backend is JitBackend.LLVM:
            return "llvm"
        if backend in (JitBackend.CUDA, JitBackend.Metal):
            return backend.name.lower()
        raise RuntimeError(f"set_backend(): {backend} is not a backend")
    if not isinstance(backend, str) or backend not in _NAMES:
        raise RuntimeError("set_backend(): argument must equal 'cuda', 'llvm', 'metal', or 'scalar'! "
                           f"(got {backend!r})")
    return backend


def set_backend(backend) -> None:
    """Make ``fj.auto`` refer to the types of ``backend``.

    Parameters
    ----------
    backend : {"llvm", "scalar"} or JitBackend
        ``"llvm"`` / ``JitBackend.LLVM``: ``frostjit.llvm`` (and ``fj.auto.ad`` =
        ``frostjit.llvm.ad``); ``"scalar"``: ``frostjit.scalar`` (no ``ad`` submodule, as in
        Dr.Jit).

    Raises
    ------
    RuntimeError
        For a name that is not a Dr.Jit backend (Dr.Jit's message), and for ``"cuda"`` and
        ``"metal"``: frostjit has no GPU backends.
    """
    name = _module_name(backend)
    if name in ("cuda", "metal"):
        raise RuntimeError(f"set_backend(): frostjit has no {name!r} backend (available: 'llvm', 'scalar')")
    install(importlib.import_module(f"{_PACKAGE}.{name}"))


def install(module) -> None:
    """Bind ``fj.auto`` (attribute and importable module) to the backend ``module``."""
    package = sys.modules[_PACKAGE]
    package.auto = module
    sys.modules[f"{_PACKAGE}.auto"] = module
    ad = getattr(module, "ad", None)
    if ad is not None:
        sys.modules[f"{_PACKAGE}.auto.ad"] = ad
    else:
        sys.modules.pop(f"{_PACKAGE}.auto.ad", None)
