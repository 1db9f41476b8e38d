"""The native thread pool: compiled kernels run on worker loops that never take the GIL.

Results must equal NumPy's at every thread count and size, with many Python threads launching
at once, across thread-count changes (frozen functions included), and a pool must stop cleanly
however short its life.
"""
import gc
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm import native_pool
from frostjit.backend.llvm.threads import ThreadPool
from frostjit.llvm import Float, UInt32

pytestmark = [pytest.mark.llvm_only("the LLVM backend's thread pool"),
              pytest.mark.skipif(not native_pool.available(), reason="no native pool on this platform")]


@pytest.fixture
def threads():
    """Restores the thread count a test changes."""
    old = fj.thread_count()
    yield
    fj.set_thread_count(old)


def _expected(a):
    return (a * np.float32(1.5) + np.float32(2)) * a


@settings(max_examples=12)
@given(n_threads=st.sampled_from([1, 2, 3, 4, 8]),
       size=st.sampled_from([1, 7, 1000, 100003, 1 << 18, 1_000_003]))
def test_parallel_kernels_match_numpy_at_every_thread_count(n_threads, size):
    old = fj.thread_count()
    try:
        fj.set_thread_count(n_threads)
        a = np.linspace(-2, 2, size).astype(np.float32)
        x = Float(a)
        y = (x * 1.5 + 2.0) * x
        np.testing.assert_array_equal(y.numpy(), _expected(a))
    finally:
        fj.set_thread_count(old)


def test_scatter_add_into_a_small_target_on_native_workers(threads):
    """Private per-thread copies of the target (combined after the native launch)."""
    fj.set_thread_count(4)
    n = 1 << 20
    idx = (np.arange(n) % 97).astype(np.uint32)
    target = fj.zeros(Float, 97)
    fj.scatter_add(target, Float(np.ones(n, np.float32)), UInt32(idx))
    np.testing.assert_array_equal(target.numpy(), np.bincount(idx, minlength=97).astype(np.float32))


def test_many_python_threads_launching_at_once_get_their_own_results(threads):
    fj.set_thread_count(4)
    n = 300_000
    errors = []

    def work(seed):
        try:
            a = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
            x = Float(a)
            for _ in range(10):
                np.testing.assert_array_equal(((x * 1.5 + 2.0) * x).numpy(), _expected(a))
        except BaseException as e:      # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


def test_a_frozen_function_uses_the_pool_of_the_current_thread_count(threads):
    """Replays launch on the pool set_thread_count installed, not the one of the recording."""
    fj.set_thread_count(2)
    f = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
    a = np.linspace(-2, 2, 1 << 20).astype(np.float32)
    x = Float(a)
    f(x)
    f(x)        # recorded and replayed on the 2-thread pool
    fj.set_thread_count(3)
    pool = current_backend().threads
    calls = []
    real = pool.run

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    pool.run = spy
    try:
        y = f(x)
        np.testing.assert_array_equal(y.numpy(), _expected(a))
    finally:
        del pool.run
    assert calls == [1 << 20]


def _closes_within(pool, seconds):
    closer = threading.Thread(target=pool.close, daemon=True)
    closer.start()
    closer.join(seconds)
    return not closer.is_alive()


def test_a_worker_that_starts_after_its_pool_stopped_returns():
    """A worker whose thread starts late sees the final ``gen`` first: it must not sleep on it."""
    code = native_pool.native_code(current_backend().compiler)
    state = code.new_state()
    code.stop(state.ctypes.data)
    worker = threading.Thread(target=code.worker, args=(state.ctypes.data, 0), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the worker slept past the stop"


def test_pools_closed_at_once_close():
    code = native_pool.native_code(current_backend().compiler)
    for _ in range(30):
        assert _closes_within(ThreadPool(4, native=code), 10), "close() hung"


def test_a_pool_closes_after_launches_and_its_workers_leave():
    code = native_pool.native_code(current_backend().compiler)
    pool = ThreadPool(3, native=code)
    workers = list(pool.native_threads)
    x = Float(np.ones(1 << 20, np.float32))
    fj.eval(x)
    backend = current_backend()
    old, backend.threads = backend.threads, pool
    try:
        np.testing.assert_array_equal((x * 3.0).numpy(), 3.0)
    finally:
        backend.threads = old
    assert _closes_within(pool, 10)
    assert not any(t.is_alive() for t in workers)


def test_a_dropped_pool_stops_its_workers():
    pool = ThreadPool(3, native=native_pool.native_code(current_backend().compiler))
    workers = list(pool.native_threads)
    del pool
    gc.collect()
    for t in workers:
        t.join(10)
    assert not any(t.is_alive() for t in workers)


def test_thread_count_changes_while_other_threads_launch(threads):
    """Launches (plain and frozen replays) racing set_thread_count: every result right, no hang."""
    n = 1 << 18
    a = np.linspace(-2, 2, n).astype(np.float32)
    frozen = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
    errors = []
    stop = threading.Event()

    def launcher():
        try:
            x = Float(a)
            while not stop.is_set():
                np.testing.assert_array_equal(((x * 1.5 + 2.0) * x).numpy(), _expected(a))
                np.testing.assert_array_equal(frozen(x).numpy(), _expected(a))
        except BaseException as e:      # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=launcher, daemon=True) for _ in range(3)]
    for t in ts:
        t.start()
    try:
        for k in range(20):
            fj.set_thread_count(1 + k % 4)
            time.sleep(0.02)            # launches run on this pool meanwhile
    finally:
        stop.set()
        for t in ts:
            t.join(60)
    assert not any(t.is_alive() for t in ts), "a launcher hung"
    assert not errors, errors[0]
