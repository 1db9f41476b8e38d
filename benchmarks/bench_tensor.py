"""Tensor and texture benchmark: frostjit beside Dr.Jit and NumPy in one run.

    python benchmarks/bench_tensor.py [--quick] [--systems frostjit,drjit,numpy] [--threads N] [--json out.json]
    python benchmarks/bench_tensor.py --sums [--rounds R] [--base CHECKOUT] [--settle S] [--by-call] [--cases ...]
                                      [--systems ...] [--threads N]

Workloads (each system in its own subprocess: this script re-runs itself with ``--child``):

* ``lookup``: 1e6 bilinear ``Texture2f`` lookups (random positions) into a 1024 x 1024
  one-channel texture, evaluated (median ms per call, tracing included);
* ``lookup+backward``: the same lookups with the texture's tensor grad-enabled, then the
  backward pass into it (``backward(out)``) and the gradient evaluated;
* ``sum axis 0`` / ``sum axis 1``: ``sum(t, axis=k)`` of an evaluated 4096 x 4096 float
  tensor, evaluated.

NumPy: the same bilinear filter with fancy indexing (its backward with ``bincount``) and
``ndarray.sum(axis=k)``.  Target: frostjit <= Dr.Jit.

``--sums``: ``sum(t, axis=1)`` of several shapes and types (:data:`SUM_CASES`; also ``axis=0``,
and sums of the pending expression ``t * 2 + 1``: a fused axis reduction), measured in
*interleaved* rounds: every system runs in one long-lived child, and each round asks each child
in turn (the order rotating) for a batch of calls (``_harness.interleave_rows``), so all systems
see the same load on a shared machine.  Each batch follows ``--settle`` seconds (default
:data:`SETTLE_S`) of untimed calls back to back, so that the previous child's idle workers have
stopped spinning (Dr.Jit's spin 5-20 ms after a launch, frostjit's 1 ms; ``--pause S`` sleeps
before the batch as well).  Per case: the median over rounds of each batch's median wall time, and
the spread (lowest and highest batch median); the median [range] of the rounds' frostjit / Dr.Jit
ratios; on Linux each child's CPU per call by thread and the other children's CPU meanwhile.
``--base CHECKOUT`` adds frostjit imported from another checkout (``frostjit@base``), for
before/after figures in the same run.  ``--sums --cases lookup``
measures the table's texture lookup the same way (single runs of it swing 2-4x on a shared VM).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit", "numpy"]
WORKLOADS = ["lookup", "lookup+backward", "sum axis 0", "sum axis 1"]
RES, LOOKUPS, SIDE = 1024, 1_000_000, 4096
# --sums: name -> (shape, NumPy dtype, tensor type name, axis, of a pending expression)
SUM_CASES = {
    "4096x4096/f32": ((4096, 4096), "float32", "TensorXf", 1, False),
    "64x262144/f32": ((64, 262144), "float32", "TensorXf", 1, False),
    "262144x64/f32": ((262144, 64), "float32", "TensorXf", 1, False),
    "4096x4096/f64": ((4096, 4096), "float64", "TensorXf64", 1, False),
    "4096x4096/i32": ((4096, 4096), "int32", "TensorXi", 1, False),
    "4096x4096/f32 axis 0": ((4096, 4096), "float32", "TensorXf", 0, False),
    "t*2+1 4096x4096/f32 axis 0": ((4096, 4096), "float32", "TensorXf", 0, True),
    "t*2+1 4096x4096/f32 axis 1": ((4096, 4096), "float32", "TensorXf", 1, True),
}
# --sums also takes the texture lookup of the table (1e6 bilinear lookups into RES x RES), so that
# its figure can be taken in interleaved rounds too (its single runs swing 2-4x on a shared VM)
LOOKUP_CASE = "lookup"
INTERLEAVED_CASES = [*SUM_CASES, LOOKUP_CASE]
BATCH = 5       # calls per system and round in --sums
# Seconds of untimed calls before each batch of --sums (as bench_types.SETTLE_S): Dr.Jit's idle
# workers spin 5-20 ms after its last launch, and a batch right after one shares the cores with
# them (r14 lane kernel2, bench_types).  The 50 ms sleep used here before (--pause 0.05) let them
# stop as well (the other children's CPU during the lookup's batches: ~0 either way, r15 lane
# texture2, docs/benchmarks.md), but after a sleep every system's first call ran slower (the
# "call 1" of --by-call): the settle times steady calls.
SETTLE_S = 0.03


def _inputs():
    import numpy as np
    rng = np.random.default_rng(7)
    tex = rng.random((RES, RES, 1), dtype=np.float32)
    pos = rng.random((2, LOOKUPS), dtype=np.float32)
    big = rng.random((SIDE, SIDE), dtype=np.float32)
    return tex, pos, big


def _median_ms(fn, warmup: int, repeats: int) -> tuple[float, float, object]:
    """(median wall ms, CPU ms per call of the whole process (the mean, see
    ``_harness.Timing.cpu_ms``): every thread's work counts, which is less sensitive to other
    load on the machine than wall time, result)."""
    t = H.time_calls(fn, repeats, warmup)
    return t.ms, t.cpu_ms, t.result


# ----------------------------------------------------------------- child side
def child(system: str, params: dict) -> dict:
    import numpy as np
    tex_np, pos_np, big_np = _inputs()
    warmup, repeats = params["warmup"], params["repeats"]
    out = {}
    if system == "numpy":
        return _child_numpy(tex_np, pos_np, big_np, warmup, repeats)
    if system == "drjit":
        import drjit as dr
        import drjit.llvm.ad as T
    else:
        import frostjit as dr
        import frostjit.llvm.ad as T
    _workloads.apply_threads(system, params.get("threads"))
    out["version"] = getattr(dr, "__version__", "?")
    out["threads"] = _workloads.thread_count(system, dr)
    pos = T.Array2f(T.Float(pos_np[0]), T.Float(pos_np[1]))
    tensor = T.TensorXf(tex_np)
    big = T.TensorXf(big_np)
    dr.eval(pos, tensor, big)
    tex = T.Texture2f(tensor)

    def lookup():
        v = tex.eval(pos)[0]
        dr.eval(v)
        _workloads.sync(dr)         # Dr.Jit launches asynchronously
        return v

    def backward():
        param = T.TensorXf(tensor)
        dr.enable_grad(param)
        tex.set_tensor(param)
        v = tex.eval(pos)[0]
        dr.backward(v)
        g = dr.grad(param)
        dr.eval(g)
        _workloads.sync(dr)
        return g

    def reducer(axis):
        def run():
            r = dr.sum(big, axis=axis)
            dr.eval(r)
            _workloads.sync(dr)
            return r
        return run

    for name, fn in (("lookup", lookup), ("lookup+backward", backward), ("sum axis 0", reducer(0)),
                     ("sum axis 1", reducer(1))):
        try:
            ms, cpu, r = _median_ms(fn, warmup, repeats)
            out[name] = {"status": "ok", "ms": ms, "cpu_ms": cpu,
                         "checksum": float(np.asarray(r.numpy(), np.float64).sum())}
        except Exception as e:  # noqa: BLE001  (a failing workload is reported, not fatal)
            out[name] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
    return out


def _bilinear_numpy(tex, pos):
    import numpy as np
    res = np.array([tex.shape[1], tex.shape[0]], np.float32)
    x = pos * res[:, None] - np.float32(0.5)
    i0 = np.floor(x)
    w1 = x - i0
    i0 = i0.astype(np.int64)
    ix = [np.clip(i0[0] + k, 0, tex.shape[1] - 1) for k in (0, 1)]
    iy = [np.clip(i0[1] + k, 0, tex.shape[0] - 1) for k in (0, 1)]
    wx = [1 - w1[0], w1[0]]
    wy = [1 - w1[1], w1[1]]
    return ix, iy, wx, wy


def _child_numpy(tex, pos, big, warmup, repeats) -> dict:
    import numpy as np
    out = {"version": np.__version__}
    flat = tex[..., 0]

    def lookup():
        ix, iy, wx, wy = _bilinear_numpy(tex, pos)
        return sum(wx[a] * wy[b] * flat[iy[b], ix[a]] for a in (0, 1) for b in (0, 1))

    def backward():
        ix, iy, wx, wy = _bilinear_numpy(tex, pos)
        v = sum(wx[a] * wy[b] * flat[iy[b], ix[a]] for a in (0, 1) for b in (0, 1))   # the forward pass
        g = np.zeros(flat.size)
        for a in (0, 1):
            for b in (0, 1):
                g += np.bincount(iy[b] * flat.shape[1] + ix[a], weights=wx[a] * wy[b], minlength=flat.size)
        return g.astype(np.float32) + 0 * v.sum()

    for name, fn in (("lookup", lookup), ("lookup+backward", backward), ("sum axis 0", lambda: big.sum(axis=0)),
                     ("sum axis 1", lambda: big.sum(axis=1))):
        ms, cpu, r = _median_ms(fn, warmup, repeats)
        out[name] = {"status": "ok", "ms": ms, "cpu_ms": cpu, "checksum": float(np.asarray(r, np.float64).sum())}
    return out


def serve(system: str, params: dict) -> None:
    """The child of ``--sums``: build every case, then answer requests on stdin (one JSON line
    each: ``{"case": name, "calls": k}``) with the wall and CPU seconds of each call."""
    import numpy as np
    rng = np.random.default_rng(11)
    data = {}
    for name in params["cases"]:
        if name == LOOKUP_CASE:
            continue
        shape, dtype = SUM_CASES[name][:2]
        a = rng.random(shape) * 100
        data[name] = a.astype(dtype)
    if system == "numpy":
        run = {}
        for name, a in data.items():
            axis, expr = SUM_CASES[name][3:]
            run[name] = (lambda a=a, k=axis: (a * 2 + 1).sum(axis=k)) if expr else \
                (lambda a=a, k=axis: a.sum(axis=k))
        if LOOKUP_CASE in params["cases"]:
            tex, pos, _ = _inputs()
            flat = tex[..., 0]

            def lookup_np():
                ix, iy, wx, wy = _bilinear_numpy(tex, pos)
                return sum(wx[a] * wy[b] * flat[iy[b], ix[a]] for a in (0, 1) for b in (0, 1))
            run[LOOKUP_CASE] = lookup_np
    else:
        if system == "drjit":
            import drjit as dr
            import drjit.llvm.ad as T
        else:
            import frostjit as dr
            import frostjit.llvm.ad as T
        _workloads.apply_threads(system, params.get("threads"))
        run = {}
        for name, a in data.items():
            t = getattr(T, SUM_CASES[name][2])(a)
            dr.eval(t)

            axis, expr = SUM_CASES[name][3:]

            def call(t=t, axis=axis, expr=expr):
                r = dr.sum(t * 2 + 1 if expr else t, axis=axis)
                dr.eval(r)
                _workloads.sync(dr)
                return r
            run[name] = call
        if LOOKUP_CASE in params["cases"]:
            tex_np, pos_np, _ = _inputs()
            pos = T.Array2f(T.Float(pos_np[0]), T.Float(pos_np[1]))
            tensor = T.TensorXf(tex_np)
            dr.eval(pos, tensor)
            tex = T.Texture2f(tensor)

            def lookup():
                v = tex.eval(pos)[0]
                dr.eval(v)
                _workloads.sync(dr)
                return v
            run[LOOKUP_CASE] = lookup
    H.serve_requests(run)           # two calls of each case compile (or load) every kernel first


def sums(systems: list, rounds: int, threads, base: str | None, cases: list, pause: float = 0.0,
         settle: float = SETTLE_S) -> tuple[dict, dict]:
    """The interleaved rounds of ``--sums`` (see the module docstring):
    :func:`_harness.interleave_rows` over ``cases``, batches of :data:`BATCH` calls after
    ``settle`` seconds of untimed ones.  Returns ``(rounds, pooled)`` as that function does."""
    return H.interleave_rows(__file__, systems, {"threads": threads, "cases": cases}, cases, rounds, BATCH,
                             base, None, pause, settle)


def _by_place(pooled: dict, key: str) -> list[list[float]]:
    """One row's pooled ``key`` values ("wall" or "cpu", ms) split by the call's place in its batch."""
    values = pooled[key]
    return [values[k::BATCH] for k in range(BATCH)]


def report_by_call(pooled: dict, settle: float) -> None:
    """``--by-call``: per case and system, the median over rounds of each call of the batch (call 1
    comes right after the settling calls, calls 2-5 follow back to back): whether a figure is the
    cost of a batch's start."""
    print(f"by call of the batch (after {settle * 1e3:.0f} ms of untimed calls): median over rounds, "
          "ms wall / ms CPU")
    header = ["case", "system"] + [f"call {k + 1}" for k in range(BATCH)]
    rows = []
    for name, per_case in pooled.items():
        for case, p in per_case.items():
            rows.append([case, name] + [f"{H.fmt(statistics.median(w))} / {H.fmt(statistics.median(c))}"
                                        for w, c in zip(_by_place(p, "wall"), _by_place(p, "cpu"))])
    rows.sort(key=lambda r: r[0])
    print(H.table(header, rows))


def report_sums(res: dict, pooled: dict, rounds: int) -> None:
    """The table of ``--sums``: per case and system the median [range] over rounds of the batch
    medians and the rounds' median of the batch means of CPU; per frostjit child the median
    [range] of the rounds' ratios to Dr.Jit."""
    names = list(res)
    pairs = [a for a in names if a.startswith("frostjit") and "drjit" in names]
    print(f"sum(t, axis=1) (or the axis and pending expression 't*2+1' named; 'lookup': {LOOKUPS:.0e} bilinear "
          f"lookups into {RES}x{RES}), interleaved: median over "
          f"{rounds} rounds of the median of {BATCH} calls "
          f"(ms wall [lowest-highest round] / ms CPU per call, the rounds' median of the batch means); "
          "ratio: median [range] of the rounds' ratios")
    header = ["case"] + names + [f"{a} / drjit (wall)" for a in pairs]
    rows = []
    for case in next(iter(res.values())):
        row = [case]
        for name in names:
            walls = res[name][case]
            cpus = pooled[name][case]["cpu"]
            batch_cpu = [statistics.fmean(cpus[k:k + BATCH]) for k in range(0, len(cpus), BATCH)]
            row.append(f"{H.fmt(statistics.median(walls))} [{H.fmt(min(walls))}-{H.fmt(max(walls))}] / "
                       f"{H.fmt(statistics.median(batch_cpu))}")
        for a in pairs:
            ratios = sorted(x / y for x, y in zip(res[a][case], res["drjit"][case]))
            row.append(f"{statistics.median(ratios):.2f}x [{ratios[0]:.2f}-{ratios[-1]:.2f}]")
        rows.append(row)
    print(H.table(header, rows))


# ----------------------------------------------------------------- driver side
def run_child(system: str, params: dict, timeout: float = 1800) -> dict:
    return H.run_script_child(__file__, system, params, timeout, fresh_cache=False)


def report(res: dict, systems: list) -> None:
    def ms(system, name, key="ms"):
        r = res.get(system, {}).get(name)
        return r.get(key) if isinstance(r, dict) and r.get("status") == "ok" else None

    def cell(system, name):
        r = res.get(system, {})
        if r.get("status") == "n/a":
            return "n/a"
        w = r.get(name)
        if not isinstance(w, dict):
            return "error" if r.get("status") == "error" else "n/a"
        return f"{H.fmt(w['ms'])} / {H.fmt(w['cpu_ms'])}" if w.get("status") == "ok" else "error"

    header = ["workload"] + [f"{s} (ms wall / CPU)" for s in systems]
    if "drjit" in systems:
        header.append("fj / drjit (wall, CPU)")
    if "numpy" in systems:
        header.append("numpy / fj")
    rows = []
    for name in WORKLOADS:
        row = [name] + [cell(s, name) for s in systems]
        if "drjit" in systems:
            row.append(H.fmt_ratio(H.ratio(ms("frostjit", name), ms("drjit", name))) + ", "
                       + H.fmt_ratio(H.ratio(ms("frostjit", name, "cpu_ms"), ms("drjit", name, "cpu_ms"))))
        if "numpy" in systems:
            row.append(H.fmt_ratio(H.ratio(ms("numpy", name), ms("frostjit", name))))
        rows.append(row)
    print(f"tensors and textures: 1e6 bilinear lookups into a {RES}x{RES} Texture2f; sum over an axis of a "
          f"{SIDE}x{SIDE} TensorXf (median per call; CPU: of every thread of the process)")
    print(H.table(header, rows))
    if "drjit" in systems:
        for name in WORKLOADS:
            r = H.ratio(ms("frostjit", name), ms("drjit", name))
            c = H.ratio(ms("frostjit", name, "cpu_ms"), ms("drjit", name, "cpu_ms"))
            print(f"  target: {name}: frostjit <= drjit: wall {H.fmt_ratio(r)} {H.check(r, '<=', 1.0)}, "
                  f"CPU {H.fmt_ratio(c)} {H.check(c, '<=', 1.0)}")
    sums = {name: {s: res.get(s, {}).get(name, {}).get("checksum") for s in systems} for name in WORKLOADS}
    print("checksums (sum of the results; the systems should agree to float32 rounding):")
    for name, cs in sums.items():
        print(f"  {name}: " + ", ".join(f"{s} {v:.6g}" if isinstance(v, float) else f"{s} n/a" for s, v in cs.items()))
    for s in systems:
        r = res.get(s, {})
        if r.get("status") in ("error", "n/a") and r.get("reason"):
            print(f"  note: {s}: {r['reason']}")
        for name in WORKLOADS:
            w = r.get(name)
            if isinstance(w, dict) and w.get("status") == "error":
                print(f"  note: {s} {name}: {w.get('reason')}")


def parser(prog: str = "bench_tensor.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench tensor`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (3 instead of 15)")
    ap.add_argument("--systems", type=H.comma_list(SYSTEMS), default=SYSTEMS,
                    help="comma list from frostjit,drjit,numpy (default: all)")
    ap.add_argument("--threads", type=H.positive_int, default=None, help=H.THREADS_HELP)
    ap.add_argument("--json", default=None, help="also write the raw results to this file")
    ap.add_argument("--sums", action="store_true",
                    help="interleaved rounds of sum(t, axis=k) over several shapes, types and expressions instead")
    ap.add_argument("--rounds", type=H.positive_int, default=9, help="rounds of --sums (default 9)")
    ap.add_argument("--cases", type=H.comma_list(INTERLEAVED_CASES, "case"), default=list(SUM_CASES),
                    help="with --sums: comma list of cases (default: all of " + ", ".join(SUM_CASES)
                    + f"; '{LOOKUP_CASE}': the table's texture lookup, interleaved)")
    ap.add_argument("--base", default=None,
                    help="with --sums: also run frostjit from this checkout (before/after figures)")
    ap.add_argument("--by-call", action="store_true",
                    help="with --sums: also each call of a batch apart (call 1 follows the settling calls)")
    ap.add_argument("--settle", type=float, default=SETTLE_S,
                    help=f"with --sums: seconds of untimed calls before each batch (default {SETTLE_S}: the other "
                         "children's idle workers have stopped spinning; 0: none)")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="with --sums: seconds of sleep before each batch (default 0)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    return ap


def main(argv=None, prog: str = "bench_tensor.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.serve:
        serve(a.serve, json.loads(a.params))
        return 0
    if a.sums:
        if a.settle < 0 or a.pause < 0:
            parser(prog).error(f"--settle and --pause must be >= 0 seconds, not {min(a.settle, a.pause)}")
        res, pooled = sums(a.systems, a.rounds, a.threads, a.base, a.cases, a.pause, a.settle)
        report_sums(res, pooled, a.rounds)
        H.report_threads(pooled)
        if a.by_call:
            report_by_call(pooled, a.settle)
        H.dump_json(a.json, {"rounds": res, "calls": pooled})
        return 0
    if a.child:
        params = json.loads(a.params)
        try:
            res = {"status": "ok", **child(a.child, params)}
        except _workloads.NotAvailable as e:
            res = {"status": "n/a", "reason": str(e)}
        except ImportError as e:
            res = {"status": "n/a", "reason": f"{type(e).__name__}: {e}"}
        except Exception as e:  # noqa: BLE001
            res = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
        print(H.RESULT_MARK + json.dumps(res, default=float), flush=True)
        return 0
    params = {"warmup": 2, "repeats": 3 if a.quick else 15, "threads": a.threads}
    res = {s: run_child(s, params) for s in a.systems}
    report(res, a.systems)
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
