"""The plan cache (schedule/plans.py) for evaluations with scatters: a group of scatters into
evaluated targets (plain, masked, reductions; with or without outputs of the same size) whose
graph has the shape of an earlier one reuses its spec, and graphs that differ in anything the
kernel depends on (the reduction, the target's type, which target each scatter writes, their
order, which node feeds the value, index or mask) never share one: bit-identical to building the
spec every time (``plans.ENABLED[0] = False``), on random programs at several widths, plain and
frozen."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Int32, UInt32
from frostjit.schedule import plans
from frostjit.trace.state import state

from plan_helpers import data


@contextlib.contextmanager
def cache_off():
    """Every evaluation builds its spec (the plan caches off)."""
    plans.ENABLED[0] = False
    try:
        yield
    finally:
        plans.ENABLED[0] = True


def test_a_histogram_program_reuses_its_plan(checker, builds):
    """Two reductions into new targets, from new data, in one evaluation: one spec in all."""
    rng = np.random.default_rng(1)
    for k in range(4):
        n = rng.integers(0, 9, 10)
        i = data(UInt32, n)
        hist = data(UInt32, [0, 0, 0])
        low = data(Float, [100, 100, 100])      # (fj.eval would flush a scatter queued before)
        fj.scatter_reduce(fj.ReduceOp.Add, hist, i * 2, i % 3)
        fj.scatter_reduce(fj.ReduceOp.Min, low, Float(i) - 1.0, i % 3)
        fj.eval(hist, low)
        assert hist.numpy().tolist() == [int((n * 2)[n % 3 == j].sum()) for j in range(3)]
        assert low.numpy().tolist() == [float((n - 1)[n % 3 == j].min(initial=100)) for j in range(3)]
    assert builds[0] == 1


def test_the_same_scatter_with_new_targets_and_values_builds_once(checker, builds):
    idx = data(UInt32, [2, 0, 2, 1])
    for k in range(4):
        v = data(Float, np.arange(4, dtype=np.float32) + k)
        t = data(Float, np.zeros(3, np.float32))
        fj.scatter_add(t, v * 2.0, idx, v > 0.5)
        fj.eval(t)
        w = np.zeros(3, np.float32)
        np.add.at(w, [2, 0, 2, 1], np.where(np.arange(4) + k > 0.5, (np.arange(4) + k) * 2.0, 0))
        assert t.numpy().tolist() == w.tolist()
    assert builds[0] == 1


def test_reductions_and_target_types_are_part_of_the_shape(checker):
    idx = data(UInt32, [0, 0, 1])
    for op, T, want in [("Add", Int32, [3, 3]), ("Max", Int32, [2, 3]), ("Min", Int32, [0, 0]),
                        ("Add", UInt32, [3, 3]), ("Add", Int32, [3, 3]), ("Min", Int32, [0, 0])]:
        t = fj.zeros(T, 2)
        fj.scatter_reduce(getattr(fj.ReduceOp, op), t, data(T, [1, 2, 3]), idx)
        fj.eval(t)
        assert t.numpy().tolist() == want, (op, T)


def test_every_scatters_reduction_and_order_are_part_of_the_shape(checker):
    """Graphs whose first scatters agree (the signature the recent plans are found by) and whose
    later ones differ in the reduction, or come in the other order."""
    idx = data(UInt32, [0, 0, 1])
    v = data(Int32, [1, 2, 3])
    for second, want in [("Min", [1, 3]), ("Max", [50, 50]), ("Add", [53, 53]), ("Min", [1, 3]),
                         ("Max", [50, 50]), ("Add", [53, 53])]:
        a, b = data(Int32, [0, 0]), data(Int32, [50, 50])
        fj.scatter_reduce(fj.ReduceOp.Add, a, v, idx)
        fj.scatter_reduce(getattr(fj.ReduceOp, second), b, v, idx)
        fj.eval(a, b)
        assert a.numpy().tolist() == [3, 3] and b.numpy().tolist() == want, second
    for first in (True, False, True, False):
        a = data(Int32, [0, 0])
        tens, ones = v * 10, v + 0
        scatters = [(tens, idx, idx == 1), (ones, idx + 1, v == 1)]     # (both write a[1], one lane each)
        for value, index, mask in (scatters if first else scatters[::-1]):
            fj.scatter(a, value, index, mask)
        fj.eval(a)
        assert a.numpy().tolist() == ([0, 1] if first else [0, 30]), first      # (the later scatter wins)


def test_a_plan_of_two_targets_serves_one_target_twice_not_the_reverse(checker, builds):
    idx = data(UInt32, [0, 1])
    v = data(Int32, [5, 7])
    for two in (False, True, False, True):
        a = data(Int32, [0, 0, 0])
        b = data(Int32, [0, 0, 0]) if two else a
        fj.scatter_add(a, v, idx)
        fj.scatter_add(b, v, idx + 1)
        fj.eval(a, b)
        if two:
            assert a.numpy().tolist() == [5, 7, 0] and b.numpy().tolist() == [0, 5, 7]
        else:
            assert a.numpy().tolist() == [5, 12, 7]
    # the one-target plan cannot serve two targets (a second build); the two-target plan then
    # serves both (its two parameters bound to one buffer)
    assert builds[0] == 2


def test_a_symbolic_loops_scatter_takes_the_spec_builder(builds):
    for _ in range(2):
        t = fj.zeros(UInt32, 4)
        i = fj.arange(UInt32, 4)

        def body(i, j):
            fj.scatter_add(t, UInt32(1), i)
            return i, j + 1
        fj.while_loop((i, UInt32(0)), lambda i, j: j < 3, body, mode="symbolic")
        assert state.side_effects and plans.shape_of([], list(state.side_effects)) is None
        fj.eval(t)
        assert t.numpy().tolist() == [3, 3, 3, 3]


# Random scatter programs.  A program: elementwise steps over the inputs (x, y: Float of n lanes;
# k: Int32 of n lanes), then scatters, each (reduction, target, value step, index kind, mask kind),
# into three targets (t0, t1 of m elements; t2 is t0 again or a third array), then the outputs
# evaluated with them.  Values are small integers (float sums exact in any order); plain scatters
# write distinct indices (which of two lanes writing one element wins is not defined).
REDUCE_OPS = {"add": fj.ReduceOp.Add, "min": fj.ReduceOp.Min, "max": fj.ReduceOp.Max}
REDUCE = ["plain", *REDUCE_OPS]
CONSTANTS = [0.0, 1.0, -2.0, 3.5]
step = st.one_of(
    st.tuples(st.just("const"), st.sampled_from(CONSTANTS)),
    st.tuples(st.sampled_from(["add", "sub", "mul", "min", "max"]), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.sampled_from(["neg", "abs"]), st.integers(0, 99)),
    st.tuples(st.just("select"), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
)
scatter = st.tuples(st.sampled_from(REDUCE), st.integers(0, 2), st.integers(0, 99), st.integers(0, 2),
                    st.integers(0, 2))
scatter_program = st.tuples(st.lists(step, max_size=6), st.lists(scatter, min_size=1, max_size=4),
                            st.lists(st.integers(0, 99), max_size=2), st.booleans(), st.sampled_from([1, 3, 17]))


def apply_step(s, vals):
    op = s[0]
    if op == "const":
        vals.append(s[1])
        return
    ix = [vals[i % len(vals)] for i in s[1:]]
    arrays = [v for v in ix if not isinstance(v, float)]
    if not arrays:
        vals.append(ix[0])
    elif op == "neg":
        vals.append(-ix[0])
    elif op == "abs":
        vals.append(abs(ix[0]))
    elif op == "select":
        vals.append(fj.select(ix[0] < ix[1], ix[1], ix[2]))
    else:
        vals.append({"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                     "min": fj.minimum, "max": fj.maximum}[op](*ix))


def run_scatters(prog, x, y, idx, targets, parallel=False):
    """Trace ``prog`` over the data arrays; return the arrays to evaluate: the targets, then the
    outputs.  ``parallel``: each target takes one reduction (``add``, ``max``, ``min``; the third
    is the first's if they are one array), as the order of reductions of different kinds into
    one element by lanes of several threads is not defined."""
    steps, scatters, outs, alias, _m = prog
    vals = [x, y]
    for s in steps:
        apply_step(s, vals)
    arrays = [v if not isinstance(v, float) else x + v for v in vals]
    n = len(idx)
    lane = fj.arange(UInt32, n)
    m = len(targets[0])
    for red, t, v, ik, mk in scatters:
        if parallel:
            red = ["add", "max", "add" if alias else "min"][t]
        # (small integers: sums exact in any order)
        value = fj.round(fj.minimum(fj.maximum(arrays[v % len(arrays)], -16.0), 16.0))
        if red == "plain":
            index, mask = lane % m, lane < m        # (distinct indices)
            if mk == 1:
                mask = mask & (value > 0)
        else:
            index = idx if ik == 0 else (idx + ik) % m
            mask = True if mk == 0 else (value > 0 if mk == 1 else lane % 2 == 0)
        if red == "plain":
            fj.scatter(targets[t], value, index, mask)
        else:
            fj.scatter_reduce(REDUCE_OPS[red], targets[t], value, index, mask)
    return list(targets) + [fj.round(arrays[o % len(arrays)]) for o in outs]


def inputs(n, m, seed, alias):
    rng = np.random.default_rng(seed)
    x = data(Float, rng.integers(-8, 8, n).astype(np.float32))
    y = data(Float, rng.integers(-8, 8, n).astype(np.float32))
    idx = data(UInt32, rng.integers(0, m, n).astype(np.uint32))
    t0 = data(Float, rng.integers(-3, 3, m).astype(np.float32))
    t1 = data(Float, rng.integers(-3, 3, m).astype(np.float32))
    t2 = t0 if alias else data(Float, rng.integers(-3, 3, m).astype(np.float32))
    return x, y, idx, [t0, t1, t2]


def evaluated(prog, n, seed, frozen=None):
    """The bits of the program's targets and outputs for the inputs of ``seed``."""
    x, y, idx, targets = inputs(n, prog[4], seed, prog[3])
    if frozen is not None:
        res = frozen(x, y, idx, targets)
    else:
        res = run_scatters(prog, x, y, idx, targets, parallel=n > 1000)
        fj.eval(*res)
    return [np.asarray(r.numpy()).tobytes() for r in res]


@pytest.mark.parametrize("compile_after", [10**9, 0], ids=["interpreted", "generated"])
@settings(max_examples=10, deadline=None)
@given(prog=scatter_program, n=st.sampled_from([1, 7, 1000]), seed=st.integers(0, 2**16))
def test_random_scatter_programs_match_building_every_spec(monkeypatch_module, compile_after, prog, n, seed):
    """Through the plan cache (twice per seed: the first run may build, the others reuse; the
    plans of earlier examples stay, so graphs are also checked against recent plans of other
    programs with scatters of their signature) and frozen, against building every spec."""
    with cache_off():
        want = [evaluated(prog, n, s) for s in (seed, seed + 1)]
    with monkeypatch_module.context() as m:
        m.setattr(plans, "COMPILE_AFTER", compile_after)
        for s, w in [(seed, want[0]), (seed + 1, want[1])] * 2:
            assert evaluated(prog, n, s) == w

        @fj.freeze
        def frozen(x, y, idx, targets):
            res = run_scatters(prog, x, y, idx, targets)
            fj.eval(*res)       # (the targets are the caller's: evaluated in place)
            return res
        for s, w in [(seed, want[0]), (seed + 1, want[1]), (seed, want[0])]:
            assert evaluated(prog, n, s, frozen) == w


@settings(max_examples=4, deadline=None)
@given(prog=scatter_program, seed=st.integers(0, 2**16))
def test_random_scatter_programs_on_many_lanes_match_building_every_spec(monkeypatch_module, prog, seed):
    """As above at 100003 lanes (the launch split over the worker threads)."""
    n = 100003
    with cache_off():
        want = evaluated(prog, n, seed)
    for _ in range(2):
        assert evaluated(prog, n, seed) == want


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()
