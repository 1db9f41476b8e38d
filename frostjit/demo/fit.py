"""Fit 2-D Gaussians to a picture with Adam (automatic differentiation demo).

K isotropic Gaussians (position, width, amplitude) are splatted into an
h x w image: one wide array of K*h*w (gaussian, pixel) pairs, parameters read
with ``gather``, contributions summed into the image with ``scatter_add``.
Loss = mean squared error to a generated target; ``dr.backward`` + ``dr.opt.Adam``.
Then the training step is timed unfrozen and frozen (``dr.freeze``), as medians over
repeats, on this run's problem and on a small one where Python's share is largest.

    python -m frostjit demo fit [--k 256] [--size 64] [--steps 300] [--out frostjit_demo_fit]
    python -m frostjit demo fit --quick --backend drjit

Writes PREFIX_target.png, PREFIX_fit.png and PREFIX_loss.png (matplotlib).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

import numpy as np

try:
    from . import _backend, _options, _plot, _timing
    from ._progress import Progress
except ImportError:  # top-level import in the isolated drjit child
    import _backend
    import _options
    import _plot
    import _timing
    from _progress import Progress

DEFAULT_OUT = "frostjit_demo_fit"
# The small problem of the timing table (16 Gaussians x 8 x 8 pixels = 1024 pairs): its
# kernels take microseconds, so a step's time is almost all Python (tracing, AD graph).
SMALL = (16, 8)


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


def step_runner(dr, T, k: int, size: int, frozen: bool, lr: float = 0.01):
    """``run(n)``: n training steps of a fresh run, synchronized (for ``_timing``)."""
    target, geom, opt, step = _training(dr, T, k, size, lr, frozen)

    def run(n: int) -> None:
        for _ in range(n):
            loss = step(opt, target, geom)
        loss.numpy()  # waits for the step's kernels

    return run


def time_problems(dr, T, problems, repeats: int, steps: int, frozen: bool = True, lr: float = 0.01):
    """Per-step times: ``[((k, size), {"unfrozen": Samples, "frozen": Samples})]``."""
    out = []
    for k, size in problems:
        runners = {"unfrozen": step_runner(dr, T, k, size, False, lr)}
        if frozen:
            runners["frozen"] = step_runner(dr, T, k, size, True, lr)
        out.append(((k, size), _timing.time_interleaved(runners, repeats, steps, warmup=3)))
    return out


def timing_report(name: str, rows, repeats: int, steps: int, this_run) -> str:
    """The step-time table and what it means."""
    has_fr = "frozen" in rows[0][1]
    header = ["Gaussians x pixels", "pairs", "unfrozen ms"] + (["frozen ms", "unfrozen/frozen"] if has_fr else [])
    body = []
    for (k, size), t in rows:
        label = f"{k} x {size}x{size}" + (" (this run)" if (k, size) == this_run else "")
        r = [label, str(k * size * size), _timing.ms(t["unfrozen"])]
        if has_fr:
            r += [_timing.ms(t["frozen"]), _timing.ratio_text(t["unfrozen"], t["frozen"])]
        body.append(r)
    lines = [f"{name} training step (render, loss, backward, Adam), ms: median of {repeats} repeats "
             f"x {steps} steps (ratio: median and range over the repeats)",
             _timing.table(header, body)]
    if has_fr:
        (k0, s0), t0 = min(rows, key=lambda r: r[0][0] * r[0][1] ** 2)
        lines.append(_timing.note(
            f"{name}.freeze records the step once and then replays its kernels without running "
            f"Python (tracing, building the AD graph): that saves "
            f"{_timing.ms(t0['unfrozen'].median - t0['frozen'].median)} ms per step on the "
            f"{k0} x {s0}x{s0} problem (unfrozen - frozen).  That is Python work, the same whatever "
            "the problem size, so the ratio is large when the kernels take microseconds and near 1 when "
            "they take milliseconds."))
        if any("~1x" in c for r in body for c in r):
            lines.append(_timing.note(_timing.NOISE_NOTE + "."))
    return "\n".join(lines)


def save_pictures(prefix: str, target: np.ndarray, img: np.ndarray, losses: np.ndarray,
                  k: int) -> list[str]:
    """PREFIX_target.png, PREFIX_fit.png and PREFIX_loss.png; returns the paths."""
    size = int(round(np.sqrt(target.size)))
    paths = [f"{prefix}_target.png", f"{prefix}_fit.png", f"{prefix}_loss.png"]
    _plot.save(_plot.field_figure(target.reshape(size, size), f"target ({size} x {size})", "intensity",
                                  0.0, 1.0, cmap="gray", axis_label="pixel"), paths[0])
    _plot.save(_plot.field_figure(img.reshape(size, size), f"fit: {k} Gaussians after {len(losses)} "
                                  "Adam steps", "intensity", 0.0, 1.0, cmap="gray",
                                  axis_label="pixel"), paths[1])
    _plot.save(_plot.loss_figure(losses, f"training loss, {k} Gaussians -> {size} x {size} target"),
               paths[2])
    return paths


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m frostjit demo fit",
        description="Fit 2-D Gaussians to a picture with AD and Adam (frozen training step), "
                    "time the step unfrozen and frozen, save the target, the fit and the loss curve.")
    ap.add_argument("--k", type=int, default=None, help="number of Gaussians (default 256, --quick 64)")
    ap.add_argument("--size", type=int, default=None, help="image is size x size (default 64, --quick 32)")
    ap.add_argument("--steps", type=int, default=None, help="Adam steps (default 300, --quick 80)")
    ap.add_argument("--lr", type=float, default=0.01, help="Adam's learning rate (default 0.01)")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"prefix of the PNG files (default {DEFAULT_OUT})")
    return _options.add_shared(ap)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parser().parse_args(argv)
    k = a.k or (64 if a.quick else 256)
    size = a.size or (32 if a.quick else 64)
    steps = a.steps or (80 if a.quick else 300)
    if k < 1 or size < 2 or steps < 1:
        print(f"frostjit demo fit: need --k >= 1, --size >= 2 and --steps >= 1, got --k {k} "
              f"--size {size} --steps {steps}", file=sys.stderr)
        return 2
    if not a.no_plot and not _plot.available():
        print(f"frostjit demo fit: {_plot.missing_message()}", file=sys.stderr)
        return 2
    if a.backend == "drjit" and not _backend.in_isolated_process():
        return _backend.run_isolated("fit", argv)
    try:
        dr, T = _backend.load(a.backend)
        T = _backend.ad_module(dr, T, a.backend)
    except _backend.BackendUnavailable as e:
        print(f"frostjit demo fit: {e}", file=sys.stderr)
        return 2
    frozen = not a.no_freeze
    print(f"fit demo: {k} Gaussians -> {size} x {size} target ({k * size * size} gaussian-pixel pairs), "
          f"{steps} Adam steps, backend {a.backend}{', frozen training step' if frozen else ''}")
    pb = Progress(steps, label=f"{a.backend:>8}", enabled=not a.no_progress)
    img, losses, total = fit(dr, T, k, size, steps, a.lr, pb, frozen=frozen)
    pb.close()
    print(f"loss {losses[0]:.3e} -> {losses[-1]:.3e} "
          f"({losses[0] / max(losses[-1], 1e-30):.1f}x lower) in {total:.2f} s")
    if not a.no_timing:
        repeats, tsteps = (5, 10) if a.quick else (7, 20)
        problems = [SMALL] + ([(k, size)] if (k, size) != SMALL else [])
        rows = time_problems(dr, T, problems, repeats, tsteps, frozen=frozen, lr=a.lr)
        print()
        print(timing_report(a.backend, rows, repeats, tsteps, (k, size)))
    if not a.no_plot:
        paths = save_pictures(a.out, target_image(size), img, losses, k)
        print(f"wrote {', '.join(paths)}")
    return 0 if losses[-1] < losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
