"""One optimization problem, written once for Dr.Jit and for frostjit (the same API), to compare
the optimizers' trajectories: ``run(dr, types, name)`` takes ``drjit`` or ``frostjit`` as ``dr``.

Gradients are set, not back-propagated (``dr.set_grad`` of a formula in plain arithmetic on
detached values), so both systems start each step from bit-identical gradients and any
difference comes from the optimizer's update.  The gradient is that of a nonlinear problem
(a cubic term couples the steps), some entries are exactly zero at some steps (for
``mask_updates``), and the ``GradScaler`` cases inject infinite entries at some steps.
"""
from __future__ import annotations

import numpy as np

N, NV, STEPS = 13, 5, 100
OVERFLOW_STEPS = (3, 4, 20, 41)

# Why a configuration agrees with Dr.Jit to float32 round-off rather than bit for bit (option
# "roundoff"; the others agree exactly):
RSQRT = "epsilon <= 1e-6 uses rsqrt, and the two rsqrt implementations differ in the last bit"
VECTOR_DIV = ("UniformAdam divides a static vector by a 1-D array, which Dr.Jit computes as a "
              "multiplication by the reciprocal, frostjit as a division")

# name -> (optimizer class, keyword arguments, options)
CONFIGS = {
    "sgd": ("SGD", dict(lr=0.05), {}),
    "sgd_momentum": ("SGD", dict(lr=0.05, momentum=0.9), {}),
    "sgd_nesterov": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True), {}),
    "sgd_mask": ("SGD", dict(lr=0.05, momentum=0.5, mask_updates=True), {"sparse": True}),
    "rmsprop": ("RMSProp", dict(lr=0.01), {"roundoff": RSQRT}),
    "rmsprop_eps": ("RMSProp", dict(lr=0.01, alpha=0.9, epsilon=1e-3), {}),
    "rmsprop_mask": ("RMSProp", dict(lr=0.01, mask_updates=True), {"roundoff": RSQRT, "sparse": True}),
    "adam": ("Adam", dict(lr=0.05), {"roundoff": RSQRT}),
    "adam_eps": ("Adam", dict(lr=0.05, beta_1=0.8, beta_2=0.99, epsilon=1e-4), {}),
    "adam_amsgrad": ("Adam", dict(lr=0.05, amsgrad=True), {"roundoff": RSQRT}),
    "adam_uniform": ("Adam", dict(lr=0.05, uniform=True), {"roundoff": RSQRT}),
    "adam_amsgrad_eps": ("Adam", dict(lr=0.05, amsgrad=True, epsilon=1e-4), {}),
    "adam_uniform_eps": ("Adam", dict(lr=0.05, uniform=True, epsilon=1e-4), {"roundoff": VECTOR_DIV}),
    "adam_mask_eps": ("Adam", dict(lr=0.05, mask_updates=True, epsilon=1e-4), {"sparse": True}),
    "adam_mask": ("Adam", dict(lr=0.05, mask_updates=True), {"roundoff": RSQRT, "sparse": True}),
    "adam_schedule": ("Adam", dict(lr=0.05), {"roundoff": RSQRT, "schedule": True}),
    # (an array rate with Adam: Dr.Jit 1.5 multiplies the rate array in place by the bias
    # correction at every step, a bug; frostjit keeps the rate: tests/opt/test_optimizers.py)
    "sgd_rate_array": ("SGD", dict(lr=0.05, momentum=0.5), {"rate_array": True}),
    "adamw": ("AdamW", dict(lr=0.05, weight_decay=0.1), {"roundoff": RSQRT}),
    "adamw_amsgrad": ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True), {"roundoff": RSQRT}),
    "adamw_eps": ("AdamW", dict(lr=0.05, weight_decay=0.1, epsilon=1e-4), {"schedule": True}),
    # (Dr.Jit 1.5's GradScaler fails on static vector parameters: flat arrays only here)
    "sgd_scaler": ("SGD", dict(lr=0.05, momentum=0.5), {"scaler": True}),
    "adam_scaler": ("Adam", dict(lr=0.05), {"roundoff": RSQRT, "scaler": True}),
    "adam_scaler_eps": ("Adam", dict(lr=0.05, epsilon=1e-4), {"scaler": True}),
}


def initial() -> dict:
    """The starting point and targets (float32 NumPy arrays)."""
    rng = np.random.default_rng(20261201)
    f = np.float32
    return {"x": rng.uniform(-2, 2, N).astype(f), "y": rng.uniform(0.5, 1.5, N).astype(f),
            "v": rng.uniform(-1, 1, (3, NV)).astype(f), "tx": rng.uniform(-1, 1, N).astype(f),
            "ty": rng.uniform(-1, 1, N).astype(f), "tv": rng.uniform(-1, 1, (3, NV)).astype(f),
            "w": rng.uniform(0.5, 2, N).astype(f), "rate": rng.uniform(0.01, 0.08, N).astype(f)}


def gradients(dr, types, p: dict, d: dict, step: int, sparse: bool, overflow: bool):
    """The gradients of x, y, v at the current (detached) parameters ``p``."""
    UInt32, Array3f = types["UInt32"], types["Array3f"]
    x, y, v = p["x"], p["y"], p["v"]
    gx = (x - d["tx"]) * d["w"] + x * x * x * 0.05
    gy = (y - d["ty"]) * 0.7 + x * 0.25
    gv = (v - d["tv"]) * 0.5 + Array3f(v.y, v.z, v.x) * 0.125
    idx = dr.arange(UInt32, N)
    if sparse:              # some entries unobserved (exactly zero) at each step
        gx = dr.select((idx + step) % 3 == 0, 0.0, gx)
        gy = dr.select((idx + 2 * step) % 4 == 1, 0.0, gy)
    if overflow and step in OVERFLOW_STEPS:
        gx = dr.select(idx == step % N, float("inf"), gx)
    return gx, gy, gv


def run(dr, opt_module, types, name: str, steps: int = STEPS) -> dict:
    """Run configuration ``name``; returns the trajectories ``{"x": (steps, N), "y": ..., "v": (steps, 3, NV)}``
    (and ``"scale"`` with a GradScaler)."""
    Float, Array3f = types["Float"], types["Array3f"]
    cls, kwargs, options = CONFIGS[name]
    init = initial()
    d = {"tx": Float(init["tx"]), "ty": Float(init["ty"]), "tv": Array3f(init["tv"]), "w": Float(init["w"])}
    opt = getattr(opt_module, cls)(**kwargs)
    scaler = opt_module.GradScaler(init_scale=2.0 ** 12, growth_interval=7) if options.get("scaler") else None
    names = ("x", "y") if scaler is not None else ("x", "y", "v")
    opt["x"] = Float(init["x"])
    opt["y"] = Float(init["y"])
    if "v" in names:
        opt["v"] = Array3f(init["v"])
    if options.get("rate_array"):
        opt.set_learning_rate(x=Float(init["rate"]))
    out = {"x": [], "y": [], "v": [], "scale": []}
    for i in range(steps):
        if options.get("schedule"):
            opt.set_learning_rate(0.05 * 0.97 ** i)
            opt.set_learning_rate(y=0.02 * 0.99 ** i)
        p = {k: dr.detach(opt[k]) for k in names}
        p.setdefault("v", Array3f(init["v"]))
        grads = dict(zip(("x", "y", "v"), gradients(dr, types, p, d, i, options.get("sparse", False),
                                                     scaler is not None)))
        for k in names:
            dr.set_grad(opt[k], scaler.scale(grads[k]) if scaler is not None else grads[k])
        if scaler is not None:
            scaler.step(opt)
            out["scale"].append(float(np.asarray(scaler.scale_factor).ravel()[0]))
        else:
            opt.step()
        out["x"].append(np.asarray(opt["x"].numpy(), np.float32))
        out["y"].append(np.asarray(opt["y"].numpy(), np.float32))
        if "v" in names:
            out["v"].append(np.asarray(opt["v"].numpy(), np.float32).reshape(3, NV))
    return {k: np.array(v) for k, v in out.items() if v}
