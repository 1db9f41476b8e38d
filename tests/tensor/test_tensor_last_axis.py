"""Reductions and prefix sums over the last (contiguous) axes of a tensor run as block
reductions: exact for integers, deterministic for floats (the same bits at every thread count),
frozen == plain at several batch sizes, and differentiable."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.llvm import TensorXf, TensorXi
from frostjit.llvm.ad import TensorXf as ADTensorXf

SHAPES = [(1, 7), (7, 1000), (1000, 3), (3, 5, 7), (2, 100003)]


@settings(max_examples=25)
@given(shape=st.sampled_from(SHAPES), op=st.sampled_from(["sum", "min", "max", "prod"]), seed=st.integers(0, 999))
def test_reductions_over_the_last_axes_match_numpy(shape, op, seed):
    a = np.random.default_rng(seed).integers(-3, 4, shape).astype(np.int32)
    axes = [-1, tuple(range(1, len(shape)))]
    for axis in axes:
        got = getattr(fj, op)(TensorXi(a), axis=axis).numpy()
        want = getattr(np, op)(a, axis=axis).astype(np.int32)
        np.testing.assert_array_equal(got, want)


@settings(max_examples=20)
@given(shape=st.sampled_from(SHAPES), reverse=st.booleans(), seed=st.integers(0, 999))
def test_prefix_sums_over_the_last_axis_match_numpy(shape, reverse, seed):
    a = np.random.default_rng(seed).integers(-50, 50, shape).astype(np.int32)
    src = a[..., ::-1] if reverse else a
    inclusive = np.cumsum(src, axis=-1, dtype=np.int32)
    exclusive = inclusive - src
    if reverse:
        inclusive, exclusive = inclusive[..., ::-1], exclusive[..., ::-1]
    np.testing.assert_array_equal(fj.cumsum(TensorXi(a), axis=-1, reverse=reverse).numpy(), inclusive)
    np.testing.assert_array_equal(fj.prefix_sum(TensorXi(a), axis=-1, reverse=reverse).numpy(), exclusive)


def test_a_float_row_sum_has_the_same_bits_at_every_thread_count():
    a = np.random.default_rng(1).standard_normal((512, 4096)).astype(np.float32)
    old = fj.thread_count()
    try:
        results = []
        for n in (1, 2, 4, 1, 4):
            fj.set_thread_count(n)
            results.append(fj.sum(TensorXf(a), axis=1).numpy())
    finally:
        fj.set_thread_count(old)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    np.testing.assert_allclose(results[0], a.sum(axis=1, dtype=np.float64), rtol=1e-4, atol=1e-3)


def test_frozen_row_sums_replay_at_new_batch_sizes():
    def fn(t):
        return fj.sum(t * 2.0, axis=1), fj.cumsum(t, axis=1)

    frozen = fj.freeze(fn)
    for n in (7, 1000, 3, 100003 // 7):
        a = np.random.default_rng(n).standard_normal((n, 7)).astype(np.float32)
        for got, want in zip(frozen(TensorXf(a)), fn(TensorXf(a))):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert frozen.n_recordings == 1


def test_row_sum_and_cumsum_gradients():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ADTensorXf(a)
    fj.enable_grad(t)
    w = ADTensorXf(np.array([1.0, 10.0, 100.0], np.float32))
    fj.backward(fj.sum(fj.sum(t, axis=1) * w) + fj.sum(fj.cumsum(t, axis=1)))
    want = np.repeat(np.array([1.0, 10.0, 100.0]), 4).reshape(3, 4) + np.array([4, 3, 2, 1])
    np.testing.assert_array_equal(t.grad.numpy(), want)
