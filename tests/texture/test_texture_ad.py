"""Gradients of texture lookups into the texture's tensor and into the positions, reverse and
forward mode, against finite differences in float64; a texture fitted with Adam."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import ad

rng = np.random.default_rng(11)


def _loss(tex, pos, kind):
    if kind == "linear":
        v = tex.eval(pos)
    elif kind == "nearest":
        v = tex.eval(pos)
    else:
        v = tex.eval_cubic(pos)
    channels = list(v)
    return fj.sum(sum((k + 1) * c * c for k, c in enumerate(channels)))


CASES = [(1, "linear", "Clamp"), (1, "cubic", "Mirror"), (1, "nearest", "Repeat"), (2, "linear", "Repeat"),
         (2, "linear", "Mirror"), (2, "cubic", "Clamp"), (2, "cubic", "Repeat"), (2, "nearest", "Mirror"),
         (3, "linear", "Clamp"), (3, "nearest", "Mirror")]     # (a 3-D cubic backward compiles 64 scatters: slow)


@pytest.mark.parametrize("dim, kind, wrap", CASES)
def test_gradient_into_the_texture_matches_finite_differences(dim, kind, wrap):
    res = (4, 3, 2)[:dim]
    data = rng.standard_normal(res[::-1] + ((2,) if dim < 3 else (1,)))
    pos = [rng.uniform(-0.3, 1.3, 16) for _ in range(dim)]
    filt = fj.FilterMode.Nearest if kind == "nearest" else fj.FilterMode.Linear
    Tex = getattr(ad, f"Texture{dim}f64")

    def loss_of(d):
        tex = Tex(ad.TensorXf64(d), filter_mode=filt, wrap_mode=fj.WrapMode[wrap])
        return _loss(tex, [ad.Float64(p) for p in pos], kind)[0]

    T = ad.TensorXf64(data)
    fj.enable_grad(T)
    tex = Tex(T, filter_mode=filt, wrap_mode=fj.WrapMode[wrap])
    fj.backward(_loss(tex, [ad.Float64(p) for p in pos], kind))
    g = fj.grad(T).numpy()
    eps = 1e-6
    entries = list(np.ndindex(*data.shape))
    for k in rng.choice(len(entries), size=min(6, len(entries)), replace=False):
        idx = entries[k]
        dp, dm = data.copy(), data.copy()
        dp[idx] += eps
        dm[idx] -= eps
        np.testing.assert_allclose(g[idx], (loss_of(dp) - loss_of(dm)) / (2 * eps), rtol=1e-6, atol=1e-7)
    # forward mode: a directional derivative
    v = rng.standard_normal(data.shape)
    T = ad.TensorXf64(data)
    fj.enable_grad(T)
    fj.set_grad(T, ad.TensorXf64(v))
    tex = Tex(T, filter_mode=filt, wrap_mode=fj.WrapMode[wrap])
    loss = _loss(tex, [ad.Float64(p) for p in pos], kind)
    fj.forward_from(T)
    want = (loss_of(data + eps * v) - loss_of(data - eps * v)) / (2 * eps)
    np.testing.assert_allclose(fj.grad(loss)[0], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_gradient_with_respect_to_the_positions(kind):
    data = rng.standard_normal((5, 6, 2))
    px, py = rng.uniform(0.1, 0.9, 8), rng.uniform(0.1, 0.9, 8)
    tex = ad.Texture2f64(ad.TensorXf64(data), wrap_mode=fj.WrapMode.Repeat)
    X, Y = ad.Float64(px), ad.Float64(py)
    fj.enable_grad(X, Y)
    channels = list(tex.eval(ad.Array2f64(X, Y)) if kind == "linear" else tex.eval_cubic(ad.Array2f64(X, Y)))
    loss = fj.sum(sum((k + 1) * c * c for k, c in enumerate(channels)))
    fj.backward(loss)
    gx = fj.grad(X).numpy()
    eps = 1e-7

    def at(x):
        return np.array([_loss(tex, ad.Array2f64(ad.Float64([x[i]]), ad.Float64([py[i]])), kind)[0]
                         for i in range(len(x))])
    fd = (at(px + eps) - at(px - eps)) / (2 * eps)
    np.testing.assert_allclose(gx, fd, rtol=1e-5, atol=1e-6)
    if kind == "cubic":         # the analytic gradient of eval_cubic_grad agrees with AD
        _, g = tex.eval_cubic_grad(ad.Array2f64(ad.Float64(px), ad.Float64(py)))
        ch = [c.numpy() for c in tex.eval_cubic(ad.Array2f64(ad.Float64(px), ad.Float64(py)))]
        want = sum(2 * (k + 1) * ch[k] * g[k][0].numpy() for k in range(2))
        np.testing.assert_allclose(gx, want, rtol=1e-9, atol=1e-9)


def test_fit_a_small_texture_with_adam():
    target = rng.uniform(0, 1, (8, 8, 1)).astype(np.float32)
    goal = ad.TensorXf(target)
    n = 16
    i = fj.arange(ad.UInt32, n * n)
    pos = ad.Array2f((ad.Float(i % n) + 0.5) / n, (ad.Float(i // n) + 0.5) / n)
    ref = ad.Texture2f(goal).eval(pos)[0]
    fj.eval(ref)
    tex = ad.Texture2f([8, 8], 1)
    opt = fj.opt.Adam(lr=0.05)
    opt["t"] = fj.zeros(ad.TensorXf, (8, 8, 1))
    losses = []
    for _ in range(60):
        tex.set_tensor(opt["t"])
        loss = fj.mean(fj.square(tex.eval(pos)[0] - ref))
        fj.backward(loss)
        opt.step()
        losses.append(loss[0])
    assert losses[-1] < losses[0] / 50


@pytest.mark.parametrize("lookups", [1, 3])
def test_lookups_of_one_texture_scatter_their_gradients_in_one_kernel(lookups):
    # Every lookup and channel scatters into one gradient buffer of the tensor (each lookup's
    # buffer used to be read, and so launched, as soon as the next was added: one kernel per
    # lookup, each recomputing the forward pass); the total is the sum of the lookups' own
    # gradients.
    data = rng.standard_normal((3, 4, 2)).astype(np.float32)
    pos = [[ad.Float(rng.uniform(-0.2, 1.2, 50).astype(np.float32)) for _ in range(2)] for _ in range(lookups)]

    def grad_of(which):
        t = ad.TensorXf(data)
        fj.enable_grad(t)
        tex = ad.Texture2f(t)
        loss = sum(_loss(tex, pos[k], "linear") for k in which)
        fj.eval(loss)
        with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
            fj.kernel_history()
            fj.backward(loss)
            g = fj.grad(t).array
            fj.eval(g)
            history = fj.kernel_history()
        return g.numpy(), [h for h in history if h["type"] == "jit"]

    total, kernels = grad_of(range(lookups))
    assert len(kernels) <= 1, len(kernels)
    parts = sum(grad_of([k])[0] for k in range(lookups))
    assert np.allclose(total, parts, rtol=1e-5, atol=1e-5)
