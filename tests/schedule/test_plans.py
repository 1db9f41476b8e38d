"""The plan cache (schedule/plans.py): an evaluation whose graph has the shape of an earlier one
reuses its spec, and graphs that differ in anything the kernel depends on (operations, types,
constants to the bit, which data node feeds which operand, broadcasting inputs, the outputs and
their order) never share one: bit-identical to building the spec every time, on random programs."""
from __future__ import annotations

import linecache
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, Int32, UInt32
from frostjit.schedule import evaluate as ev, plans

from plan_helpers import data

WIDTHS = [1, 7, 1000, 100003]


def bits(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a.numpy())).tobytes()


def test_the_same_program_traced_again_reuses_its_plan(builds):
    x, y = data(Float, [1, 2, 3]), data(Float, [4, 5, 6])
    for k in range(3):
        a = x * y + 2.0
        b = fj.fma(a, x, y)
        fj.eval(a, b)
        xn, yn = x.numpy(), y.numpy()
        assert a.numpy().tolist() == (xn * yn + 2).tolist() and b.numpy().tolist() == ((xn * yn + 2) * xn + yn).tolist()
        x, y = y, x         # other data nodes, the same shape
        assert builds[0] == 1


def test_x_times_x_and_x_times_y_have_different_plans(builds):
    x, y = data(Float, [1, 2]), data(Float, [3, 4])
    a, b = x * x + 1.0, x * y + 1.0
    fj.eval(a)
    fj.eval(b)
    assert a.numpy().tolist() == [2, 5] and b.numpy().tolist() == [4, 9] and builds[0] == 2


@pytest.mark.parametrize("c", [0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, 1.0 + 2**-52])
def test_constants_are_part_of_the_shape_to_the_bit(c):
    x = data(Float64, [1.0, -1.0, 0.0])
    for d in (0.0, -0.0, c, 1.0, c):
        z = (x * d) + d
        fj.eval(z)
        with np.errstate(invalid="ignore"):
            want = np.array([1.0, -1.0, 0.0]) * d + d
        assert bits(z) == want.tobytes(), d


def test_types_casts_and_broadcasting_inputs_are_part_of_the_shape():
    a32, a64 = data(Float, [1.5, -2.5]), data(Float64, [1.5, -2.5])
    r32, r64 = a32 * a32 + 1.0, a64 * a64 + 1.0
    fj.eval(r32)
    fj.eval(r64)
    assert r32.numpy().dtype == np.float32 and r64.numpy().dtype == np.float64
    i, u = Int32(data(Float, [-1.0, 2.0]) * 2.0), UInt32(data(Float, [1.0, 2.0]) * 2.0)
    fj.eval(i)
    fj.eval(u)
    assert i.numpy().tolist() == [-2, 4] and u.numpy().tolist() == [2, 4]
    one, wide = data(Float, [3.0]), data(Float, [1.0, 2.0])
    s, w = wide * one + 1.0, wide * wide + 1.0          # a size-1 input broadcasts (IN_SCALAR)
    fj.eval(s)
    fj.eval(w)
    assert s.numpy().tolist() == [4, 7] and w.numpy().tolist() == [2, 5]


def test_outputs_and_their_order_are_part_of_the_shape():
    x = data(Float, [1, 2])
    for _ in range(2):
        a, b = x + 1.0, x * 3.0
        fj.eval(a, b)
        c, d = x + 1.0, x * 3.0
        fj.eval(d, c)
        e = x + 1.0
        f = e * 2.0
        fj.eval(f, e)           # an output that is an operand of another
        assert a.numpy().tolist() == c.numpy().tolist() == e.numpy().tolist() == [2, 3]
        assert b.numpy().tolist() == d.numpy().tolist() == [3, 6] and f.numpy().tolist() == [4, 6]
        # the same graph, another inner node evaluated beside the root
        g, h = x + 1.0, x * 3.0
        fj.eval(g * h, g)
        g, h = x + 1.0, x * 3.0
        fj.eval(g * h, h)
        assert g.numpy().tolist() == [2, 3] and h.numpy().tolist() == [3, 6]


def test_the_cache_is_bounded_by_shapes_and_by_their_entries(monkeypatch):
    x = data(Float, [1, 2])
    plans.clear()
    monkeypatch.setattr(plans, "MAX_ENTRIES", 40)
    for k in range(20):
        z = x
        for _ in range(k + 1):
            z = z * 2.0 + 1.0       # a shape of 2 (k + 1) + 4 entries (the constants' nodes are shared)
        fj.eval(z)
        assert z.numpy().tolist() == [2 ** (k + 2) - 1, 3 * 2 ** (k + 1) - 1]
        assert plans._entries[0] == sum(len(s) for s in plans._plans) <= 40
    monkeypatch.setattr(plans, "MAX_PLANS", 3)
    for c in range(1, 8):
        fj.eval(x * float(c) + 1.0)
        assert len(plans._plans) <= 3


def test_symbolic_loops_and_deep_graphs_take_the_spec_builder():
    i = fj.arange(UInt32, 3)
    loop = fj.while_loop((i,), lambda i: i < 5, lambda i: (i + 1,), mode="symbolic")[0] * 2
    assert plans.shape_of([loop._node]) is None
    fj.eval(loop)
    assert loop.numpy().tolist() == [10, 10, 10]
    x = data(Float, [1, 2])
    z = x
    for _ in range(plans.MAX_DEPTH + 50):
        z = z * 1.0 + 1.0
    assert plans.shape_of([z._node]) is None
    fj.eval(z)
    assert z.numpy().tolist() == [plans.MAX_DEPTH + 51, plans.MAX_DEPTH + 52]


@pytest.fixture
def walks(monkeypatch):
    """Counts the walks to a graph's shape (a reuse checked against a recent plan makes none)."""
    count = [0]
    real = ev.shape_of

    def counting(outputs):
        count[0] += 1
        return real(outputs)
    monkeypatch.setattr(ev, "shape_of", counting)
    plans.clear()
    return count


def test_a_reuse_is_checked_against_the_recent_plan_without_a_walk(checker, builds, walks):
    x, y = data(Float, [1, 2, 3]), data(Float, [4, 5, 6])
    for k in range(4):
        a = fj.fma(x * y + 2.0, x, -y)
        b = a * 0.5
        fj.eval(a, b)
        assert a.numpy().tolist() == [2, 19, 54] and b.numpy().tolist() == [1, 9.5, 27]
        assert builds[0] == 1 and walks[0] == 1
    x = data(Float, [1, 2, 3])      # new data nodes, new nodes everywhere: the same shape
    a = fj.fma(x * y + 2.0, x, -y)
    fj.eval(a, a * 0.5)
    assert a.numpy().tolist() == [2, 19, 54] and builds[0] == 1 and walks[0] == 1


def test_a_plan_reading_two_inputs_serves_a_graph_reading_one_twice_not_the_reverse(checker, builds):
    x, y = data(Float, [1, 2]), data(Float, [3, 4])
    for first, second in (((x, y), (x, x)), ((x, x), (x, y))):
        plans.clear()
        for u, v in (first, second, first, second):
            r = u * v + 1.0
            fj.eval(r)
            assert r.numpy().tolist() == (u.numpy() * v.numpy() + 1).tolist()
    # x * y: one build in each round; x * x: one, in the round where it comes first (later it reuses
    # x * y's plan, binding x to both parameters); x * y never takes the plan of x * x
    assert builds[0] == 3


def test_shared_inner_nodes_are_part_of_the_shape(checker):
    x, y, z = data(Float, [1, 2]), data(Float, [3, 4]), data(Float, [5, 6])
    for order in range(2):
        plans.clear()
        for k in range(4):
            if (k + order) % 2:
                s = x * y
                r = s + s                   # one product, used twice
                want = [6, 16]
            else:
                r = x * y + x * z           # two products of one shape, other operands
                want = [8, 20]
            fj.eval(r)
            assert r.numpy().tolist() == want


def test_more_shapes_of_one_signature_than_are_kept_recent(checker):
    x = data(Float, [1, 2])
    plans.clear()
    for _ in range(2):
        for c in range(1, 2 * plans.MAX_RECENT + 2):
            r = x * float(c) + 1.0
            fj.eval(r)
            assert r.numpy().tolist() == [c + 1, 2 * c + 1]
    assert all(len(recent) <= plans.MAX_RECENT for recent in plans._recent.values())


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_a_recent_plan_of_other_literals_is_not_reused(checker, n):
    x = data(Float64, np.linspace(-1, 1, n))
    for _ in range(2):
        for c in (0.0, -0.0, math.nan, 1.0, math.inf, 2.0):
            r = (x * c) * 3.0 + c
            fj.eval(r)
            with np.errstate(invalid="ignore"):
                want = (x.numpy() * c) * 3.0 + c
            assert bits(r) == want.tobytes(), c


@pytest.mark.parametrize("n", [7, 1000, 100003])
def test_a_recent_plan_of_a_wide_input_is_not_reused_for_a_broadcasting_one(checker, n):
    w = data(Float, np.arange(n, dtype=np.float32))
    wide, one = data(Float, np.full(n, 2, np.float32)), data(Float, [3.0])
    for s in (wide, one, wide, one, wide):
        r = w * s + 1.0
        fj.eval(r)
        assert r.numpy().tolist() == (w.numpy() * s.numpy() + 1).tolist()


def test_generated_checkers_are_readable_in_tracebacks_and_released_with_their_plans(checker):
    x = data(Float, [1, 2])
    for _ in range(3):
        r = fj.fma(x, 2.0, x * x)
        fj.eval(r)
    compiled = [p.compiled for p in plans._plans.values() if p.compiled]
    if checker:             # (interpreted: never generated)
        assert compiled == []
        return
    (c,) = compiled
    source = "".join(linecache.getlines(c.filename))
    assert source.startswith("def check_shape(") and ".op != 'fma'" in source
    plans.clear()
    assert linecache.getlines(c.filename) == []


def test_generated_checkers_stay_within_their_budget(monkeypatch):
    monkeypatch.setattr(plans, "COMPILE_AFTER", 0)
    monkeypatch.setattr(plans, "MAX_COMPILED_ENTRIES", 12)
    plans.clear()
    x = data(Float, [1, 2])
    for _ in range(3):
        for c in (2.0, 3.0, 4.0):
            r = x * c + 1.0         # 5 entries each: two plans get checkers, the third interprets
            fj.eval(r)
            assert r.numpy().tolist() == [c + 1, 2 * c + 1]
    assert sorted(bool(p.compiled) for p in plans._plans.values()) == [False, True, True]
    assert plans._compiled_entries[0] == 10
    plans.clear()
    assert plans._compiled_entries[0] == 0


# -- random programs: the plan cache against building every spec ------------------------------
CONSTANTS = [0.0, -0.0, 1.0, -1.5, 2.0, math.nan, math.inf, 0.1]
UNARY = ["neg", "abs", "sqrt"]
BINARY = ["add", "sub", "mul", "min", "max", "truediv"]

step = st.one_of(
    st.tuples(st.just("const"), st.sampled_from(CONSTANTS)),
    st.tuples(st.sampled_from(UNARY), st.integers(0, 99)),
    st.tuples(st.sampled_from(BINARY), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("fma"), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("select"), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
)
program = st.tuples(st.lists(step, min_size=1, max_size=14), st.lists(st.integers(0, 99), min_size=1, max_size=3))


def run(prog, inputs):
    """The program's outputs (1-D arrays): ``inputs`` then one value per step, operands by index."""
    steps, outs = prog
    vals = list(inputs)
    for s in steps:
        apply_step(s, vals)
    results = [vals[i % len(vals)] for i in outs]
    return [r if not isinstance(r, float) else inputs[0] + r for r in results]


def apply_step(s, vals):
    """Append the value of the step ``s`` of a program to ``vals``."""
    op, ix = s[0], [vals[i % len(vals)] for i in s[1:]] if s[0] != "const" else []
    if op == "const":
        vals.append(s[1])
        return
    arrays = [v for v in ix if not isinstance(v, float)]
    if not arrays:
        vals.append(ix[0])
        return
    if op == "neg":
        vals.append(-ix[0])
    elif op == "abs":
        vals.append(abs(ix[0]))
    elif op == "sqrt":
        vals.append(fj.sqrt(ix[0]))
    elif op == "fma":
        vals.append(fj.fma(*ix))
    elif op == "select":
        vals.append(fj.select(ix[0] < ix[1], ix[1], ix[2]))
    else:
        vals.append({"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                     "truediv": lambda a, b: a / b, "min": fj.minimum, "max": fj.maximum}[op](*ix))


def inputs_of(n, seed):
    rng = np.random.default_rng(seed)
    return [data(Float, rng.standard_normal(n).astype(np.float32)), data(Float, rng.standard_normal(n)),
            data(Float, rng.standard_normal(1))]


@pytest.mark.parametrize("compile_after", [10**9, 0], ids=["interpreted", "generated"])
@settings(max_examples=30, deadline=None)
@given(prog=program, n=st.sampled_from(WIDTHS[:3]), seed=st.integers(0, 2**16))
def test_random_programs_match_building_every_spec(monkeypatch_module, compile_after, prog, n, seed):
    """Against the spec builder, with reuses checked by plan_check.check (``interpreted``) or by
    the generated checkers (``generated``); the plans of earlier examples stay, so every graph is
    also checked against recent plans of other programs with outputs of its signature."""
    want = []
    with monkeypatch_module.context() as m:
        m.setattr(ev, "shape_of", lambda outputs: None)      # the spec builder, every time
        m.setattr(ev, "match_plan", lambda outputs: None)
        for s in (seed, seed + 1):
            outs = run(prog, inputs_of(n, s))
            fj.eval(*outs)
            want.append([bits(o) for o in outs])
    with monkeypatch_module.context() as m:
        m.setattr(plans, "COMPILE_AFTER", compile_after)
        for s, w in [(seed, want[0]), (seed + 1, want[1])] * 2:     # the first run may build, the others reuse
            outs = run(prog, inputs_of(n, s))
            fj.eval(*outs)
            assert [bits(o) for o in outs] == w


def assert_plans_match_the_spec_builder(monkeypatch_module, compile_after, outputs, seed):
    """The bits of ``outputs(s)`` evaluated through the plan cache (twice per seed: the first
    run may build, the others reuse) equal those of building every spec, for two seeds."""
    want = []
    with monkeypatch_module.context() as m:
        m.setattr(ev, "shape_of", lambda outputs: None)
        m.setattr(ev, "match_plan", lambda outputs: None)
        for s in (seed, seed + 1):
            outs = outputs(s)
            fj.eval(*outs)
            want.append([bits(o) for o in outs])
    with monkeypatch_module.context() as m:
        m.setattr(plans, "COMPILE_AFTER", compile_after)
        for s, w in [(seed, want[0]), (seed + 1, want[1])] * 2:
            outs = outputs(s)
            fj.eval(*outs)
            assert [bits(o) for o in outs] == w


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_a_hashed_key_equals_the_tuple_it_wraps():
    key = (("in", "Float32"), (("add", 0, 1),))
    h = plans.HashedKey(key)
    assert h == key and key == h and hash(h) == hash(key) and h == plans.HashedKey(key)
    assert h != plans.HashedKey(key + ((),)) and h != key + ((),)
    assert {key: 1}[h] == 1 and {h: 2}[key] == 2


def test_outputs_of_several_sizes_reuse_their_plans(builds):
    """An optimizer-like evaluation (wide results and a size-1 value scheduled beside them, which
    one wide result also reads while pending) plans each size: no spec is built after the first."""
    x, g = data(Float, [1, 2, 3, 4]), data(Float, [0.5, -1, 2, 0])
    t = data(UInt32, [0])
    for k in range(4):
        t1 = t + 1
        scale = Float(-fj.sqrt(1 - Float64(0.999) ** Float64(t1)) / (1 - Float64(0.9) ** Float64(t1)))
        m = g * 0.1
        x1 = fj.fma(m, scale, x)
        fj.eval(scale, x1, t1, m)
        c = -math.sqrt(1 - 0.999 ** (k + 1)) / (1 - 0.9 ** (k + 1))
        np.testing.assert_allclose(x1.numpy(), np.float32(x.numpy() + g.numpy() * np.float32(0.1) * np.float32(c)),
                                   rtol=1e-6)
        assert t1.numpy().tolist() == [k + 1]
        x, t = x1, t1
        if k == 0:
            first = builds[0]
    assert first == 2 and builds[0] == first


@pytest.mark.parametrize("compile_after", [10**9, 0], ids=["interpreted", "generated"])
@settings(max_examples=20, deadline=None)
@given(prog=program, narrow=program, n=st.sampled_from(WIDTHS[1:3]), seed=st.integers(0, 2**16))
def test_random_programs_of_two_sizes_match_building_every_spec(monkeypatch_module, compile_after, prog, narrow,
                                                                 n, seed):
    """Outputs of a wide program, of a size-1 program and one wide output reading a pending size-1
    result, evaluated together (a kernel per size), against the spec builder."""
    def outputs(s):
        wide = run(prog, inputs_of(n, s))
        one = run(narrow, inputs_of(1, s + 7))
        return one + wide + [wide[0] * one[0] + 1.0]

    assert_plans_match_the_spec_builder(monkeypatch_module, compile_after, outputs, seed)


def test_a_generated_checker_rejects_nodes_of_the_op_with_other_operands():
    """The generated checker unpacks operand tuples (plan_check.compile_check): a node of the
    plan's op whose operands are two slots, a tuple of another length, or nodes other than the
    shared ones is a mismatch (None), never a match or an exception."""
    from frostjit.schedule.plan_check import compile_check
    from frostjit.trace.dtypes import Float32
    from frostjit.trace.node import Node

    x = data(Float, [1, 2])
    r = fj.fma(x, x, x * x)         # shares x: the checker must find the same node four times
    shape, found = plans.shape_of([r._node])
    plan = plans.plan_of([r._node], shape, found)
    checker = compile_check(plan.program, plan.outputs_at, plan.inputs_at)
    xn = x._node
    assert checker.fn(r._node) == [xn.value]

    def fma(*args, a1=None):
        n = Node("fma", Float32, 2, args)
        if a1 is not None:          # the two-operand form: the operands in a0 and a1
            n.a0, n.a1 = args[0], a1
        return n
    mul = (x * x)._node
    y = data(Float, [3, 4])
    other = y._node
    assert checker.fn(fma(xn, xn, mul)) == [xn.value]
    for bad in (fma(xn, xn), fma(xn, xn, mul, mul), fma(xn, a1=xn), fma(xn, other, mul),
                fma(xn, xn, (x * y)._node), fma(xn, xn, (x + x)._node)):
        assert checker.fn(bad) is None
    fj.eval(r)


# -- gathers (covered since session r13: a texture lookup gathers four times) -----------------
def test_a_gather_program_reuses_its_plan(checker, builds, walks):
    src, idx = data(Float, [10, 20, 30, 40]), data(UInt32, [3, 0, 2, 1])
    sn, ixn = src.numpy(), idx.numpy()
    for _ in range(4):
        a = fj.gather(Float, src, idx)
        b = fj.gather(Float, src, (idx + 1) % 4, idx != 2)      # a pending index, a mask
        r = a * 2.0 + b + src                                    # the source also read as an input
        fj.eval(r)
        assert r.numpy().tolist() == (sn[ixn] * 2 + np.where(ixn != 2, sn[(ixn + 1) % 4], 0) + sn).tolist()
    assert builds[0] == 1 and walks[0] == 1


def test_a_gather_plan_of_two_sources_serves_one_source_twice_not_the_reverse(checker, builds):
    s, t, i = data(Float, [1, 2, 3]), data(Float, [10, 20, 30]), data(UInt32, [2, 1, 0])
    for first, second in (((s, t), (s, s)), ((s, s), (s, t))):
        plans.clear()
        for u, v in (first, second, first, second):
            r = fj.gather(Float, u, i) + fj.gather(Float, v, i)
            fj.eval(r)
            assert r.numpy().tolist() == (u.numpy()[::-1] + v.numpy()[::-1]).tolist()
    assert builds[0] == 3


def test_a_gather_plan_reads_each_source_to_its_own_length(checker, builds):
    """The source's element count is its buffer's (the launch's), never the plan's: a plan built
    for a short source reads a long one to its end, and the reverse."""
    i = data(UInt32, [3, 0])
    for n in (4, 100, 4, 100):
        src = data(Float, np.arange(n, dtype=np.float32) * 2)
        j = i if n == 4 else i * 33      # [99, 0]: past the short source's end
        r = fj.gather(Float, src, j) + 1.0
        fj.eval(r)
        assert r.numpy().tolist() == ([7, 1] if n == 4 else [199, 1])
    assert builds[0] == 2       # (i and i * 33: two shapes)


gather_step = st.one_of(step, st.tuples(st.just("gather"), st.integers(0, 99), st.integers(0, 2),
                                        st.integers(0, 99)))
gather_program = st.tuples(st.lists(gather_step, min_size=1, max_size=10),
                           st.lists(st.integers(0, 99), min_size=1, max_size=3))


def run_gathers(prog, inputs, index):
    """:func:`run` with the step ``("gather", source, shift, mask)``: ``gather(Float, source,
    (index + shift) % n, mask > 0)`` (a number as the source: ``inputs[0]``; as the mask: all lanes)."""
    steps, outs = prog
    vals = list(inputs)
    n = index.numpy().size
    for s in steps:
        if s[0] != "gather":
            apply_step(s, vals)
            continue
        src, mask = vals[s[1] % len(vals)], vals[s[3] % len(vals)]
        src = inputs[0] if isinstance(src, float) else src
        i = index if s[2] == 0 else (index + s[2]) % n
        vals.append(fj.gather(Float, src, i, True if isinstance(mask, float) else mask > 0))
    results = [vals[i % len(vals)] for i in outs]
    return [r if not isinstance(r, float) else inputs[0] + r for r in results]


@pytest.mark.parametrize("compile_after", [10**9, 0], ids=["interpreted", "generated"])
@settings(max_examples=20, deadline=None)
@given(prog=gather_program, n=st.sampled_from(WIDTHS[:3]), seed=st.integers(0, 2**16))
def test_random_programs_with_gathers_match_building_every_spec(monkeypatch_module, compile_after, prog, n, seed):
    """As test_random_programs_match_building_every_spec, with gathers from the inputs and from
    intermediate results (evaluated by the gather), at run-time indices, some masked."""
    def outputs(s):
        rng = np.random.default_rng(s)
        return run_gathers(prog, inputs_of(n, s), data(UInt32, rng.integers(0, n, n).astype(np.uint32)))

    assert_plans_match_the_spec_builder(monkeypatch_module, compile_after, outputs, seed)


def test_a_cycle_of_more_shapes_of_one_signature_than_are_kept_recent_needs_no_walk(checker, builds, walks):
    """A program evaluating the same sequence of graphs at every call finds each graph's plan as
    the successor of the previous one: a prefix max's steps (here 7 shapes of one signature,
    more than plans.MAX_RECENT) walked every graph at every call before."""
    x = data(Float, np.arange(16, dtype=np.float32) % 5)
    steps = [1, 2, 4, 8, 3, 5, 6]
    assert len(steps) > plans.MAX_RECENT
    for call in range(4):
        if call == 2:
            walks[0] = 0
        y = x
        for d in steps:
            y = fj.maximum(y, fj.gather(Float, y, (fj.arange(UInt32, 16) + d) % 16))
            fj.eval(y)
        want = np.arange(16, dtype=np.float32) % 5
        for d in steps:
            want = np.maximum(want, want[(np.arange(16) + d) % 16])
        assert y.numpy().tolist() == want.tolist()
    assert builds[0] == len(steps) and walks[0] == 0
