"""The buffer pool's lock and the garbage collector: a HostBuffer in a reference cycle is
finalized by whatever allocation triggers a collection, possibly while the pool's lock is held
on the same thread (``acquire`` views a pooled buffer under it); its ``__del__`` releases into
the pool.  With a non-re-entrant lock that deadlocked (seen as a hang of tests/freeze under
Python 3.12)."""
import gc
import threading

import numpy as np
import pytest

from frostjit.backend.llvm.memory import allocate, pool


@pytest.mark.llvm_only("the LLVM backend's buffer pool")
def test_a_buffer_finalized_while_the_pool_is_locked_is_pooled_without_deadlock():
    done = threading.Event()

    def run():
        cycle = []
        cycle.append(cycle)
        cycle.append(allocate(np.dtype(np.float32), 4099))     # a size nothing else pools
        del cycle
        with pool.lock:
            gc.collect()        # the cycle's buffer is released into the pool here, under the lock
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert done.is_set(), "the pool's lock deadlocked"
    a, _ = pool.acquire(np.dtype(np.float32), 4099)         # the released buffer, pooled
    assert a.shape == (4099,)
