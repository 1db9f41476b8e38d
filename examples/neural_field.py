"""Fit a neural field: a multiresolution hash grid (``fj.hashgrid.HashGridEncoding``) encodes
2-D positions, a small MLP maps the features to a gray value, and both learn a picture (a port
of the idea of Dr.Jit's neural-network tutorial).  The network's matrices and biases are packed
into one buffer (``nn.pack``); Adam optimizes it and the grid's parameters; each training step
(forward, backward, Adam update) is one frozen function (``fj.freeze``: traced once, then
replayed with fresh random sample positions).

    python examples/neural_field.py                     # 64 x 64 target, 400 steps
    python examples/neural_field.py --res 32 --steps 100
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm import ad


def target(x, y, cos=fj.cos):
    """The picture to learn, on [0, 1]^2: rings around the center times a diagonal ramp (pass
    ``cos=np.cos`` for NumPy arrays)."""
    r2 = (x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5)
    return (0.5 + 0.5 * cos(40 * r2)) * (0.25 + 0.25 * (x + y))


def make_network(hidden: int = 16, levels: int = 4):
    """The hash grid and the MLP behind it (allocated for float32, packed for training)."""
    grid = fj.hashgrid.HashGridEncoding(ad.Float, 2, n_levels=levels, n_features_per_level=2, hashmap_size=2 ** 12,
                                        base_resolution=4, per_level_scale=1.6, init_scale=0.1)
    net = nn.Sequential(nn.HashEncodingLayer(grid), nn.Linear(-1, hidden), nn.ReLU(), nn.Linear(-1, 1))
    return grid, nn.pack(net.alloc(ad.TensorXf, 2), layout="training")


def evaluate(net, res: int) -> np.ndarray:
    """The network's picture at the centers of ``res x res`` pixels."""
    i = fj.arange(ad.UInt32, res * res)
    x = (ad.Float(i % res) + 0.5) / res
    y = (ad.Float(i // res) + 0.5) / res
    with fj.suspend_grad():
        out = net(nn.CoopVec(x, y))[0]
    return out.numpy().reshape(res, res)


def fit(res: int = 64, steps: int = 400, batch: int = 4096, lr: float = 0.01, hidden: int = 16):
    """Train; returns ``(picture (NumPy), target picture, losses)``."""
    grid, net = make_network(hidden)
    opt = fj.opt.Adam(lr=lr)
    opt.update(net)                 # the packed buffer becomes the optimizer's parameter "weights"
    opt["grid"] = grid.params       # (the grid's parameters are not part of the packed buffer)
    rng = fj.rng(seed=7)

    @fj.freeze
    def step(net, opt, x, y):
        net.layers[0].encoding.set_params(opt["grid"])
        net["weights"] = opt["weights"]
        out = net(nn.CoopVec(x, y))[0]
        loss = fj.mean(fj.square(out - target(x, y)))
        fj.backward(loss)
        opt.step()
        return loss

    losses = []
    for _ in range(steps):
        x, y = rng.random(ad.Float, batch), rng.random(ad.Float, batch)
        losses.append(float(step(net, opt, x, y).numpy()[0]))
    net["weights"] = opt["weights"]
    net.layers[0].encoding.set_params(opt["grid"])
    u = (np.arange(res) + 0.5) / res
    gx, gy = np.meshgrid(u, u)
    return evaluate(net, res), target(gx, gy, np.cos), losses


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--res", type=int, default=64, help="resolution of the evaluated picture")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=4096, help="random sample positions per step")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--hidden", type=int, default=16, help="width of the hidden layers")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    picture, goal, losses = fit(a.res, a.steps, a.batch, a.lr, a.hidden)
    dt = time.perf_counter() - t0
    err = float(np.sqrt(np.mean((picture - goal) ** 2)))
    print(f"{a.steps} steps of a neural field fit in {dt:.2f} s: loss {losses[0]:.4g} -> {losses[-1]:.4g}, "
          f"RMS error of the {a.res}x{a.res} picture {err:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
