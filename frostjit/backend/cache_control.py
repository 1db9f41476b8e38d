"""Public control of the backend's caches: compiled kernels and freed memory.

The active backend implements them (:meth:`~.base.Backend.set_kernel_cache_size`,
:meth:`~.base.Backend.kernel_cache_info`, :meth:`~.base.Backend.flush_kernel_cache`,
:meth:`~.base.Backend.flush_memory_cache`); these functions are the API
(``fj.set_kernel_cache_size``, ``fj.kernel_cache_info``, ``fj.flush_kernel_cache``,
``fj.flush_malloc_cache``).  Layers above that hold compiled kernels (frozen functions'
recordings) register with :func:`on_kernel_cache_flush` instead of being called by name.
"""
from __future__ import annotations

import os

from . import current_backend

# The bound of a backend's in-memory kernel cache (see fj.set_kernel_cache_size).
DEFAULT_CAPACITY = 1024
ENV_CAPACITY = "FROSTJIT_KERNEL_CACHE_SIZE"

_flush_listeners: list = []


def check_capacity(value, source: str) -> int:
    """``value`` as a cache capacity (an int >= 1); ``ValueError`` naming ``source`` otherwise."""
    try:
        n = int(value)
        ok = n >= 1 and float(value) == n
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{source}: the kernel cache size must be an integer >= 1, got {value!r}")
    return n


def default_capacity() -> int:
    """The capacity from ``FROSTJIT_KERNEL_CACHE_SIZE``, else :data:`DEFAULT_CAPACITY`."""
    env = os.environ.get(ENV_CAPACITY, "").strip()
    return check_capacity(env, ENV_CAPACITY) if env else DEFAULT_CAPACITY


def on_kernel_cache_flush(callback) -> None:
    """Call ``callback()`` after every :func:`flush_kernel_cache` (for layers above the backend
    that keep kernels of their own: frozen functions drop their recordings, as in Dr.Jit)."""
    _flush_listeners.append(callback)


def flush_kernel_cache() -> None:
    """Forget every compiled kernel held in memory.

    Later launches find their kernels in the disk cache (or compile them).  As in Dr.Jit, frozen
    functions drop their recordings (their next calls trace again).
    """
    current_backend().flush_kernel_cache()
    for callback in list(_flush_listeners):
        callback()


def flush_malloc_cache() -> None:
    """Return the memory held by the caching allocator (freed buffers kept for reuse) to the system.

    As in Dr.Jit; buffers still in use are not affected.
    """
    current_backend().flush_memory_cache()


def sync_thread() -> None:
    """Wait for all launched work to finish (frostjit launches are synchronous: a no-op)."""


def set_kernel_cache_size(size: int) -> int:
    """Keep at most ``size`` compiled kernels in memory; return the previous bound.

    The in-memory kernel cache is a least-recently-used cache of ``FROSTJIT_KERNEL_CACHE_SIZE``
    kernels (default 1024).  Evicting a kernel frees its machine code unless a frozen function's
    recording still replays it (it is then freed with the recording); the disk cache keeps it, so
    a later use reloads it in a fraction of a millisecond instead of compiling.  A frostjit
    extension: Dr.Jit's kernel cache is unbounded.

    Parameters
    ----------
    size : int
        The new bound, at least 1.  Kernels beyond it are evicted at once.

    Returns
    -------
    int
        The previous bound.

    Raises
    ------
    ValueError
        If ``size`` is not an integer >= 1.

    Examples
    --------
    >>> old = fj.set_kernel_cache_size(64)
    >>> fj.kernel_cache_info()["capacity"]
    64
    """
    return current_backend().set_kernel_cache_size(size)


def kernel_cache_info() -> dict:
    """Counts of the in-memory kernel cache.

    Returns
    -------
    dict
        ``capacity`` (the bound), ``cached`` (kernels in the cache), ``live`` (kernels whose
        machine code is in memory: the cached ones and those that frozen functions' recordings
        still hold), ``evictions`` (since the process started).

    Examples
    --------
    >>> fj.kernel_cache_info()
    {'capacity': 1024, 'cached': 3, 'live': 3, 'evictions': 0}
    """
    return current_backend().kernel_cache_info()
