"""Public control of the in-memory kernel cache: its bound and its counts.

The backend implements them (:meth:`LLVMBackend.set_kernel_cache_size`,
:meth:`LLVMBackend.kernel_cache_info`); these functions are the API
(``fj.set_kernel_cache_size``, ``fj.kernel_cache_info``).
"""
from __future__ import annotations

from . import current_backend


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
