"""2-D heat equation demo.

An n x n plate stored as a flat Float of n*n cells, cold (0) walls, a few hot
and cold patches held at fixed temperatures, explicit diffusion steps.  The
four neighbours are read with ``gather``; indices are computed with UInt32
arithmetic and ``select`` handles the walls.  The same simulation runs in NumPy
for the timing table and as a cross-check.

    python -m frostjit demo heat [--n 512] [--steps 600] [--out frostjit_demo_heat.png]
    python -m frostjit demo heat --quick --backend drjit
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

try:  # package import (python -m frostjit demo) ...
    from . import _backend, _png
    from ._progress import Progress
except ImportError:  # ... or top-level import in the isolated drjit child
    import _backend
    import _png
    from _progress import Progress

ALPHA = 0.24  # diffusion number; explicit scheme is stable for <= 0.25
DEFAULT_OUT = "frostjit_demo_heat.png"


# ------------------------------------------------------------ problem setup
def sources(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(mask, value) of the cells held at a fixed temperature, flat float32."""
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / max(n - 1, 1)
    mask = np.zeros((n, n), dtype=bool)
    val = np.zeros((n, n), dtype=np.float32)
    for cx, cy, r, t in [(0.28, 0.30, 0.09, 1.0), (0.70, 0.25, 0.06, 0.8),
                         (0.55, 0.72, 0.11, 1.0), (0.22, 0.75, 0.05, -0.6)]:
        d = (xx - cx) ** 2 + (yy - cy) ** 2 < r * r
        mask |= d
        val[d] = t
    # a hot bar along part of the top edge
    bar = (yy < 0.04) & (xx > 0.35) & (xx < 0.9)
    mask |= bar
    val[bar] = 0.9
    return mask.ravel(), val.ravel()


def initial(n: int) -> np.ndarray:
    _, val = sources(n)
    return val.copy()


# ------------------------------------------------------------ jit version
def simulate(dr, T, steps: int, n: int, progress=None, u0=None, frozen: bool = False):
    """Run `steps` explicit heat steps with module `dr` (drjit or frostjit).

    With ``frozen=True`` the step function is wrapped in ``dr.freeze``: the first step traces
    and records its kernel launches, every later step replays them without running Python.

    Returns (field as a flat numpy array, dict of timings in seconds).
    """
    mask_np, val_np = sources(n)
    u = T.Float(initial(n) if u0 is None else np.asarray(u0, dtype=np.float32))
    src_w = T.Float(mask_np.astype(np.float32))
    src_v = T.Float(val_np)

    fixed = src_w > 0.5
    dr.eval(u, src_v, fixed)

    def step(u):
        # Neighbour indices and wall masks are recomputed inside the kernel from the
        # lane index: integer arithmetic is cheaper than reading index arrays from memory.
        idx = dr.arange(T.UInt32, n * n)
        i = idx // n
        j = idx - i * n
        has_l, has_r = j > 0, j < n - 1
        has_u, has_d = i > 0, i < n - 1
        left = dr.gather(T.Float, u, idx - 1, has_l)
        right = dr.gather(T.Float, u, idx + 1, has_r)
        up = dr.gather(T.Float, u, idx - n, has_u)
        down = dr.gather(T.Float, u, idx + n, has_d)
        lap = left + right + up + down - 4.0 * u
        u = u + ALPHA * lap
        u = dr.select(fixed, src_v, u)
        dr.eval(u)
        return u

    if frozen:
        step = dr.freeze(step)
    sync = getattr(dr, "sync_thread", lambda: None)
    times = []
    t_all = time.perf_counter()
    for s in range(steps):
        t0 = time.perf_counter()
        u = step(u)
        sync()
        times.append(time.perf_counter() - t0)
        if progress:
            progress(s + 1)
    total = time.perf_counter() - t_all
    out = np.asarray(u.numpy() if hasattr(u, "numpy") else u, dtype=np.float32)
    return out, _timings(times, total)


# ------------------------------------------------------------ numpy version
def simulate_numpy(steps: int, n: int, progress=None, u0=None):
    mask_np, val_np = sources(n)
    mask, val = mask_np.reshape(n, n), val_np.reshape(n, n)
    u = (initial(n) if u0 is None else np.asarray(u0, dtype=np.float32)).reshape(n, n).copy()
    a, four = np.float32(ALPHA), np.float32(4.0)
    p = np.zeros((n + 2, n + 2), dtype=np.float32)  # zero-padded copy = cold walls
    times = []
    t_all = time.perf_counter()
    for s in range(steps):
        t0 = time.perf_counter()
        p[1:-1, 1:-1] = u
        lap = p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1] - four * u
        u = u + a * lap
        u[mask] = val[mask]
        times.append(time.perf_counter() - t0)
        if progress:
            progress(s + 1)
    total = time.perf_counter() - t_all
    return u.ravel(), _timings(times, total)


def _timings(times, total):
    steady = sorted(times[1:]) if len(times) > 1 else times
    return {"total_s": total, "first_step_s": times[0] if times else 0.0,
            "median_step_s": steady[len(steady) // 2] if steady else 0.0,
            "mean_step_s": total / max(1, len(times))}


def compare(a: np.ndarray, b: np.ndarray) -> float:
    """Max abs difference relative to the reference's max magnitude."""
    return float(np.max(np.abs(a.astype(np.float64) - b)) / max(np.max(np.abs(b)), 1e-30))


# ------------------------------------------------------------ reporting
def timing_table(name: str, tj: dict, tn: dict, steps: int) -> str:
    rows = [
        ("total", tj["total_s"] * 1e3, tn["total_s"] * 1e3),
        ("per step (mean)", tj["mean_step_s"] * 1e3, tn["mean_step_s"] * 1e3),
        ("per step (median)", tj["median_step_s"] * 1e3, tn["median_step_s"] * 1e3),
        ("first step (incl. compile)", tj["first_step_s"] * 1e3, tn["first_step_s"] * 1e3),
    ]
    w0 = max(len(r[0]) for r in rows)
    lines = [f"  {'':{w0}}  {name + ' ms':>14}  {'numpy ms':>12}  {'numpy/' + name:>16}",
             f"  {'-' * w0}  {'-' * 14}  {'-' * 12}  {'-' * 16}"]
    for label, a, b in rows:
        r = f"{b / a:.2f}x" if a > 0 else "n/a"
        lines.append(f"  {label:{w0}}  {a:14.3f}  {b:12.3f}  {r:>16}")
    return "\n".join(lines)


def frozen_table(name: str, tj: dict, tf: dict) -> str:
    """Traced versus frozen (dr.freeze) step times."""
    rows = [("per step (median)", tj["median_step_s"] * 1e3, tf["median_step_s"] * 1e3),
            ("per step (mean)", tj["mean_step_s"] * 1e3, tf["mean_step_s"] * 1e3),
            ("first step (frozen: records)", tj["first_step_s"] * 1e3, tf["first_step_s"] * 1e3)]
    w0 = max(len(r[0]) for r in rows)
    lines = [f"  {'':{w0}}  {'traced ms':>12}  {'frozen ms':>12}  {'traced/frozen':>14}",
             f"  {'-' * w0}  {'-' * 12}  {'-' * 12}  {'-' * 14}"]
    for label, a, b in rows:
        r = f"{a / b:.2f}x" if b > 0 else "n/a"
        lines.append(f"  {label:{w0}}  {a:12.3f}  {b:12.3f}  {r:>14}")
    return f"{name} step, traced versus frozen ({name}.freeze):\n" + "\n".join(lines)


def save_picture(field: np.ndarray, n: int, path: str) -> tuple[int, int]:
    img = _png.colormap(field.reshape(n, n), vmin=-0.6, vmax=1.0)
    img = _png.upscale(img, max(1, 512 // n))
    _png.write_png(path, img)
    return img.shape[1], img.shape[0]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="frostjit demo heat",
                                 description="2-D heat equation with gather/select")
    ap.add_argument("--n", type=int, default=None, help="grid is n x n (default 512)")
    ap.add_argument("--steps", type=int, default=None, help="time steps (default 600)")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"PNG output (default {DEFAULT_OUT})")
    ap.add_argument("--quick", action="store_true", help="short run: n=128, 150 steps")
    ap.add_argument("--backend", default="frostjit", choices=_backend.BACKENDS,
                    help="array module; drjit is for testing and runs in a separate process")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="skip the NumPy run")
    ap.add_argument("--no-freeze", action="store_true", help="skip the run with the step frozen (dr.freeze)")
    return ap


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parser().parse_args(argv)
    if a.backend == "drjit" and not _backend.in_isolated_process():
        return _backend.run_isolated("heat", argv)
    n = a.n or (128 if a.quick else 512)
    steps = a.steps or (150 if a.quick else 600)
    if n < 3 or steps < 1:
        print("need --n >= 3 and --steps >= 1", file=sys.stderr)
        return 2
    try:
        dr, T = _backend.load(a.backend)
    except _backend.BackendUnavailable as e:
        print(f"frostjit demo heat: {e}", file=sys.stderr)
        return 2

    print(f"heat demo: {n} x {n} grid ({n * n} cells), {steps} steps, backend {a.backend}")
    pb = Progress(steps, label=f"{a.backend:>8}", enabled=not a.no_progress)
    field, tj = simulate(dr, T, steps, n, pb)
    pb.close()
    ok = True
    if not a.no_check:
        pb = Progress(steps, label="   numpy", enabled=not a.no_progress)
        ref, tn = simulate_numpy(steps, n, pb)
        pb.close()
        err = compare(field, ref)
        ok = bool(np.isfinite(err) and err <= 1e-4)
        print()
        print(timing_table(a.backend, tj, tn, steps))
        print()
        print(f"check vs NumPy: max |diff| / max |ref| = {err:.2e}  "
              f"(tolerance 1e-4) {'OK' if ok else 'MISMATCH'}")
    else:
        print(f"{a.backend}: total {tj['total_s'] * 1e3:.1f} ms, "
              f"{tj['mean_step_s'] * 1e3:.3f} ms/step")
    if not a.no_freeze and hasattr(dr, "freeze"):
        pb = Progress(steps, label="  frozen", enabled=not a.no_progress)
        ffield, tf = simulate(dr, T, steps, n, pb, frozen=True)
        pb.close()
        same = float(np.max(np.abs(ffield - field)))
        ok = ok and same <= 1e-6 * max(1.0, float(np.max(np.abs(field))))
        print()
        print(frozen_table(a.backend, tj, tf))
        print(f"frozen vs traced result: max |diff| = {same:.2e} {'OK' if same <= 1e-6 else 'MISMATCH'}")
    w, h = save_picture(field, n, a.out)
    print(f"wrote {a.out} ({w} x {h} PNG)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
