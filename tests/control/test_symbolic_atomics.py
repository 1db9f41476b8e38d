"""``scatter_inc``, ``scatter_exch`` and ``scatter_cas`` inside symbolic loop bodies (and the
symbolic ``if_stmt`` branches and ``switch`` targets in them): one ``scatter_rmw`` instruction
of the loop's kernel per call, run every iteration.

Which slot a lane gets depends on the order in which lanes and threads reach the counter (as in
Dr.Jit), so compaction tests compare counts and sorted contents; programs where no two lanes
touch one element compare values exactly, with evaluated mode and NumPy.  The expected values
of the small programs were checked side by side with Dr.Jit 1.5 (same counts, same sorted
contents, same per-element maxima of the compare-and-swap loop).
"""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
from frostjit.control.errors import ControlFlowError
from frostjit.llvm import Bool, Float, Float16, Float64, Int32, Int64, UInt32

WIDTHS = (1, 7, 1000, 100_003)


def compaction(n: int, mode: str):
    """Lane i runs i % 4 iterations; iteration k appends 100 * i + k to ``buf``."""
    ctr = UInt32(0)
    buf = fj.zeros(UInt32, 4 * n)

    def body(i, k):
        slot = fj.scatter_inc(ctr, UInt32(0))
        fj.scatter(buf, i * 100 + k, slot)
        return i, k + 1
    i, k = fj.while_loop((fj.arange(UInt32, n), UInt32(0)), lambda i, k: k < i % 4, body, mode=mode)
    fj.eval(ctr, buf, i, k)
    return ctr.numpy().tolist(), buf.numpy(), k.numpy()


def compaction_model(n: int):
    items = sorted(100 * i + k for i in range(n) for k in range(i % 4))
    return [len(items)], items


@pytest.mark.parametrize("n", WIDTHS)
def test_stream_compaction_in_a_symbolic_loop_fills_every_slot_once(n):
    ctr, buf, k = compaction(n, "symbolic")
    count, items = compaction_model(n) if n <= 1000 else (None, None)
    ctr_e, buf_e, k_e = compaction(n, "evaluated")
    assert ctr == ctr_e
    np.testing.assert_array_equal(np.sort(buf[:ctr[0]]), np.sort(buf_e[:ctr[0]]))
    assert not buf[ctr[0]:].any()
    np.testing.assert_array_equal(k, np.arange(n) % 4)
    if items is not None:
        assert ctr == count
        assert np.sort(buf[:ctr[0]]).tolist() == items


def test_drjits_answer_for_the_compaction_of_twenty_lanes():
    ctr, buf, _ = compaction(20, "symbolic")
    assert ctr == [30]                  # Dr.Jit 1.5: ctr [30], the same sorted contents
    assert np.sort(buf)[-30:].tolist() == compaction_model(20)[1]


def test_old_values_as_loop_state():
    ctr = UInt32(5)

    def body(i, s, k):
        return i, s + fj.scatter_inc(ctr, UInt32(0), i % 2 == 0), k + 1
    i, s, k = fj.while_loop((fj.arange(UInt32, 6), UInt32(0), UInt32(0)), lambda i, s, k: k < 2, body,
                            mode="symbolic")
    fj.eval(ctr, s)
    assert ctr.numpy().tolist() == [11]
    # 3 even lanes x 2 iterations take slots 5..10; odd lanes add 0 (Dr.Jit: the same sorted sums)
    got = np.sort(s.numpy())
    assert got[:3].tolist() == [0, 0, 0] and got[3:].sum() == sum(range(5, 11))


@pytest.mark.parametrize("n", [50, 10_007])
def test_compare_and_swap_loop_computes_each_elements_maximum(n):
    # the lock-free maximum: retry with the value seen until the swap succeeds
    t = fj.zeros(UInt32, 5)
    values = (np.arange(n, dtype=np.uint64) * 7919 % 1000).astype(np.uint32)
    v = UInt32(values)
    idx = fj.arange(UInt32, n) % 5

    def body(guess, done, tries):
        old, ok = fj.scatter_cas(t, guess, fj.maximum(guess, v), idx)
        return old, ok, tries + 1
    guess, done, tries = fj.while_loop((UInt32(0), Bool(False), UInt32(0)), lambda g, d, tr: ~d, body,
                                       mode="symbolic")
    fj.eval(t, done, tries)
    want = [int(values[np.arange(n) % 5 == j].max()) for j in range(5)]
    assert t.numpy().tolist() == want
    assert done.numpy().all() and tries.numpy().min() >= 1


@pytest.mark.parametrize("cls", [UInt32, Int32, Int64, Float, Float64, Float16, Bool])
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_exchange_and_cas_on_distinct_elements_equal_evaluated_mode(cls, n):
    rng = np.random.default_rng(n)
    init = rng.integers(0, 3, n)

    def program(mode):
        t = cls((init > 0).tolist()) if cls is Bool else cls(init.tolist())
        perm = UInt32(rng_perm)

        def body(x, seen, k):
            old = fj.scatter_exch(t, x, perm)
            o2, ok = fj.scatter_cas(t, x, old, perm, k % 2 == 0)
            return old, fj.select(ok, o2, seen), k + 1
        x0 = cls(fj.arange(UInt32, n) % 2 == 0) if cls is Bool else cls(fj.arange(UInt32, n) % 3)
        x, seen, k = fj.while_loop((x0, fj.zeros(cls, n), UInt32(0)), lambda x, s, k: k < 3, body, mode=mode)
        fj.eval(t, x, seen)
        return t.numpy(), x.numpy(), seen.numpy()
    rng_perm = rng.permutation(n).astype(np.uint32)
    for a, b in zip(program("symbolic"), program("evaluated")):
        np.testing.assert_array_equal(a, b)


def test_if_stmt_and_switch_in_a_loop_body_count_their_lanes():
    n = 30
    c_true, c_false = UInt32(0), UInt32(0)
    counters = [UInt32(0), UInt32(0), UInt32(0)]
    targets = [(lambda j: (lambda x: x + j + fj.scatter_inc(counters[j], UInt32(0)) * 0))(j) for j in range(3)]

    def body(i, k, acc, r):
        def t(i, k, acc):
            return i, k, acc + 1 + 0 * fj.scatter_inc(c_true, UInt32(0))

        def f(i, k, acc):
            return i, k, acc + 10 + 0 * fj.scatter_inc(c_false, UInt32(0))
        i, k, acc = fj.if_stmt((i, k, acc), (i + k) % 3 == 0, t, f, mode="symbolic")
        r = fj.switch((i + k) % 3, targets, r)
        return i, k + 1, acc, r
    i, k, acc, r = fj.while_loop((fj.arange(UInt32, n), UInt32(0), UInt32(0), UInt32(0)),
                                 lambda i, k, acc, r: k < i % 5, body, mode="symbolic")
    fj.eval(c_true, c_false, *counters, acc, r)
    pairs = [(i, k) for i in range(n) for k in range(i % 5)]
    trues = sum((i + k) % 3 == 0 for i, k in pairs)
    assert c_true.numpy().tolist() == [trues] and c_false.numpy().tolist() == [len(pairs) - trues]
    assert [c.numpy().tolist()[0] for c in counters] == [sum((i + k) % 3 == j for i, k in pairs) for j in range(3)]
    want = [sum(1 if (i + k) % 3 == 0 else 10 for k in range(i % 5)) for i in range(n)]
    assert acc.numpy().tolist() == want


def test_one_counter_shared_by_both_branches_and_nested_loops():
    # (Dr.Jit 1.5 rejects a second scatter_inc into a counter already written in the symbolic region;
    # frostjit runs both)
    ctr = UInt32(0)
    buf = fj.zeros(UInt32, 200)

    def outer(i, a, tot):
        fj.scatter_inc(ctr, UInt32(0))

        def inner(b, tot):
            s = fj.scatter_inc(ctr, UInt32(0))
            fj.scatter(buf, i * 10 + a * 3 + b + 1, s)
            return b + 1, tot + 1
        b, tot = fj.while_loop((UInt32(0), tot), lambda b, tot: b < a, inner, mode="symbolic")
        return i, a + 1, tot
    i, a, tot = fj.while_loop((fj.arange(UInt32, 9), UInt32(0), UInt32(0)), lambda i, a, tot: a < i % 4, outer,
                              mode="symbolic")
    fj.eval(ctr, buf, tot)
    outer_runs = [(i, a) for i in range(9) for a in range(i % 4)]
    items = sorted(i * 10 + a * 3 + b + 1 for i, a in outer_runs for b in range(a))
    assert ctr.numpy().tolist() == [len(outer_runs) + len(items)]
    got = buf.numpy()
    assert sorted(x for x in got.tolist() if x) == items        # the inner slots hold them, in some order
    assert tot.numpy().tolist() == [sum(range(i % 4)) for i in range(9)]


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_frozen_compaction_loop_equals_plain(n):
    def program(values, ctr, buf):
        def body(v, k):
            slot = fj.scatter_inc(ctr, UInt32(0), v > k)
            fj.scatter(buf, v * 16 + k, slot, v > k)
            return v, k + 1
        v, k = fj.while_loop((values, UInt32(0)), lambda v, k: k < 4, body, mode="symbolic")
        return k
    frozen = fj.freeze(program)
    rng = np.random.default_rng(n)
    for w in (n, 5, n, 2 * n + 1):
        vals = rng.integers(0, 6, w).astype(np.uint32)
        plain = (UInt32(0), fj.zeros(UInt32, 4 * w))
        froz = (UInt32(0), fj.zeros(UInt32, 4 * w))
        program(UInt32(vals), *plain)
        frozen(UInt32(vals), *froz)
        count = int(np.minimum(vals, 4).sum())
        assert plain[0].numpy().tolist() == froz[0].numpy().tolist() == [count]
        np.testing.assert_array_equal(np.sort(plain[1].numpy()), np.sort(froz[1].numpy()))


def test_an_old_value_used_after_the_loop_is_a_clear_error():
    ctr = UInt32(0)
    leaked = []

    def body(i):
        leaked.append(fj.scatter_inc(ctr, UInt32(0)))
        return (i + 1,)
    fj.while_loop((fj.arange(UInt32, 4),), lambda i: i < 2, body, mode="symbolic")
    fj.eval(ctr)
    with pytest.raises((RuntimeError, ControlFlowError), match="outside the loop"):
        fj.eval(leaked[0] + 1)


def test_scatter_inc_in_an_fj_func_called_in_a_loop():
    ctr = UInt32(0)

    @fj.func
    def take(x):
        return x + fj.scatter_inc(ctr, UInt32(0)) * 0 + 1

    (i,) = fj.while_loop((fj.arange(UInt32, 5),), lambda i: i < 4, lambda i: (take(i),), mode="symbolic")
    fj.eval(ctr, i)
    assert ctr.numpy().tolist() == [4 + 3 + 2 + 1] and i.numpy().tolist() == [4, 4, 4, 4, 4]


def test_a_never_active_scatter_in_a_loop_body_is_skipped():
    # (used to raise "a scatter of 1 lanes in the body of a symbolic loop"; Dr.Jit skips it)
    t = fj.zeros(Float, 4)

    def body(i):
        fj.scatter_add(t, 1.0, UInt32(3), False)
        fj.scatter_add(t, 1.0, UInt32(2), True)
        return (i + 1,)
    (i,) = fj.while_loop((fj.arange(UInt32, 10),), lambda i: i < 12, body, mode="symbolic")
    fj.eval(t, i)
    assert t.numpy().tolist() == [0, 0, 75, 0]


class Particle:
    DRJIT_STRUCT = {"index": UInt32, "weight": Float}

    def __init__(self, index=None, weight=None):
        self.index = index
        self.weight = weight


@fj.syntax
def split_walk(size: int) -> list:
    """Particles lose or gain weight at random until Russian roulette ends them; a heavy one
    splits, its child appended to a queue (scatter_inc in the symbolic loop) that the next round
    processes, shrunk to its length by reshape (Dr.Jit's documented fork pattern)."""
    from frostjit.llvm import PCG32
    sizes = []
    state = Particle(fj.arange(UInt32, size), fj.full(Float, 1, size))
    while size > 0:
        rng = PCG32()
        rng.seed(initstate=state.index)
        counter = UInt32(0)
        capacity = int(1.1 * size)
        queue = fj.empty(dtype=Particle, shape=capacity)
        capacity_o = fj.opaque(UInt32, capacity)
        alive = fj.full(Bool, True, size)
        while alive:
            state.weight *= fj.fma(rng.next_float32(), 0.125, 1 - 0.125 / 2)
            if state.weight < .5:
                if rng.next_float32() > state.weight:
                    alive = Bool(False)
            if state.weight > 1.5:
                child = Particle(rng.next_uint32(), state.weight / 2)
                state.weight /= 2
                slot = fj.scatter_inc(counter, index=0)
                fj.scatter(target=queue, value=child, index=slot, active=slot < capacity_o)
        size = min(int(counter[0]), capacity)
        state = fj.reshape(type(state), value=queue, shape=size, shrink=True)
        sizes.append(size)
    return sizes


@pytest.mark.llvm_only("about a minute on the NumPy interpreter (7 rounds of up to 100 iterations); the "
                       "in-kernel atomics it uses are tested on both backends above")
def test_particles_that_split_into_a_queue_give_drjits_generation_sizes():
    # Dr.Jit 1.5 (the same program, side by side): [706, 269, 100, 28, 9, 1, 0]
    assert split_walk(1000) == [706, 269, 100, 28, 9, 1, 0]


def test_a_never_active_scatter_inc_in_a_loop_body_returns_zeros():
    ctr = UInt32(7)

    def body(i, s):
        return i + 1, s + fj.scatter_inc(ctr, UInt32(0), False)
    i, s = fj.while_loop((fj.arange(UInt32, 3), UInt32(0)), lambda i, s: i < 3, body, mode="symbolic")
    fj.eval(ctr, s)
    assert ctr.numpy().tolist() == [7] and s.numpy().tolist() == [0, 0, 0]


def test_scatter_inc_in_top_level_symbolic_if_stmt_and_switch_gives_drjits_answer():
    # outside loops the lanes have host values: the lane-order array implementation (Dr.Jit 1.5:
    # the same counts, contents and results)
    c1, c2, buf = UInt32(0), UInt32(0), fj.zeros(UInt32, 16)
    i = fj.arange(UInt32, 10)

    def t(i):
        s = fj.scatter_inc(c1, UInt32(0))
        fj.scatter(buf, i, s)
        return i + s * 0
    r = fj.if_stmt((i,), i % 3 == 0, t, lambda i: i + fj.scatter_inc(c2, UInt32(0)) * 0 + 100, mode="symbolic")
    fj.eval(r, c1, c2, buf)
    assert c1.numpy().tolist() == [4] and c2.numpy().tolist() == [6]
    assert sorted(buf.numpy().tolist()) == [0] * 13 + [3, 6, 9]
    assert r.numpy().tolist() == [0, 101, 102, 3, 104, 105, 6, 107, 108, 9]
    c3, c4 = UInt32(0), UInt32(0)
    r = fj.switch(i % 2, [lambda x: x + fj.scatter_inc(c3, UInt32(0)) * 0,
                          lambda x: x + 1 + fj.scatter_inc(c4, UInt32(0)) * 0], i, mode="symbolic")
    fj.eval(r, c3, c4)
    assert c3.numpy().tolist() == c4.numpy().tolist() == [5]
    assert r.numpy().tolist() == [0, 2, 2, 4, 4, 6, 6, 8, 8, 10]


@pytest.mark.parametrize("n", [7, 100_003])
def test_exchanges_on_one_element_pass_every_value_on_exactly_once(n):
    # whatever order the lanes (and threads) take: the old values and the final content are the
    # initial content and the written values, each once
    t = UInt32(123456789)

    def body(x, k, old):
        return x, k + 1, fj.scatter_exch(t, x, UInt32(0))
    x, k, old = fj.while_loop((fj.arange(UInt32, n), UInt32(0), UInt32(0)), lambda x, k, o: k < 1, body,
                              mode="symbolic")
    fj.eval(t, old)
    got = np.sort(np.concatenate([old.numpy(), t.numpy()]))
    np.testing.assert_array_equal(got, np.sort(np.append(np.arange(n, dtype=np.uint32), np.uint32(123456789))))
