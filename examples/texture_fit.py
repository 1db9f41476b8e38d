"""Fit a texture to a target image through bilinear lookups (a port of Dr.Jit's texture-fitting
tutorial): the texture is an optimized parameter, each step renders the image by looking the
texture up at the pixel centers of a differently sized image (so every pixel mixes four
texels), compares it with the target, back-propagates into the texture's tensor and takes an
Adam step, all inside one frozen function (``fj.freeze``: traced once, then replayed).

    python examples/texture_fit.py                  # 256 x 256, writes texture_fit_*.png
    python examples/texture_fit.py --size 64 --steps 50 --no-png

Pictures need matplotlib (``pip install -e ".[demo]"``); without it, or with ``--no-png``,
the script only prints the loss.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import frostjit as fj
from frostjit.llvm import ad


def target_image(res: int) -> np.ndarray:
    """A smooth RGB test picture of ``res x res`` pixels (rings and a color gradient), in [0, 1]."""
    y, x = np.mgrid[0:res, 0:res] / max(res - 1, 1)
    r = np.hypot(x - 0.5, y - 0.5)
    rings = 0.5 + 0.5 * np.cos(24 * r)
    return np.stack([rings * x, rings * (1 - r), 0.3 + 0.7 * y * rings], axis=-1).astype(np.float32)


def pixel_centers(res: int):
    """The pixel centers of a ``res x res`` image in [0, 1]^2 (x fastest), as an Array2f."""
    i = fj.arange(ad.UInt32, res * res)
    x = (ad.Float(i % res) + 0.5) / res
    y = (ad.Float(i // res) + 0.5) / res
    return ad.Array2f(x, y)


def fit(size: int = 256, steps: int = 200, lr: float = 0.02, render_res: int | None = None):
    """Fit a ``size x size`` RGB texture; returns ``(texture tensor (NumPy), target, losses)``."""
    render_res = render_res or (size * 3) // 2
    target = target_image(render_res)
    goal = ad.Array3f(*[ad.Float(target[..., c].reshape(-1)) for c in range(3)])
    pos = pixel_centers(render_res)
    fj.eval(goal, pos)

    tex = ad.Texture2f([size, size], 3, filter_mode=fj.FilterMode.Linear, wrap_mode=fj.WrapMode.Clamp)
    opt = fj.opt.Adam(lr=lr)
    opt["texture"] = fj.full(ad.TensorXf, 0.5, (size, size, 3))

    @fj.freeze
    def step(opt, tex, pos, goal):
        tex.set_tensor(opt["texture"])
        image = tex.eval(pos)                       # an Array3f: one lookup per pixel
        loss = fj.mean(fj.squared_norm(image - goal))
        fj.backward(loss)
        opt.step()
        return loss

    losses = []
    for _ in range(steps):
        losses.append(step(opt, tex, pos, goal)[0])
    return opt["texture"].numpy(), target, losses


def save_pictures(prefix: str, texture: np.ndarray, target: np.ndarray, losses: list) -> list[str]:
    """Write the target, the fitted texture and the loss curve as PNGs (matplotlib's Figure)."""
    from matplotlib.figure import Figure      # optional dependency

    files = []
    for name, img in (("target", target), ("texture", texture)):
        fig = Figure(figsize=(4, 4))
        ax = fig.add_subplot()
        ax.imshow(np.clip(img, 0, 1), interpolation="nearest")
        ax.set_axis_off()
        fig.savefig(f"{prefix}_{name}.png", dpi=100, bbox_inches="tight")
        files.append(f"{prefix}_{name}.png")
    fig = Figure(figsize=(5, 3))
    ax = fig.add_subplot()
    ax.semilogy(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (mean squared error)")
    fig.savefig(f"{prefix}_loss.png", dpi=100, bbox_inches="tight")
    files.append(f"{prefix}_loss.png")
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=256, help="texture resolution (default 256)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--out", default="texture_fit", help="prefix of the PNG files")
    ap.add_argument("--no-png", action="store_true", help="do not write pictures")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    texture, target, losses = fit(a.size, a.steps, a.lr)
    dt = time.perf_counter() - t0
    print(f"{a.steps} steps of a {a.size}x{a.size} texture fit in {dt:.2f} s: "
          f"loss {losses[0]:.4g} -> {losses[-1]:.4g}")
    if not a.no_png:
        try:
            files = save_pictures(a.out, texture, target, losses)
        except ImportError:
            print("matplotlib is not installed: no pictures (pip install -e '.[demo]')")
        else:
            print("wrote " + ", ".join(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
