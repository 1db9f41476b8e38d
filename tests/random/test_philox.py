"""Philox4x32: differential tests against a NumPy reference, counters, masks, copies, errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array2u, Array4f16, Array4u, Bool, Philox4x32, UInt32, UInt64

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import philox4x32  # noqa: E402


@given(seed=st.integers(0, 2**64 - 1), c1=st.integers(0, 2**32 - 1), c2=st.integers(0, 2**32 - 1),
       width=st.sampled_from([1, 3, 16, 17, 200]), rounds=st.integers(1, 12), calls=st.integers(1, 3))
def test_blocks_match_the_numpy_reference(seed, c1, c2, width, rounds, calls):
    lane = np.arange(width, dtype=np.uint32) * np.uint32(2654435761)
    p = Philox4x32(seed, UInt32(lane), c1, c2, iterations=rounds)
    key = (np.uint32(seed >> 32), np.uint32(seed & 0xFFFFFFFF))
    for k in range(calls):
        want = philox4x32((lane, np.full(width, c1, np.uint32), np.full(width, c2, np.uint32),
                           np.full(width, k, np.uint32)), key, rounds)
        np.testing.assert_array_equal(np.asarray(p.next_uint32x4()), np.stack(want))
    np.testing.assert_array_equal(np.asarray(p.counter)[3], np.full(width, calls))


def test_seed_words_and_counter_layout():
    p = Philox4x32(0x123456789ABCDEF0, UInt32([5, 6]), 7, 9)
    assert type(p.seed) is Array2u and type(p.counter) is Array4u
    np.testing.assert_array_equal(np.asarray(p.seed).ravel(), [0x12345678, 0x9ABCDEF0])
    np.testing.assert_array_equal(np.asarray(p.counter), [[5, 6], [7, 7], [9, 9], [0, 0]])
    p2 = Philox4x32(UInt64(0x123456789ABCDEF0), UInt32([5, 6]), 7, 9)
    np.testing.assert_array_equal(np.asarray(p2.next_uint32x4()), np.asarray(p.next_uint32x4()))


def test_wide_outputs_are_made_of_the_words():
    a, b = Philox4x32(3, fj.arange(UInt32, 50)), Philox4x32(3, fj.arange(UInt32, 50))
    w = np.asarray(b.next_uint32x4()).astype(np.uint64)
    u64 = np.asarray(a.next_uint64x2())
    np.testing.assert_array_equal(u64[0], w[0] | (w[1] << np.uint64(32)))
    np.testing.assert_array_equal(u64[1], w[2] | (w[3] << np.uint64(32)))
    a, b = Philox4x32(3, fj.arange(UInt32, 50)), Philox4x32(3, fj.arange(UInt32, 50))
    f = np.asarray(a.next_float32x4())
    np.testing.assert_array_equal(f, (np.asarray(b.next_uint32x4()) >> 9).astype(np.float32) * np.float32(2**-23))
    a, b = Philox4x32(3, fj.arange(UInt32, 50)), Philox4x32(3, fj.arange(UInt32, 50))
    d = np.asarray(a.next_float64x2())
    np.testing.assert_array_equal(d, (np.asarray(b.next_uint64x2()) >> np.uint64(12)).astype(np.float64) * 2.0**-52)


def test_normal_variates():
    p = Philox4x32(1, fj.arange(UInt32, 100000))
    z = np.asarray(p.next_float32x4_normal())
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    z = np.asarray(p.next_float64x2_normal())
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01


def test_masked_lanes_keep_their_counter():
    p = Philox4x32(1, fj.arange(UInt32, 4))
    p.next_float64x2(Bool([True, False, True, False]))
    np.testing.assert_array_equal(np.asarray(p.counter)[3], [1, 0, 1, 0])
    p.next_uint32x4(False)
    np.testing.assert_array_equal(np.asarray(p.counter)[3], [1, 0, 1, 0])


def test_copy_is_independent():
    a = Philox4x32(1, 2)
    b = Philox4x32(a)
    b.next_uint32x4()
    assert np.asarray(a.counter)[3][0] == 0 and np.asarray(b.counter)[3][0] == 1
    assert b.iterations == a.iterations == 7


def test_philox_is_a_pytree():
    p = Philox4x32(1, fj.arange(UInt32, 8))
    p.next_uint32x4()
    fj.eval(p)
    assert p.counter[0].state == "evaluated"        # eval reaches the leaves
    assert p.counter[3].state == "literal"          # 0 + 1, folded; eval keeps a literal (Dr.Jit 1.5: the same)
    assert [type(a) for a in fj.tree.leaves(p)] == [UInt32] * 6        # seed (2 words), counter (4)
    assert not fj.is_struct_v(Philox4x32)       # as Dr.Jit: traversable without a DRJIT_STRUCT


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="counter_0"):
        Philox4x32(1)
    with pytest.raises(TypeError, match="seed"):
        Philox4x32(1.5, 0)
    with pytest.raises(TypeError):
        Philox4x32(-1, 0)
    with pytest.raises(ValueError, match="iterations"):
        Philox4x32(1, 0, iterations=-1)
    with pytest.raises(TypeError, match="counter_1"):
        Philox4x32(1, 0, 1.5)
    with pytest.raises(ValueError, match="sizes"):
        Philox4x32(UInt64([1, 2]), UInt32([1, 2, 3])).next_uint32x4()


@given(seed=st.integers(0, 2**64 - 1), width=st.sampled_from([1, 3, 16, 17, 200]), rounds=st.integers(0, 10))
def test_half_precision_blocks_are_the_float32_ones_rounded(seed, width, rounds):
    """Dr.Jit 1.5's next_float16x4(_normal) round next_float32x4(_normal) to half (an Array4f16)."""
    lane = fj.arange(UInt32, width) * 3
    mask = Bool(np.arange(width) % 3 != 1)
    for name in ("next_float16x4", "next_float16x4_normal"):
        a = Philox4x32(seed, lane, 5, iterations=rounds)
        b = Philox4x32(seed, lane, 5, iterations=rounds)
        got = getattr(a, name)()
        assert type(got) is Array4f16
        want = np.asarray(getattr(b, name.replace("16x4", "32x4"))()).astype(np.float16)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))
        getattr(a, name)(mask)
        getattr(b, name.replace("16x4", "32x4"))(mask)
        np.testing.assert_array_equal(np.asarray(a.counter), np.asarray(b.counter))
