"""Buffers are freed and reused: a long trace-and-evaluate loop keeps memory flat."""
import gc
import resource

import numpy as np

import frostjit as fj
from frostjit.llvm import Float, UInt32
import pytest

pytestmark = pytest.mark.llvm_only("the LLVM backend's caching allocator")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def test_100k_steps_keep_memory_flat():
    x = Float(np.zeros(50_000, dtype=np.float32))
    idx = fj.arange(UInt32, 50_000)
    samples = []
    for step in range(100_000):
        x = fj.gather(Float, x, (idx + 1) % 50_000) * 0.5 + 1.0
        fj.eval(x)
        if step % 10_000 == 9_999:
            gc.collect()
            samples.append(rss_mb())
    assert x[0] == 2.0
    # After warm-up, memory must not grow with the number of steps.
    assert samples[-1] - samples[1] < 20, samples


def test_freed_buffers_are_reused_and_flush_malloc_cache_releases_them():
    from frostjit.backend.llvm.memory import pool
    fj.flush_malloc_cache()
    assert pool.bytes == 0
    x = fj.arange(Float, 100_000) * 2.0
    fj.eval(x)
    ptr = x._node.value.ptr
    del x
    assert pool.bytes >= 400_000            # the buffer went back to the pool ...
    y = fj.arange(Float, 100_000) * 3.0
    fj.eval(y)
    assert y._node.value.ptr == ptr         # ... and was reused for the next array of that size
    del y
    fj.flush_malloc_cache()
    assert pool.bytes == 0
