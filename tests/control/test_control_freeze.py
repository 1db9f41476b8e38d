"""Frozen functions containing evaluated loops, conditionals and switches: a replay never reuses
a stale decision (the loop's trip count and the switch's non-empty targets are guards of the
recording, named after the construct), and frozen == plain at several widths."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import PCG32, Float, UInt32

WIDTHS = (1, 7, 1000, 100003)


def _loop(x, lim):
    i, y = fj.while_loop((UInt32(0), x), lambda i, y: i < lim, lambda i, y: (i + 1, y * 2 + 1),
                         mode="evaluated", label="doubling")
    return y


def _loop_compressed(x, lim):
    i, y, _ = fj.while_loop((UInt32(0), x, lim), lambda i, y, t: i < t, lambda i, y, t: (i + 1, y * 2 + 1, t),
                            mode="evaluated", compress=True)
    return y


def _branch(x):
    return fj.if_stmt((x,), x > 0.5, lambda x: x * 3, lambda x: 1 - x, mode="evaluated")


def _dispatch(idx, x):
    return fj.switch(idx, [lambda x: x + 1, lambda x: x * 4, lambda x: -x], x, mode="evaluated")


@pytest.mark.parametrize("fn", [_loop, _loop_compressed], ids=["masked", "compressed"])
@settings(max_examples=12)
@given(calls=st.lists(st.tuples(st.sampled_from(WIDTHS[:3]), st.integers(0, 4), st.integers(0, 2**31)),
                      min_size=2, max_size=6))
def test_frozen_evaluated_loop_never_replays_a_stale_trip_count(fn, calls):
    frozen = fj.freeze(fn)
    for n, max_trips, seed in calls:
        rng = np.random.default_rng(seed)
        x = rng.random(n).astype(np.float32)
        t = rng.integers(0, max_trips + 1, n).astype(np.uint32)
        assert np.array_equal(frozen(Float(x), UInt32(t)).numpy(), fn(Float(x), UInt32(t)).numpy())


@pytest.mark.parametrize("n", WIDTHS)
def test_frozen_loop_conditional_and_switch_equal_plain_at_width(n):
    rng = np.random.default_rng(n)
    for fn, make in ((_loop, lambda: (Float(rng.random(n).astype(np.float32)),
                                      UInt32(rng.integers(0, 3, n).astype(np.uint32)))),
                     (_branch, lambda: (Float(rng.random(n).astype(np.float32)),)),
                     (_dispatch, lambda: (UInt32(rng.integers(0, 4, n).astype(np.uint32)),
                                          Float(rng.random(n).astype(np.float32))))):
        frozen = fj.freeze(fn)
        for _ in range(3):
            args = make()
            assert np.array_equal(frozen(*args).numpy(), fn(*args).numpy())


def test_frozen_loop_replays_a_seen_trip_count_and_retraces_a_new_one_naming_the_loop(caplog):
    frozen = fj.freeze(_loop)
    x = Float(1, 1, 1)
    frozen(x, UInt32(1, 2, 0))
    frozen(x, UInt32(2, 1, 0))              # same trip count (2): a replay
    assert frozen.n_recordings == 1
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        out = frozen(x, UInt32(3, 0, 0))    # 3 iterations: the guard fails, traced again
    assert out.numpy().tolist() == [15, 1, 1]
    assert frozen.n_recordings == 2
    assert any("fj.while_loop 'doubling'" in r.message and "guard failed" in r.message for r in caplog.records)


def test_frozen_switch_retraces_when_a_target_gains_lanes():
    frozen = fj.freeze(_dispatch)
    x = Float(1, 2, 3)
    assert frozen(UInt32(0, 0, 0), x).numpy().tolist() == [2, 3, 4]
    assert frozen(UInt32(0, 1, 2), x).numpy().tolist() == [2, 8, -3]
    assert frozen(UInt32(0, 0, 0), x + 1).numpy().tolist() == [3, 4, 5]


def _walk(rng, x):
    """A random walk carried in a loop: the generator is loop state, advanced in the body."""
    def body(i, rng, x):
        step = rng.next_float32() - 0.5
        return i + 1, rng, x + step
    i, rng, x = fj.while_loop((UInt32(0), rng, x), lambda i, rng, x: i < 4, body, mode="evaluated")
    return rng, x


@pytest.mark.parametrize("n", (1, 7, 1000))
def test_pcg32_carried_through_a_frozen_loop_advances_as_plain_over_100_calls(n):
    frozen = fj.freeze(_walk)
    r_f, r_p = PCG32(n), PCG32(n)
    x_f, x_p = fj.zeros(Float, n), fj.zeros(Float, n)
    for _ in range(100):
        r_f, x_f = frozen(r_f, x_f)
        r_p, x_p = _walk(r_p, x_p)
        assert np.array_equal(x_f.numpy(), x_p.numpy())
    assert np.array_equal(r_f.state.numpy(), r_p.state.numpy())
    # the first call's inputs are unevaluated literals (fj.zeros, a fresh PCG32), later ones are
    # evaluated buffers: two layouts, then replays; the loop's trip count never changes
    assert frozen.n_recordings <= 2


@pytest.mark.parametrize("n", (1, 7, 1000))
def test_frozen_switch_with_a_size_one_argument_equals_plain(n):
    def f(idx, x, s):
        return fj.switch(idx, [lambda x, s: x + s, lambda x, s: x * s], x, s, mode="evaluated")
    frozen = fj.freeze(f)
    for k in range(3):
        idx, x, s = UInt32(np.arange(n, dtype=np.uint32) % 3), Float(np.arange(n, dtype=np.float32)), Float(2.0 + k)
        assert np.array_equal(frozen(idx, x, s).numpy(), f(idx, x, s).numpy())


@fj.syntax
def _syntax_walk(rng, x, steps):
    i = UInt32(0)
    while i < steps:
        u = rng.next_float32()
        if u < 0.5:
            x -= u
        else:
            x += 1 - u
        i += 1
    return rng, x


def test_frozen_syntax_function_with_rng_equals_plain():
    frozen = fj.freeze(_syntax_walk)
    r_f, r_p = PCG32(5), PCG32(5)
    x_f, x_p = fj.zeros(Float, 5), fj.zeros(Float, 5)
    steps = UInt32(0, 1, 2, 3, 4)
    for _ in range(20):
        r_f, x_f = frozen(r_f, x_f, steps)
        r_p, x_p = _syntax_walk(r_p, x_p, steps)
        assert np.array_equal(x_f.numpy(), x_p.numpy())
