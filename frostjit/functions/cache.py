"""Kernel cache control and synchronization."""
from __future__ import annotations


def flush_kernel_cache() -> None:
    """Forget every compiled kernel held in memory.

    Later launches find their kernels in the disk cache (or compile them).  As in Dr.Jit, frozen
    functions drop their recordings (their next calls trace again).
    """
    from ..backend import current_backend
    from ..freeze.frozen import drop_all_recordings
    current_backend().compiler.flush()
    drop_all_recordings()


def sync_thread() -> None:
    """Wait for all launched work to finish (frostjit launches are synchronous: a no-op)."""


def flush_malloc_cache() -> None:
    """Return the memory held by the caching allocator (freed buffers kept for reuse) to the system.

    As in Dr.Jit; buffers still in use are not affected.
    """
    from ..backend.llvm.memory import pool
    pool.trim()
