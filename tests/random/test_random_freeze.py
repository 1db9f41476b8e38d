"""Generators inside frozen functions: carried in the inputs, they advance on every replay exactly
as plain calls advance them (frozen == plain over 100 calls, at several widths)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Float, Float64, Int32, Int64, PCG32, Philox4x32, UInt32, UInt64

WIDTHS = (1, 7, 1000, 100003)
CALLS = 100


def _calls(width: int) -> int:
    """100 calls; 20 at the widest width on the NumPy reference backend (its interpreter makes
    those the suite's slowest tests: 50-90 s each on a 2-core CI machine)."""
    from frostjit.backend import current_backend
    return 20 if width > 1000 and current_backend().name != "LLVM" else CALLS
# A frozen function that falls back to plain calls warns: here that is a failure.
pytestmark = pytest.mark.filterwarnings("error::frostjit.FreezeWarning")


def _same(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _draw_pcg(rng):
    u = rng.next_float32()
    z = rng.next_float64_normal()
    k = rng.next_uint32_bounded(16)         # a power of two: no rejection round
    h = rng.next_float16_normal()
    return u, z, k, h


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_pcg32_advances_like_plain_calls(width):
    frozen = fj.freeze(_draw_pcg)
    a, b = PCG32(width, 5, 9), PCG32(width, 5, 9)
    for _ in range(_calls(width)):
        got = frozen(a)
        want = _draw_pcg(b)
        fj.eval(b)
        for g, w in zip(got, want):
            _same(g, w)
    _same(a.state, b.state)
    _same(a.inc, b.inc)
    assert frozen.n_recordings <= 2      # literal state at the first call, evaluated afterwards


def _draw_philox(p):
    return p.next_float32x4(), p.next_uint64x2(), p.next_float16x4()


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_philox_advances_like_plain_calls(width):
    frozen = fj.freeze(_draw_philox)
    lane = fj.arange(UInt32, width)
    a, b = Philox4x32(7, lane), Philox4x32(7, lane)
    for _ in range(_calls(width)):
        got, want = frozen(a), _draw_philox(b)
        fj.eval(b)
        for g, w in zip(got, want):
            _same(g, w)
    _same(a.counter, b.counter)
    assert frozen.n_recordings <= 2


def _draw_generator(g, x):
    return g.random(Float, fj.width(x)) + x, g.normal(Array3f, (3, fj.width(x)))


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_generator_advances_like_plain_calls(width):
    frozen = fj.freeze(_draw_generator)
    ga, gb = fj.rng(seed=11), fj.rng(seed=11)
    x = fj.arange(Float, width)
    for _ in range(_calls(width)):
        got, want = frozen(ga, x), _draw_generator(gb, x)
        for g, w in zip(got, want):
            _same(g, w)
    _same(ga._counter, gb._counter)
    assert int(ga._counter[0]) == 2 * _calls(width)
    assert frozen.n_recordings <= 2      # the seed is a Python int at the first call only


def test_frozen_function_replays_at_a_new_width():
    frozen = fj.freeze(_draw_pcg)
    for width in (5, 300, 5, 4000):
        a, b = PCG32(width, 1, 2), PCG32(width, 1, 2)
        for _ in range(3):
            fj.eval(a, b)
            for g, w in zip(frozen(a), _draw_pcg(b)):
                _same(g, w)
    assert frozen.n_recordings <= 2


def test_pcg32_seeded_inside_a_frozen_function_is_an_output():
    @fj.freeze
    def make(seed):
        rng = PCG32(fj.width(seed), seed, 3)
        return rng, rng.next_float32()

    for width in (4, 9):
        seed = fj.arange(UInt64, width) * 17
        rng, u = make(seed)
        ref = PCG32(width, seed, 3)
        _same(u, ref.next_float32())
        _same(rng.state, ref.state)
        _same(rng.next_float64(), ref.next_float64())


def test_frozen_jump_by_an_input_count():
    @fj.freeze
    def jump(rng, n):
        rng += n
        return rng.next_uint32()

    for k in range(3):
        a, b = PCG32(6, 2, 3), PCG32(6, 2, 3)
        n = fj.arange(Int64, 6) * (k + 1) - 2
        got = jump(a, n)
        b += n
        _same(got, b.next_uint32())
        _same(a.state, b.state)


@pytest.mark.parametrize("width", WIDTHS[:3])
def test_frozen_distance_equals_the_plain_one(width):
    # (the distance is a loop over the bits that ends per lane: a replay must run it the same way
    # for new states, as the plain call does)
    def distance(a, b):
        return a - b, b - a

    frozen = fj.freeze(distance)
    for k in range(4):
        a = PCG32(width, 11, 5)
        a += fj.arange(Int64, width) * (7919 * k + 1) - 3 * k
        b = PCG32(width, 11, 5)
        b.next_uint32()
        fj.eval(a, b)
        for got, want in zip(frozen(a, b), distance(a, b)):
            _same(got, want)
    assert frozen.n_recordings <= 2


def test_philox_iterations_are_part_of_the_key():
    """A recording made for 7 rounds must not replay for 10 (a Python value, not an array)."""
    frozen = fj.freeze(lambda p: p.next_uint32x4())
    lane = fj.arange(UInt32, 8)
    for rounds in (7, 10, 7):
        _same(frozen(Philox4x32(1, lane, iterations=rounds)), Philox4x32(1, lane, iterations=rounds).next_uint32x4())


# bounds with heavy rejection (2^31 + 1 redraws almost half the draws: at width 1000 some
# lanes redraw ten times and more), light rejection, and none (a power of two)
_BOUNDS32 = st.sampled_from([2**31 + 1, 3 * 2**30, 7, 1000003, 2**32 - 1, 16])
_BOUNDS64 = st.sampled_from([2**63 + 3, 10**15, 3, 2**40])


def _draw_bounded(rng, b32, b64, mask):
    return rng.next_uint32_bounded(b32), rng.next_uint64_bounded(b64, mask), rng.next_uint32_bounded(b32, mask)


@settings(max_examples=6)
@given(width=st.sampled_from([1, 7, 1000]), b32=_BOUNDS32, b64=_BOUNDS64,
       seed=st.integers(0, 2**64 - 1), stream=st.integers(0, 2**64 - 1))
def test_bounded_draws_record_once_and_replay_like_plain_calls(width, b32, b64, seed, stream):
    """The rejection loops are one while_loop with the generator as loop state: the frozen
    function records them (no fallback: a FreezeWarning is an error here) and every replay
    advances each lane by its own number of redraws, as plain calls do."""
    frozen = fj.freeze(_draw_bounded)
    a, b = PCG32(width, seed, stream), PCG32(width, seed, stream)
    mask = fj.arange(UInt32, width) % 3 != 1
    for _ in range(CALLS):
        got = frozen(a, b32, b64, mask)
        want = _draw_bounded(b, b32, b64, mask)
        fj.eval(b)
        for g, w in zip(got, want):
            _same(g, w)
    _same(a.state, b.state)
    assert frozen.n_recordings <= 2      # literal state at the first call, evaluated afterwards


def test_bounded_draws_replay_at_the_widest_width():
    """100003 lanes under heavy rejection (the longest lanes redraw ~17 times)."""
    frozen = fj.freeze(lambda rng: rng.next_uint32_bounded(2**31 + 1))
    a, b = PCG32(100003, 4, 4), PCG32(100003, 4, 4)
    for _ in range(_calls(100003) // 5):
        _same(frozen(a), b.next_uint32_bounded(2**31 + 1))
        fj.eval(b)
    _same(a.state, b.state)
    assert frozen.n_recordings <= 2


def _integers(g, x, high):
    return g.integers(UInt32, fj.width(x), 5, high), g.integers(Int32, fj.width(x), -3, 4)


@settings(max_examples=4)
@given(n=st.sampled_from([1, 7, 1000]), high=st.sampled_from([2**31 + 6, 3 * 2**30, 1000, 2**20 + 5]),
       seed=st.integers(0, 2**32))
def test_generator_integers_record_once_and_replay_like_plain_calls(n, high, seed):
    """fj.rng().integers' rejection loop (Dr.Jit's: the round count picks the Philox counter):
    frozen == plain values and counters over 100 calls."""
    frozen = fj.freeze(_integers)
    a, b = fj.rng(seed), fj.rng(seed)
    x = fj.arange(UInt32, n)
    for _ in range(CALLS):
        got = frozen(a, x, high)
        want = _integers(b, x, high)
        fj.eval(want, b._counter)
        for g, w in zip(got, want):
            _same(g, w)
    _same(a._counter, b._counter)
    assert frozen.n_recordings <= 2


def test_float64_generator_in_a_frozen_training_style_loop():
    """The pattern of an optimizer step that re-draws noise each call (Dr.Jit's rng pitfall):
    the counter is evaluated, so the graph does not grow and nothing re-compiles."""
    g = fj.rng(seed=3)

    @fj.freeze
    def step(g, x):
        return x + g.normal(Float64, fj.width(x), scale=0.1)

    x = fj.zeros(Float64, 50)
    ref, gr = fj.zeros(Float64, 50), fj.rng(seed=3)
    for _ in range(20):
        x = step(g, x)
        ref = ref + gr.normal(Float64, 50, scale=0.1)
        fj.eval(ref)
    _same(x, ref)
    assert step.n_recordings <= 2
