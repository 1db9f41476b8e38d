"""A replay does everything the plain call does besides computing: Debug-mode bounds checks,
kernel-history entries, and every size it allocates follows the new inputs (or is guarded)."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, UInt32

from freeze_helpers import ramp, same


class debug_mode:
    def __enter__(self):
        fj.set_flag(fj.JitFlag.Debug, True)

    def __exit__(self, *exc):
        fj.set_flag(fj.JitFlag.Debug, False)


@pytest.fixture
def history():
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history()
    yield
    fj.set_flag(fj.JitFlag.KernelHistory, False)
    fj.kernel_history()


def _gather(x, i):
    return fj.gather(Float, x, i) + 1


def _scatter(x, i):
    fj.scatter(x, Float(9.0), i)
    return x * 1


def _scatter_add_masked(x, i):
    fj.scatter_add(x, 1.0, i, i < 1000)
    return x + 0


def _gather_of_width(x, i):
    return fj.gather(Float, x, fj.arange(UInt32, fj.width(i)) + i)


def outcome(fn, *args):
    try:
        return np.asarray(fn(*args).numpy())
    except IndexError as e:
        return ("IndexError", str(e))


@pytest.mark.parametrize("fn", [_gather, _scatter, _scatter_add_masked, _gather_of_width])
@given(st.lists(st.tuples(st.sampled_from([1, 7, 1000]), st.integers(0, 1200)), min_size=2, max_size=6))
def test_debug_bounds_checks_hold_under_replay(fn, calls):
    fz = fj.freeze(fn, warn_after=100)
    with debug_mode():
        check_calls(fn, fz, calls)


def check_calls(fn, fz, calls):
    for n, bad in calls:
        def args():
            idx = np.arange(n, dtype=np.uint32) % n
            idx[-1] = bad                      # in or out of bounds
            return ramp(n), UInt32(idx)
        ref, got = outcome(fn, *args()), outcome(fz, *args())
        assert (ref == got) if isinstance(ref, tuple) or isinstance(got, tuple) else \
            np.array_equal(ref, got), (n, bad, ref, got)


def test_out_of_bounds_replay_raises_index_error_and_leaves_inputs():
    fz = fj.freeze(_scatter)
    with debug_mode():
        fz(ramp(3), UInt32(0, 1, 2))
        x = ramp(3)
        with pytest.raises(IndexError, match=r"scatter\(\): index 5 \(at position 1\) is out of bounds"):
            fz(x, UInt32(0, 5, 1))
    assert same(x, ramp(3)) and fz.n_recordings == 1


def _history_program(x):
    m = fj.compress(x > 1)
    y = fj.gather(Float, x, m)
    return fj.sum(x) + fj.prefix_sum(x), y, fj.max(y)


def _entries(h):
    return [(e["type"], e["size"], e.get("operation")) for e in h]


@pytest.mark.no_freeze_check     # (counts kernel-history entries: the checking call would add its own)
def test_kernel_history_of_a_replay_lists_every_launch(history):
    fz = fj.freeze(_history_program)
    for n in (7, 7, 1000, 7):
        x = ramp(n)
        fj.kernel_history()
        out = _history_program(x)
        fj.eval(out)
        ref = fj.kernel_history()
        fz(x)
        got = fj.kernel_history()
        assert sorted(map(str, _entries(got))) == sorted(map(str, _entries(ref))), (n, got, ref)
        assert {tuple(sorted(e)) for e in got} == {tuple(sorted(e)) for e in ref}     # the same fields
    assert fz.n_recordings == 1


# --- item 14a: every size in a recording is symbolic or guarded ------------------------------
from frostjit.llvm.ad import Float as FloatAD, UInt32 as UInt32AD  # noqa: E402


def _helper(x):
    t = fj.zeros(FloatAD, fj.width(x) // 2 + 1)
    fj.scatter_add(t, x, fj.arange(UInt32AD, fj.width(x)) // 2)
    y = fj.gather(FloatAD, t, fj.arange(UInt32AD, fj.width(x)) // 2)
    fj.eval(y)              # t is freed when the helper returns: only y's AD vertex refers to it
    return y


def _backward_through_freed_gather_source(x):
    y = _helper(x)
    fj.backward(fj.sum(y * y * y))
    return fj.grad(x)


def test_gradient_of_a_freed_gather_source_follows_the_width():
    fz = fj.freeze(_backward_through_freed_gather_source)
    for n in (4, 7, 1000, 7, 100003, 4):
        def mk():
            x = FloatAD(np.arange(n, dtype=np.float32) * 2)
            fj.enable_grad(x)
            return x
        assert same(fz(mk()), _backward_through_freed_gather_source(mk())), n
    assert fz.n_recordings == 1


def test_constant_size_equal_to_a_width_is_guarded():
    # a constant size that equals a width may have been computed from it where frostjit cannot
    # see (NumPy, Python data): the recording holds only while they agree
    def fn(x):
        a = Float(np.zeros(3, dtype=np.float32)) + 1
        fj.eval(a)                      # (not launched together with x * 2)
        return a, x * 2
    fz = fj.freeze(fn)
    for n in (3, 5, 3, 1000):
        a, b = fz(ramp(n))
        assert same(a, Float(1, 1, 1)) and same(b, ramp(n) * 2)
    assert fz.n_recordings == 2


def test_index_width_check_is_guarded():
    # functions/memory._check_index_width rejects 32-bit indices into more than 2^31 elements;
    # a replay at such a size must trace again (and raise) instead of launching
    fz = fj.freeze(lambda x, i: fj.gather(Float, x, i))
    fz(ramp(5), UInt32(0, 1))
    (recd,) = fz._cache.entries[next(iter(fz._cache.entries))].order
    assert any("2147483648" in expr for expr, _, _ in recd.guards)


def test_a_replay_skips_kernels_and_reductions_whose_results_nothing_reads():
    # (a backward derivative recomputes the loss only to differentiate it; fj.eval of a dropped value)
    from frostjit.freeze.scratch import dead_operations
    import frostjit as fj_
    from frostjit.llvm import Float as F32

    def f(x, y):
        unused = fj_.sum(x * 3.0)           # evaluated (a reduction), then dropped
        fj_.eval(unused)
        fj_.scatter(y, x * 2.0, fj_.arange(fj_.llvm.UInt32, fj_.width(x)))   # a scatter: never dropped
        return x + 1.0

    ff = fj_.freeze(f)
    for n in (3, 1000, 7):
        x = F32(np.arange(n, dtype=np.float32))
        y = F32(np.zeros(n, dtype=np.float32))
        out = ff(x, y)
        assert np.array_equal(out.numpy(), np.arange(n) + 1) and np.array_equal(y.numpy(), 2 * np.arange(n))
    (recd,) = [r for e in ff._cache.entries.values() for r in e.order]
    dead = dead_operations(recd.ops, recd.node_table)
    kinds = [type(recd.ops[i]).__name__ for i in sorted(dead)]
    assert "Reduce" in kinds and "Launch" in kinds
    scatter = [i for i, op in enumerate(recd.ops) if type(op).__name__ == "Launch"
               and any(p.kind == "dst" for p in op.params)]
    assert scatter and not dead & set(scatter)


def test_with_kernel_history_a_replay_reports_every_launch_of_the_plain_call():
    import frostjit as fj_
    from frostjit.llvm import Float as F32

    def f(x):
        fj_.eval(fj_.sum(x * 3.0))
        return x + 1.0

    ff = fj_.freeze(f)
    with fj_.scoped_set_flag(fj_.JitFlag.KernelHistory, True):
        histories = []
        for g in (f, ff, ff):
            fj_.kernel_history()
            g(F32(np.arange(5, dtype=np.float32))).numpy()
            histories.append([h["type"].value for h in fj_.kernel_history()])
    assert histories[0] == ["jit", "reduce", "jit"]
    assert histories[2][:3] == histories[0]       # (the replay first; checking mode may run the plain call after)


def _zeros_scattered(x, i):
    """Several zero-filled targets of one size (one slab reservation in a replay, or separate
    buffers when they do not fit one) accumulated into, as a backward pass's gradients."""
    n = fj.width(x)
    a, b, c = fj.zeros(Float, n), fj.zeros(Float, n), fj.zeros(UInt32, n)
    fj.scatter_add(a, x, i)
    fj.scatter_add(b, x * x, i)
    fj.scatter_add(c, UInt32(1), i)
    return a, b - 1, c


def test_zero_filled_targets_and_argument_lengths_follow_alternating_widths():
    """A replay reuses its launches' argument arrays (lengths rewritten only when a width
    changes) and allocates consecutive zero fills together: alternating small and large widths
    (one slab piece each, then buffers too large for a slab) give the plain call's results."""
    f = fj.freeze(_zeros_scattered)
    for n in (7, 1000, 7, 3, 5000, 1, 1000):
        x = Float(np.linspace(-1, 1, n, dtype=np.float32))
        i = UInt32(np.arange(n, dtype=np.uint32) * 7 % max(n // 2, 1))
        fj.eval(x, i)
        want = [np.asarray(v.numpy()) for v in _zeros_scattered(x, i)]
        got = [np.asarray(v.numpy()) for v in f(x, i)]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=f"width {n}")
    assert f.n_recordings <= 2      # (width 1 may need its own recording)


def test_replay_data_nodes_are_those_of_the_trace_door(monkeypatch):
    # a replay makes its output data nodes inline (trace.ops.data_source) unless a recorder
    # listens, which is then told of each one as trace.ops.data tells it
    from frostjit.trace import ops
    from frostjit.trace.node import Node
    from frostjit.trace.dtypes import Float32
    from frostjit.trace.state import state
    buf = object()
    ns = {"NODE_NEW": object.__new__, "Node": Node, "vt": Float32, "buf": buf}
    exec(ops.data_source("n", "vt", "buf", "7"), ns)
    ref = ops.data(ns["vt"], buf, 7)
    assert all(getattr(ns["n"], s) is getattr(ref, s) or getattr(ns["n"], s) == getattr(ref, s)
               for s in Node.__slots__ if s != "__weakref__")

    ff = fj.freeze(lambda x, y: (x * 2, x + y, fj.sum(y)))
    for w in (5, 1, 5):
        out = ff(ramp(w), ramp(w, 1))
        assert all(same(a, b) for a, b in zip(out, (ramp(w) * 2, ramp(w) + ramp(w, 1), fj.sum(ramp(w, 1)))))
    told = []

    class Listening:        # a recorder recording on another thread: told of every new node
        def current(self):
            return None

        def on_node(self, node):
            told.append(node)

        def __getattr__(self, name):
            return lambda *a, **k: None
    monkeypatch.setattr(state, "recorder", Listening())
    out = ff(ramp(9), ramp(9, 2))
    monkeypatch.setattr(state, "recorder", None)
    assert {id(o._node) for o in out if o._node.op == "data"} <= {id(n) for n in told}
    assert len(told) >= 3
    assert all(same(a, b) for a, b in zip(out, (ramp(9) * 2, ramp(9) + ramp(9, 2), fj.sum(ramp(9, 2)))))


def _replay_sources(ff) -> list:
    return [r.source for e in ff._cache.entries.values()
            for r in [*e.general, *(r for t in e.pinned.values() for lst in t.values() for r in lst)]]


@pytest.mark.llvm_only("the LLVM replay's direct kernel calls")
@settings(max_examples=12)
@given(st.lists(st.sampled_from([1, 2, 9, 8191, 8192, 20001]), min_size=2, max_size=5))
def test_launch_end_follows_the_width_on_one_thread_and_the_pool(widths):
    """A launch on the calling thread calls the kernel's entry without argument types with a kept
    ``c_int64`` end (``kraw_<k>``, ``end_<k>``); from 8192 lanes the pool runs it: replays at
    changing widths compute exactly the call's lanes (a stale end would leave lanes unwritten
    or write past the outputs), as the plain call."""
    f = lambda x, y: (x * 2 + y, fj.sum(x))      # noqa: E731
    ff = fj.freeze(f)
    for n in widths:
        x, y = ramp(n, n % 5), ramp(n, 1)
        got, want = ff(x, y), f(x, y)
        assert same(got[0], want[0]) and same(got[1], want[1]), n
    src = _replay_sources(ff)
    assert src and all("kraw_" in s and "end_" in s for s in src)


@settings(max_examples=12)      # (each example compiles its kernels: a few hundred ms)
@given(st.sampled_from(["Float16", "Float", "Float64", "Int32"]), st.sampled_from(["sum", "prod", "min", "max"]),
       st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.25, 3e4, -7e3, 1e-3, float("inf"), float("nan")]),
                         min_size=1, max_size=70), min_size=2, max_size=3))
def test_small_reductions_of_a_replay_equal_the_plain_call(tname, op, rows):
    """A replay reduces a small input of constant size on the host (a float one without NumPy's
    ``dtype=``, an integer one with it, which NumPy would widen): the plain call's bits, NaN and
    signed zero included, for every float type and an integer one."""
    import frostjit.llvm as L
    t = getattr(L, tname)
    dtype = {"Float16": np.float16, "Float": np.float32, "Float64": np.float64, "Int32": np.int32}[tname]
    n = len(rows[0])
    # (a gather by a constant index array: a source of constant size, which the replay reduces inline)
    f = lambda x: getattr(fj, op)(fj.gather(t, x, fj.arange(UInt32, n)) * 1)     # noqa: E731
    ff = fj.freeze(f)
    for r in rows:
        vals = np.array((r * n)[:n], dtype=np.float64)
        if dtype is np.int32:
            vals = np.where(np.isfinite(vals), vals, 7)
        x = t(vals.astype(dtype))
        assert same(ff(x), f(x)), (tname, op, vals)
    if os.environ.get("FROSTJIT_BACKEND", "llvm") == "llvm":     # (the LLVM replay's inline reduction)
        src = _replay_sources(ff)
        assert src and all(f"reduce_{op.replace('sum', 'add').replace('prod', 'mul')}" in s for s in src)
