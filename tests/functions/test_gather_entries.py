"""functions/memory.gather_entries (session r16): many single entries of one 1-D array read in one
call (nn's matrix-vector products read every coefficient this way) give what one
``fj.gather(type(src), src, k)`` per entry gives: values bit for bit and types (every element
type, evaluated / pending / literal / size-1 sources, out-of-bounds indices), inside a symbolic
loop's body (the loop's mask), derivatives of an AD source, Debug mode's bounds check, and
frozen replays."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.functions.memory import gather_entries
from frostjit.llvm import Float, Float16, Float64, Int32, UInt32
from frostjit.llvm.ad import Float as FloatAD

TYPES = {"f32": (Float, np.float32), "f16": (Float16, np.float16), "f64": (Float64, np.float64),
         "i32": (Int32, np.int32)}


def _source(t, np_t, values: np.ndarray, kind: str):
    if kind == "literal":
        return fj.full(t, values[0], len(values))
    a = t(values.astype(np_t))
    if kind == "pending":
        a = a + t(0)
    return a


@settings(max_examples=30, deadline=None)
@given(ty=st.sampled_from(sorted(TYPES)), size=st.integers(1, 12), kind=st.sampled_from(["data", "pending", "literal"]),
       indices=st.lists(st.integers(0, 14), min_size=1, max_size=20), seed=st.integers(0, 2**16))
def test_entries_match_one_gather_per_entry(ty, size, kind, indices, seed):
    t, np_t = TYPES[ty]
    values = np.random.default_rng(seed).standard_normal(size) * 10
    with fj.scoped_set_flag(fj.JitFlag.Debug, False):   # (out-of-bounds reads give 0, no warning)
        got = gather_entries(_source(t, np_t, values, kind), indices)
        want = [fj.gather(t, _source(t, np_t, values, kind), k) for k in indices]
        fj.eval(got, want)
    assert len(got) == len(indices)
    for g, w in zip(got, want):
        assert type(g) is type(w) is t
        assert fj.width(g) == fj.width(w) == 1
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_entries_inside_a_symbolic_loop_follow_the_loop_mask():
    src = Float(np.arange(10, dtype=np.float32) * 1.5)

    def run(read):
        i = fj.arange(UInt32, 7)
        acc = Float(0.0) + fj.zeros(Float, 7)

        def body(i, acc):
            e = read()
            return i + 1, acc + e[0] * Float(i) + e[1] * e[2]
        i, acc = fj.while_loop((i, acc), lambda i, acc: i < 5, body)
        return acc

    got = run(lambda: gather_entries(src, [2, 9, 4]))
    want = run(lambda: [fj.gather(Float, src, k) for k in (2, 9, 4)])
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_entries_of_an_ad_source_carry_its_gradient():
    def grad(read):
        src = FloatAD(np.arange(6, dtype=np.float32))
        fj.enable_grad(src)
        e = read(src)
        loss = e[0] * 2 + e[1] * e[2] + e[3]
        fj.backward(loss)
        return type(e[0]), fj.grad(src).numpy()

    t1, g1 = grad(lambda s: gather_entries(s, [1, 4, 1, 5]))
    t2, g2 = grad(lambda s: [fj.gather(FloatAD, s, k) for k in (1, 4, 1, 5)])
    assert t1 is t2 is FloatAD
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(g1, [0, 2 + 4, 0, 0, 1, 1])


def test_debug_mode_checks_every_entry():
    src = Float(1, 2, 3)
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        assert [float(e[0]) for e in gather_entries(src, [2, 0])] == [3.0, 1.0]
        with pytest.raises(IndexError, match="index 7 .*size 3"):
            gather_entries(src, [1, 7])


def test_frozen_entries_replay_the_plain_call():
    def f(src, x):
        return sum((w * x for w in gather_entries(src, [3, 0, 2])), Float(0.0))

    frozen = fj.freeze(f)
    for n in (4, 9, 4):
        src = Float(np.arange(n, dtype=np.float32) + n)
        x = fj.arange(Float, n) * 0.5
        np.testing.assert_array_equal(frozen(src, x).numpy(), f(src, x).numpy())
    assert frozen.n_recordings == 1
