"""PCG32 distances and jumps by arrays on evaluated generators: replayed by a frozen function of
the bit loop (random/pcg32.py, ``_bit_rounds``), equal to the traced loop and the NumPy reference
on every call, at changing widths, and traced again only where the replay must not be used."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm.ad as LA
from frostjit import JitFlag
from frostjit.llvm import Bool, Int64, PCG32, UInt32, UInt64
from frostjit.random import pcg32 as pcg32_module

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import distance as ref_distance, jump as ref_jump  # noqa: E402

u64s = st.integers(0, 2**64 - 1)


def _np(x):
    return np.asarray(x)


@pytest.fixture
def loop_traces(monkeypatch):
    """Counts the bit loops traced (each ``generator_loop`` call of pcg32.py), starting without
    the frozen functions that earlier tests made."""
    calls = []
    monkeypatch.setattr(pcg32_module, "_REPLAYED", {}, raising=False)
    real = pcg32_module.generator_loop

    def counting(*args, **kwargs):
        calls.append(args[3])
        return real(*args, **kwargs)
    monkeypatch.setattr(pcg32_module, "generator_loop", counting)
    return calls


def _pair(width, seed):
    rs = np.random.default_rng(seed)
    a, b = PCG32(width, int(rs.integers(2**63))), PCG32(width)
    sa, sb = rs.integers(0, 2**64, width, np.uint64), rs.integers(0, 2**64, width, np.uint64)
    inc = rs.integers(0, 2**64, width, np.uint64) | np.uint64(1)
    a.state, a.inc, b.state, b.inc = UInt64(sa), UInt64(inc), UInt64(sb), UInt64(inc)
    return a, b, sa, sb, inc


def test_steady_distances_and_jumps_of_evaluated_generators_trace_no_loop(loop_traces):
    for width in (1000, 7, 1000, 33):
        a, b, sa, sb, inc = _pair(width, width)
        deltas = np.arange(width, dtype=np.int64) * 7919 - 3 * width
        d = Int64(deltas)
        for _ in range(3):
            np.testing.assert_array_equal(_np(a - b), ref_distance(sa, sb, inc))
            np.testing.assert_array_equal(_np((a + d).state), ref_jump(sa, inc, deltas))
            np.testing.assert_array_equal(_np((a - d).state), ref_jump(sa, inc, -deltas))
    # per loop (distance, jump, jump back): the first uses traced, one recording, then replays
    traced = getattr(pcg32_module, "TRACED_USES", 0) + 1
    assert loop_traces.count("PCG32.__sub__") == traced and loop_traces.count("PCG32.__add__") == 2 * traced


@settings(max_examples=10)
@given(widths=st.lists(st.sampled_from([1, 2, 17, 64, 300]), min_size=2, max_size=5), seed=u64s,
       broadcast=st.sampled_from(["none", "target", "start"]))
def test_replayed_rounds_equal_the_traced_loop(widths, seed, broadcast):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pcg32_module, "TRACED_USES", 0, raising=False)      # replayed from the second use
        _compare_replayed_and_traced(widths, seed, broadcast)


def _compare_replayed_and_traced(widths, seed, broadcast):
    for width in widths:
        a, b, sa, sb, inc = _pair(width, seed % 2**32 + width)
        if broadcast == "target":       # one lane against many (a layout of its own)
            a.state, sa = UInt64(sa[:1]), sa[:1]
        elif broadcast == "start":
            b.state, sb = UInt64(sb[:1]), sb[:1]
        deltas = np.resize(np.array([seed % 1000, -(seed % 977), 2**63 - 1, -(2**63)], np.int64), width)
        replayed = [_np(a - b), _np((a + Int64(deltas)).state), _np((b - Int64(deltas)).state)]
        with fj.scoped_set_flag(JitFlag.KernelFreezing, False):        # the traced loop
            traced = [_np(a - b), _np((a + Int64(deltas)).state), _np((b - Int64(deltas)).state)]
        for r, t in zip(replayed, traced):
            np.testing.assert_array_equal(r, t)
        np.testing.assert_array_equal(replayed[0], ref_distance(sa, sb, inc))
        np.testing.assert_array_equal(replayed[1], ref_jump(sa, inc, deltas))


def test_evaluated_loops_and_other_increment_types():
    a, b, sa, sb, inc = _pair(17, 5)
    with fj.scoped_set_flag(JitFlag.SymbolicLoops, False):
        for _ in range(2):
            np.testing.assert_array_equal(_np(a - b), ref_distance(sa, sb, inc))
    steps = np.arange(17, dtype=np.uint32) * 3
    for _ in range(2):           # a UInt32 count (converted inside the replayed function)
        np.testing.assert_array_equal(_np((a + UInt32(steps)).state), ref_jump(sa, inc, steps.astype(np.int64)))


def test_pending_and_scoped_operands_keep_the_traced_loop(loop_traces):
    a, b, sa, sb, inc = _pair(64, 11)
    moved = a + 5                   # a pending state: the loop fuses into the kernel using it
    np.testing.assert_array_equal(_np(moved - b), ref_distance(ref_jump(sa, inc, np.full(64, 5)), sb, inc))
    assert loop_traces == ["PCG32.__sub__"]

    def cond(i, d):
        return i < 3

    def body(i, d):                 # evaluated generators used inside a loop body
        return i + 1, d + (a - b)
    _, total = fj.while_loop((fj.zeros(UInt32, 64), fj.zeros(Int64, 64)), cond, body)
    np.testing.assert_array_equal(_np(total), ref_distance(sa, sb, inc) * 3)

    def branch_true(x):
        return a - b

    def branch_false(x):
        return x
    picked = fj.if_stmt((Int64(np.arange(64)),), Bool(np.arange(64) % 2 == 0), branch_true, branch_false)
    expect = np.where(np.arange(64) % 2 == 0, ref_distance(sa, sb, inc), np.arange(64))
    np.testing.assert_array_equal(_np(picked), expect)
    assert loop_traces.count("PCG32.__sub__") >= 3      # traced in the body and the branch, not replayed


def test_inside_a_frozen_function_and_on_ad_types():
    a, b, sa, sb, inc = _pair(33, 3)
    f = fj.freeze(lambda x, y, k: ((x - y) + 1, (x + k).state))
    k = np.arange(33, dtype=np.int64) - 16
    for width in (33, 33, 33):
        d, s = f(a, b, Int64(k))
        np.testing.assert_array_equal(_np(d), ref_distance(sa, sb, inc) + 1)
        np.testing.assert_array_equal(_np(s), ref_jump(sa, inc, k))
    assert f.n_recordings == 1
    x, y = LA.PCG32(a), LA.PCG32(b)
    x.state, x.inc, y.state = LA.UInt64(sa), LA.UInt64(inc), LA.UInt64(sb)
    for _ in range(2):
        d = x - y
        assert type(d) is LA.Int64
        np.testing.assert_array_equal(_np(d), ref_distance(sa, sb, inc))
