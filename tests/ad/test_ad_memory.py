"""Derivatives of gather, scatter, scatter_add and scatter_reduce."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import UInt32, Bool
from frostjit.llvm.ad import Float64, Array3f64, Float

from ad_helpers import check_grad

IDX = np.array([3, 0, 0, 7, 2, 9, 3, 3, 5, 1, 11], dtype=np.uint32)   # duplicates, one out of bounds


def data(lo, hi, n, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, n)


def test_gather_adjoint_is_a_scatter_add():
    idx = UInt32(IDX)
    check_grad(lambda src: fj.sin(fj.gather(Float64, src, idx)) * 2, [data(-1, 1, 10)])


def test_gather_with_mask():
    idx = UInt32(IDX)
    mask = Bool([True, False] * 5 + [True])
    check_grad(lambda src: fj.gather(Float64, src, idx, mask) ** 2, [data(-1, 1, 10)])


def test_gather_gradient_values():
    src = Float64(1.0, 2.0, 3.0)
    fj.enable_grad(src)
    y = fj.gather(Float64, src, UInt32(0, 2, 2, 2))
    fj.backward(fj.sum(y * y))
    assert fj.grad(src).numpy().tolist() == [2, 0, 18]


def test_gather_static_vector():
    def f(src):
        v = fj.gather(Array3f64, src, UInt32(2, 0, 1))
        return fj.norm(v)
    check_grad(f, [data(0.5, 2, 9)])


def test_scatter_add_gradient_flows_to_value_and_target():
    idx = UInt32(IDX)

    def f(target, value):
        t = target * 1.0
        fj.scatter_add(t, fj.exp(value), idx)
        return t * t
    check_grad(f, [data(-1, 1, 10), data(-1, 1, len(IDX))])


def test_scatter_overwrite_masks_target_gradient():
    # distinct indices, so which write wins is well defined
    idx = UInt32(4, 0, 7, 2)

    def f(target, value):
        t = target * 1.0
        fj.scatter(t, value * 3.0, idx)
        return fj.sin(t)
    check_grad(f, [data(-1, 1, 10), data(-1, 1, 4)])


def test_scatter_overwrite_gradient_values():
    t, v = Float64(1.0, 2.0, 3.0), Float64(10.0, 20.0)
    fj.enable_grad(t, v)
    t2 = t * 1.0
    fj.scatter(t2, v, UInt32(2, 0))
    fj.backward(fj.sum(t2 * Float64(1.0, 2.0, 3.0)))
    assert fj.grad(t).numpy().tolist() == [0, 2, 0]
    assert fj.grad(v).numpy().tolist() == [3, 1]


def test_scatter_into_a_grad_enabled_leaf_makes_it_depend_on_the_value():
    v = Float64(5.0)
    fj.enable_grad(v)
    t = fj.zeros(Float64, 4)
    fj.scatter(t, v * 2, 1)
    fj.backward(fj.sum(t * t))
    assert fj.grad(v).numpy().tolist() == [40]


def test_scatter_with_mask():
    idx = UInt32(IDX)
    mask = Bool([True, False, True] * 3 + [False, True])

    def f(target, value):
        t = target + 0.0
        fj.scatter_add(t, value, idx, mask)
        return fj.cos(t)
    check_grad(f, [data(-1, 1, 10), data(-1, 1, len(IDX))])


def test_scatter_reduce_add_is_differentiable():
    idx = UInt32(IDX)

    def f(target, value):
        t = target * 2.0
        fj.scatter_reduce(fj.ReduceOp.Add, t, value * value, idx)
        return t
    check_grad(f, [data(-1, 1, 10), data(-1, 1, len(IDX))])


@pytest.mark.parametrize("op", [fj.ReduceOp.Min, fj.ReduceOp.Max])
def test_scatter_reduce_min_max_match_finite_differences(op):
    idx = UInt32(IDX)
    mask = Bool([True, True, False] * 3 + [True, True])

    def f(target, value):
        t = target * 2.0
        fj.scatter_reduce(op, t, value * value, idx, mask)
        return fj.sin(t)
    check_grad(f, [data(-1, 1, 10), data(-1, 1, len(IDX), seed=1)])


def minmax_reference(op, target, value, index, active, g_target, g_value, g_out):
    """Dr.Jit 1.5's derivative of scatter_reduce(Min/Max), in NumPy (measured side by side):
    backward gives every entry holding the winning value the whole gradient (ties included);
    forward takes the target's gradient, overwritten by a winning value's (the last one)."""
    pick = np.maximum if op == fj.ReduceOp.Max else np.minimum
    out = target.copy()
    for i, k in enumerate(index):
        if active[i]:
            out[k] = pick(out[k], value[i])
    kept = target == out
    wins = active & (value == out[index])
    bwd_target = np.where(kept, g_out, 0)
    bwd_value = np.where(wins, g_out[index], 0)
    fwd = np.where(kept, g_target, 0)
    for i, k in enumerate(index):
        if wins[i]:
            fwd[k] = g_value[i]
    return out, bwd_target, bwd_value, fwd


@settings(deadline=None)
@given(st.sampled_from([fj.ReduceOp.Min, fj.ReduceOp.Max]), st.integers(1, 6), st.data())
def test_scatter_reduce_min_max_derivatives_with_ties_match_the_reference(op, n, draw):
    # small integers: many ties between values, and between values and the target
    m = draw.draw(st.integers(1, 12))
    target = np.array(draw.draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n)), np.float64)
    value = np.array(draw.draw(st.lists(st.integers(-2, 2), min_size=m, max_size=m)), np.float64)
    index = np.array(draw.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), np.uint32)
    active = np.array(draw.draw(st.lists(st.booleans(), min_size=m, max_size=m)))
    g_target, g_value, g_out = np.arange(1.0, n + 1), np.arange(1.0, m + 1) * 10, np.arange(1.0, n + 1) * 100
    out, bwd_t, bwd_v, fwd = minmax_reference(op, target, value, index, active, g_target, g_value, g_out)

    def run(seed_inputs: bool):
        t, v = Float64(target), Float64(value)
        fj.enable_grad(t, v)
        if seed_inputs:
            t.grad, v.grad = g_target, g_value
        r = Float64(t)
        fj.scatter_reduce(op, r, v, UInt32(index), Bool(active))
        return t, v, r

    t, v, r = run(False)
    assert r.numpy().tolist() == out.tolist()
    r.grad = g_out
    gt, gv = fj.backward_to(t, v)
    assert gt.numpy().tolist() == bwd_t.tolist() and gv.numpy().tolist() == bwd_v.tolist()
    t, v, r = run(True)
    assert fj.forward_to(r).numpy().tolist() == fwd.tolist()


def test_scatter_reduce_mul_raises_instead_of_wrong_gradients():
    t, v = Float64(1.0, 2.0), Float64(3.0, 4.0)
    fj.enable_grad(v)
    with pytest.raises(NotImplementedError, match="not differentiable"):
        fj.scatter_reduce(fj.ReduceOp.Mul, t, v, UInt32(0, 1))


def test_scatter_static_vector_value():
    def f(a, b):
        t = fj.zeros(Float64, 6)
        fj.scatter(t, Array3f64(a, b, a * b), UInt32(1, 0))
        return t * t
    check_grad(f, [data(-1, 1, 2), data(-1, 1, 2, seed=1)])


def test_setitem_is_a_differentiable_scatter():
    x = Float64(1.0, 2.0, 3.0)
    fj.enable_grad(x)
    y = x * 2.0
    y[1] = 0.0
    fj.backward(fj.sum(y))
    assert fj.grad(x).numpy().tolist() == [2, 0, 2]


def test_splat_model_like_the_demo():
    """Gaussians splatted into pixels: gather parameters, scatter_add contributions."""
    k, hw = 4, 16
    gid = fj.arange(UInt32, k * hw)
    g, pix = gid // hw, gid % hw
    px = Float64(pix) / hw

    def f(mu, amp):
        d = px - fj.gather(Float64, mu, g)
        img = fj.zeros(Float64, hw)
        fj.scatter_add(img, fj.gather(Float64, amp, g) * fj.exp(-d * d * 10), pix)
        return (img - 0.3) ** 2
    check_grad(f, [data(0, 1, k), data(0.2, 1, k, seed=1)])


def test_backward_over_gather_does_not_change_the_source_buffer():
    src = Float(1.0, 2.0, 3.0)
    fj.enable_grad(src)
    y = fj.gather(Float, src, UInt32(1, 1))
    fj.backward(fj.sum(y))
    assert src.numpy().tolist() == [1, 2, 3]
    assert fj.grad(src).numpy().tolist() == [0, 2, 0]
