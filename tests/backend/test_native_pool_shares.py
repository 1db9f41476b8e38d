"""How the native pool shares a launch: every block runs exactly once, the worker takes part in
launches above the parallel threshold, and a worker on the caller's CPU moves off it (the
"nudge": a spinning worker is otherwise left there by the scheduler, and runs none of the
caller's blocks).  No timings: the pool's own per-thread counters and the threads' affinity."""
import os
import time

import numpy as np
import pytest

from frostjit.backend import current_backend
from frostjit.backend.llvm import native_pool
from frostjit.backend.llvm.threads import BLOCKS_PER_THREAD, ThreadPool
from frostjit.llvm import Float

pytestmark = [pytest.mark.llvm_only("the LLVM backend's thread pool"),
              pytest.mark.skipif(not native_pool.available(), reason="no native pool on this platform")]

N = 1 << 20         # lanes of each launch: far above the parallel threshold of a small kernel


def _pool(monkeypatch, nudge: str = "1") -> ThreadPool:
    monkeypatch.setenv("FROSTJIT_POOL_NUDGE", nudge)
    return ThreadPool(2, native=native_pool.native_code(current_backend().compiler))


def _launch_on(pool, x: Float, a: np.ndarray) -> None:
    backend = current_backend()
    old, backend.threads = backend.threads, pool
    try:
        np.testing.assert_array_equal((x * 3.0 + 1.0).numpy(), a * np.float32(3) + np.float32(1))
    finally:
        backend.threads = old


def _launches_until(pool, done, limit: int = 1000) -> int:
    """Launch until ``done()`` (or ``limit`` launches); returns how many ran."""
    a = np.linspace(-1, 1, N).astype(np.float32)
    x = Float(a)
    for k in range(limit):
        _launch_on(pool, x, a)
        if done():
            return k + 1
    return limit


def test_every_block_runs_once_and_the_worker_takes_part(monkeypatch):
    pool = _pool(monkeypatch)
    try:
        start = pool.shares()["blocks"]
        launches = _launches_until(pool, lambda: pool.shares()["blocks"][1] > start[1])
        got = [b - s for b, s in zip(pool.shares()["blocks"], start)]
        assert got[1] > 0, f"the worker ran no block of {launches} launches of {N} lanes"
        assert sum(got) == launches * 2 * BLOCKS_PER_THREAD
    finally:
        pool.close()


def _cpu_of(tid: int) -> int:
    with open(f"/proc/self/task/{tid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: nowhere to move to")


def _put_worker_on(worker: int, cpu: int, allowed: set) -> None:
    """Migrate the worker to ``cpu`` (its affinity that CPU alone), then allow it ``allowed``
    again: it stays there until the load balancer or a nudge moves it."""
    os.sched_setaffinity(worker, {cpu})
    os.sched_setaffinity(worker, allowed)


@needs_two_cpus
def test_a_worker_on_the_callers_cpu_moves_off_it(monkeypatch):
    """The caller pinned to one CPU, the worker put there: it moves off (and then runs blocks);
    its affinity afterwards is what it was.  Before the nudge it stayed until the balancer
    moved it."""
    allowed = os.sched_getaffinity(0)
    pool = _pool(monkeypatch)
    worker = pool.native_threads[0].native_id
    try:
        here = _cpu_of(worker)
        os.sched_setaffinity(0, {here})

        def moved():
            if pool.shares()["nudges"][1] > 0:
                return True
            _put_worker_on(worker, here, allowed)
            return False
        _launches_until(pool, moved)
        assert pool.shares()["nudges"][1] > 0, "the worker never moved off the caller's CPU"
        # (a later nudge may narrow the mask for the moment between its two calls: look again)
        restored = any(os.sched_getaffinity(worker) == allowed or time.sleep(0.01) for _ in range(200))
        assert restored, "the worker's affinity was not restored"
        before = pool.shares()["blocks"][1]
        _launches_until(pool, lambda: pool.shares()["blocks"][1] > before)
        assert pool.shares()["blocks"][1] > before, "the moved worker ran no block"
    finally:
        os.sched_setaffinity(0, allowed)
        pool.close()


@needs_two_cpus
@pytest.mark.parametrize("nudge", ["1", "0"])
def test_a_worker_pinned_to_the_callers_cpu_stays_there(nudge, monkeypatch):
    """A worker never leaves its affinity mask (here: the caller's CPU alone), and with
    ``FROSTJIT_POOL_NUDGE=0`` the pool never changes a worker's affinity."""
    allowed = os.sched_getaffinity(0)
    pool = _pool(monkeypatch, nudge)
    worker = pool.native_threads[0].native_id
    try:
        here = _cpu_of(worker)
        os.sched_setaffinity(0, {here})
        os.sched_setaffinity(worker, {here})
        _launches_until(pool, lambda: False, limit=30)
        assert pool.shares()["nudges"] == [0, 0]
        assert os.sched_getaffinity(worker) == {here}
    finally:
        os.sched_setaffinity(0, allowed)
        pool.close()


@pytest.mark.parametrize("value", ["yes", "2", "-1"])
def test_a_bad_nudge_setting_is_an_error_naming_it(value, monkeypatch):
    with pytest.raises(ValueError, match="FROSTJIT_POOL_NUDGE"):
        _pool(monkeypatch, value)


def test_a_pool_without_native_workers_has_no_shares():
    pool = ThreadPool(1, native=native_pool.native_code(current_backend().compiler))
    assert pool.shares() is None
    pool.close()


def test_a_pool_without_sched_getcpu_launches_and_never_moves(monkeypatch):
    """Where libc has no ``sched_getcpu`` the workers never nudge (and yield as before)."""
    code = native_pool.native_code(current_backend().compiler)
    monkeypatch.setattr(code, "getcpu", 0)
    pool = ThreadPool(2, native=code)
    try:
        assert pool.state[native_pool.NUDGE] == 0 and pool.state[native_pool.GETCPU] == 0
        _launches_until(pool, lambda: False, limit=20)
        assert pool.shares()["nudges"] == [0, 0]
        assert sum(pool.shares()["blocks"]) == 20 * 2 * BLOCKS_PER_THREAD
    finally:
        pool.close()
