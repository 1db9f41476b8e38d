"""AD benchmark: the fit demo's training step (render, loss, backward, Adam step),
frostjit beside Dr.Jit, unfrozen and frozen.

    python benchmarks/bench_ad.py [--quick] [--problems small,large] [--threads N] [--no-optimizers] [--json out/ad.json]
    python benchmarks/bench_ad.py --interleave [--rounds R] [--base CHECKOUT]

Problems: K Gaussians splatted into an s x s image, K*s*s (gaussian, pixel)
pairs: small = 16 x 8 x 8 (1e3), large = 256 x 64 x 64 (1e6).  Each system
runs in its own subprocess (never drjit and frostjit in one process); this
script re-runs itself with ``--child SYSTEM`` for that.

Targets (from the issue): frozen frostjit no slower than frozen Dr.Jit, and at
least 10x faster than unfrozen frostjit on the small problem.

Two more frostjit modes differentiate *through* a frozen forward pass (render and loss frozen,
``fj.backward(loss)`` outside replays its recorded backward derivative): ``fwd frozen`` with
``opt.step()`` unfrozen, and ``fwd frozen + step frozen`` with the optimizer step frozen
separately.  Dr.Jit gives zero gradients there (its frozen outputs are new AD leaves), so its
column is its frozen whole step.  Targets: ``fwd frozen + step frozen`` at least 10x faster than
unfrozen and no slower than Dr.Jit's frozen step (small).  That table also gives the median CPU
time of the process per step (``process_time``: less sensitive than wall time to other load on a
shared machine), beside Dr.Jit's frozen step and frostjit's whole step frozen.

``--opcodes`` (frostjit only, small problem) counts the Python bytecode instructions each part of
a replayed step runs (``sys.settrace`` with opcode events: the same count on a loaded or a quiet
machine, so a change of a few microseconds shows where wall times drown in the noise): the forward
call, ``backward``, ``opt.step()`` of the through-the-forward step, beside the whole step frozen,
and the functions that run the most of them (with ``--lines``, also the lines of the whole step's
generated binder and replay that run the most).

``--parts`` (frostjit only, small problem) gives the CPU time of each part of a replayed step
(``time.process_time`` around each call, in batches of 300 steps, median of 9 batches): the forward
call, ``backward``, a frozen ``opt.step()`` and reading the loss back, beside the whole step frozen
on its own optimizer, interleaved step by step so that both see the same load.

``--interleave [--rounds R] [--base CHECKOUT]`` runs the small problem's frozen steps (frostjit's whole
step frozen and ``fwd frozen + step frozen``, Dr.Jit's frozen step, and frostjit from ``CHECKOUT``
with ``--base``) in interleaved rounds, one long-lived child per system asked in turn, and gives each
frostjit mode over Dr.Jit's frozen step round by round: the issue's target measured so that a
loaded machine, or the host's slow phases, slow every system alike.

A second table times one optimizer step (``opt.step()`` after ``set_grad``, unfrozen, until
the kernels finished) per optimizer on 1e3 and 1e6 parameters, beside Dr.Jit.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

PROBLEMS = {"small": (16, 8), "large": (256, 64)}
# optimizer-step rows: name -> (class, keyword arguments)
OPTIMIZERS = {"SGD (momentum 0.9)": ("SGD", {"momentum": 0.9}), "RMSProp": ("RMSProp", {}),
              "Adam": ("Adam", {}), "AdamW": ("AdamW", {"weight_decay": 0.01})}
OPT_SIZES = (10**3, 10**6)
SYSTEMS = ["frostjit", "drjit"]
MODES = ["unfrozen", "frozen"]
# frostjit only: the forward pass frozen, the backward pass through its result
THROUGH_MODES = ["fwd frozen", "fwd frozen + step frozen"]


# ----------------------------------------------------------------- child side
def load(system: str, params: dict):
    """``(module, AD types module, fit demo module)`` of ``system`` in a child, its thread count
    set from ``params``."""
    sys.path.insert(0, os.path.join(H.REPO, "frostjit", "demo"))
    import fit  # the demo module, imported without the frostjit package (drjit child)
    if system == "drjit":
        import drjit as dr
        import drjit.llvm.ad as T
    else:
        import frostjit as dr
        import frostjit.llvm.ad as T
    _workloads.apply_threads(system, params.get("threads"))
    return dr, T, fit


def child(system: str, params: dict) -> dict:
    import numpy as np
    dr, T, fit = load(system, params)
    out = {"version": getattr(dr, "__version__", "?"), "threads": _workloads.thread_count(system, dr)}
    if params.get("opcodes"):
        out["opcodes"] = opcode_counts(dr, T, fit, params.get("lines", False))
        return out
    if params.get("parts"):
        out["parts"] = part_times(dr, T, fit)
        return out
    for name in params["problems"]:
        k, size = PROBLEMS[name]
        warmup, repeats = (5, params["repeats_small"]) if name == "small" else (3, params["repeats_large"])
        for mode in MODES + (THROUGH_MODES if system == "frostjit" else []):
            key = f"{name}/{mode}"
            try:
                one_step, opt, geom = training_step(dr, T, fit, name, mode)
                first_ms, _ = H.time_first(one_step)
                steps = H.time_calls(one_step, repeats, warmup=warmup - 1)
                img = fit.render(dr, T, opt, geom, size * size)
                out[key] = {"status": "ok", "step_ms": steps.ms, "step_cpu_ms": steps.cpu_ms, "first_ms": first_ms,
                            "loss": steps.result, "steps": warmup + repeats,
                            "checksum": float(np.asarray(img.numpy()).astype(np.float64).sum())}
            except Exception as e:  # noqa: BLE001  (a mode that fails is reported, not fatal)
                out[key] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
    if params.get("opt_repeats"):
        out.update(optimizer_steps(dr, T, params["opt_repeats"]))
    return out


def training_step(dr, T, fit, problem: str, mode: str):
    """``(one_step, opt, geom)``: a fresh training run of ``problem`` in ``mode`` (one of
    :data:`MODES` or :data:`THROUGH_MODES`); ``one_step()`` takes one step and returns the loss
    as a Python float (read back, so that the step's kernels have run)."""
    k, size = PROBLEMS[problem]
    target = T.Float(fit.target_image(size))
    geom = fit.make_geometry(dr, T, k, size)
    opt = fit.make_optimizer(dr, T, k, 0.01)
    step = fit.make_step(dr, T, size * size)
    if mode == "frozen":
        step = dr.freeze(step)
    elif mode in THROUGH_MODES:
        step = through_step(dr, T, fit, size * size, mode)

    def one_step():
        return float(step(opt, target, geom).numpy()[0])
    return one_step, opt, geom


def opcode_counts(dr, T, fit, lines: bool = False) -> dict:
    """Python bytecode instructions per part of one replayed training step (small problem): the
    forward call, ``backward`` and ``opt.step()`` through a frozen forward pass, and the whole step
    frozen; with the functions that run the most of them.  Deterministic (``sys.settrace`` opcode
    events), unlike wall or CPU time on a shared machine."""
    import collections
    k, size = PROBLEMS["small"]
    target = T.Float(fit.target_image(size))
    geom = fit.make_geometry(dr, T, k, size)
    opt, opt2 = fit.make_optimizer(dr, T, k, 0.01), fit.make_optimizer(dr, T, k, 0.01)
    forward = dr.freeze(lambda opt, target, geom: dr.mean(dr.square(fit.render(dr, T, opt, geom, size * size)
                                                                      - target)))
    whole = dr.freeze(fit.make_step(dr, T, size * size))
    for _ in range(10):         # recorded, derivative bound, kept intermediates planned
        loss = forward(opt, target, geom)
        dr.backward(loss)
        opt.step()
        whole(opt2, target, geom)
    per_fn = collections.Counter()

    def tracer(frame, event, arg):
        if event == "call":
            frame.f_trace_opcodes = True
        elif event == "opcode":
            per_fn[_code_name(frame.f_code)] += 1
        return tracer

    def count(fn, *a):
        per_fn.clear()
        sys.settrace(tracer)
        try:
            r = fn(*a)
        finally:
            sys.settrace(None)
        return r, {"total": sum(per_fn.values()), "top": per_fn.most_common(8)}

    out = {}
    loss, out["forward call"] = count(lambda: forward(opt, target, geom))
    _, out["backward"] = count(dr.backward, loss)
    _, out["opt.step()"] = count(opt.step)
    _, out["whole step frozen"] = count(lambda: whole(opt2, target, geom))
    if lines:
        out["lines"] = _line_counts(lambda: whole(opt2, target, geom))
    return out


def _line_counts(fn) -> list:
    """Bytecode instructions per source line of generated code (binders, replays) in one call of
    ``fn``, numbers in the lines replaced by N so that lines of one kind add up (``node_N = ...``);
    the 15 largest as ``[count, line]``."""
    import collections
    import linecache
    import re
    per_line = collections.Counter()

    def tracer(frame, event, arg):
        if event == "call":
            frame.f_trace_opcodes = True
        elif event == "opcode":
            c = frame.f_code
            if c.co_filename.startswith("<frostjit"):
                text = linecache.getline(c.co_filename, frame.f_lineno).strip()
                per_line[f"{_code_name(c)} " + re.sub(r"\d+", "N", text)[:100]] += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return [[n, text] for text, n in per_line.most_common(15)]


def part_times(dr, T, fit, batches: int = 9, steps: int = 300) -> dict:
    """CPU microseconds per part of one replayed small step (median of ``batches`` batches of
    ``steps`` steps): the forward call, ``backward``, a frozen ``opt.step()`` and the loss read back
    of the through-the-forward step, and the whole step frozen (on a second optimizer), run in
    alternation so that both see the same load."""
    k, size = PROBLEMS["small"]
    hw = size * size
    target = T.Float(fit.target_image(size))
    geom = fit.make_geometry(dr, T, k, size)
    opt, opt2 = fit.make_optimizer(dr, T, k, 0.01), fit.make_optimizer(dr, T, k, 0.01)
    forward = dr.freeze(lambda opt, target, geom: dr.mean(dr.square(fit.render(dr, T, opt, geom, hw) - target)))
    update = dr.freeze(lambda opt: opt.step())
    whole = dr.freeze(fit.make_step(dr, T, hw))
    for _ in range(30):         # recorded, derivative bound, kept intermediates planned
        loss = forward(opt, target, geom)
        dr.backward(loss)
        update(opt)
        whole(opt2, target, geom)
    names = ["forward call", "backward", "opt.step() (frozen)", "read the loss", "whole step frozen"]
    per = {n: [] for n in names}
    clock = time.process_time
    for _ in range(batches):
        acc = [0.0] * 5
        for _ in range(steps):
            t0 = clock()
            loss = forward(opt, target, geom)
            t1 = clock()
            dr.backward(loss)
            t2 = clock()
            update(opt)
            t3 = clock()
            float(dr.detach(loss).numpy()[0])
            t4 = clock()
            float(whole(opt2, target, geom).numpy()[0])
            t5 = clock()
            acc[0] += t1 - t0
            acc[1] += t2 - t1
            acc[2] += t3 - t2
            acc[3] += t4 - t3
            acc[4] += t5 - t4
        for n, a in zip(names, acc):
            per[n].append(a / steps * 1e6)
    return {n: statistics.median(v) for n, v in per.items()}


def through_step(dr, T, fit, hw: int, mode: str):
    """The training step with the forward pass (render, loss) frozen and ``backward`` outside
    it, through its result; the optimizer step frozen too for ``... + step frozen``."""
    def forward(opt, target, geom):
        img = fit.render(dr, T, opt, geom, hw)
        return dr.mean(dr.square(img - target))
    frozen_forward = dr.freeze(forward)
    update = dr.freeze(lambda opt: opt.step()) if mode.endswith("step frozen") else (lambda opt: opt.step())

    def step(opt, target, geom):
        loss = frozen_forward(opt, target, geom)
        dr.backward(loss)
        update(opt)
        return dr.detach(loss)
    return step


def optimizer_steps(dr, T, repeats: int) -> dict:
    """Median ms of one unfrozen ``opt.step()`` (gradient already set) per optimizer and size."""
    import numpy as np
    opt_module = __import__(dr.__name__ + ".opt", fromlist=["opt"])
    out = {}
    for label, (cls, kwargs) in OPTIMIZERS.items():
        for n in OPT_SIZES:
            key = f"opt/{label}/{n}"
            try:
                opt = getattr(opt_module, cls)(lr=1e-3, **kwargs)
                opt["x"] = T.Float(np.linspace(-1, 1, n, dtype=np.float32))
                g = T.Float(np.linspace(0.5, 1.5, n, dtype=np.float32))
                dr.eval(g)
                reps = repeats if n <= 10**3 else max(5, repeats // 10)
                ts = []
                for i in range(reps + 5):
                    dr.set_grad(opt["x"], g)
                    t0 = time.perf_counter()
                    opt.step()
                    dr.sync_thread()
                    if i >= 5:
                        ts.append(time.perf_counter() - t0)
                out[key] = {"status": "ok", "step_ms": statistics.median(ts) * 1e3}
            except Exception as e:  # noqa: BLE001
                out[key] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
    return out


# ----------------------------------------------------------------- interleaved rounds
# --interleave: the small problem's frozen steps, one long-lived child per system asked in turn
# (rounds rotate the order), so that every system sees the same load and the same phase of the
# host: on this project's VMs a pure-Python loop alone runs 1.6-1.8x slower for 0.1-1 s at a time
# (docs/benchmarks.md, "Session r13, lane adstep"), which single runs of separate processes turn
# into ratios anywhere between 0.7x and 1.2x.
INTERLEAVE_CASES = {"frostjit": ["frozen", THROUGH_MODES[1]], "drjit": ["frozen"]}
INTERLEAVE_STEPS = 50       # steps per batch: one batch per child, case and round
INTERLEAVE_WARMUP = 30      # untimed steps per case first (recorded, derivative bound, intermediates kept)


def serve(system: str, params: dict) -> None:
    """The child of ``--interleave``: the small problem's :data:`INTERLEAVE_CASES` for ``system``,
    warmed up, then requests answered on stdin (:func:`_harness.serve_requests`)."""
    dr, T, fit = load(system, params)
    run = {mode: training_step(dr, T, fit, "small", mode)[0] for mode in INTERLEAVE_CASES[system]}
    for fn in run.values():
        for _ in range(INTERLEAVE_WARMUP):
            fn()
    H.serve_requests(run, warm=0)


def interleave(params: dict, rounds: int, base: str | None) -> dict:
    """``--interleave``: per child (``frostjit``, ``drjit``, ``frostjit@base``) and case, the
    rounds' median wall ms and mean CPU ms per step (``{"wall": [...], "cpu": [...]}``, one entry
    per round)."""
    # (Dr.Jit only where installed: looked up, never imported here, beside frostjit)
    systems = [s for s in SYSTEMS if s == "frostjit" or importlib.util.find_spec(s) is not None]
    with H.Servers(__file__, systems, params.get("threads"), params, base) as servers:
        out = {name: {case: {"wall": [], "cpu": []} for case in INTERLEAVE_CASES[name.split("@")[0]]}
               for name in servers.names}
        for r in range(rounds):
            for name in servers.order(r):
                for case in out[name]:
                    wall, cpu = servers.batch(name, {"case": case, "calls": INTERLEAVE_STEPS})
                    out[name][case]["wall"].append(wall)
                    out[name][case]["cpu"].append(cpu)
    return out


def report_interleave(res: dict, rounds: int) -> None:
    """The table of :func:`interleave`: each child's cases, then each frostjit case over Dr.Jit's
    frozen step, round by round (median and range of the rounds' ratios)."""
    print(f"small problem, interleaved: median over {rounds} rounds of the median wall ms of "
          f"{INTERLEAVE_STEPS} steps [lowest-highest round]; CPU: median of the rounds' mean CPU ms per step")
    rows = []
    for name, cases in res.items():
        for case, v in cases.items():
            rows.append([name, case, f"{H.fmt(statistics.median(v['wall']))} "
                         f"[{H.fmt(min(v['wall']))}-{H.fmt(max(v['wall']))}]", H.fmt(statistics.median(v["cpu"]))])
    print(H.table(["child", "mode", "wall ms", "CPU ms"], rows))
    if "drjit" not in res:
        print("(no Dr.Jit: drjit is not installed)")
        return
    anchor = res["drjit"]["frozen"]
    print("ratio to Dr.Jit's frozen step in the same round (median [range] of the rounds):")
    rows = []
    for name, cases in res.items():
        if name == "drjit":
            continue
        for case, v in cases.items():
            cells = []
            for key in ("wall", "cpu"):
                r = sorted(a / b for a, b in zip(v[key], anchor[key]))
                cells.append(f"{statistics.median(r):.2f}x [{r[0]:.2f}-{r[-1]:.2f}]")
            rows.append([name, case] + cells)
    print(H.table(["child", "mode", "wall / drjit frozen", "CPU / drjit frozen"], rows))


# ----------------------------------------------------------------- driver side
def run_child(system: str, params: dict, timeout: float = 1800) -> dict:
    return H.run_script_child(__file__, system, params, timeout, fresh_cache=False)


def _code_name(c) -> str:
    """A short name of a code object: generated replays and binders by kind."""
    f = c.co_filename
    if f.startswith("<frostjit.freeze binder"):
        return "(binder)"
    if "freeze_replay" in f:
        return "(replay of the backward derivative)" if "backward_derivative" in f else "(replay)"
    return f"{os.path.basename(f)}:{c.co_name}"


def report_opcodes(counts: dict) -> None:
    """The table of :func:`opcode_counts`."""
    parts = ["forward call", "backward", "opt.step()"]
    through = sum(counts[p]["total"] for p in parts)
    whole = counts["whole step frozen"]["total"]
    print("Python bytecode instructions per replayed step (small problem; deterministic)")
    rows = [[p, str(counts[p]["total"])] for p in parts]
    rows += [["fwd frozen, backward, step (sum)", str(through)], ["whole step frozen", str(whole)],
             ["sum / whole", H.fmt_ratio(through / whole)]]
    print(H.table(["part", "instructions"], rows))
    for p in parts + ["whole step frozen"]:
        print(f"  {p}: " + ", ".join(f"{name} {n}" for name, n in counts[p]["top"]))
    if counts.get("lines"):
        print("whole step frozen, generated code by line (numbers replaced by N):")
        for n, text in counts["lines"]:
            print(f"  {n:5d}  {text}")


def report_parts(parts: dict) -> None:
    """The table of :func:`part_times`."""
    print("CPU time per part of a replayed small step (us, median of 9 batches of 300 steps; "
          "the whole step frozen in alternation)")
    through = sum(v for n, v in parts.items() if n != "whole step frozen")
    rows = [[n, H.fmt(v)] for n, v in parts.items()]
    rows += [["through step (sum of the four parts)", H.fmt(through)],
             ["sum / whole", H.fmt_ratio(through / parts["whole step frozen"])]]
    print(H.table(["part", "CPU us"], rows))


def report(res: dict, problems) -> None:
    def step(system, name, mode):
        r = res.get(system, {}).get(f"{name}/{mode}")
        return r.get("step_ms") if r and r.get("status") == "ok" else None

    def cpu(system, name, mode):
        r = res.get(system, {}).get(f"{name}/{mode}")
        return r.get("step_cpu_ms") if r and r.get("status") == "ok" else None

    def cell(system, name, mode):
        r = res.get(system, {}).get(f"{name}/{mode}")
        if not r:
            return "n/a"
        if r.get("status") != "ok":
            return "error"
        return H.fmt(r["step_ms"], " ms")

    rows = []
    for name in problems:
        k, size = PROBLEMS[name]
        label = f"{name} ({k}x{size}x{size} = {H.fmt_n(k * size * size) if k * size * size in (10**3, 10**6) else k * size * size})"
        rows.append([label] + [cell(s, name, m) for s in SYSTEMS for m in MODES]
                    + [H.fmt_ratio(H.ratio(step("frostjit", name, "frozen"), step("drjit", name, "frozen"))),
                       H.fmt_ratio(H.ratio(step("frostjit", name, "unfrozen"), step("frostjit", name, "frozen")))])
    print("training step of the fit demo (render, loss, backward, Adam step), median ms/step")
    print(H.table(["problem", "fj unfrozen", "fj frozen", "drjit unfrozen", "drjit frozen",
                   "fj frozen / drjit frozen", "fj unfrozen / fj frozen"], rows))
    if "small" in problems:
        r1 = H.ratio(step("frostjit", "small", "frozen"), step("drjit", "small", "frozen"))
        r2 = H.ratio(step("frostjit", "small", "unfrozen"), step("frostjit", "small", "frozen"))
        print(f"  target: frozen frostjit <= frozen drjit (small): {H.fmt_ratio(r1)} {H.check(r1, '<=', 1.0)} "
              f"(CPU time: {H.fmt_ratio(H.ratio(cpu('frostjit', 'small', 'frozen'), cpu('drjit', 'small', 'frozen')))})")
        print(f"  target: frozen >= 10x faster than unfrozen frostjit (small): {H.fmt_ratio(r2)} "
              f"{H.check(r2, '>=', 10.0)}")
    if "large" in problems:
        r3 = H.ratio(step("frostjit", "large", "frozen"), step("drjit", "large", "frozen"))
        print(f"  large problem, frozen frostjit / frozen drjit: {H.fmt_ratio(r3)}")
    if any(res.get("frostjit", {}).get(f"{name}/{m}") for name in problems for m in THROUGH_MODES):
        print()
        print("gradients through a frozen forward pass (frostjit: render + loss frozen, fj.backward(loss) "
              "outside replays the recorded backward derivative), median ms/step")
        trows = []
        for name in problems:
            for m in THROUGH_MODES:
                t = step("frostjit", name, m)
                c = cpu("frostjit", name, m)
                trows.append([name, m, H.fmt(t, " ms") if t is not None else cell("frostjit", name, m),
                              H.fmt_ratio(H.ratio(step("frostjit", name, "unfrozen"), t)),
                              H.fmt_ratio(H.ratio(t, step("drjit", name, "frozen"))),
                              H.fmt(c, " ms") if c is not None else "n/a",
                              H.fmt_ratio(H.ratio(c, cpu("drjit", name, "frozen"))),
                              H.fmt_ratio(H.ratio(c, cpu("frostjit", name, "frozen")))])
        print(H.table(["problem", "mode", "fj", "fj unfrozen / this", "this / drjit frozen step", "fj CPU",
                       "CPU: this / drjit frozen step", "CPU: this / fj frozen step"], trows))
        if "small" in problems:
            t = step("frostjit", "small", THROUGH_MODES[1])
            r4 = H.ratio(step("frostjit", "small", "unfrozen"), t)
            r5 = H.ratio(t, step("drjit", "small", "frozen"))
            print(f"  target: fwd + step frozen >= 10x faster than unfrozen (small): {H.fmt_ratio(r4)} "
                  f"{H.check(r4, '>=', 10.0)}")
            r6 = H.ratio(cpu("frostjit", "small", THROUGH_MODES[1]), cpu("drjit", "small", "frozen"))
            print(f"  target: fwd + step frozen <= drjit's frozen step (small): {H.fmt_ratio(r5)} "
                  f"{H.check(r5, '<=', 1.0)} (CPU time: {H.fmt_ratio(r6)} {H.check(r6, '<=', 1.0)})")
    if any(k.startswith("opt/") for r in res.values() if isinstance(r, dict) for k in r):
        print()
        print("one optimizer step (opt.step() after set_grad, unfrozen, until the kernels finished), median ms")
        orows = []
        for label in OPTIMIZERS:
            for n in OPT_SIZES:
                ms = [res.get(s, {}).get(f"opt/{label}/{n}") for s in SYSTEMS]
                vals = [r["step_ms"] if r and r.get("status") == "ok" else None for r in ms]
                orows.append([label, H.fmt_n(n)] + [H.fmt(v, " ms") if v is not None else "n/a" for v in vals]
                             + [H.fmt_ratio(H.ratio(vals[0], vals[1]))])
        print(H.table(["optimizer", "parameters", "frostjit", "drjit", "frostjit / drjit"], orows))
    print()
    print("loss after the same number of steps (the trajectories should agree):")
    for name in problems:
        parts = []
        for s in SYSTEMS:
            for m in MODES + (THROUGH_MODES if s == "frostjit" else []):
                r = res.get(s, {}).get(f"{name}/{m}")
                parts.append(f"{s} {m} " + (f"{r['loss']:.6e}" if r and r.get("status") == "ok" else "n/a"))
        print(f"  {name}: " + ", ".join(parts))
    for s in SYSTEMS:
        for key, r in res.get(s, {}).items():
            if isinstance(r, dict) and r.get("status") == "error":
                print(f"  note: {s} {key}: {r.get('reason')}")
        if res.get(s, {}).get("status") == "error":
            print(f"  note: {s}: {res[s].get('reason')}")


def parser(prog: str = "bench_ad.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench ad`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (30 small, 5 large steps)")
    ap.add_argument("--problems", type=H.comma_list(list(PROBLEMS), "problem"), default=list(PROBLEMS),
                    help="comma list from small,large (default: both)")
    ap.add_argument("--threads", type=H.positive_int, default=None, help=H.THREADS_HELP)
    ap.add_argument("--no-optimizers", action="store_true",
                    help="skip the table of one step per optimizer (SGD, RMSProp, Adam, AdamW)")
    ap.add_argument("--opcodes", action="store_true",
                    help="frostjit only: Python bytecode instructions per part of a replayed step (deterministic)")
    ap.add_argument("--lines", action="store_true",
                    help="with --opcodes: also the instructions per line of the whole step's generated code")
    ap.add_argument("--parts", action="store_true",
                    help="frostjit only: CPU time per part of a replayed small step, beside the whole step frozen")
    ap.add_argument("--interleave", action="store_true",
                    help="the small problem's frozen steps (frostjit whole and through the forward, Dr.Jit's "
                         "frozen step) in interleaved rounds, one long-lived child per system: ratios that "
                         "hold on a loaded or unsteady machine")
    ap.add_argument("--rounds", type=H.positive_int, default=12, help="rounds of --interleave (default 12)")
    ap.add_argument("--base", default=None, metavar="CHECKOUT",
                    help="with --interleave: also run frostjit from this checkout (before/after in the same rounds)")
    ap.add_argument("--json", default=None, metavar="PATH", help="write raw results here")
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    return ap


def _frostjit_only(params: dict, key: str, report_fn, a) -> int:
    """``--opcodes`` / ``--parts``: one frostjit child on the small problem, its ``key`` result
    reported by ``report_fn`` (exit status 1 when the child failed)."""
    res = {"frostjit": run_child("frostjit", {**params, "problems": ["small"], "threads": a.threads})}
    if res["frostjit"].get("status") != "ok":
        print(f"frostjit: {res['frostjit'].get('reason')}")
        return 1
    report_fn(res["frostjit"][key])
    H.dump_json(a.json, res)
    return 0


def main(argv=None, prog: str = "bench_ad.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.serve:
        serve(a.serve, json.loads(a.params))
        return 0
    if (a.base or a.rounds != 12) and not a.interleave:
        parser(prog).error("--base and --rounds go with --interleave")
    if a.interleave:
        res = interleave({"threads": a.threads}, a.rounds, a.base)
        report_interleave(res, a.rounds)
        H.dump_json(a.json, res)
        return 0
    if a.child:
        try:
            res = {"status": "ok", **child(a.child, json.loads(a.params))}
        except Exception as e:  # noqa: BLE001
            res = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
        print(H.RESULT_MARK + json.dumps(res), flush=True)
        return 0
    if a.opcodes:
        return _frostjit_only({"opcodes": True, "lines": a.lines}, "opcodes", report_opcodes, a)
    if a.parts:
        return _frostjit_only({"parts": True}, "parts", report_parts, a)
    problems = a.problems
    params = {"problems": problems, "repeats_small": 30 if a.quick else 200,
              "repeats_large": 5 if a.quick else 20, "threads": a.threads,
              "opt_repeats": 0 if a.no_optimizers else 30 if a.quick else 200}
    res = {}
    for s in SYSTEMS:
        res[s] = run_child(s, params)
    versions = ", ".join(f"{s} {res[s].get('version', 'n/a')}"
                         + (f" ({res[s]['threads']} threads)" if res[s].get("threads") else "")
                         for s in SYSTEMS)
    print(f"machine: {os.cpu_count()} cores; {versions}")
    report(res, problems)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
