"""The native thread pool: compiled kernels run on worker loops that never take the GIL.

Results must equal NumPy's at every thread count and size, with many Python threads launching
at once, across thread-count changes (frozen functions included), and a pool must stop cleanly
however short its life.
"""
import gc
import subprocess
import sys
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


# -- waking the workers: idle spin bounded in time, wake-ups ahead of launches ----------------

def _poll(condition, seconds=10.0):
    """Wait until ``condition()`` holds (True) or ``seconds`` pass (False); never a timing claim."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


@pytest.mark.parametrize("size", [1, 7, 1000, 100003, 1 << 20])
def test_a_launch_after_the_workers_went_to_sleep_returns_right_results(threads, size):
    """Each launch here finds the workers asleep (the pause is longer than their spin)."""
    fj.set_thread_count(3)
    a = np.linspace(-2, 2, size).astype(np.float32)
    x = Float(a)
    frozen = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
    for _ in range(4):
        time.sleep(0.005)
        np.testing.assert_array_equal(((x * 1.5 + 2.0) * x).numpy(), _expected(a))
        time.sleep(0.005)
        np.testing.assert_array_equal(frozen(x).numpy(), _expected(a))


def test_many_tiny_launches_between_large_ones_return_right_results(threads):
    """Launches just above and below the parallel threshold, back to back, with wake-ups."""
    fj.set_thread_count(4)
    pool = current_backend().threads
    for k in range(300):
        size = (1 << 15) + 8 * k if k % 3 else 1 + k
        a = np.arange(size, dtype=np.float32)
        if k % 7 == 0:
            pool.wake()
        np.testing.assert_array_equal((Float(a) * 2.0 + 1.0).numpy(), a * np.float32(2) + np.float32(1))


def _spin_pool(n, spin_us, monkeypatch):
    monkeypatch.setenv("FROSTJIT_POOL_SPIN_US", str(spin_us))
    return ThreadPool(n, native=native_pool.native_code(current_backend().compiler))


def _launch_on(pool, a):
    backend = current_backend()
    old, backend.threads = backend.threads, pool
    try:
        return (Float(a) * 3.0).numpy()
    finally:
        backend.threads = old


def test_idle_workers_go_to_sleep_after_their_spin(monkeypatch):
    """After a launch the workers spin for their window, then all sleep (no endless spinning)."""
    pool = _spin_pool(3, 2000, monkeypatch)
    try:
        a = np.ones(1 << 20, np.float32)
        np.testing.assert_array_equal(_launch_on(pool, a), 3.0)
        assert _poll(lambda: pool.state[native_pool.SLEEPERS] == 2), "idle workers never slept"
    finally:
        pool.close()


def test_wake_gets_sleeping_workers_spinning_until_its_window_ends(monkeypatch):
    """wake() takes the workers out of their sleep; after the window they sleep again."""
    # The longest window FROSTJIT_POOL_SPIN_US allows (0.1 s), seen by polling: both workers must
    # be out of their sleep at once while the poller runs, and on CI's 2 loaded cores (these 3
    # threads and another pytest worker) a futex wake-up or the poller's turn can come late.
    pool = _spin_pool(3, 100_000, monkeypatch)
    try:
        assert _poll(lambda: pool.state[native_pool.SLEEPERS] == 2), "new workers never slept"
        pool.wake()
        assert _poll(lambda: pool.state[native_pool.SLEEPERS] == 0), "wake() left a worker asleep"
        assert _poll(lambda: pool.state[native_pool.SLEEPERS] == 2), "woken workers never slept again"
        np.testing.assert_array_equal(_launch_on(pool, np.ones(1 << 20, np.float32)), 3.0)
    finally:
        pool.close()


@pytest.mark.parametrize("spin_us", [0, 1000])
def test_pools_close_whatever_their_workers_do(spin_us, monkeypatch):
    """Closed right after a launch, a wake-up, or while asleep: the stop reaches every worker."""
    a = np.ones(1 << 18, np.float32)
    for k in range(24):
        pool = _spin_pool(2 + k % 3, spin_us, monkeypatch)
        workers = list(pool.native_threads)
        if k % 2:
            np.testing.assert_array_equal(_launch_on(pool, a), 3.0)
        if k % 3 == 1:
            pool.wake()
        if k % 4 == 3:
            time.sleep(0.003)
        assert _closes_within(pool, 10), "close() hung"
        assert not any(t.is_alive() for t in workers)


def test_wake_from_other_threads_during_launches_keeps_results_right(threads):
    """wake() racing launches and sleeping workers (the ring and sleepers handshake)."""
    fj.set_thread_count(4)
    stop = threading.Event()
    errors = []

    def waker():
        backend = current_backend()
        while not stop.is_set():
            backend.wake_threads()
            time.sleep(0.0013)

    w = threading.Thread(target=waker, daemon=True)
    w.start()
    try:
        a = np.linspace(-2, 2, 1 << 18).astype(np.float32)
        x = Float(a)
        for k in range(60):
            np.testing.assert_array_equal(((x * 1.5 + 2.0) * x).numpy(), _expected(a))
            if k % 5 == 0:
                time.sleep(0.002)
    except BaseException as e:      # noqa: BLE001 - reported below
        errors.append(e)
    finally:
        stop.set()
        w.join(10)
    assert not errors, errors[0]


@pytest.mark.parametrize("value", ["fast", "-1", "100001"])
def test_a_bad_spin_setting_is_an_error_naming_it(value, monkeypatch):
    monkeypatch.setenv("FROSTJIT_POOL_SPIN_US", value)
    with pytest.raises(ValueError, match="FROSTJIT_POOL_SPIN_US"):
        ThreadPool(2, native=native_pool.native_code(current_backend().compiler))


def _count_wakes(monkeypatch):
    calls = []
    real = type(current_backend()).wake_threads

    def spy(self):
        calls.append(1)
        real(self)

    monkeypatch.setattr(type(current_backend()), "wake_threads", spy)
    return calls


def test_large_evaluations_wake_the_workers_before_their_launch_and_small_ones_not(threads, monkeypatch):
    fj.set_thread_count(2)
    calls = _count_wakes(monkeypatch)
    small = Float(np.ones(1000, np.float32))
    fj.eval(small * 2.0)
    fj.eval(small * 2.0, small + 1.0)
    assert calls == []
    large = Float(np.ones(1 << 20, np.float32))
    fj.eval(large * 2.0)
    fj.eval(large * 2.0, large + 1.0)
    assert len(calls) == 2
    fj.set_thread_count(1)          # one thread: nobody to wake
    fj.eval(large * 3.0)
    assert len(calls) == 2


def test_a_replay_wakes_the_workers_at_its_start_when_its_launch_is_large(threads, monkeypatch):
    fj.set_thread_count(2)
    calls = _count_wakes(monkeypatch)      # (before the recording binds the method)
    frozen = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
    large = np.linspace(-2, 2, 1 << 20).astype(np.float32)
    small = large[:1000].copy()
    for a in (large, large):
        np.testing.assert_array_equal(frozen(Float(a)).numpy(), _expected(a))
    before = len(calls)
    np.testing.assert_array_equal(frozen(Float(large)).numpy(), _expected(large))
    assert len(calls) == before + 1
    for a in (small, small):         # the same recording, a size below the threshold
        np.testing.assert_array_equal(frozen(Float(a)).numpy(), _expected(a))
    assert len(calls) == before + 1


_FORK_SCRIPT = r"""
import os, time
import numpy as np
import frostjit as fj
from frostjit.backend import current_backend
from frostjit.llvm import Float
fj.set_thread_count(3)
a = np.linspace(-2, 2, 1 << 20).astype(np.float32)
expected = (a * np.float32(1.5) + np.float32(2)) * a
frozen = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
x = Float(a)
frozen(x); frozen(x)
pid = os.fork()
ok = True
for k in range(12):
    if k % 3 == 0:
        time.sleep(0.003)
    ok &= bool(np.array_equal(((x * 1.5 + 2.0) * x).numpy(), expected))
    ok &= bool(np.array_equal(frozen(x).numpy(), expected))
workers = sum(t.is_alive() for t in current_backend().threads.native_threads)
if pid == 0:
    fj.set_thread_count(2)
    ok &= bool(np.array_equal(frozen(x).numpy(), expected))
    os._exit(0 if ok and workers == 2 else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status), "parent", ok, workers)
"""


def test_a_forked_child_gets_a_pool_with_its_own_workers_and_right_results():
    """The child of os.fork() has none of its parent's threads: it gets a new pool."""
    run = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", _FORK_SCRIPT],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["child", "0", "parent", "True", "2"], run.stdout + run.stderr


def test_a_replay_recorded_on_one_thread_wakes_the_workers_of_a_later_pool(threads, monkeypatch):
    fj.set_thread_count(1)
    calls = _count_wakes(monkeypatch)
    frozen = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
    a = np.linspace(-2, 2, 1 << 20).astype(np.float32)
    frozen(Float(a))
    frozen(Float(a))            # recorded and replayed on one thread
    fj.set_thread_count(2)
    before = len(calls)
    np.testing.assert_array_equal(frozen(Float(a)).numpy(), _expected(a))
    assert len(calls) == before + 1


def test_the_interpreter_exits_cleanly_while_the_workers_spin():
    """Exit right after a launch and a wake-up: the workers are stopped before their code goes."""
    script = ("import numpy as np, frostjit as fj\n"
              "from frostjit.backend import current_backend\n"
              "from frostjit.llvm import Float\n"
              "fj.set_thread_count(3)\n"
              "assert ((Float(np.ones(1 << 20, np.float32)) * 2.0).numpy() == 2).all()\n"
              "current_backend().wake_threads()\n")
    for _ in range(3):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stderr == "", run.stderr


def test_a_replay_launching_with_more_or_fewer_workers_gets_a_table_for_each(threads):
    """The argument table a replay's launches share (kept on its argument array) follows the
    launch's worker count: sizes of 2, 3 and 16 blocks on a 4-thread pool use 1, 2 and 3 workers."""
    fj.set_thread_count(4)
    f = fj.freeze(lambda x: (x * 1.5 + 2.0) * x)
    for size in [1_000_000, 32768, 49152, 1_000_000, 49152, 32768, 1_000_000]:
        a = np.linspace(-2, 2, size).astype(np.float32)
        np.testing.assert_array_equal(f(Float(a)).numpy(), _expected(a))


def test_the_shared_argument_table_is_made_once_per_worker_count():
    import ctypes
    from frostjit.backend.llvm.threads import _shared_table
    args = (ctypes.c_int64 * 4)()
    t1 = _shared_table(args, 1)
    assert _shared_table(args, 1) is t1 and list(t1) == [ctypes.addressof(args)] * 2
    t3 = _shared_table(args, 3)
    assert t3 is not t1 and list(t3) == [ctypes.addressof(args)] * 4
