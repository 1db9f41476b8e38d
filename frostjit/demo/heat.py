"""2-D heat equation demo.

An n x n plate stored as a flat Float of n*n cells, cold (0) walls, a few hot
and cold patches held at fixed temperatures, explicit diffusion steps.  The
four neighbours are read with ``gather``; indices are computed with UInt32
arithmetic and ``select`` handles the walls.  The same simulation runs in NumPy
as a cross-check, then one step is timed (traced, frozen, NumPy) at several
grid sizes, as medians over repeats (see ``_timing``).

    python -m frostjit demo heat [--n 512] [--steps 600] [--out frostjit_demo_heat.png]
    python -m frostjit demo heat --quick --backend drjit
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

try:  # package import (python -m frostjit demo) ...
    from . import _backend, _options, _plot, _timing
    from ._progress import Progress
except ImportError:  # ... or top-level import in the isolated drjit child
    import _backend
    import _options
    import _plot
    import _timing
    from _progress import Progress

ALPHA = 0.24  # diffusion number; explicit scheme is stable for <= 0.25
DEFAULT_OUT = "frostjit_demo_heat.png"
# Grid sizes of the timing table: from one where fixed per-step costs dominate to ones
# where the work does (a 2048 x 2048 NumPy step takes ~15 ms).
TIMING_SIZES, TIMING_SIZES_QUICK = (256, 512, 1024, 2048), (256, 1024)


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
def make_step(dr, T, n: int):
    """The step function ``u -> u'`` of an n x n grid for module ``dr``; evaluates its result."""
    mask_np, val_np = sources(n)
    src_v = T.Float(val_np)
    fixed = T.Float(mask_np.astype(np.float32)) > 0.5
    dr.eval(src_v, fixed)

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

    return step


def simulate(dr, T, steps: int, n: int, progress=None, u0=None, frozen: bool = False):
    """Run `steps` explicit heat steps with module `dr` (drjit or frostjit).

    With ``frozen=True`` the step function is wrapped in ``dr.freeze``: the first step traces
    and records its kernel launches, every later step replays them without running Python.

    Returns (field as a flat numpy array, seconds of the first step, seconds in all).
    """
    u = T.Float(initial(n) if u0 is None else np.asarray(u0, dtype=np.float32))
    dr.eval(u)
    step = make_step(dr, T, n)
    if frozen:
        step = dr.freeze(step)
    sync = getattr(dr, "sync_thread", lambda: None)
    t_all = time.perf_counter()
    first = 0.0
    for s in range(steps):
        u = step(u)
        sync()
        if s == 0:
            first = time.perf_counter() - t_all
        if progress:
            progress(s + 1)
    total = time.perf_counter() - t_all
    out = np.asarray(u.numpy() if hasattr(u, "numpy") else u, dtype=np.float32)
    return out, first, total


def jit_runner(dr, T, n: int, frozen: bool):
    """``run(k)``: k more steps on an n x n grid, synchronized; returns the field (a ``T.Float``).

    For ``_timing.time_interleaved``: each call continues from where the last one stopped.
    """
    step = make_step(dr, T, n)
    if frozen:
        step = dr.freeze(step)
    sync = getattr(dr, "sync_thread", lambda: None)
    state = [T.Float(initial(n))]

    def run(k: int):
        u = state[0]
        for _ in range(k):
            u = step(u)
        sync()
        state[0] = u
        return u

    return run


# ------------------------------------------------------------ numpy version
def numpy_step(n: int):
    """The NumPy step function ``u -> u'`` on an (n, n) float32 array."""
    mask_np, val_np = sources(n)
    mask, val = mask_np.reshape(n, n), val_np.reshape(n, n)
    a, four = np.float32(ALPHA), np.float32(4.0)
    p = np.zeros((n + 2, n + 2), dtype=np.float32)  # zero-padded copy = cold walls

    def step(u):
        p[1:-1, 1:-1] = u
        lap = p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1] - four * u
        u = u + a * lap
        u[mask] = val[mask]
        return u

    return step


def simulate_numpy(steps: int, n: int, progress=None, u0=None) -> np.ndarray:
    """The same simulation in NumPy; returns the flat field."""
    u = (initial(n) if u0 is None else np.asarray(u0, dtype=np.float32)).reshape(n, n).copy()
    step = numpy_step(n)
    for s in range(steps):
        u = step(u)
        if progress:
            progress(s + 1)
    return u.ravel()


def numpy_runner(n: int):
    """``run(k)``: k more NumPy steps on an n x n grid; returns the (n, n) field."""
    step = numpy_step(n)
    state = [initial(n).reshape(n, n).copy()]

    def run(k: int) -> np.ndarray:
        u = state[0]
        for _ in range(k):
            u = step(u)
        state[0] = u
        return u

    return run


def compare(a: np.ndarray, b: np.ndarray) -> float:
    """Max abs difference relative to the reference's max magnitude."""
    return float(np.max(np.abs(a.astype(np.float64) - b)) / max(np.max(np.abs(b)), 1e-30))


# ------------------------------------------------------------ timing
def time_sizes(dr, T, name: str, sizes, repeats: int, steps: int, numpy: bool = True,
               frozen: bool = True) -> list[tuple[int, dict[str, _timing.Samples]]]:
    """Per-step times at each grid size: ``[(n, {"numpy"|name|"frozen": Samples})]``."""
    out = []
    for n in sizes:
        runners = {}
        if numpy:
            runners["numpy"] = numpy_runner(n)
        runners[name] = jit_runner(dr, T, n, frozen=False)
        if frozen:
            runners["frozen"] = jit_runner(dr, T, n, frozen=True)
        out.append((n, _timing.time_interleaved(runners, repeats, steps)))
    return out


def timing_report(name: str, rows, repeats: int, steps: int) -> str:
    """The timing table and what its columns mean."""
    has_np, has_fr = "numpy" in rows[0][1], "frozen" in rows[0][1]
    best = "frozen" if has_fr else name
    header = ["grid", "cells"] + (["numpy ms"] if has_np else []) + [f"{name} ms"]
    header += (["frozen ms"] if has_fr else []) + ([f"numpy/{best}"] if has_np else [])
    header += ([f"{name}/frozen"] if has_fr else [])
    body = []
    for n, t in rows:
        r = [f"{n} x {n}", str(n * n)] + ([_timing.ms(t["numpy"])] if has_np else [])
        r += [_timing.ms(t[name])] + ([_timing.ms(t["frozen"])] if has_fr else [])
        r += [_timing.ratio_text(t["numpy"], t[best])] if has_np else []
        r += [_timing.ratio_text(t[name], t["frozen"])] if has_fr else []
        body.append(r)
    lines = [f"one heat step, ms: median of {repeats} repeats x {steps} steps "
             f"(ratios: median and range over the repeats)",
             _timing.table(header, body)]
    if has_np:
        lines.append(_timing.note(
            f"numpy/{best}: how many times faster the {'frozen' if has_fr else 'traced'} {name} "
            f"step is than NumPy's.  {name} runs the "
            "step as one fused kernel on all cores; NumPy makes ~10 passes over the grid, each "
            "with a temporary.  On small grids fixed costs per step dominate (NumPy's ufunc "
            f"calls, {name}'s {'replay' if has_fr else 'tracing'} and launch); the large grids "
            "show the throughput."))
    if has_fr:
        n0, t0 = min(rows, key=lambda r: r[0])
        lines.append(_timing.note(
            f"{name}/frozen: {name}.freeze replays the recorded kernel instead of running the "
            f"Python step, which saves {_timing.ms(t0[name].median - t0['frozen'].median)} ms per step "
            f"on the {n0} x {n0} grid (traced - frozen).  That is Python work, the same whatever "
            "the grid size, so the ratio is large on small grids and near 1 on large ones."))
    if any("~1x" in c for r in body for c in r):
        lines.append(_timing.note(_timing.NOISE_NOTE + "."))
    return "\n".join(lines)


# ------------------------------------------------------------ pictures
def save_picture(field: np.ndarray, n: int, steps: int, path: str) -> tuple[int, int]:
    """The final temperature field with axes in cells and a colorbar; returns (w, h) pixels."""
    fig = _plot.field_figure(field.reshape(n, n), f"heat equation: {n} x {n} grid after {steps} steps",
                             "temperature", vmin=-0.6, vmax=1.0)
    return _plot.save(fig, path)


# ------------------------------------------------------------ command line
def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m frostjit demo heat",
        description="2-D heat equation with gather/select: simulate, check against NumPy, "
                    "time one step (traced, frozen, NumPy) at several grid sizes, save a picture.")
    ap.add_argument("--n", type=int, default=None, help="the simulated grid is n x n (default 512, --quick 128)")
    ap.add_argument("--steps", type=int, default=None, help="time steps simulated (default 600, --quick 150)")
    ap.add_argument("--out", default=DEFAULT_OUT, help=f"PNG output (default {DEFAULT_OUT})")
    ap.add_argument("--timing-sizes", default=None, metavar="N,N,...",
                    help="grid sizes of the timing table (default "
                         f"{','.join(map(str, TIMING_SIZES))}, --quick {','.join(map(str, TIMING_SIZES_QUICK))})")
    ap.add_argument("--no-check", action="store_true", help="skip NumPy (the cross-check and its timings)")
    return _options.add_shared(ap)


def _sizes(text: str | None, quick: bool) -> tuple[int, ...]:
    if text is None:
        return TIMING_SIZES_QUICK if quick else TIMING_SIZES
    try:
        sizes = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 3:
        raise ValueError(f"--timing-sizes wants a comma list of integers >= 3, got {text!r}")
    return sizes


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parser().parse_args(argv)
    n = a.n or (128 if a.quick else 512)
    steps = a.steps or (150 if a.quick else 600)
    try:
        sizes = _sizes(a.timing_sizes, a.quick)
    except ValueError as e:
        print(f"frostjit demo heat: {e}", file=sys.stderr)
        return 2
    if n < 3 or steps < 1:
        print(f"frostjit demo heat: need --n >= 3 and --steps >= 1, got --n {n} --steps {steps}",
              file=sys.stderr)
        return 2
    if not a.no_plot and not _plot.available():
        print(f"frostjit demo heat: {_plot.missing_message()}", file=sys.stderr)
        return 2
    if a.backend == "drjit" and not _backend.in_isolated_process():
        return _backend.run_isolated("heat", argv)
    try:
        dr, T = _backend.load(a.backend)
    except _backend.BackendUnavailable as e:
        print(f"frostjit demo heat: {e}", file=sys.stderr)
        return 2
    name = a.backend

    print(f"heat demo: {n} x {n} grid ({n * n} cells), {steps} steps, backend {name}")
    pb = Progress(steps, label=f"{name:>8}", enabled=not a.no_progress)
    field, first, total = simulate(dr, T, steps, n, pb)
    pb.close()
    print(f"{name}: {total * 1e3:.0f} ms in all; the first step (trace + compile, or load from "
          f"the kernel cache) took {first * 1e3:.1f} ms")
    ok = True
    if not a.no_check:
        pb = Progress(steps, label="   numpy", enabled=not a.no_progress)
        ref = simulate_numpy(steps, n, pb)
        pb.close()
        err = compare(field, ref)
        ok = bool(np.isfinite(err) and err <= 1e-4)
        print(f"check vs NumPy: max |diff| / max |ref| = {err:.2e} (tolerance 1e-4) "
              f"{'OK' if ok else 'MISMATCH'}")
    if not a.no_freeze:
        pb = Progress(steps, label="  frozen", enabled=not a.no_progress)
        ffield, ffirst, _ = simulate(dr, T, steps, n, pb, frozen=True)
        pb.close()
        same = float(np.max(np.abs(ffield - field)))
        fok = same <= 1e-6 * max(1.0, float(np.max(np.abs(field))))
        ok = ok and fok
        print(f"frozen ({name}.freeze) vs traced: max |diff| = {same:.2e} {'OK' if fok else 'MISMATCH'}; "
              f"its first step (trace + record) took {ffirst * 1e3:.1f} ms")
    if not a.no_timing:
        repeats, tsteps = (5, 10) if a.quick else (7, 20)
        rows = time_sizes(dr, T, name, sizes, repeats, tsteps, numpy=not a.no_check,
                          frozen=not a.no_freeze)
        print()
        print(timing_report(name, rows, repeats, tsteps))
    if not a.no_plot:
        w, h = save_picture(field, n, steps, a.out)
        print(f"wrote {a.out} ({w} x {h} PNG)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
