"""fj.rng(): the counter scheme, shapes and dtypes, distributions, kernels, AD and errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm.ad as LA
from frostjit.llvm import (Array2f64, Array3f, Array3u, Array4f64, Float, Float64, Int32, PCG32, UInt32,
                           UInt64)
from frostjit.random import Generator, Philox4x32Generator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import philox4x32  # noqa: E402


def _words(seed, counter, width):
    """The reference block of every lane for one generator counter."""
    lane = np.arange(width, dtype=np.uint32)
    zero = np.zeros(width, np.uint32)
    key = (np.uint32(seed >> 32), np.uint32(seed & 0xFFFFFFFF))
    return philox4x32((np.full(width, counter, np.uint32), lane, zero, zero), key)


@given(seed=st.integers(0, 2**64 - 1), width=st.sampled_from([1, 7, 33, 500]), calls=st.integers(1, 4))
def test_random_floats_are_the_last_word_of_a_block_per_call(seed, width, calls):
    g = fj.rng(seed=seed)
    for c in range(calls):
        want = (_words(seed, c, width)[3] >> 9).astype(np.float32) * np.float32(2**-23)
        np.testing.assert_array_equal(np.asarray(g.random(Float, width)), want)
    assert int(g._counter[0]) == calls


def test_vector_types_take_words_from_the_last_one_down_and_new_blocks_when_used_up():
    g = fj.rng(seed=5)
    v = np.asarray(g.random(Array3f, (3, 9)))
    w = _words(5, 0, 9)
    for k in range(3):
        np.testing.assert_array_equal(v[k], (w[3 - k] >> 9).astype(np.float32) * np.float32(2**-23))
    assert int(g._counter[0]) == 1
    v = np.asarray(g.random(Array4f64, (4, 9)))
    assert int(g._counter[0]) == 3                 # two doubles per block: two blocks
    for k, (block, half) in enumerate([(1, 1), (1, 0), (2, 1), (2, 0)]):
        w = _words(5, block, 9)
        bits = w[2 * half].astype(np.uint64) | (w[2 * half + 1].astype(np.uint64) << np.uint64(32))
        np.testing.assert_array_equal(v[k], (bits >> np.uint64(12)).astype(np.float64) * 2.0**-52)


def test_same_seed_same_numbers_and_clone():
    a, b = fj.rng(seed=9), fj.rng(seed=9)
    np.testing.assert_array_equal(np.asarray(a.normal(Float, 20)), np.asarray(b.normal(Float, 20)))
    c = a.clone()
    np.testing.assert_array_equal(np.asarray(a.random(Float64, 5)), np.asarray(c.random(Float64, 5)))
    assert isinstance(a, Generator) and isinstance(a, Philox4x32Generator)


def test_distributions():
    g = fj.rng(seed=1)
    u = np.asarray(g.uniform(Float64, 200000, -2.0, 3.0))
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.02
    z = np.asarray(g.normal(Float, 200000, loc=2.0, scale=3.0))
    assert abs(z.mean() - 2) < 0.03 and abs(z.std() - 3) < 0.03
    k = np.asarray(g.integers(Int32, 100000, -3, 4))
    assert k.min() == -3 and k.max() == 3 and k.dtype == np.int32
    counts = np.bincount(k + 3)
    assert counts.min() > 13000
    k = np.asarray(g.integers(UInt32, 1000, 5, endpoint=True))
    assert k.max() == 5


@pytest.mark.parametrize("symbolic", [True, False])
def test_integers_reject_biased_draws_like_lemire(symbolic):
    """A range of 3 * 2^30 rejects a quarter of the first draws; redraws use the next counters
    (in either loop mode)."""
    span, width = 3 * 2**30, 300
    g = fj.rng(seed=2)
    with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, symbolic):
        got = np.asarray(g.integers(UInt32, width, span))
    threshold = (2**32 - span) % span
    want = np.zeros(width, np.uint64)
    todo = np.ones(width, bool)
    c = 0
    while todo.any():
        m = _words(2, c, width)[3].astype(np.uint64) * np.uint64(span)
        ok = todo & ((m & np.uint64(0xFFFFFFFF)) >= threshold)
        want[ok] = m[ok] >> np.uint64(32)
        todo &= ~ok
        c += 1
    np.testing.assert_array_equal(got, want)
    assert int(g._counter[0]) == c                  # one counter per round, as Dr.Jit


def test_literal_zero_offset_keeps_the_sign_of_zero():
    """Dr.Jit folds fma(z, scale, 0.0) into z * scale (so -0 stays -0): frostjit does the same."""
    g1, g2 = fj.rng(seed=4), fj.rng(seed=4)
    np.testing.assert_array_equal(np.asarray(g1.normal(Float, 1000, 0.0, 2.0)).view(np.uint32),
                                  (np.asarray(g2.normal(Float, 1000)) * np.float32(2)).view(np.uint32))


def test_non_symbolic_state_lives_in_memory_so_calls_reuse_kernels():
    g = fj.rng(seed=123)
    fj.eval(g.random(Float, 100))
    assert g._seed.state == "evaluated"
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        for _ in range(3):
            fj.eval(g.random(Float, 100))
        jit = [k for k in fj.kernel_history() if k["type"] == "jit" and k["size"] == 100]
    assert jit and all(k["cache_hit"] for k in jit)


def test_symbolic_state_stays_literal():
    g = fj.rng(seed=UInt64(42), symbolic=True)
    for _ in range(5):
        g.random(Float, 10)
    assert g._counter.state == "literal" and g._counter[0] == 5
    assert g._seed.state == "literal"


def test_symbolic_and_not_give_the_same_numbers():
    a, b = fj.rng(seed=7), fj.rng(seed=7, symbolic=True)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(a.normal(Array2f64, (2, 11))), np.asarray(b.normal(Array2f64, (2, 11))))


def test_a_seed_array_seeds_each_lane():
    seeds = UInt64([1, 2, 3])
    g = fj.rng(seed=seeds)
    got = np.asarray(g.random(Float, 3))
    for lane, s in enumerate((1, 2, 3)):
        assert got[lane] == np.asarray(fj.rng(seed=s).random(Float, 3))[lane]


def test_ad_types_are_not_grad_enabled_but_loc_and_scale_carry_gradients():
    g = fj.rng(seed=1)
    u = g.random(LA.Float, 10)
    assert type(u) is LA.Float and not fj.grad_enabled(u)
    loc, scale = LA.Float(0.5), LA.Float(2.0)
    fj.enable_grad(loc, scale)
    z0 = fj.rng(seed=3).normal(Float, 10)
    y = fj.rng(seed=3).normal(LA.Float, 10, loc=loc, scale=scale)
    fj.backward(fj.sum(y))
    assert fj.grad(loc)[0] == pytest.approx(10.0)
    assert fj.grad(scale)[0] == pytest.approx(float(np.asarray(z0).sum()), rel=1e-5)


def test_symbolic_widths_inside_freeze():
    @fj.freeze
    def f(g, x):
        return g.uniform(Float, fj.width(x), 1.0, 2.0) * x

    g, ref = fj.rng(seed=0), fj.rng(seed=0)
    for width in (3, 10):
        x = fj.arange(Float, width)
        np.testing.assert_array_equal(np.asarray(f(g, x)), np.asarray(ref.uniform(Float, width, 1.0, 2.0) * x))


def test_errors_name_the_argument():
    g = fj.rng()
    with pytest.raises(TypeError, match="dtype"):
        g.random(UInt32, 3)
    with pytest.raises(TypeError, match="dtype"):
        g.integers(Float, 3, 5)
    with pytest.raises(TypeError, match="dtype"):
        g.integers(Array3u, (3, 3), 5)
    with pytest.raises(TypeError, match="dtype"):
        g.random(int, 3)
    with pytest.raises(ValueError, match="shape"):
        g.random(Array3f, 5)
    with pytest.raises(ValueError, match="shape"):
        g.random(Array3f, (2, 5))
    with pytest.raises(ValueError, match="tensors"):
        g.random(Float, (2, 5))
    with pytest.raises(ValueError, match="width"):
        g.random(Float, -1)
    with pytest.raises(ValueError, match="range"):
        g.integers(UInt32, 3, 0)
    with pytest.raises(ValueError, match="range"):
        g.integers(Int32, 3, -2**31, 2**31 - 1, endpoint=True)
    with pytest.raises(ValueError, match="method"):
        fj.rng(method="pcg32")
    with pytest.raises(TypeError, match="seed"):
        fj.rng(seed=1.5)
    with pytest.raises(OverflowError):
        fj.rng(seed=2**64)
    assert "PCG32" not in dir(fj)          # PCG32 lives in the backend modules, as in Dr.Jit
    assert PCG32.__module__ == "frostjit.llvm"


def test_literal_folds_follow_drjit():
    """Dr.Jit folds literal operands: x * 0.0 -> 0.0 (even for NaN), x + 0.0 -> x (keeps -0)."""
    from frostjit.random.generator import _affine
    x = Float([float("nan"), -1.0, -0.0])
    np.testing.assert_array_equal(np.asarray(_affine(x, 0.0, 2.0)), [2.0, 2.0, 2.0])
    assert np.signbit(np.asarray(_affine(x, 1.0, 0.0))[2])
    np.testing.assert_array_equal(np.asarray(_affine(x, 0.0, Float(3.0))), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(fj.rng(seed=1).normal(Float, 4, 1.5, 0.0)), [1.5] * 4)


# Dr.Jit 1.5's Float16 variates (recorded side by side; bits as uint16): the Float32 variates rounded
# to half, the affine map of uniform/normal one fused rounding.
_DRJIT_HALF = {
    "random": [13025, 15131, 12810, 14420, 15318, 11343, 15108, 14414],
    "uniform": [47604, 16206, 15878, 43960, 47606, 16198, 15781, 15908],
    "normal": [14332, 47150, 15693, 50036, 15617, 43488, 16591, 16496],
    "tensor": [15120, 12755, 15355, 10242, 10435, 14097],
    "array2": [[13995, 11133, 13310, 13951], [13239, 12768, 11488, 14341]],
}


def test_float16_variates_are_drjits_bits():
    from frostjit.llvm import Array2f16, Float16 as F16, TensorXf16

    def bits(a):
        return np.asarray(a.numpy()).view(np.uint16).ravel().tolist()

    assert bits(fj.rng(seed=3).random(F16, 8)) == _DRJIT_HALF["random"]
    assert bits(fj.rng(seed=5).uniform(F16, 8, low=-1, high=2)) == _DRJIT_HALF["uniform"]
    assert bits(fj.rng(seed=7).normal(F16, 8, loc=1.0, scale=2.0)) == _DRJIT_HALF["normal"]
    assert bits(fj.rng(seed=9).random(TensorXf16, (2, 3))) == _DRJIT_HALF["tensor"]
    a = fj.rng(seed=11).random(Array2f16, (2, 4))
    assert [bits(a.x), bits(a.y)] == _DRJIT_HALF["array2"]
