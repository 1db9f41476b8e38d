"""Reductions of large pending arrays fused into the kernel that computes them.

``fj.sum(expr)``, ``prod``, ``min``, ``max``, ``reduce(And/Or)`` and ``count(mask)`` of a pending
array of at least ``fused_reductions_from`` lanes (LLVM backend) run one kernel that reduces the
values as it computes them, never storing them.  Checked against NumPy (exact for integers,
min and max; float sums to a tight tolerance), against the evaluated array's reduction (the same
bits: both use one kernel order), frozen against plain, at one and two threads (the same bits),
after pending scatters, and the kernel history (one kernel, no reduction of a stored array).
On the reference backend the same tests check the values (it evaluates, then reduces).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.llvm import Float, Float64, Int32, UInt32, UInt64

_START = current_backend().fused_reductions_from
BIG = (_START or 1 << 20) + 12345          # past the threshold, not a whole number of rows
WIDTHS = [0, 1, 7, 1000, BIG]
TYPES = {"f32": (Float, np.float32), "f64": (Float64, np.float64), "u32": (UInt32, np.uint32),
         "i32": (Int32, np.int32), "u64": (UInt64, np.uint64)}


def _data(n, dt, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dt).kind == "f":
        return (rng.random(n) * 4 - 1).astype(dt)
    return rng.integers(0, 1000, n).astype(dt)


def _expr(x, dt):
    """A pending array of x's type: 2x + 1 (floats), 3x + 1 (integers)."""
    return x * 2 + 1 if np.dtype(dt).kind == "f" else x * 3 + 1


def _numpy_expr(a, dt):
    return (a * dt(2) + dt(1)) if np.dtype(dt).kind == "f" else (a * dt(3) + dt(1))


@pytest.fixture(params=[1, 2])
def threads(request):
    old = fj.thread_count()
    fj.set_thread_count(request.param)
    yield request.param
    fj.set_thread_count(old)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("name", sorted(TYPES))
def test_reductions_of_pending_arrays_match_numpy(name, n):
    T, dt = TYPES[name]
    a = _data(n, dt, n)
    x = T(a)
    b = _numpy_expr(a, dt)
    with np.errstate(over="ignore"):
        want = b.sum(dtype=dt)
    got = fj.sum(_expr(x, dt)).numpy()
    if np.dtype(dt).kind == "f":
        np.testing.assert_allclose(got, [want], rtol=1e-5 if dt == np.float32 else 1e-12, atol=1e-3)
    else:
        assert got.tolist() == [want]
    if n:
        assert fj.max(_expr(x, dt))[0] == b.max() and fj.min(_expr(x, dt))[0] == b.min()
    if np.dtype(dt).kind != "f":
        assert fj.reduce(fj.ReduceOp.Or, _expr(x, dt))[0] == np.bitwise_or.reduce(b, initial=dt(0))
        assert fj.reduce(fj.ReduceOp.And, _expr(x, dt) | 1)[0] == \
            np.bitwise_and.reduce(b | dt(1), initial=~dt(0))


@settings(max_examples=8)
@given(extra=st.integers(0, 3 << 14), seed=st.integers(0, 2**16), t=st.floats(-1, 1, width=32))
def test_fused_sum_and_count_give_the_evaluated_arrays_bits(extra, seed, t):
    n = BIG + extra
    a = _data(n, np.float32, seed)
    x = Float(a)
    y = x * x - t
    fused = (fj.sum(y), fj.count(y > 0), fj.max(y), fj.min(y))
    fj.eval(y)
    stored = (fj.sum(y), fj.count(y > 0), fj.max(y), fj.min(y))
    for f, s in zip(fused, stored):
        assert f.numpy().tobytes() == s.numpy().tobytes()
    assert fused[1][0] == np.count_nonzero(a * a - np.float32(t) > 0)


def test_fused_float_sums_are_the_same_bits_at_any_thread_count(threads):
    x = Float(_data(3 * BIG, np.float32, 5))
    got = fj.sum(x * 1.5 - 0.25).numpy().tobytes()
    fj.set_thread_count(3 - threads)
    assert fj.sum(x * 1.5 - 0.25).numpy().tobytes() == got


@pytest.mark.parametrize("n", [1, 7, 100003, BIG])
def test_frozen_reductions_of_expressions_equal_plain(n):
    def f(x):
        return fj.sum(x * 2 - 1), fj.count(x > 0.25), fj.max(x * x)
    frozen = fj.freeze(f)
    for k in range(3):
        x = Float(_data(n + k, np.float32, k))
        for a, b in zip(frozen(x), f(x)):
            assert a.numpy().tobytes() == b.numpy().tobytes()


def test_fused_reduction_runs_after_pending_scatters():
    target = fj.zeros(Float, BIG)
    fj.scatter(target, Float(1.0), fj.arange(UInt32, 0, BIG, 2))
    assert fj.sum(target * 2)[0] == 2 * ((BIG + 1) // 2)


@pytest.mark.llvm_only("fused reductions are the LLVM backend's kernels")
def test_a_large_reduction_of_an_expression_is_one_kernel_and_stores_nothing():
    x = Float(_data(BIG, np.float32, 1))
    y = x * 3 + 2
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        fj.sum(y)
        fj.count(x > 0)
        history = fj.kernel_history()
    assert [e["type"] for e in history] == [fj.KernelType.JIT] * 2
    assert all(e["size"] == BIG for e in history)
    assert y.state == fj.VarState.Unevaluated       # still an expression: its values were never stored
