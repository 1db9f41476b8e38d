"""Kernel cache control and synchronization."""
from __future__ import annotations


def flush_kernel_cache() -> None:
    """Forget every compiled kernel held in memory.

    Later launches find their kernels in the disk cache (or compile them).
    """
    from ..backend import current_backend
    current_backend().compiler.flush()


def sync_thread() -> None:
    """Wait for all launched work to finish (frostjit launches are synchronous: a no-op)."""
