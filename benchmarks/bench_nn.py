"""The nn guide's training program: first-use (compile) and steady-state time of one forward +
backward pass, frostjit beside Dr.Jit.

    python benchmarks/bench_nn.py [--quick] [--widths 8,16,32,64] [--dtypes f16,f32] [--lanes 256]
                                  [--systems frostjit,drjit] [--threads N] [--json out/nn.json]

The network of Dr.Jit's "Neural networks" guide with hidden width ``H``:
``TriEncode(16, 0.2), Cast(dtype), 3 x (Linear(-1, H, bias=False), LeakyReLU()),
Linear(-1, 3, bias=False), Exp()``, weights ``alloc``-ed from ``rng(seed=0)`` and packed in the
training layout, on ``lanes`` points of a regular grid in [0, 1)^2 (16 x 16 by default); the loss
is the summed squared error against a fixed analytic target.  One pass is ``loss`` evaluated
(forward) then ``backward(loss)`` and the packed weights' gradient evaluated (backward).

Each (system, H, dtype) runs in its own subprocess with an empty kernel cache (this script
re-runs itself with ``--child``; never drjit and frostjit in one process): ``first`` is the
first pass (tracing + compilation + run), ``steady`` the mean of the passes after a second,
untimed one (tracing + run, kernels cached: not frozen), both as CPU
time of the process (``time.process_time``: less sensitive to other load than wall time; wall
time in the JSON).  Both systems' loss and sum of |gradient| are printed (float16 rounds after
every operation on both, in their own orders: they agree to a few units in the last places).
Target (issues 11/14): frostjit's first pass within ~1.5x of Dr.Jit's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit"]
DTYPES = ["f16", "f32"]


# ----------------------------------------------------------------- child side
def child(system: str, params: dict) -> dict:
    dr, _ = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    if system == "drjit":
        import drjit.llvm.ad as T
        import drjit.nn as nn
    else:
        import frostjit.llvm.ad as T
        import frostjit.nn as nn
    width, half = params["width"], params["dtype"] == "f16"
    F, Tensor = (T.Float16, T.TensorXf16) if half else (T.Float32, T.TensorXf)
    layers = [nn.TriEncode(16, 0.2), nn.Cast(F)]
    for _ in range(3):
        layers += [nn.Linear(-1, width, bias=False), nn.LeakyReLU()]
    net = nn.Sequential(*layers, nn.Linear(-1, 3, bias=False), nn.Exp())
    net = nn.pack(net.alloc(Tensor, 2, rng=dr.rng(seed=0)), layout="training")
    weights = net["weights"]
    dr.enable_grad(weights)
    side = int(round(params["lanes"] ** 0.5))
    t = dr.arange(T.Float32, side)
    p = T.Array2f(dr.meshgrid(t, t)) / side
    target = T.Array3f(dr.sin(p.x * 3), dr.cos(p.y * 2), p.x * p.y)
    dr.eval(p, target)      # (else the second pass reads them from memory: other kernels)

    def one_pass():
        c0, w0 = time.process_time(), time.perf_counter()
        img = T.Array3f(net(nn.CoopVec(p)))
        loss = dr.sum(dr.squared_norm(target - img))
        dr.eval(loss)
        c1, w1 = time.process_time(), time.perf_counter()
        dr.backward(loss)
        g = dr.grad(weights)
        dr.eval(g)
        c2, w2 = time.process_time(), time.perf_counter()
        dr.clear_grad(weights)
        return (c1 - c0, c2 - c1, w1 - w0, w2 - w1), loss, g

    first, loss, g = one_pass()
    one_pass()              # (untimed: anything the first pass left to compile)
    steady = [one_pass()[0] for _ in range(params["repeats"])]
    mean = [float(np.mean([s[k] for s in steady])) for k in range(4)]
    return {"version": getattr(dr, "__version__", "?"), "threads": _workloads.thread_count(system, dr),
            "result": {"status": "ok",
                       "first_fwd": first[0], "first_bwd": first[1], "first_fwd_wall": first[2],
                       "first_bwd_wall": first[3], "steady_fwd": mean[0], "steady_bwd": mean[1],
                       "loss": float(np.asarray(loss, dtype=np.float64).ravel()[0]),
                       "gsum": float(np.abs(np.asarray(g, dtype=np.float64)).sum())}}


# ----------------------------------------------------------------- driver side
def report(res: dict, systems, cases) -> None:
    def get(s, case):
        r = res.get(f"{s}:{case[0]}:{case[1]}", {})
        return r.get("result") if r.get("status") == "ok" else None

    def ms(r, key):
        return H.fmt(None if r is None else r[key] * 1e3, " ms")

    header = ["H dtype"] + [f"{s} {what}" for s in systems
                            for what in ("first fwd", "first bwd", "steady fwd+bwd")]
    rows = []
    for case in cases:
        row = [f"{case[0]} {case[1]}"]
        for s in systems:
            r = get(s, case)
            row += [ms(r, "first_fwd"), ms(r, "first_bwd"),
                    H.fmt(None if r is None else (r["steady_fwd"] + r["steady_bwd"]) * 1e3, " ms")]
        rows.append(row)
    print("CPU time of the process (time.process_time), fresh kernel cache per (system, H, dtype)")
    print(H.table(header, rows))
    if "frostjit" in systems and "drjit" in systems:
        for case in cases:
            a, b = get("frostjit", case), get("drjit", case)
            if a is None or b is None:
                continue
            first = H.ratio(a["first_fwd"] + a["first_bwd"], b["first_fwd"] + b["first_bwd"])
            steady = H.ratio(a["steady_fwd"] + a["steady_bwd"], b["steady_fwd"] + b["steady_bwd"])
            print(f"  H={case[0]} {case[1]}: frostjit / Dr.Jit first pass {H.fmt_ratio(first)}, "
                  f"steady {H.fmt_ratio(steady)}; loss {a['loss']:.6g} / {b['loss']:.6g}, "
                  f"sum |grad| {a['gsum']:.6g} / {b['gsum']:.6g}")
    for key, r in res.items():
        if r.get("status") in ("error", "n/a"):
            print(f"  note: {key}: {r.get('reason')}")


def parser(prog: str = "bench_nn.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench nn`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="widths 8,16 in float16, 2 steady passes")
    ap.add_argument("--widths", type=str, default=None, help="hidden widths H (default 8,10,12,16,32,64)")
    ap.add_argument("--dtypes", type=H.comma_list(DTYPES, "dtype"), default=None,
                    help="f16 and/or f32 (default both)")
    ap.add_argument("--lanes", type=H.positive_int, default=256, help="points, a square (default 256)")
    ap.add_argument("--repeats", type=H.positive_int, default=None, help="steady-state passes (default 5)")
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_nn.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    try:
        widths = [int(w) for w in (a.widths or ("8,16" if a.quick else "8,10,12,16,32,64")).split(",")]
    except ValueError:
        print(f"{prog}: error: --widths must be comma-separated integers", file=sys.stderr)
        return 2
    dtypes = a.dtypes or (["f16"] if a.quick else DTYPES)
    cases = [(w, d) for d in dtypes for w in widths]
    params = {"lanes": a.lanes, "repeats": a.repeats or (2 if a.quick else 5), "threads": a.threads}
    res = {}
    for w, d in cases:
        for s in a.systems:
            res[f"{s}:{w}:{d}"] = H.run_script_child(__file__, s, {**params, "width": w, "dtype": d},
                                                     fresh_cache=True)
    print(H.versions_line({s: res[f"{s}:{cases[0][0]}:{cases[0][1]}"] for s in a.systems}))
    report(res, a.systems, cases)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
