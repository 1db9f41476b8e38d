"""The kernels of a network's forward and reverse pass: values against NumPy at width 16, and
their size (no timing).  docs/nn.md, "Known slow case": each coefficient's gather was four basic
blocks (per-chunk index tests), and the reverse pass evaluated each layer's inputs separately,
recomputing the forward pass once per layer; LLVM then took minutes on the nn guide's network."""
import numpy as np

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm.ad import Float, TensorXf

LANES = 64


def _net(width: int):
    net = nn.Sequential(nn.Linear(-1, width, bias=False), nn.LeakyReLU(),
                        nn.Linear(-1, width, bias=False), nn.LeakyReLU(),
                        nn.Linear(-1, 2, bias=False))
    return nn.pack(net.alloc(TensorXf, 3, rng=fj.rng(seed=1)), layout="training")


def _run(width: int):
    """Loss and weight gradient of one pass, the NumPy model's, and the kernels launched."""
    net = _net(width)
    w = net["weights"]
    fj.enable_grad(w)
    x = np.random.default_rng(width).standard_normal((3, LANES)).astype(np.float32)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        y = net(nn.CoopVec(*[Float(r) for r in x]))
        loss = fj.sum(y[0] * y[0] + y[1])
        fj.eval(loss)
        forward = [e for e in fj.kernel_history() if e["type"] == "jit"]
        fj.backward(loss)
        grad = fj.grad(w)
        fj.eval(grad)
        backward = [e for e in fj.kernel_history() if e["type"] == "jit"]

    # NumPy: the same packed row-major matrices, LeakyReLU slope 0.01
    flat = np.asarray(w.numpy(), np.float64)
    shapes = [(width, 3), (width, width), (2, width)]
    mats, k = [], 0
    for r, c in shapes:
        mats.append(flat[k:k + r * c].reshape(r, c))
        k += r * c
    acts, pres = [x.astype(np.float64)], []
    for i, m in enumerate(mats):
        pres.append(m @ acts[-1])
        acts.append(np.where(pres[-1] > 0, pres[-1], 0.01 * pres[-1]) if i < 2 else pres[-1])
    out = acts[-1]
    ref_loss = (out[0] ** 2 + out[1]).sum()
    d = np.stack([2 * out[0], np.ones(LANES)])
    grads = [None] * 3
    for i in (2, 1, 0):
        grads[i] = d @ acts[i].T
        d = mats[i].T @ d
        if i > 0:
            d = d * np.where(pres[i - 1] > 0, 1.0, 0.01)
    ref_grad = np.concatenate([g.ravel() for g in grads])
    return float(loss.numpy()[0]), np.asarray(grad.numpy()), ref_loss, ref_grad, forward, backward


def test_width16_forward_and_weight_gradient_match_numpy():
    loss, grad, ref_loss, ref_grad, _, _ = _run(16)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-4)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-3, atol=1e-3 * np.abs(ref_grad).max())


def test_kernels_grow_with_the_coefficients_only():
    *_, fwd4, bwd4 = _run(4)
    *_, fwd16, bwd16 = _run(16)
    blocks = [sum(e["ir"].count("\n  br ") for e in k) for k in (fwd4, fwd16)]
    # A coefficient is one load and one fused multiply-add: no branch of its own (the 16-wide
    # forward pass reads 352 coefficients, 308 more than the 4-wide one).
    assert blocks[1] - blocks[0] <= 4, blocks
    ops = [sum(e["operation_count"] for e in k) for k in (fwd16, bwd16)]
    # The reverse pass computes the forward pass's activations once, with the last layer's
    # gradient, then the transposed products (1131 + 229 + 915 operations and small kernels:
    # 2.5x the forward pass's 1129); it recomputed them for each layer before (3.3x).
    assert ops[1] < 2.8 * ops[0], ops


def test_frozen_step_beside_a_pending_forward_pass_matches_the_plain_step():
    # A forward pass traced outside (its products pending, never differentiated) must not be
    # evaluated by the recording's reverse pass: replays would recompute it (stale inputs).
    net = _net(4)
    w0 = Float(net["weights"])

    def trained():
        w = Float(w0)
        fj.enable_grad(w)
        return w

    net["weights"] = trained()
    outside = net(nn.CoopVec(Float(1, 2), Float(3, 4), Float(5, 6)))

    def step(w, x):
        net["weights"] = w
        y = net(nn.CoopVec(x, x * 2, x + 1))
        loss = fj.sum(y[0] * y[0] + y[1])
        fj.backward(loss)
        return loss, fj.grad(w)

    frozen = fj.freeze(step)
    xs = [fj.arange(Float, 10 + k) * 0.1 for k in range(3)]
    got = [frozen(trained(), x) for x in xs]        # (a recording, then replays)
    assert outside[0]._node.op != "data"
    for g, x in zip(got, xs):
        for a, b in zip(g, step(trained(), x)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_repeated_passes_reuse_their_kernels():
    # The reverse pass's kernel evaluates the pending layers in the order they were traced (a set
    # of them gave each pass its own output order: a new kernel to compile every pass).
    net = _net(8)
    w = net["weights"]
    fj.enable_grad(w)
    xs = [Float(np.linspace(-1, 1, LANES) * (k + 1)) for k in range(3)]
    fj.eval(xs)
    hits = []
    for _ in range(5):
        with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
            fj.kernel_history()
            y = net(nn.CoopVec(*xs))
            fj.backward(fj.sum(y[0] * y[0] + y[1]))
            fj.eval(fj.grad(w))
            hits.append([e["cache_hit"] for e in fj.kernel_history() if e["type"] == "jit"])
        fj.clear_grad(w)
    assert all(all(h) for h in hits[2:]), hits
