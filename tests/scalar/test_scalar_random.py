"""frostjit.scalar's PCG32 and Philox4x32: one generator over Python numbers, bit-exact with
Dr.Jit 1.5's drjit.scalar (recorded sequences) and with lane 0 of frostjit.llvm's generators."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as s

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scalar_rng_cases  # noqa: E402

RECORDED = json.loads((HERE / "data" / "drjit_1_5_scalar_rng.json").read_text())
_U64 = st.integers(0, 2**64 - 1)


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_sequences_are_bit_exact_with_drjit_scalar(case):
    assert scalar_rng_cases.run(s)[case] == RECORDED[case]


def test_pcg32_is_one_generator_of_python_numbers():
    rng = s.PCG32()
    assert type(rng.state) is int and type(rng.inc) is int
    assert type(rng.next_uint32()) is int and type(rng.next_float32()) is float
    assert type(rng.next_float64_normal()) is float and type(rng.next_uint64_bounded(10)) is int
    assert s.PCG32.DRJIT_STRUCT == {"state": int, "inc": int}
    assert fj.is_struct_v(s.PCG32) and not fj.is_struct_v(s.Philox4x32)


def test_pcg32_copy_is_independent_and_masked_draws_do_not_advance():
    a = s.PCG32(1, 5, 7)
    b = s.PCG32(a)
    first = a.next_uint32()
    assert b.next_uint32() == first and a.state == b.state
    state = a.state
    a.next_uint32(False)
    a.next_float32(mask=False)
    assert a.state == state


def test_pcg32_next_float_takes_python_float_as_double_precision():
    # drjit.scalar: Float and Float64 are both Python's float; next_float(float) draws a double.
    a, b = s.PCG32(), s.PCG32()
    assert a.next_float(float) == b.next_float64()
    with pytest.raises(TypeError, match="dtype"):
        s.PCG32().next_float(s.ArrayXf)


def test_pcg32_add_sub_and_distance():
    a = s.PCG32(1, 3, 4)
    b = a + 10
    assert isinstance(b, s.PCG32) and b - a == 10 and a - b == -10
    for _ in range(10):
        a.next_uint32()
    assert a.state == b.state
    a -= 10
    assert (a + 10).state == b.state


@given(_U64, _U64, st.integers(0, 40))
def test_pcg32_matches_llvm_lane_zero(initstate, initseq, skip):
    rs, rl = s.PCG32(1, initstate, initseq), L.PCG32(1, initstate, initseq)
    rs += skip
    rl += skip
    got = [rs.next_uint32(), rs.next_float32(), rs.next_float64(), rs.next_float32_normal(),
           rs.next_float64_normal(), rs.next_uint32_bounded(1000003), rs.next_uint64()]
    want = [rl.next_uint32(), rl.next_float32(), rl.next_float64(), rl.next_float32_normal(),
            rl.next_float64_normal(), rl.next_uint32_bounded(1000003), rl.next_uint64()]
    assert got == [w[0] for w in want]
    assert rs.state == rl.state[0] and rs.inc == rl.inc[0]


@given(_U64, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 12))
def test_philox_matches_llvm_lane_zero(seed, c0, c1, iterations):
    ps = s.Philox4x32(seed, c0, c1, 3, iterations=iterations)
    pl = L.Philox4x32(seed, c0, c1, 3, iterations=iterations)
    for name in ("next_uint32x4", "next_float32x4", "next_uint64x2", "next_float64x2", "next_float32x4_normal",
                 "next_float64x2_normal"):
        got, want = getattr(ps, name)(), getattr(pl, name)()
        assert type(got).__name__ == type(want).__name__ and type(got).__module__ == "frostjit.scalar"
        np.testing.assert_array_equal(got.numpy(), want.numpy()[:, 0])
    assert list(ps.counter) == [int(c[0]) for c in pl.counter]


def test_philox_copy_and_public_state():
    p = s.Philox4x32(2**40 + 7, 5, 6, 7, iterations=10)
    assert isinstance(p.seed, s.Array2u) and list(p.seed) == [256, 7]
    assert isinstance(p.counter, s.Array4u) and list(p.counter) == [5, 6, 7, 0]
    q = s.Philox4x32(p)
    assert list(p.next_uint32x4()) == list(q.next_uint32x4())
    assert list(p.counter) == [5, 6, 7, 1] and p.iterations == 10


def test_philox_counter_wraps_after_2_to_the_32_blocks():
    p = s.Philox4x32(1, 0)
    p.counter = s.Array4u(0, 0, 0, 2**32 - 1)
    p.next_uint32x4()
    assert list(p.counter) == [0, 0, 0, 0]


def test_generator_errors_name_the_argument():
    with pytest.raises(TypeError, match="bound"):
        s.PCG32().next_uint32_bounded(2.5)
    with pytest.raises(ValueError, match="bound"):
        s.PCG32().next_uint32_bounded(0)
    with pytest.raises(TypeError, match="counter_0"):
        s.Philox4x32(1)
    with pytest.raises(TypeError, match="mask"):
        s.PCG32().next_uint32(mask=L.Bool(True))


@given(st.integers(0, 2**64 - 1), st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple))
def test_rng_on_scalar_tensors_matches_llvm_tensors(seed, shape):
    # fj.rng's Philox runs over the scalar ArrayXf (the frostjit.random code, as on llvm)
    gs, gl = fj.rng(seed=seed), fj.rng(seed=seed)
    for name, suffix in (("random", "f"), ("normal", "f"), ("random", "f64"), ("uniform", "f")):
        got = getattr(gs, name)(getattr(s, f"TensorX{suffix}"), shape)
        want = getattr(gl, name)(getattr(L, f"TensorX{suffix}"), shape)
        assert type(got) is getattr(s, f"TensorX{suffix}") and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(gs.clone().random(s.TensorXf, 3).numpy(), gl.clone().random(L.TensorXf, 3).numpy())


def test_errors_name_the_users_generator_class():
    with pytest.raises(TypeError, match=r"^Philox4x32\(\)"):
        s.Philox4x32(5)
