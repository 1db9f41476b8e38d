"""Gradient checks: reverse mode and forward mode against central finite differences (float64).

``check_grad(f, xs)`` runs ``f`` on grad-enabled ``Float64`` copies of the NumPy
arrays ``xs`` and compares, for random directions ``d_k`` and random output
weights ``w``:

* reverse mode: ``sum_k dot(grad(x_k), d_k)`` after ``backward(sum(w * f(x)))``,
* forward mode: ``dot(w, grad(f(x)))`` after ``set_grad(x_k, d_k); forward_to(f(x))``,

with ``(L(x + h d) - L(x - h d)) / 2h`` where ``L(x) = sum(w * f(x))``.
"""
from __future__ import annotations

import numpy as np

import frostjit as fj
from frostjit.llvm.ad import Float64

H = 1e-6


def _outputs(y) -> list:
    if isinstance(y, (list, tuple)):
        return [c for o in y for c in _outputs(o)]
    if hasattr(y, "_c"):
        return list(y._c)
    return [y]


def _loss_np(f, xs, ws):
    with fj.suspend_grad():
        ys = _outputs(f(*[Float64(x) for x in xs]))
        return sum(float(np.dot(w, np.broadcast_to(y.numpy(), w.shape))) for y, w in zip(ys, ws))


def check_grad(f, xs, rtol=1e-5, seed=0, directions=2, forward=True):
    rng = np.random.default_rng(seed)
    xs = [np.asarray(x, dtype=np.float64) for x in xs]
    args = [Float64(x) for x in xs]
    fj.enable_grad(*args)
    ys = _outputs(f(*args))
    ws = [rng.uniform(0.5, 1.5, len(y)) for y in ys]
    loss = None
    for y, w in zip(ys, ws):
        term = fj.sum(y * Float64(w))
        loss = term if loss is None else loss + term
    fj.backward(loss)
    grads = [fj.grad(a).numpy() for a in args]
    for g, x in zip(grads, xs):
        assert g.shape == x.shape, (g.shape, x.shape)
    for k in range(directions):
        ds = [rng.standard_normal(x.shape) for x in xs]
        fd = (_loss_np(f, [x + H * d for x, d in zip(xs, ds)], ws)
              - _loss_np(f, [x - H * d for x, d in zip(xs, ds)], ws)) / (2 * H)
        rev = sum(float(np.dot(g, d)) for g, d in zip(grads, ds))
        assert abs(rev - fd) <= rtol * max(1.0, abs(fd), abs(rev)), \
            f"reverse mode {rev} vs finite differences {fd} (direction {k})"
        if forward:
            args2 = [Float64(x) for x in xs]
            fj.enable_grad(*args2)
            ys2 = _outputs(f(*args2))
            for a, d in zip(args2, ds):
                fj.set_grad(a, Float64(d))
            gys = fj.forward_to(*ys2)
            gys = [gys] if len(ys2) == 1 else list(gys)
            fwd = sum(float(np.dot(w, np.broadcast_to(gy.numpy(), w.shape))) for gy, w in zip(gys, ws))
            assert abs(fwd - rev) <= 1e-6 * max(1.0, abs(rev)) * 10, \
                f"forward mode {fwd} vs reverse mode {rev} (direction {k})"
    return grads
