"""Gradients through tensor operations (indexing, reshapes, broadcasting, reductions over axes,
prefix sums, joins, matmul), reverse and forward mode, against finite differences in float64."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import ad

rng = np.random.default_rng(5)
W = rng.standard_normal((3, 4))

CASES = {
    "basic_index": lambda X: X[1:, ::-2] * X[0, 1],
    "advanced_index": lambda X: X[ad.UInt32(2, 0, 2), 1:] * 3,
    "assignment": lambda X: _assign(X),
    "reshape_transpose": lambda X: fj.transpose(fj.reshape(X, (4, 3))) * ad.TensorXf64(W),
    "broadcast": lambda X: X * X[:, :1] + X[:1, :],
    "sum_axis": lambda X: fj.sum(X * X, axis=1),
    "sum_long_rows": lambda X: fj.sum(fj.tile(X, 20) * fj.arange(ad.Float64, 80), axis=1),     # scatter_add path
    "max_axis": lambda X: fj.max(X, axis=0) + fj.min(X, axis=(0, 1)),
    "prod_axis": lambda X: fj.prod(X, axis=0),
    "mean_long_axis": lambda X: fj.mean(fj.reshape(fj.tile(X, 40), (-1, 2)), axis=0),
    "cumsum": lambda X: fj.cumsum(X, axis=1, reverse=True) + fj.prefix_sum(X, axis=0),
    "concat_stack": lambda X: fj.concat([X, 2 * X[:, :2]], axis=1) + fj.stack([X[0], X[1], X[2]], axis=0)[:, :1],
    "matmul": lambda X: X @ fj.transpose(X) + fj.matmul(X, X, Bt=True),
    "math": lambda X: fj.sin(X) * fj.exp(X / 4) + fj.sqrt(X * X + 1),
}


def _assign(X):
    Y = X * 1
    Y[1, :] = X[2, :] * 5
    return Y


def _loss(f, X):
    y = f(X)
    return fj.sum(y * y, axis=None)


def _fd(f, x0, eps=1e-6):
    g = np.zeros_like(x0)
    for idx in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        g[idx] = (_loss(f, ad.TensorXf64(xp)).item() - _loss(f, ad.TensorXf64(xm)).item()) / (2 * eps)
    return g


@pytest.mark.parametrize("name", sorted(CASES))
def test_reverse_mode_matches_finite_differences(name):
    f = CASES[name]
    x0 = rng.standard_normal((3, 4)) + (2.0 if name == "math" else 0.0)
    X = ad.TensorXf64(x0)
    fj.enable_grad(X)
    fj.backward(_loss(f, X))
    g = fj.grad(X)
    assert isinstance(g, ad.TensorXf64) and g.shape == (3, 4)
    np.testing.assert_allclose(g.numpy(), _fd(f, x0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(X.grad.numpy(), g.numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_mode_matches_finite_differences(name):
    f = CASES[name]
    x0 = rng.standard_normal((3, 4)) + (2.0 if name == "math" else 0.0)
    v = rng.standard_normal((3, 4))
    X = ad.TensorXf64(x0)
    fj.enable_grad(X)
    fj.set_grad(X, ad.TensorXf64(v))
    loss = _loss(f, X)
    fj.forward_from(X)
    eps = 1e-6
    fd = (_loss(f, ad.TensorXf64(x0 + eps * v)).item() - _loss(f, ad.TensorXf64(x0 - eps * v)).item()) / (2 * eps)
    np.testing.assert_allclose(fj.grad(loss).item(), fd, rtol=1e-5, atol=1e-6)


def test_enable_grad_needs_an_ad_float_tensor():
    plain = fj.llvm.TensorXf(np.ones(2, np.float32))
    fj.enable_grad(plain)          # not an AD type: skipped, as in Dr.Jit
    assert not fj.grad_enabled(plain)
    t = ad.TensorXf(np.ones(2, np.float32))
    fj.enable_grad(t)
    assert fj.grad_enabled(t)
    d = fj.detach(t)
    assert not fj.grad_enabled(d) and d.shape == (2,)
    assert type(fj.detach(t, preserve_type=False)) is fj.llvm.TensorXf


def test_optimizer_takes_tensor_parameters():
    opt = fj.opt.Adam(lr=0.05)
    opt["t"] = ad.TensorXf(np.zeros((2, 3), np.float32))
    losses = []
    for _ in range(150):
        p = opt["t"]
        loss = fj.sum((p - ad.TensorXf([1, 2, 3])) ** 2, axis=None)
        fj.backward(loss)
        losses.append(loss.item())
        opt.step()
    assert isinstance(opt["t"], ad.TensorXf) and opt["t"].shape == (2, 3)
    assert losses[-1] < losses[0] / 100


def test_assigning_a_tensors_grad_sets_it_as_set_grad_does():
    J = ad
    t = J.TensorXf([1.0, 2, 3, 4], shape=(2, 2))
    fj.enable_grad(t)
    t.grad = J.Float(1, 2, 3, 4)                     # a flat array of its size
    assert t.grad.shape == (2, 2) and t.grad.numpy().tolist() == [[1, 2], [3, 4]]
    t.grad = 1                                       # a number
    assert t.grad.numpy().tolist() == [[1, 1], [1, 1]]
    t.grad = J.TensorXf([5.0, 6, 7, 8], shape=(2, 2))
    assert fj.forward_to(t * 2).numpy().tolist() == [[10, 12], [14, 16]]
    with pytest.raises(ValueError, match="size 3"):
        t.grad = J.Float(1, 2, 3)
