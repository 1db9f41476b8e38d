"""Compute backends, and the choice of the one that runs traced work.

Two backends implement the CPU device (the arrays of :mod:`frostjit.llvm`,
``JitBackend.LLVM``):

* ``"llvm"`` (the default): kernels compiled to vectorized machine code, run on all cores;
* ``"reference"``: a NumPy interpreter of kernel specs, one instruction at a time over whole
  arrays.  Slow, simple, and the oracle the LLVM backend is tested against.

The environment variable ``FROSTJIT_BACKEND=llvm|reference`` chooses at start-up;
:func:`set_cpu_backend` switches later.  Everything above this package reaches the active
backend through :func:`current_backend` and the interface of :class:`.base.Backend`.
"""
from __future__ import annotations

import importlib
import os
import threading

from ..trace.state import JitBackend, state
from .base import Backend

# name -> (module, class).  Imported when first selected (importlib): loading llvmlite and
# compiling the warm-up kernel costs ~0.1 s, which a process on the reference backend never
# needs to pay.
IMPLEMENTATIONS = {
    "llvm": ("frostjit.backend.llvm.backend", "LLVMBackend"),
    "reference": ("frostjit.backend.reference.backend", "ReferenceBackend"),
}

_instances: dict = {}          # name -> backend instance (one of each, created on first use)
_lock = threading.Lock()
_current: Backend | None = None
_listeners: list = []          # called with the new backend after set_cpu_backend() switched


def get_backend(which=JitBackend.LLVM) -> Backend:
    """The backend that serves ``which``: a :class:`JitBackend` (``LLVM``: the active CPU
    backend) or an implementation's name (``"llvm"``, ``"reference"``), created on first use."""
    if isinstance(which, JitBackend):
        if which is JitBackend.LLVM:
            return current_backend()
        if which in (JitBackend.CUDA, JitBackend.Metal):
            raise RuntimeError(f"frostjit: the {which.name} backend is not implemented yet (use JitBackend.LLVM)")
        raise ValueError(f"frostjit: unknown backend {which!r}")
    name = _check_name(which)
    b = _instances.get(name)
    if b is None:
        with _lock:
            b = _instances.get(name)
            if b is None:
                module, cls = IMPLEMENTATIONS[name]
                b = _instances[name] = getattr(importlib.import_module(module), cls)()
    return b


def current_backend() -> Backend:
    """The backend that evaluates traced work now (see the module docstring)."""
    b = _current
    return b if b is not None else _start()


def _start() -> Backend:
    global _current
    name = os.environ.get("FROSTJIT_BACKEND", "").strip().lower() or "llvm"
    if name not in IMPLEMENTATIONS:
        raise ValueError(f"frostjit: FROSTJIT_BACKEND={os.environ['FROSTJIT_BACKEND']!r} is not a backend; "
                         f"choose one of {', '.join(IMPLEMENTATIONS)}")
    b = get_backend(name)
    with _lock:
        if _current is None:
            _current = b
    return _current


def _check_name(name) -> str:
    if not isinstance(name, str) or name.lower() not in IMPLEMENTATIONS:
        raise ValueError(f"frostjit: unknown CPU backend {name!r}; choose one of {', '.join(IMPLEMENTATIONS)}")
    return name.lower()


def cpu_backend() -> str:
    """The name of the active CPU backend: ``"llvm"`` or ``"reference"``.

    Examples
    --------
    >>> fj.cpu_backend()
    'llvm'
    """
    return current_backend().name.lower()


def set_cpu_backend(name: str) -> str:
    """Run traced work on the CPU backend ``name`` from now on; return the previous one's name.

    ``"llvm"`` compiles kernels with LLVM (the default); ``"reference"`` interprets them with
    NumPy (slow; an oracle for testing).  Pending scatters are evaluated first, on the previous
    backend, and frozen functions drop their recordings (they hold that backend's kernels).
    Arrays evaluated before the switch hold the previous backend's memory: using one
    afterwards raises ``TypeError`` (convert it through NumPy first).  The environment
    variable ``FROSTJIT_BACKEND`` chooses the backend at start-up.  A frostjit extension (Dr.Jit's
    ``set_backend`` chooses what ``drjit.auto`` refers to, which frostjit does not have).

    Parameters
    ----------
    name : str
        ``"llvm"`` or ``"reference"``.

    Returns
    -------
    str
        The name of the backend that was active.

    Raises
    ------
    ValueError
        If ``name`` is not a backend's name.

    Examples
    --------
    >>> old = fj.set_cpu_backend("reference")
    >>> fj.eval(Float([1, 2]) * 2)          # interpreted with NumPy
    >>> fj.set_cpu_backend(old)
    'reference'
    """
    global _current
    new = get_backend(_check_name(name))
    old = current_backend()
    if new is old:
        return old.name.lower()
    if state.side_effects:
        state.evaluate(())
    with _lock:
        _current = new
    for callback in list(_listeners):
        callback(new)
    return old.name.lower()


def on_backend_change(callback) -> None:
    """Call ``callback(new_backend)`` whenever :func:`set_cpu_backend` switches backends.

    For the layers above that hold a backend's objects (frozen functions' recordings).
    """
    _listeners.append(callback)
