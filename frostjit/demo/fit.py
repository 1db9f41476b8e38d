"""Fit 2-D Gaussians to a picture with Adam (automatic differentiation demo).

K isotropic Gaussians (position, width, amplitude) are splatted into an
h x w image: one wide array of K*h*w (gaussian, pixel) pairs, parameters read
with ``gather``, contributions summed into the image with ``scatter_add``.
Loss = mean squared error to a generated target; ``dr.backward`` + ``dr.opt.Adam``.

    python -m frostjit demo fit [--k 256] [--size 64] [--steps 300] [--out frostjit_demo_fit]
    python -m frostjit demo fit --quick --backend drjit

Writes PREFIX_target.png, PREFIX_fit.png and PREFIX_loss.png.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

try:
    from . import _backend, _png
    from ._progress import Progress
except ImportError:  # top-level import in the isolated drjit child
    import _backend
    import _png
    from _progress import Progress

DEFAULT_OUT = "frostjit_demo_fit"


def target_image(size: int) -> np.ndarray:
    """A smooth face-like test picture in [0, 1], flat float32 of size*size."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64) / (size - 1)
    r = np.hypot(xx - 0.5, yy - 0.5)
    sm = lambda d, w=0.02: 1 / (1 + np.exp(d / w))  # noqa: E731  smooth step
    img = 0.15 + 0.55 * sm(r - 0.42) - 0.4 * sm(np.abs(r - 0.42) - 0.03)
    for cx in (0.36, 0.64):
        img += 0.5 * sm(np.hypot(xx - cx, yy - 0.38) - 0.06)
    mouth = sm(np.abs(np.hypot(xx - 0.5, yy - 0.45) - 0.22) - 0.025) * (yy > 0.55)
    img -= 0.45 * mouth
    return np.clip(img, 0, 1).astype(np.float32).ravel()


def init_params(k: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"mx": rng.uniform(0.05, 0.95, k).astype(np.float32),
            "my": rng.uniform(0.05, 0.95, k).astype(np.float32),
            "log_s": np.full(k, np.log(0.06), dtype=np.float32),
            "amp": rng.uniform(0.0, 0.2, k).astype(np.float32)}


def make_geometry(dr, T, k: int, size: int):
    """Index arrays of the K*h*w (gaussian, pixel) pairs: (g, pix, px, py)."""
    hw = size * size
    gid = dr.arange(T.UInt32, k * hw)
    g = gid // hw                      # which gaussian
    pix = gid - g * hw                 # which pixel
    py = T.Float(pix // size) * (1.0 / (size - 1))
    px = T.Float(pix - (pix // size) * size) * (1.0 / (size - 1))
    dr.eval(g, pix, px, py)
    return g, pix, px, py


def render(dr, T, p, geom, hw: int):
    """Splat the Gaussians with parameters ``p`` (a dict or optimizer) into an hw-pixel image."""
    g, pix, px, py = geom
    mx, my = dr.gather(T.Float, p["mx"], g), dr.gather(T.Float, p["my"], g)
    s = dr.exp(dr.gather(T.Float, p["log_s"], g))
    amp = dr.gather(T.Float, p["amp"], g)
    d2 = dr.square(px - mx) + dr.square(py - my)
    contrib = amp * dr.exp(-d2 / (2.0 * s * s))
    img = dr.zeros(T.Float, hw)
    dr.scatter_add(img, contrib, pix)
    return img


def make_renderer(dr, T, k: int, size: int):
    geom = make_geometry(dr, T, k, size)
    return lambda p: render(dr, T, p, geom, size * size)


def make_step(dr, T, hw: int):
    """One training step: render, loss, backward, Adam step.  Returns the loss (detached).

    Everything it uses is an argument, so ``dr.freeze(make_step(...))`` works.
    """
    def step(opt, target, geom):
        img = render(dr, T, opt, geom, hw)
        loss = dr.mean(dr.square(img - target))
        dr.backward(loss)
        loss = dr.detach(loss)
        dr.schedule(loss)           # computed with the optimizer's state update
        opt.step()
        return loss
    return step


def make_optimizer(dr, T, k: int, lr: float):
    import importlib
    opt = importlib.import_module(dr.__name__ + ".opt").Adam(lr=lr)  # dr.opt.Adam
    for name, v in init_params(k).items():
        opt[name] = T.Float(v)
    return opt


def _training(dr, T, k: int, size: int, lr: float, frozen: bool):
    """(target, geometry, optimizer, step function) of a fresh training run."""
    target = T.Float(target_image(size))
    geom = make_geometry(dr, T, k, size)
    opt = make_optimizer(dr, T, k, lr)
    step = make_step(dr, T, size * size)
    return target, geom, opt, (dr.freeze(step) if frozen else step)


def fit(dr, T, k: int, size: int, steps: int, lr: float = 0.01, progress=None, frozen: bool = False):
    """Run ``steps`` training steps; returns (image, losses, seconds)."""
    target, geom, opt, step = _training(dr, T, k, size, lr, frozen)
    losses, t0 = [], time.perf_counter()
    for i in range(steps):
        loss = step(opt, target, geom)
        losses.append(float(np.asarray(loss.numpy() if hasattr(loss, "numpy") else loss).ravel()[0]))
        if progress:
            progress(i + 1, f"loss {losses[-1]:.3e}")
    total = time.perf_counter() - t0
    with dr.suspend_grad():
        img = render(dr, T, opt, geom, size * size)
        dr.eval(img)
    out = np.asarray(img.numpy(), dtype=np.float32)
    return out, np.array(losses), total


def step_time(dr, T, k: int, size: int, frozen: bool, steps: int = 10, lr: float = 0.01) -> float:
    """Median seconds per training step (after warm-up), frozen or not."""
    target, geom, opt, step = _training(dr, T, k, size, lr, frozen)
    for _ in range(3):
        step(opt, target, geom)
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step(opt, target, geom)
        dr.eval(loss)
        loss.numpy()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def loss_plot(losses: np.ndarray, w: int = 480, h: int = 240) -> np.ndarray:
    """Log-scale loss curve as an RGB image (own rasterizer)."""
    img = np.full((h, w, 3), 255, dtype=np.uint8)
    img[[0, -1], :] = img[:, [0, -1]] = 180
    lg = np.log10(np.maximum(losses, 1e-12))
    lo, hi = lg.min(), lg.max() if lg.max() > lg.min() else lg.min() + 1
    xs = np.linspace(4, w - 5, len(lg))
    ys = (h - 5) - (lg - lo) / (hi - lo) * (h - 10)
    for e in range(int(np.ceil(lo)), int(np.floor(hi)) + 1):
        y = int(round((h - 5) - (e - lo) / (hi - lo) * (h - 10)))
        img[y, 1:-1:3] = (200, 200, 200)
    for a in range(len(lg) - 1):  # polyline, dense sampling
        n = int(max(abs(xs[a + 1] - xs[a]), abs(ys[a + 1] - ys[a]))) + 2
        for t in np.linspace(0, 1, n):
            x = int(round(xs[a] + t * (xs[a + 1] - xs[a])))
            y = int(round(ys[a] + t * (ys[a + 1] - ys[a])))
            img[max(0, y - 1):y + 2, max(0, x - 1):x + 2] = (200, 40, 40)
    return img


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="frostjit demo fit",
                                 description="fit 2-D Gaussians to a picture with Adam")
    ap.add_argument("--k", type=int, default=None, help="number of Gaussians (default 256)")
    ap.add_argument("--size", type=int, default=None, help="image is size x size (default 64)")
    ap.add_argument("--steps", type=int, default=None, help="Adam steps (default 300)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--out", default=DEFAULT_OUT, help="output prefix")
    ap.add_argument("--quick", action="store_true", help="k=64, size=32, 80 steps")
    ap.add_argument("--backend", default="frostjit", choices=_backend.BACKENDS)
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--no-freeze", action="store_true", help="train without dr.freeze")
    a = ap.parse_args(argv)
    if a.backend == "drjit" and not _backend.in_isolated_process():
        return _backend.run_isolated("fit", argv)
    k = a.k or (64 if a.quick else 256)
    size = a.size or (32 if a.quick else 64)
    steps = a.steps or (80 if a.quick else 300)
    try:
        dr, T = _backend.load(a.backend)
        T = _backend.ad_module(dr, T, a.backend)
    except _backend.BackendUnavailable as e:
        print(f"frostjit demo fit: {e}", file=sys.stderr)
        return 2
    frozen = hasattr(dr, "freeze") and not a.no_freeze
    print(f"fit demo: {k} Gaussians -> {size} x {size} target, {steps} Adam steps, "
          f"backend {a.backend}{', frozen training step' if frozen else ''}")
    pb = Progress(steps, label=f"{a.backend:>8}", enabled=not a.no_progress)
    img, losses, total = fit(dr, T, k, size, steps, a.lr, pb, frozen=frozen)
    pb.close()
    print(f"loss {losses[0]:.3e} -> {losses[-1]:.3e} "
          f"({losses[0] / max(losses[-1], 1e-30):.1f}x lower) in {total:.2f} s, "
          f"{total / steps * 1e3:.1f} ms/step")
    if hasattr(dr, "freeze"):
        t_plain = step_time(dr, T, k, size, frozen=False, lr=a.lr)
        try:
            t_frozen = step_time(dr, T, k, size, frozen=True, lr=a.lr)
            print(f"step time: unfrozen {t_plain * 1e3:.2f} ms, frozen {t_frozen * 1e3:.2f} ms "
                  f"({t_plain / t_frozen:.1f}x faster frozen)")
        except Exception as e:  # noqa: BLE001  (report, keep the demo's pictures)
            print(f"step time: unfrozen {t_plain * 1e3:.2f} ms, frozen unavailable "
                  f"({type(e).__name__}: {e})")
    scale = max(1, 384 // size)
    tgt = target_image(size).reshape(size, size)
    _png.write_png(f"{a.out}_target.png", _png.upscale(_png.colormap(tgt, 0, 1), scale))
    _png.write_png(f"{a.out}_fit.png",
                   _png.upscale(_png.colormap(img.reshape(size, size), 0, 1), scale))
    _png.write_png(f"{a.out}_loss.png", loss_plot(losses))
    print(f"wrote {a.out}_target.png, {a.out}_fit.png, {a.out}_loss.png")
    return 0 if losses[-1] < losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
