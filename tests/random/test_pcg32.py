"""PCG32: differential tests against a NumPy reference, jumps, masks, PyTree use, AD, errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm.ad as LA
from frostjit.llvm import Bool, Float, Float16, Float64, Int32, Int64, PCG32, UInt32, UInt64
from frostjit.random import PCG32_DEFAULT_STATE, PCG32_DEFAULT_STREAM

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import RefPCG32, distance as ref_distance, jump as ref_jump  # noqa: E402

u64s = st.integers(0, 2**64 - 1)
widths = st.sampled_from([1, 2, 7, 8, 15, 16, 17, 33, 64, 100, 1000])


def _np(x):
    return np.asarray(x)


@given(width=widths, initstate=u64s, initseq=u64s,
       program=st.lists(st.sampled_from(["u32", "u64", "masked_u32", "prev", "masked_prev"]), min_size=1, max_size=8))
def test_integer_sequences_match_the_numpy_reference(width, initstate, initseq, program):
    rng, ref = PCG32(width, initstate, initseq), RefPCG32(width, initstate, initseq)
    mask_np = np.arange(width) % 3 != 1
    mask = Bool(mask_np)
    for op in program:
        if op == "u32":
            np.testing.assert_array_equal(_np(rng.next_uint32()), ref.next_uint32())
        elif op == "u64":
            np.testing.assert_array_equal(_np(rng.next_uint64()), ref.next_uint64())
        elif op == "masked_u32":
            np.testing.assert_array_equal(_np(rng.next_uint32(mask)), ref.next_uint32(mask_np))
        else:
            m = mask_np if op == "masked_prev" else np.ones(width, bool)
            rng.prev_uint32(mask if op == "masked_prev" else True)
            ref.advance(np.where(m, -1, 0))
        np.testing.assert_array_equal(_np(rng.state), ref.state)
    np.testing.assert_array_equal(_np(rng.inc), ref.inc)


@given(width=st.sampled_from([1, 5, 17]), seed=u64s, steps=st.lists(st.integers(-40, 40), min_size=1, max_size=17))
def test_jumps_equal_single_steps(width, seed, steps):
    deltas = np.resize(np.array(steps, dtype=np.int64), width)
    rng, ref = PCG32(width, seed), RefPCG32(width, seed, PCG32_DEFAULT_STREAM)
    start = PCG32(rng)
    rng += Int64(deltas)                       # per-lane jump
    ref.advance(deltas)
    np.testing.assert_array_equal(_np(rng.state), ref.state)
    np.testing.assert_array_equal(_np(rng - start), deltas)     # distance undoes it
    np.testing.assert_array_equal(_np(start - rng), -deltas)
    back = rng - Int64(deltas)
    np.testing.assert_array_equal(_np(back.state), _np(start.state))


@given(delta=st.integers(-(2**63), 2**63 - 1))
def test_python_int_jumps_match_array_jumps_and_distance(delta):
    rng = PCG32(3, 7, 9)
    a = rng + delta
    b = rng + Int64([delta] * 3)
    np.testing.assert_array_equal(_np(a.state), _np(b.state))
    np.testing.assert_array_equal(_np(a - rng), [delta] * 3)
    c = PCG32(rng)
    c -= delta
    np.testing.assert_array_equal(_np((c + delta).state), _np(rng.state))


@given(width=st.sampled_from([1, 5, 17]), data=st.data())
def test_distance_and_array_jumps_match_the_64_round_reference(width, data):
    # arbitrary states and streams (odd or even inc: an even one may never reach the target, the
    # loop must then end after bit 63 with the 64 rounds' answer), both operands of either width
    lanes = st.lists(u64s, min_size=width, max_size=width)
    one_or_all = st.sampled_from([1, width])
    n_a, n_b = data.draw(one_or_all), data.draw(one_or_all)
    a, b = PCG32(max(n_a, n_b)), PCG32(n_b)
    sa, sb = np.array(data.draw(lanes)[:n_a], np.uint64), np.array(data.draw(lanes)[:n_b], np.uint64)
    inc = np.array(data.draw(lanes)[:max(n_a, n_b)], np.uint64)
    if data.draw(st.booleans()):
        inc |= np.uint64(1)                 # a consistent stream: every state is reachable
    a.state, a.inc, b.state = UInt64(sa), UInt64(inc), UInt64(sb)
    d = _np(a - b)
    np.testing.assert_array_equal(d, ref_distance(sa, sb, inc))
    if (inc & np.uint64(1)).all():
        c = PCG32(len(inc))                 # b's state on a's stream, jumped by the distance: a's state
        c.state, c.inc = UInt64(np.broadcast_to(sb, inc.shape).copy()), UInt64(inc)
        np.testing.assert_array_equal(_np((c + Int64(d)).state), np.broadcast_to(sa, inc.shape))
    deltas = np.array(data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=width, max_size=width)), np.int64)
    np.testing.assert_array_equal(_np((a + Int64(deltas)).state), ref_jump(sa, inc, deltas))
    np.testing.assert_array_equal(_np((a - Int64(deltas)).state), ref_jump(sa, inc, -deltas))


def test_jump_does_not_change_the_original():
    rng = PCG32(4)
    before = _np(rng.state).copy()
    moved = rng + 5
    np.testing.assert_array_equal(_np(rng.state), before)
    assert not np.array_equal(_np(moved.state), before)
    np.testing.assert_array_equal(_np(moved.inc), _np(rng.inc))


def test_defaults_and_seeding_formula():
    rng = PCG32()
    ref = RefPCG32(1, PCG32_DEFAULT_STATE, PCG32_DEFAULT_STREAM)
    assert rng.state.state == "literal"         # one lane seeded by Python ints folds to constants
    np.testing.assert_array_equal(_np(rng.state), ref.state)     # (.numpy() makes it memory, as Dr.Jit)
    rng.seed(5, 7)                              # seed(): no lane offset
    one = RefPCG32(1, 5, 7)
    np.testing.assert_array_equal(_np(rng.state), one.state)
    wide = PCG32(3)
    wide.seed(UInt64([10, 20, 30]), 7)
    np.testing.assert_array_equal(_np(wide.state)[1], RefPCG32(1, 20, 7).state[0])


def test_copy_constructor_is_independent():
    a = PCG32(5, 1, 2)
    b = PCG32(a)
    x = a.next_uint32()
    np.testing.assert_array_equal(_np(b.next_uint32()), _np(x))
    assert type(b) is PCG32


def test_uniform_floats_are_the_top_bits_of_the_integers():
    a, b = PCG32(100, 3), PCG32(100, 3)
    u = _np(b.next_uint32())
    np.testing.assert_array_equal(_np(a.next_float32()), (u >> 9).astype(np.float32) * np.float32(2**-23))
    a, b = PCG32(100, 3), PCG32(100, 3)
    u = _np(b.next_uint32()).astype(np.float64)
    np.testing.assert_array_equal(_np(a.next_float64()), u * 2.0**-32)
    f = _np(PCG32(10000).next_float32())
    assert f.min() >= 0 and f.max() < 1


def test_normal_variates_have_unit_variance():
    z = _np(PCG32(200000, 1).next_float32_normal())
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    z = _np(PCG32(200000, 2).next_float64_normal())
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01


def test_masked_lanes_do_not_advance():
    rng = PCG32(6)
    before = _np(rng.state).copy()
    m = Bool([True, False] * 3)
    rng.next_float64_normal(m)
    after = _np(rng.state)
    assert (after[1::2] == before[1::2]).all() and (after[0::2] != before[0::2]).all()
    rng.next_uint32(False)
    np.testing.assert_array_equal(_np(rng.state), after)


def test_masked_normal_is_normal():
    """Dr.Jit 1.5's masked next_float32_normal(mask) returns uniform floats (a binding bug);
    frostjit returns what the documentation promises, the same as the unmasked call."""
    a, b = PCG32(8, 4), PCG32(8, 4)
    np.testing.assert_array_equal(_np(a.next_float32_normal(Bool(True))), _np(b.next_float32_normal()))
    a, b = PCG32(8, 4), PCG32(8, 4)       # (Dr.Jit's Float16 variants have the same bug)
    np.testing.assert_array_equal(_np(a.next_float16_normal(Bool(True))), _np(b.next_float16_normal()))
    np.testing.assert_array_equal(_np(a.prev_float16_normal(Bool(True))), _np(b.prev_float16_normal()))


@given(bound=st.one_of(st.integers(1, 50), st.integers(2**31 - 5, 2**32 - 1)), width=st.sampled_from([1, 7, 300]),
       symbolic=st.booleans())
def test_bounded_integers_are_the_pcg_rejection_method(bound, width, symbolic):
    """Each lane redraws from its own generator until a draw is unbiased, in either loop mode."""
    rng, ref = PCG32(width, bound), RefPCG32(width, bound, PCG32_DEFAULT_STREAM)
    with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, symbolic):
        got = _np(rng.next_uint32_bounded(bound))
    threshold = (2**32 - bound) % bound
    want = np.zeros(width, np.uint32)
    todo = np.ones(width, bool)
    while todo.any():
        r = ref.next_uint32(todo)
        ok = todo & (r >= threshold)
        want[ok] = r[ok] % np.uint32(bound)
        todo &= ~ok
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(_np(rng.state), ref.state)


@pytest.mark.parametrize("symbolic", [True, False])
def test_bounded_draws_inside_a_loop_and_a_conditional(symbolic):
    """A bounded draw in a loop body is the loop nested in the loop (as Dr.Jit): three rounds of
    a loop give the three consecutive plain draws; in an if_stmt only the true lanes draw."""
    b = 2**31 + 1                                   # about half the draws are redrawn
    plain = PCG32(300, 8)
    want = [_np(plain.next_uint32_bounded(b)) for _ in range(3)]
    rng = PCG32(300, 8)
    with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, symbolic):
        _, rng, acc = fj.while_loop((UInt32(0), rng, UInt64(0)), lambda i, rng, acc: i < 3,
                                    lambda i, rng, acc: (i + 1, rng, acc + UInt64(rng.next_uint32_bounded(b))))
    np.testing.assert_array_equal(_np(acc), sum(w.astype(np.uint64) for w in want))
    np.testing.assert_array_equal(_np(rng.state), _np(plain.state))
    rng, even = PCG32(300, 8), fj.arange(UInt32, 300) % 2 == 0
    x = fj.if_stmt((rng,), even, lambda r: r.next_uint32_bounded(b), lambda r: UInt32(0))
    np.testing.assert_array_equal(_np(x), np.where(np.arange(300) % 2 == 0, want[0], 0))


def test_bounded_64_bit():
    rng, ref = PCG32(50, 9), RefPCG32(50, 9, PCG32_DEFAULT_STREAM)
    bound = 3 * 2**62
    got = _np(rng.next_uint64_bounded(bound))
    want = np.zeros(50, np.uint64)
    todo = np.ones(50, bool)
    threshold = np.uint64((2**64 - bound) % bound)
    while todo.any():
        r = ref.next_uint64(todo)
        ok = todo & (r >= threshold)
        want[ok] = r[ok] % np.uint64(bound)
        todo &= ~ok
    np.testing.assert_array_equal(got, want)


def test_masked_bounded_gives_zero_and_does_not_advance():
    rng = PCG32(4)
    before = _np(rng.state).copy()
    r = _np(rng.next_uint32_bounded(10, Bool([True, False, True, False])))
    assert r[1] == 0 and r[3] == 0
    assert (_np(rng.state)[1::2] == before[1::2]).all()


def test_pcg32_is_a_pytree():
    rng = PCG32(10)
    rng.next_uint32()
    assert rng.state.state == "unevaluated"
    fj.eval(rng)
    assert rng.state.state == "evaluated"
    assert set(PCG32.DRJIT_STRUCT) == {"state", "inc"}
    assert PCG32.DRJIT_STRUCT["state"] is UInt64


def test_drawing_fuses_into_the_consumer_kernel():
    rng = PCG32(1000)
    fj.eval(rng)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        x = rng.next_float32() * 2 + rng.next_float32()
        fj.eval(x, rng)
        launches = [k for k in fj.kernel_history() if k["type"] == "jit"]
    assert len(launches) == 1


def test_ad_types_give_ad_floats_without_gradients():
    rng = LA.PCG32(16)
    for v in (rng.next_float32(), rng.next_float64_normal(), rng.next_float(LA.Float)):
        assert type(v).__module__ == "frostjit.llvm.ad"
        assert not fj.grad_enabled(v)
    assert type(LA.PCG32(2).next_float32()) is LA.Float
    assert type(PCG32(2).next_float32()) is Float


def test_next_float_dispatches_on_the_dtype():
    a, b = PCG32(5), PCG32(5)
    np.testing.assert_array_equal(_np(a.next_float(Float64)), _np(b.next_float64()))
    assert type(PCG32(1).next_float(LA.Float)) is Float       # PCG32's own types, as Dr.Jit


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="initstate"):
        PCG32(2, 1.5)
    with pytest.raises(TypeError):
        PCG32(2, -1)                          # not a UInt64 (Dr.Jit: TypeError too)
    with pytest.raises(ValueError, match="size"):
        PCG32(-3)
    with pytest.raises(TypeError, match="size"):
        PCG32(2.0)
    with pytest.raises(TypeError, match="dtype"):
        PCG32().next_float(UInt32)
    with pytest.raises(ValueError, match="bound"):
        PCG32().next_uint32_bounded(0)
    with pytest.raises(ValueError, match="bound"):
        PCG32().next_uint32_bounded(2**32)
    with pytest.raises(TypeError, match="bound"):
        PCG32().next_uint32_bounded(UInt32(5))
    with pytest.raises(TypeError, match="mask"):
        PCG32().next_uint32(UInt32(1))
    with pytest.raises(TypeError, match="Int64"):
        PCG32() + 2**63
    with pytest.raises(TypeError):
        PCG32() + 1.5


def test_size_zero_gives_empty_arrays():
    rng = PCG32(0)
    assert len(rng.next_float32()) == 0


def test_lanes_with_integer_seed_arrays_of_other_types():
    a = PCG32(3, UInt32([1, 2, 3]), Int32(5))
    b = PCG32(3, UInt64([1, 2, 3]), UInt64(5))
    np.testing.assert_array_equal(_np(a.next_uint32()), _np(b.next_uint32()))


@given(width=widths, initstate=u64s, initseq=u64s)
def test_half_precision_variates_are_the_float32_ones_rounded(width, initstate, initseq):
    """Dr.Jit 1.5's next_float16* round next_float32* to half (nearest even: 1.0 is possible)."""
    mask_np = np.arange(width) % 3 != 1
    for name in ("next_float16", "next_float16_normal", "prev_float16", "prev_float16_normal"):
        a, b = PCG32(width, initstate, initseq), PCG32(width, initstate, initseq)
        got = getattr(a, name)()
        want = _np(getattr(b, name.replace("16", "32"))()).astype(np.float16)
        assert type(got).__name__ == "Float16"
        np.testing.assert_array_equal(_np(got).view(np.uint16), want.view(np.uint16))
        np.testing.assert_array_equal(_np(a.state), _np(b.state))
        m = getattr(a, name)(Bool(mask_np))           # masked lanes keep their state
        getattr(b, name.replace("16", "32"))(Bool(mask_np))
        np.testing.assert_array_equal(_np(a.state), _np(b.state))
        assert _np(m).dtype == np.float16


def test_half_precision_uniforms_round_up_to_one_at_the_top():
    rng = PCG32(1)
    rng.state = UInt64([0xB923D1B70ED9B72D])      # the largest Float32 uniform, 1 - 2^-23
    assert _np(PCG32(rng).next_float32())[0] == np.float32(1 - 2**-23)
    assert _np(rng.next_float16())[0] == 1.0      # as Dr.Jit's


def test_next_float_takes_float16_types():
    for T, name in ((Float16, "next_float16"), (LA.Float16, "next_float16")):
        a, b = PCG32(5, 2), PCG32(5, 2)
        np.testing.assert_array_equal(_np(a.next_float(T)).view(np.uint16), _np(getattr(b, name)()).view(np.uint16))
        a, b = PCG32(5, 2), PCG32(5, 2)
        np.testing.assert_array_equal(_np(a.next_float_normal(T)).view(np.uint16),
                                      _np(b.next_float16_normal()).view(np.uint16))
        np.testing.assert_array_equal(_np(a.prev_float(T)).view(np.uint16), _np(b.prev_float16()).view(np.uint16))
        np.testing.assert_array_equal(_np(a.prev_float_normal(T)).view(np.uint16),
                                      _np(b.prev_float16_normal()).view(np.uint16))
    with pytest.raises(TypeError, match="Float16, Float32 or Float64"):
        PCG32().next_float(Int32)


def test_ad_half_precision_variates_have_no_gradients():
    rng = LA.PCG32(16)
    for v in (rng.next_float16(), rng.next_float16_normal(), rng.prev_float16(), rng.next_float(LA.Float16)):
        assert type(v) is LA.Float16 and not fj.grad_enabled(v)
    assert type(PCG32(2).next_float16()) is Float16


def test_seed_with_an_array_state_and_the_default_stream_equals_drjit():
    # regression: the default stream shifted as a Python int left 65 bits (OverflowError)
    r = PCG32()
    r.seed(initstate=UInt32(0, 1, 7))
    assert r.next_uint32().numpy().tolist() == [174444157, 4033076299, 3536637593]      # Dr.Jit 1.5
    assert r.next_uint32().numpy().tolist() == [2543941438, 2971934609, 1154887489]


@given(width=st.sampled_from([1, 3, 17]),
       src=st.sampled_from(["UInt32", "Int32", "Int64", "UInt64", "LA.UInt32", "int"]),
       data=st.data())
def test_assigned_state_and_inc_are_converted_to_uint64(width, src, data):
    # Dr.Jit's typed fields convert what is assigned: rng.state = 1234 + arange(UInt32, n) gives a
    # 64-bit state (a 32-bit one stepped with 32-bit wrap-around and gave other outputs).
    if src == "int":
        width = 1               # a Python int is one lane (as in Dr.Jit: the state then has size 1)
    signed = src in ("Int32", "Int64")
    bits = 64 if src in ("Int64", "UInt64", "int") else 32
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    vals = data.draw(st.lists(st.integers(lo, hi), min_size=width, max_size=width))
    incs = data.draw(st.lists(st.integers(lo, hi), min_size=width, max_size=width))
    cls = {"UInt32": UInt32, "Int32": Int32, "Int64": Int64, "UInt64": UInt64, "LA.UInt32": LA.UInt32}.get(src)
    rng = PCG32(width)
    if cls is None:
        rng.state, rng.inc = vals[0], incs[0]
    else:
        rng.state, rng.inc = cls(vals), cls(incs)
    assert type(rng.state) is UInt64 and type(rng.inc) is UInt64
    ref = RefPCG32.__new__(RefPCG32)
    ref.state = np.array([v % 2**64 for v in vals], dtype=np.uint64)
    ref.inc = np.array([v % 2**64 for v in incs], dtype=np.uint64)
    for _ in range(3):
        np.testing.assert_array_equal(_np(rng.next_uint32()), ref.next_uint32())
    np.testing.assert_array_equal(_np(rng.state), ref.state)


def test_assigning_a_non_integer_state_raises_naming_the_field():
    rng = PCG32()
    with pytest.raises(TypeError, match=r"PCG32\.state"):
        rng.state = 2.5
    with pytest.raises(TypeError, match=r"PCG32\.inc"):
        rng.inc = "x"
