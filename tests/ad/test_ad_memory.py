"""Derivatives of gather, scatter, scatter_add and scatter_reduce."""
import numpy as np
import pytest

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


@pytest.mark.parametrize("op", [fj.ReduceOp.Min, fj.ReduceOp.Max, fj.ReduceOp.Mul])
def test_scatter_reduce_min_max_mul_raise_instead_of_wrong_gradients(op):
    t, v = Float64(1.0, 2.0), Float64(3.0, 4.0)
    fj.enable_grad(v)
    with pytest.raises(NotImplementedError, match="not differentiable"):
        fj.scatter_reduce(op, t, v, UInt32(0, 1))


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
