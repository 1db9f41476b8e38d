"""The recording cache: identity-keyed objects are not kept alive, recordings pinned to exact
sizes are found by index, and no lock is held while a frozen function runs (threads)."""
import threading
import warnings
import weakref

import numpy as np
import pytest

import frostjit as fj
from frostjit.ad import graph as ad_graph
from frostjit.llvm import Float, UInt32

from freeze_helpers import ramp, same


class Holder:                       # no __eq__: keyed by identity
    def __init__(self, n):
        self.a = ramp(n)


class Slotted:
    __slots__ = ("a", "__weakref__")

    def __init__(self, n):
        self.a = ramp(n)


@pytest.mark.parametrize("cls", [Holder, Slotted])
def test_identity_keyed_objects_are_not_kept_alive(cls):
    fz = fj.freeze(lambda o, k: o.a * k, warn_after=1000)
    refs = []
    for i in range(50):
        o = cls(5)
        for _ in range(3):                      # (the third call goes through a binder)
            assert same(fz(o, 2.0), ramp(5) * 2)
        refs.append(weakref.ref(o))
        arr = weakref.ref(o.a._node)
        del o                                   # (freed by reference counting: no cycle keeps it)
        assert refs[-1]() is None and arr() is None
    fz(Holder(5), 2.0)                           # the next call drops the dead keys
    assert fz.n_cached_recordings == 1


def test_a_new_object_at_a_dead_objects_address_traces_again():
    fz = fj.freeze(lambda o: o.a + 1, warn_after=100)
    for _ in range(20):             # addresses are reused quickly; a new object must never replay
        o = Holder(3)               # the recording of a dead one
        assert same(fz(o), ramp(3) + 1)
        del o
    assert fz.n_recordings == 20


def test_method_self_is_not_kept_alive():
    class Model:
        def __init__(self):
            self.w = ramp(4)

        @fj.freeze
        def apply(self, x):
            return self.w * x
    m = Model()
    m.apply(ramp(4))
    m.apply(ramp(4))
    r = weakref.ref(m)
    del m
    assert r() is None


def _len_guarded(x):
    return x * len(x)


def test_recordings_pinned_to_a_width_are_indexed():
    fz = fj.freeze(_len_guarded, warn_after=10**6)
    widths = list(range(2, 402))
    for n in widths:
        assert same(fz(ramp(n)), ramp(n) * n)
    assert fz.n_recordings == len(widths)
    for n in (7, 300, 2):
        assert same(fz(ramp(n)), ramp(n) * n)          # replayed: found by its width
    assert fz.n_recordings == len(widths)
    (entry,) = fz._cache.entries.values()
    assert all(len(entry.candidates([n])) == 1 for n in widths)


def test_pinned_and_general_recordings_of_one_key():
    def fn(x):
        if fj.width(x) % 3 == 0:
            return x * len(x)           # pins the width
        return x + 1                    # a guard on width % 3, not a pin
    fz = fj.freeze(fn)
    for n in (3, 4, 6, 5, 3, 9, 7, 6):
        assert same(fz(ramp(n)), fn(ramp(n)))
    assert fz.n_recordings == 4         # 3, 6, 9 pinned; 4 (5 and 7 replay it)


# --- item 10: no lock held while a frozen function runs -------------------------------------
def _run_in_thread(fn, *args, timeout=60):
    out = {}

    def target():
        try:
            out["value"] = fn(*args)
        except BaseException as e:   # noqa: BLE001
            out["error"] = e
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "deadlock: the other thread never finished"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.mark.filterwarnings("ignore:.*work in another thread:frostjit.FreezeWarning")  # (a thread started inside falls back to the plain call)
def test_recording_waits_for_a_thread_that_records_another_frozen_function():
    inner = fj.freeze(lambda x: x * 3)

    @fj.freeze
    def outer(x):
        y = _run_in_thread(inner, ramp(4))        # another thread records `inner` meanwhile
        return x + fj.sum(y)
    for n in (3, 5):
        assert same(outer(ramp(n)), ramp(n) + 18)
    assert inner.n_recordings == 1


@pytest.mark.filterwarnings("ignore:.*work in another thread:frostjit.FreezeWarning")  # (a thread started inside falls back to the plain call)
def test_recording_waits_for_a_thread_that_calls_the_same_frozen_function():
    calls = []

    @fj.freeze
    def f(x, depth):
        calls.append(depth)
        if depth:
            _run_in_thread(f, ramp(3), 0)
        return x * 2
    assert same(f(ramp(4), 1), ramp(4) * 2)
    assert same(f(ramp(4), 0), ramp(4) * 2)


@pytest.mark.filterwarnings("ignore:.*work in another thread:frostjit.FreezeWarning")  # (a thread started inside falls back to the plain call)
def test_a_thread_calling_a_layout_being_recorded_runs_it_plainly():
    @fj.freeze
    def f(x, started):
        if not started.is_set():                # the recording waits for a call with the same layout
            started.set()
            started.result = _run_in_thread(f, ramp(5), started)
        return x * 2
    started = threading.Event()
    assert same(f(ramp(3), started), ramp(3) * 2)
    assert same(started.result, ramp(5) * 2)
    assert same(f(ramp(4), started), ramp(4) * 2)
    if isinstance(ad_graph.scopes, threading.local):
        # With per-thread AD scopes (Dr.Jit's), the other thread's call has the same layout as
        # the recording in progress (whose isolation scope is not its own) and ran plainly.
        assert f.n_recordings == 1


def test_concurrent_recordings_in_threads_agree_with_plain_calls():
    fns = [fj.freeze(lambda x, k=k: fj.sqrt(x * k + 1) + fj.sum(x)) for k in range(4)]
    barrier = threading.Barrier(4)
    errors = []

    def work(k):
        try:
            barrier.wait()
            for n in (5, 9, 5, 17):
                x = Float(np.arange(n, dtype=np.float32))
                got = fns[k](x).numpy()
                ref = np.sqrt(np.arange(n, dtype=np.float32) * k + 1) + np.arange(n).sum()
                if not np.allclose(got, ref, rtol=1e-5):
                    errors.append((k, n))
        except BaseException as e:      # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert errors == [] and not any(t.is_alive() for t in ts)


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_another_thread_never_runs_a_recording_threads_scatter(n):
    # (issue 9, case 11: thread B's evaluation used to run the scatter thread A had queued while
    # recording, so A's recording lacked it; now it stays queued for A, and A's recording is kept)
    from frostjit.trace.state import state
    queued, go = threading.Event(), threading.Event()
    seen = {}

    def other():
        queued.wait(30)
        y = fj.arange(Float, 10) * 2
        fj.eval(y)                  # unrelated work: evaluates every side effect it may
        seen["still queued"] = len(state.side_effects)
        go.set()
    t = threading.Thread(target=other, daemon=True)
    t.start()

    def fn(x, first):
        fj.scatter(x, Float(5.0), UInt32(0))
        if first:
            queued.set()
            go.wait(30)
        return x + 1
    fz = fj.freeze(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)       # nothing interfered: no warning
        x = ramp(n, 1)
        assert same(fz(x, True), fn(ramp(n, 1), False))
    t.join(30)
    assert seen["still queued"] == 1
    assert fz.n_cached_recordings == 1
    for _ in range(2):
        x, ref = ramp(n, 1), ramp(n, 1)
        assert same(fz(x, False), fn(ref, False)) and same(x, ref)


def test_candidates_are_the_pinned_matches_in_order_then_the_general_recordings():
    from frostjit.freeze.cache import Entry

    class R:
        def __init__(self, name, pins=None):
            self.name, self.pins = name, pins or {}

        def __repr__(self):
            return self.name
    e = Entry("key")
    assert e.candidates([5, 6]) == []
    a, b, c = R("a", {0: 5}), R("b", {0: 5}), R("c", {1: 6})
    g1, g2 = R("g1"), R("g2")
    e.add(a)
    assert e.candidates([5, 6]) == [a] and e.candidates([4, 6]) == []
    e.add(g1)
    assert e.candidates([5, 6]) == [a, g1] and e.candidates([4, 6]) == [g1]
    e.add(b)
    e.add(c)
    e.add(g2)
    assert e.candidates([5, 6]) == [a, b, c, g1, g2]
    assert e.candidates([5, 7]) == [a, b, g1, g2] and e.candidates([4, 6]) == [c, g1, g2]
    e.remove(g1)
    e.remove(g2)
    assert e.candidates([5, 7]) == [a, b]
    assert e.candidates([5, 6]) == [a, b, c]
    assert e.candidates([5, 7]) == [a, b]      # (the first list was not extended in place)
    e.remove(a)
    assert e.candidates([5, 6]) == [b, c] and e.candidates([4, 7]) == []
    # the last call's answer is remembered until the next add or remove
    sizes = [5, 6]
    assert e.candidates(sizes) is e.candidates([5, 6]) and e.candidates(sizes) == [b, c]
    e.add(g1)
    assert e.candidates([5, 6]) == [b, c, g1]
    e.remove(b)
    assert e.candidates([5, 6]) == [c, g1]
    sizes[0] = 4            # (a caller's list changed afterwards: not the remembered sizes)
    assert e.candidates([5, 6]) == [c, g1] and e.candidates(sizes) == [c, g1]
    e.remove(c)
    assert e.candidates([4, 6]) == [g1]
