"""Deferred launches in frozen replays: a large launch is published, the replay's next lines run
while the native workers run its blocks, and a join ends it before anything reads its outputs.

Every test compares replays with the deferral on and off (``ThreadPool.defer``, the
``FROSTJIT_ASYNC_LAUNCH`` switch) and with the plain call, bit for bit.  Checking mode is off
here (it runs replays on the calling thread only, where nothing is deferred); the adversarial
tests read, overwrite or drop a replay's outputs right after it returns, through each way the
host reaches a buffer, and launch small kernels on the calling thread right after a deferred one.
"""
import contextlib
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm import native_pool
from frostjit.llvm import Float, UInt32

pytestmark = [pytest.mark.no_freeze_check,
              pytest.mark.llvm_only("the LLVM backend's native pool defers launches"),
              pytest.mark.skipif(not native_pool.available(), reason="no native pool on this platform")]

N = 1 << 20     # lanes: far above every parallel threshold, ~1 ms of work on 2 threads


@pytest.fixture
def two_threads():
    """A pool of two threads (caller and one worker), the deferral on; restored after."""
    old = fj.thread_count()
    fj.set_thread_count(2)
    pool = current_backend().threads
    assert pool.native is not None
    with _defer(True):
        yield pool
    fj.set_thread_count(old)


@contextlib.contextmanager
def _defer(on):
    """The current pool's deferral set to ``on``, its own value (``FROSTJIT_ASYNC_LAUNCH``) back
    after: where the thread count already was 2, the pool outlives the test, and later tests of
    the process (a ``FROSTJIT_ASYNC_LAUNCH=0`` run's) must not inherit a switch set here."""
    pool = current_backend().threads
    was = pool.defer
    pool.defer = on
    try:
        yield
    finally:
        pool.defer = was


def _heavy(x):
    """Enough arithmetic per lane that a launch of N lanes takes a while."""
    y = x
    for _ in range(24):
        y = fj.fma(y, 0.999, 0.25) * fj.cos(y)
    return y


def _values(a):
    return [v.numpy().copy() for v in a]


def test_a_replays_last_launch_is_deferred_and_joined_before_it_returns(two_threads):
    def f(x):
        y = _heavy(x)
        fj.eval(y)
        return y

    ff = fj.freeze(f)
    for k in range(5):      # (new inputs each call: a stale buffer must not hold the values)
        x = Float(np.linspace(-3, 3 + k, N).astype(np.float32))
        got = ff(x).numpy()
        assert two_threads.pending is None
        np.testing.assert_array_equal(got, f(x).numpy())
    assert "run_parallel(" in _source(ff) and "join_launch()\n    return result" in _source(ff)


def _source(ff):
    entries = list(ff._cache.entries.values())
    return "\n".join(r.source for e in entries for r in e.order)


@settings(max_examples=10, deadline=None)
@given(n=st.sampled_from([1, 100, 5000, 40000, N + 17]), k=st.sampled_from([1, 7, 333]),
       launches=st.integers(1, 3), defer=st.booleans())
def test_replays_with_and_without_deferral_equal_the_plain_call(n, k, launches, defer):
    """1-3 launches in a row, each reading the last one's output (also gathered from its far end,
    which the caller would reach first), at widths on both sides of the parallel threshold."""
    old = fj.thread_count()
    fj.set_thread_count(2)
    try:
        def f(x, idx):
            y = x
            outs = []
            for j in range(launches):
                y = _heavy(y) + fj.gather(Float, y, idx) * float(j + 1)
                fj.eval(y)
                outs.append(y)
            return outs

        ff = fj.freeze(f)
        idx = UInt32((np.arange(n, dtype=np.uint64) * k % n)[::-1].astype(np.uint32))
        with _defer(defer):
            for c in range(3):
                x = Float(np.linspace(-1, 1 + c, n).astype(np.float32))
                got = _values(ff(x, idx))     # (first: the plain call's freed buffers hold its values)
                want = _values(f(x, idx))
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(g, w)
    finally:
        fj.set_thread_count(old)


def test_a_small_launch_on_the_calling_thread_after_a_deferred_one_joins_it(two_threads):
    """A deferred launch of N lanes, then a gather of its last elements by a launch too small for
    the pool (the calling thread runs it at once): the join before it is what makes it right."""
    def f(x, idx):
        y = _heavy(x)
        fj.eval(y)
        z = fj.gather(Float, y, idx) + 1.0
        fj.eval(z)
        return z

    ff = fj.freeze(f)
    idx = UInt32(np.arange(N - 64, N, dtype=np.uint32))
    for k in range(6):
        x = Float(np.linspace(-2, 2 + k, N).astype(np.float32))
        got = ff(x, idx).numpy()
        np.testing.assert_array_equal(got, f(x, idx).numpy())


def test_a_reduction_after_a_deferred_launch_sees_all_of_it(two_threads):
    def f(x):
        y = _heavy(x)
        fj.eval(y)
        return fj.sum(y), fj.max(y), y

    ff = fj.freeze(f)
    for k in range(4):
        x = Float(np.linspace(-2, 2 + k, N).astype(np.float32))
        got = _values(ff(x))
        for g, w in zip(got, _values(f(x))):
            np.testing.assert_array_equal(g, w)


_READS = {
    "numpy": lambda y: y.numpy().copy(),
    "index": lambda y: np.array([y[N - 1], y[N // 2], y[0]], np.float32),
    "dlpack": lambda y: np.from_dlpack(y).copy(),
    "array": lambda y: np.array(y),
    "repr": lambda y: repr(y),
    "sum": lambda y: fj.sum(y).numpy().copy(),
    "compare": lambda y: fj.all(y < 1e30),
}


def _evaluated_heavy(x):
    y = _heavy(x)
    fj.eval(y)
    return y


@pytest.mark.parametrize("how", sorted(_READS))
def test_every_host_read_right_after_a_replay_sees_its_whole_output(two_threads, how):
    f = _evaluated_heavy
    ff = fj.freeze(f)
    for k in range(3):
        x = Float(np.linspace(-4, 4 + k, N).astype(np.float32))
        got = _READS[how](ff(x))     # (first: the plain call's freed buffer would hold its values)
        want = _READS[how](f(x))
        if isinstance(want, np.ndarray):
            np.testing.assert_array_equal(got, want)
        else:
            assert got == want


def test_outputs_dropped_overwritten_and_reallocated_right_after_replays(two_threads):
    """A replay's output dropped at once (its buffer back in the pool), then new arrays of the
    same size filled on the host and launched over: no value changes under them."""
    f = _evaluated_heavy
    ff = fj.freeze(f)
    for k in range(6):
        x = Float(np.linspace(-1, 1 + k, N).astype(np.float32))
        want = f(x).numpy()
        ff(x)                                   # (dropped: its buffer returns to the pool)
        b = Float(np.full(N, k, np.float32))    # a host write into a buffer of the same size
        c = fj.full(Float, float(k), N)
        y = ff(x)
        y2 = y * 1.0                            # a launch that reads the output
        y[3] = 5.0                              # a host write into it
        np.testing.assert_array_equal(b.numpy(), np.full(N, k, np.float32))
        np.testing.assert_array_equal(c.numpy(), np.full(N, k, np.float32))
        np.testing.assert_array_equal(y2.numpy(), want)
        assert y.numpy()[3] == 5.0 and y.numpy()[4] == want[4]


def test_outputs_written_into_inputs_and_user_objects_are_complete(two_threads):
    """Write-backs into the inputs (a user dict's ``__setitem__``) and outputs built without
    frostjit's own constructors join before they run."""
    class Box:
        def __init__(self, v):
            self.v = v

    stored = []

    class Watch(dict):
        def __setitem__(self, key, value):
            stored.append(value)      # (user code handed the array: it may keep it)
            super().__setitem__(key, value)

    def f(x, d):
        y = _heavy(x)
        fj.eval(y)
        d["y"] = y
        return Box(y)

    ff = fj.freeze(f)
    for k in range(4):
        x = Float(np.linspace(-1, 1 + k, N).astype(np.float32))
        stored.clear()
        d = Watch()
        box = ff(x, d)
        first = stored[0].numpy().copy()
        want = f(x, Watch()).v.numpy()
        np.testing.assert_array_equal(first, want)
        np.testing.assert_array_equal(box.v.numpy(), want)
        np.testing.assert_array_equal(d["y"].numpy(), want)
    src = _source(ff)
    assert src.index("join_launch()", src.index("run_parallel(")) < src.index("# write-backs")


def test_threads_replaying_one_frozen_function_at_once(two_threads):
    """Two Python threads replaying the same recording (its argument arrays are shared; each
    replay joins a launch still pending first) and the thread count changing meanwhile."""
    def f(x):
        y = _heavy(x)
        fj.eval(y)
        return y

    ff = fj.freeze(f)
    inputs = [Float(np.linspace(-1 - t, 1 + t, N).astype(np.float32)) for t in range(4)]
    wants = [f(x).numpy() for x in inputs]
    errors = []

    def worker(t):
        try:
            for k in range(8):
                j = (t + k) % 4
                np.testing.assert_array_equal(ff(inputs[j]).numpy(), wants[j])
        except BaseException as e:     # noqa: BLE001 - reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for t in ts:
        t.start()
    fj.set_thread_count(3)
    fj.set_thread_count(2)
    for t in ts:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in ts), "a replaying thread hung"
    assert not errors, errors[0]
