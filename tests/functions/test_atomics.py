"""scatter_inc, scatter_exch, scatter_cas: Dr.Jit 1.5's answers (recorded side by side with drjit,
which runs them single-threaded in lane order at these sizes), wide multi-threaded launches
against a lane-order NumPy model, evaluation order, the reference backend and frozen functions."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Bool, Float, Int, UInt


def test_scatter_inc_gives_drjits_values():
    t = UInt(10, 20)
    r = fj.scatter_inc(t, UInt(0, 1, 0, 0, 1), Bool(True, True, False, True, True))
    assert r.numpy().tolist() == [10, 20, 0, 11, 21] and t.numpy().tolist() == [12, 22]
    t = UInt(0)
    r = fj.scatter_inc(t, UInt(0, 0, 0, 0))
    assert r.numpy().tolist() == [0, 1, 2, 3] and t.numpy().tolist() == [4]


def test_scatter_exch_gives_drjits_values():
    t = Float(1, 2, 3)
    r = fj.scatter_exch(t, Float(7, 8, 9), UInt(2, 0, 1))
    assert r.numpy().tolist() == [3, 1, 2] and t.numpy().tolist() == [8, 9, 7]
    t = Float(1, 2, 3)
    r = fj.scatter_exch(t, Float(7, 8, 9), UInt(0, 0, 1))
    assert r.numpy().tolist() == [1, 7, 2] and t.numpy().tolist() == [8, 9, 3]
    t = Float(1, 2, 3)
    r = fj.scatter_exch(t, 5.0, UInt(0, 0, 2))
    assert r.numpy().tolist() == [1, 5, 3] and t.numpy().tolist() == [5, 2, 5]


def test_scatter_cas_swaps_in_lane_order():
    t = Int(1, 2, 3)
    old, ok = fj.scatter_cas(t, Int(1, 5, 3), Int(7, 8, 9), UInt(0, 1, 2))
    assert old.numpy().tolist() == [1, 2, 3] and ok.numpy().tolist() == [True, False, True]
    assert t.numpy().tolist() == [7, 2, 9]
    t = Int(1, 2, 3)
    old, ok = fj.scatter_cas(t, Int(1, 7, 1), Int(7, 8, 9), UInt(0, 0, 0))
    assert old.numpy().tolist() == [1, 7, 8] and ok.numpy().tolist() == [True, True, False]
    assert t.numpy().tolist() == [8, 2, 3]
    t = Float(1, 2, 3)
    old, ok = fj.scatter_cas(t, Float(1, 5, 3), Float(7, 8, 9), UInt(0, 1, 2), Bool(True, True, False))
    assert old.numpy().tolist() == [1, 2, 0] and ok.numpy().tolist() == [True, False, False]
    assert t.numpy().tolist() == [7, 2, 3]


def test_returned_old_values_do_not_see_the_update_whatever_is_evaluated_first():
    t = UInt(5, 5)
    r = fj.scatter_inc(t, UInt(1, 1, 0))
    assert t.numpy().tolist() == [6, 7]        # the target first
    assert r.numpy().tolist() == [5, 6, 5]
    t = Float(1, 2)
    r = fj.scatter_exch(t, Float(3, 4), UInt(1, 0))
    assert t.numpy().tolist() == [4, 3]
    assert r.numpy().tolist() == [2, 1]


def test_out_of_bounds_and_inactive_lanes_change_nothing():
    t = UInt(0, 0)
    r = fj.scatter_inc(t, UInt(0, 5, 1, 0), Bool(True, True, False, True))
    assert r.numpy().tolist() == [0, 0, 0, 1] and t.numpy().tolist() == [2, 0]
    with pytest.raises(TypeError, match="UInt32"):
        fj.scatter_inc(Int(0), UInt(0))
    with pytest.raises(TypeError, match="does not match"):
        fj.scatter_exch(Float(1), Int(1), UInt(0))


def _lane_order_inc(target, index):
    t = target.copy()
    old = np.empty(len(index), np.uint32)
    for i, k in enumerate(index):
        old[i] = t[k]
        t[k] += 1
    return old, t


@pytest.mark.parametrize("bins", [1, 3, 1000])
def test_wide_scatter_inc_is_race_free_and_in_lane_order(bins):
    rng = np.random.default_rng(bins)
    n = 200_003
    index = rng.integers(0, bins, n).astype(np.uint32)
    start = rng.integers(0, 100, bins).astype(np.uint32)
    t = UInt(start)
    r = fj.scatter_inc(t, UInt(index))
    # the lane-order model, vectorized: rank among equal indices in lane order
    order = np.argsort(index, kind="stable")
    rank = np.empty(n, np.int64)
    sorted_idx = index[order]
    first = np.searchsorted(sorted_idx, sorted_idx, side="left")
    rank[order] = np.arange(n) - first
    assert (r.numpy() == start[index] + rank).all()
    assert (t.numpy() == start + np.bincount(index, minlength=bins)).all()


def test_wide_scatter_exch_chains_each_element_in_lane_order():
    rng = np.random.default_rng(5)
    n = 100_003
    index = rng.integers(0, 517, n).astype(np.uint32)
    values = rng.standard_normal(n).astype(np.float32)
    start = rng.standard_normal(517).astype(np.float32)
    t = Float(start)
    r = fj.scatter_exch(t, Float(values), UInt(index)).numpy()
    want = np.empty(n, np.float32)
    cur = start.copy()
    for i in range(n):
        k = index[i]
        want[i] = cur[k]
        cur[k] = values[i]
    assert (r == want).all() and (t.numpy() == cur).all()


def test_small_case_against_a_python_model():
    index = np.array([3, 1, 3, 3, 0, 1], np.uint32)
    old, final = _lane_order_inc(np.array([7, 0, 2, 9], np.uint32), index)
    t = UInt(7, 0, 2, 9)
    assert fj.scatter_inc(t, UInt(index)).numpy().tolist() == old.tolist()
    assert t.numpy().tolist() == final.tolist()


def _program(counter, values):
    slot = fj.scatter_inc(counter, UInt(0), values > 0)
    out = fj.zeros(Float, fj.width(values))
    fj.scatter(out, values, slot, values > 0)
    return out, slot


@pytest.mark.parametrize("width", [1, 7, 1000, 100_003])
def test_stream_compaction_inside_freeze_equals_plain(width):
    frozen = fj.freeze(_program)
    rng = np.random.default_rng(width)
    for w in (width, 5, width):
        v = rng.standard_normal(w).astype(np.float32)
        c1, c2 = UInt(0), UInt(0)
        want = _program(c1, Float(v))
        got = frozen(c2, Float(v))
        for g, x in zip(got, want):
            assert g.numpy().tolist() == x.numpy().tolist()
        assert c1.numpy().tolist() == c2.numpy().tolist() == [int((v > 0).sum())]


def test_scatter_inc_with_a_scalar_index_in_an_evaluated_loop_body_gives_each_active_lane_a_slot():
    # regression: a size-1 index/mask ranked one lane, so every lane of an iteration got the same slot
    counter = UInt(0)
    out = fj.zeros(UInt, 8)

    def body(i):
        slot = fj.scatter_inc(counter, 0)
        fj.scatter(out, i, slot)
        return (i + 1,)
    fj.while_loop((fj.arange(UInt, 5),), lambda i: i < 3, body, mode="evaluated")
    assert counter.numpy().tolist() == [6]
    assert out.numpy().tolist() == [0, 1, 2, 1, 2, 2, 0, 0]        # iteration by iteration, lane order


def test_scatter_inc_in_a_symbolic_loop_body_gives_each_active_lane_a_slot():
    # (an in-kernel atomic since the read-modify-write lowering; tests/control/test_symbolic_atomics.py)
    counter = UInt(0)
    (i,) = fj.while_loop((fj.arange(UInt, 5),), lambda i: i < 3,
                         lambda i: (i + 1 + 0 * fj.scatter_inc(counter, 0),), mode="symbolic")
    fj.eval(counter, i)
    assert counter.numpy().tolist() == [6] and i.numpy().tolist() == [3, 3, 3, 3, 4]


def _histogram_slots(index, active, bins):
    counts = fj.zeros(UInt, bins)       # a constant size: the sort covers only its bits
    slot = fj.scatter_inc(counts, index, active)
    return counts, slot


@pytest.mark.parametrize("bins", [1, 2, 255, 256, 257, 4096])
def test_scatter_inc_and_exch_sorted_on_the_targets_bits_keep_lane_order(bins):
    # Lanes are grouped by a radix sort on the bits of the target's size (inactive and
    # out-of-bounds lanes keyed with the size): check the sizes around a power of two against the
    # lane-order model, with out-of-bounds and inactive lanes, plain and frozen (a target of
    # constant size made inside, and one passed in at several sizes).
    rng = np.random.default_rng(bins)
    frozen = fj.freeze(_histogram_slots)
    for n in (37, 1000, 37):
        index = rng.integers(0, bins + 3, n).astype(np.uint32)
        active = rng.random(n) < 0.8
        ok = active & (index < bins)
        old, final = _lane_order_inc(np.zeros(bins, np.uint32), index[ok])
        want = np.zeros(n, np.uint32)
        want[ok] = old
        for f in (_histogram_slots, frozen):
            counts, slot = f(UInt(index), Bool(active), bins)
            assert slot.numpy().tolist() == want.tolist()
            assert counts.numpy().tolist() == final.tolist()
        start = rng.standard_normal(bins).astype(np.float32)
        values = rng.standard_normal(n).astype(np.float32)
        t = Float(start)
        r = fj.scatter_exch(t, Float(values), UInt(index), Bool(active)).numpy()
        cur, exp = start.copy(), np.zeros(n, np.float32)
        for i in np.flatnonzero(ok):
            exp[i], cur[index[i]] = cur[index[i]], values[i]
        assert r.tolist() == exp.tolist() and t.numpy().tolist() == cur.tolist()
