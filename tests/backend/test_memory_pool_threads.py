"""The buffer pool takes no lock on acquire and release (BufferPool's docstring): threads that
take and give back buffers at once never get the same buffer, and the pooled total stays the
sum of what the free lists hold."""
import sys
import threading

import numpy as np
import pytest

from frostjit.backend.llvm.memory import allocate, pool

pytestmark = pytest.mark.llvm_only("the LLVM backend's buffer pool")


@pytest.mark.parametrize("n_threads", [2, 4])
def test_threads_sharing_the_pool_never_hold_one_buffer_at_once(n_threads):
    dtype = np.dtype(np.float32)
    sizes = (4111, 4127)           # sizes nothing else pools: the free lists are these threads'
    pool.trim()
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)     # switch threads as often as the interpreter can
    errors = []
    start = threading.Barrier(n_threads)

    def run(seed):
        rng = np.random.default_rng(seed)
        held = []
        start.wait()
        try:
            for step in range(3000):
                if held and rng.random() < 0.5:
                    b, mark = held.pop(int(rng.integers(len(held))))
                    if not (b.array == mark).all():
                        errors.append(f"buffer {b.ptr:#x} written by another thread")
                    del b           # back to the pool (HostBuffer.__del__)
                else:
                    b = allocate(dtype, sizes[int(rng.integers(2))])
                    mark = np.float32(seed * 100_000 + step)
                    b.array.fill(mark)
                    held.append((b, mark))
        except Exception as e:      # noqa: BLE001  (reported by the test)
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n_threads)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(old_interval)
    assert not errors, errors[:5]
    pooled = sum(a.nbytes for lst in pool.free.values() for a, _ in lst)
    assert pool.bytes == pooled
    addresses = [ptr for lst in pool.free.values() for _, ptr in lst]
    assert len(addresses) == len(set(addresses))      # no buffer pooled twice
    pool.trim()
    assert pool.bytes == 0
