"""The thread pool survives an exception at any point of a launch on the calling thread.

A KeyboardInterrupt (a signal handler raising) can hit the calling thread while it runs its own
share of a parallel launch, or while it waits for the workers.  The launch must still wait for its
workers before re-raising (they write into buffers the caller is about to free or reuse), and no
later launch may return before its own workers have finished.
"""
import signal
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm import threads as threads_mod
from frostjit.backend.llvm.threads import ThreadPool
from frostjit.llvm import Float

pytestmark = pytest.mark.llvm_only("the LLVM backend's thread pool")

SIZE = 1 << 18          # 16 blocks of MIN_BLOCK on 4 threads


class SlowWriter:
    """A Python "kernel": marks its blocks in ``out``; worker threads are slow.

    ``interrupt_caller`` makes the calling thread raise KeyboardInterrupt in its first block.
    """

    def __init__(self, size, interrupt_caller=False):
        self.out = np.zeros(size, np.int64)
        self.caller = threading.get_ident()
        self.interrupt_caller = interrupt_caller
        self.running = 0
        self.lock = threading.Lock()

    def __call__(self, start, end, args, shared):
        if threading.get_ident() == self.caller:
            if self.interrupt_caller:
                self.interrupt_caller = False
                raise KeyboardInterrupt("simulated Ctrl-C in the caller's share")
            self.out[start:end] += 1
            return
        with self.lock:
            self.running += 1
        time.sleep(0.02)
        self.out[start:end] += 1
        with self.lock:
            self.running -= 1


@pytest.fixture
def pool():
    p = ThreadPool(4)
    yield p
    p.close()


def test_interrupted_launch_waits_for_its_workers_then_reraises(pool):
    k = SlowWriter(SIZE, interrupt_caller=True)
    with pytest.raises(KeyboardInterrupt):
        pool.run(k, SIZE, None, 16, True)
    assert k.running == 0, "the launch returned while workers still ran its blocks"
    seen = k.out.copy()
    time.sleep(0.1)
    np.testing.assert_array_equal(k.out, seen, err_msg="workers wrote after the launch returned")
    assert set(np.unique(seen)) <= {0, 1}       # no block ran twice


def test_launches_after_an_interrupted_launch_wait_for_their_workers(pool):
    with pytest.raises(KeyboardInterrupt):
        pool.run(SlowWriter(SIZE, interrupt_caller=True), SIZE, None, 16, True)
    for _ in range(5):
        k = SlowWriter(SIZE)
        pool.run(k, SIZE, None, 16, True)
        assert k.running == 0
        np.testing.assert_array_equal(k.out, 1)


def test_interrupt_while_waiting_for_workers(pool, monkeypatch):
    """The caller finished its share and is interrupted while it waits for the workers."""
    k = SlowWriter(SIZE)
    calls = []
    real = threads_mod._wait

    def interrupted_wait(launch):
        if not calls:
            calls.append(1)
            raise KeyboardInterrupt("simulated Ctrl-C while waiting")
        return real(launch)

    monkeypatch.setattr(threads_mod, "_wait", interrupted_wait)
    with pytest.raises(KeyboardInterrupt):
        pool.run(k, SIZE, None, 16, True)
    assert k.running == 0
    monkeypatch.undo()
    k = SlowWriter(SIZE)
    pool.run(k, SIZE, None, 16, True)
    np.testing.assert_array_equal(k.out, 1)


class InterruptAt:
    """The caller raises KeyboardInterrupt at its ``at``-th block, before or after writing it."""

    def __init__(self, size, at, after_write):
        self.out = np.zeros(size, np.int64)
        self.caller = threading.get_ident()
        self.at = at
        self.after_write = after_write
        self.calls = 0
        self.running = 0
        self.lock = threading.Lock()

    def __call__(self, start, end, args, shared):
        if threading.get_ident() == self.caller:
            k = self.calls
            self.calls += 1
            if k == self.at and not self.after_write:
                raise KeyboardInterrupt
            self.out[start:end] += 1
            if k == self.at:
                raise KeyboardInterrupt
            return
        with self.lock:
            self.running += 1
        time.sleep(0.001)
        self.out[start:end] += 1
        with self.lock:
            self.running -= 1


@settings(max_examples=15)
@given(n_threads=st.sampled_from([2, 3, 4]), blocks=st.integers(2, 24), at=st.integers(0, 6),
       after_write=st.booleans())
def test_an_interrupt_at_any_block_of_the_caller_leaves_the_pool_consistent(n_threads, blocks, at, after_write):
    p = ThreadPool(n_threads)
    try:
        size = blocks * threads_mod.MIN_BLOCK
        k = InterruptAt(size, at, after_write)
        try:
            p.run(k, size, None, 16, True)
            interrupted = False
        except KeyboardInterrupt:
            interrupted = True
        assert k.running == 0
        seen = k.out.copy()
        time.sleep(0.005)
        np.testing.assert_array_equal(k.out, seen)          # nothing written after the launch returned
        assert set(np.unique(seen)) <= {0, 1}
        if not interrupted:
            np.testing.assert_array_equal(seen, 1)
        for _ in range(2):
            k = SlowWriter(size)
            p.run(k, size, None, 16, True)
            assert k.running == 0
            np.testing.assert_array_equal(k.out, 1)
    finally:
        p.close()


def test_worker_exception_is_reraised_and_the_pool_stays_usable(pool):
    def broken(start, end, args, shared):
        if threading.current_thread().name.startswith("frostjit-worker"):
            raise ValueError("kernel failed")
        time.sleep(0.01)            # leaves blocks for the workers

    with pytest.raises(ValueError, match="kernel failed"):
        pool.run(broken, SIZE, None, 16, True)
    k = SlowWriter(SIZE)
    pool.run(k, SIZE, None, 16, True)
    np.testing.assert_array_equal(k.out, 1)


def test_real_sigalrm_during_parallel_launches_leaves_later_results_right():
    """A real signal handler raising at random points of many launches; afterwards all is right."""
    n = 1 << 20
    a = np.linspace(-3, 3, n).astype(np.float32)
    x = Float(a)
    expected = (a * np.float32(1.5) + np.float32(2)).astype(np.float32)

    fj.eval(x * 1.5 + 2.0 + fj.sin(x) * 0.0)     # compiled before: the signals land in launches

    def handler(signum, frame):
        raise KeyboardInterrupt("SIGALRM")

    old = signal.signal(signal.SIGALRM, handler)
    interrupted = 0
    try:
        for delay in np.linspace(1e-4, 3e-3, 25):
            try:
                # (armed inside the try: a signal before the loop's first bytecode, when a loaded
                # machine preempts this thread right after arming it, is caught here too)
                signal.setitimer(signal.ITIMER_REAL, float(delay))
                for _ in range(200):
                    fj.eval(x * 1.5 + 2.0 + fj.sin(x) * 0.0)
            except KeyboardInterrupt:
                interrupted += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert interrupted > 0
    for _ in range(20):
        y = x * 1.5 + 2.0 + fj.sin(x) * 0.0
        np.testing.assert_array_equal(y.numpy(), expected)
    pool = current_backend().threads
    if pool.n_threads > 1:      # the engine's own pool still waits for its workers
        k = SlowWriter(SIZE)
        pool.run(k, SIZE, None, 16, True)
        assert k.running == 0
        np.testing.assert_array_equal(k.out, 1)
