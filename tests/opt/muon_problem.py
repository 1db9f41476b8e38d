"""One Muon problem, written once for Dr.Jit and for frostjit (the same API), to compare the
trajectories: ``run(dr, opt_module, TensorXf, name)`` takes ``drjit`` or ``frostjit`` as ``dr``.

Two 2-D parameters (a wide one and a tall one, which the Newton-Schulz iteration transposes).
Gradients are set, not back-propagated (``dr.set_grad`` of a formula in plain arithmetic on
detached values), so any difference comes from the optimizer's update.
"""
from __future__ import annotations

import numpy as np

STEPS = 100

# name -> (keyword arguments, options)
CONFIGS = {
    "muon": (dict(lr=0.02), {}),
    "muon_plain_momentum": (dict(lr=0.02, nesterov=False, momentum=0.8), {}),
    "muon_wd": (dict(lr=0.03, weight_decay=0.1), {}),
    "muon_ns3": (dict(lr=0.02, ns_steps=3), {}),
    "muon_schedule": (dict(lr=0.05), {"schedule": True}),
    "muon_mask": (dict(lr=0.02, mask_updates=True), {"sparse": True}),
}


def initial() -> dict:
    rng = np.random.default_rng(20261130)
    f = np.float32
    return {"W": rng.uniform(-1, 1, (6, 9)).astype(f), "V": rng.uniform(-1, 1, (11, 4)).astype(f),
            "tW": rng.uniform(-1, 1, (6, 9)).astype(f), "tV": rng.uniform(-1, 1, (11, 4)).astype(f)}


def run(dr, opt_module, TensorXf, name: str) -> dict:
    """``{"W": (STEPS, 6, 9), "V": (STEPS, 11, 4)}``: the parameters after each step."""
    kwargs, options = CONFIGS[name]
    init = initial()
    opt = opt_module.Muon(**kwargs)
    opt["W"] = TensorXf(init["W"])
    opt["V"] = TensorXf(init["V"])
    tW, tV = TensorXf(init["tW"]), TensorXf(init["tV"])
    out = {"W": [], "V": []}
    for i in range(STEPS):
        if options.get("schedule"):
            opt.set_learning_rate(0.05 * 0.97 ** i)
        for key, t in (("W", tW), ("V", tV)):
            d = dr.detach(opt[key]) - t
            g = d + d * d * d * 0.5
            if options.get("sparse") and i % 3 == 1:
                g = g * TensorXf((np.arange(g.shape[0] * g.shape[1]) % 4 != 0).astype(np.float32).reshape(g.shape))
            dr.set_grad(opt[key], g)
        opt.step()
        out["W"].append(opt["W"].numpy().copy())
        out["V"].append(opt["V"].numpy().copy())
    return {k: np.array(v) for k, v in out.items()}
