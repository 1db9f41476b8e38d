"""``@fj.func``: a program calling one 200-operation function from 50 call sites, frostjit beside
Dr.Jit's ``@dr.func``, each against the same code inlined.

    python benchmarks/bench_func.py [--quick] [--n 100000] [--ops 200] [--sites 50]
                                    [--systems frostjit,drjit] [--threads N] [--json out/func.json]

Workload: ``y = f(x + 0) + f(x + 1) + ... + f(x + sites - 1)`` over ``n`` lanes, where ``f`` is a
chain of ``ops`` float32 operations (multiply-adds, products, a ``sin`` every 20th step), either
decorated (``func``: the kernel calls one function) or not (``inline``: its body is traced into
the kernel at each site: ``sites x ops`` operations).  Each (system, variant) runs in its own
subprocess with an empty kernel cache (this script re-runs itself with ``--child``; never drjit
and frostjit in one process):

* ``first``: the first evaluation, tracing + compilation + the run (wall), and its compile share
  from the kernel history (``codegen_time + backend_time``);
* ``steady``: the median of repeated evaluations (tracing again, the kernel found in memory), CPU
  time of the process and wall time.

Both variants of a system must give the same result (checked: equal checksums of the float32
bits); the two systems' sums are printed.  Target: ``func`` compiles in much less time than
``inline``, with identical results.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit"]
VARIANTS = ["func", "inline"]


# ----------------------------------------------------------------- child side
def _body(dr, ops: int):
    def f(x):
        for k in range(ops // 2):
            if k % 10 == 9:
                x = dr.sin(x) * 0.5 + x
            else:
                x = dr.fma(x, 0.999, 0.001) * 1.0001
        return x
    return f


def child(system: str, params: dict) -> dict:
    variant = params["variant"]
    dr, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    n, ops, sites, repeats = params["n"], params["ops"], params["sites"], params["repeats"]
    body = _body(dr, ops)
    f = dr.func(body) if variant == "func" else body
    x = dr.arange(T.Float, n) * (1.0 / n)
    dr.eval(x)
    _workloads.sync(dr)

    def run():
        y = T.Float(0)
        for s in range(sites):
            y = y + f(x + s)
        dr.eval(y)
        _workloads.sync(dr)
        return y

    dr.set_flag(dr.JitFlag.KernelHistory, True)
    dr.kernel_history()
    first_ms, y = H.time_first(run)
    compile_ms = H.compile_ms(dr)
    dr.set_flag(dr.JitFlag.KernelHistory, False)
    out = np.asarray(y.numpy(), dtype=np.float32)
    steady = H.time_calls(run, repeats)
    return {"version": getattr(dr, "__version__", "?"), "threads": _workloads.thread_count(system, dr),
            "result": {"status": "ok", "first_ms": first_ms, "compile_ms": compile_ms,
                       "ms": steady.ms, "cpu_ms": steady.cpu_ms,
                       "sum": float(out.astype(np.float64).sum()),
                       "check": hashlib.sha256(out.tobytes()).hexdigest()[:16]}}


# ----------------------------------------------------------------- driver side
def report(res: dict, systems, params: dict) -> None:
    def get(s, v):
        r = res.get(f"{s}:{v}", {})
        return r if r.get("status") == "error" else r.get("result")

    cols = [(s, v) for s in systems for v in VARIANTS]
    rows = []
    for what, key, unit in (("compile (kernel history)", "compile_ms", " ms"),
                            ("first call (trace + compile + run)", "first_ms", " ms"),
                            ("steady state, CPU (trace + run)", "cpu_ms", " ms"),
                            ("steady state, wall", "ms", " ms")):
        rows.append([what] + [H.cell(get(s, v), key, unit) for s, v in cols])
    print(f"{params['sites']} calls of a {params['ops']}-operation function over {H.fmt_n(params['n'])} lanes, "
          "each (system, variant) in a fresh process with an empty kernel cache")
    print(H.table(["", *[f"{s} {v}" for s, v in cols]], rows))
    for s in systems:
        a, b = get(s, "func"), get(s, "inline")
        r = H.ratio(H.val(a, "compile_ms"), H.val(b, "compile_ms"))
        print(f"  {s}: compile func / inline {H.fmt_ratio(r)}; steady CPU func / inline "
              f"{H.fmt_ratio(H.ratio(H.val(a, 'cpu_ms'), H.val(b, 'cpu_ms')))}")
        ca, cb = H.val(a, "check"), H.val(b, "check")
        if ca is not None and cb is not None:
            print(f"  {s}: results of func and inline {'identical' if ca == cb else 'DIFFERENT'} "
                  f"(sum {H.val(a, 'sum'):.6g})")
    if "drjit" in systems and "frostjit" in systems:
        for what, key in (("compile", "compile_ms"), ("steady state CPU", "cpu_ms")):
            r = H.ratio(H.val(get("frostjit", "func"), key), H.val(get("drjit", "func"), key))
            print(f"  frostjit func / Dr.Jit func, {what}: {H.fmt_ratio(r)}")
    for key, r in res.items():
        if r.get("status") in ("error", "n/a"):
            print(f"  note: {key}: {r.get('reason')}")


def parser(prog: str = "bench_func.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench func`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n = 1e4 lanes and 3 repetitions (instead of 1e5 and 10)")
    ap.add_argument("--n", type=H.positive_int, default=None, help="lanes (default 1e5)")
    ap.add_argument("--ops", type=H.positive_int, default=200, help="operations of the function (default 200)")
    ap.add_argument("--sites", type=H.positive_int, default=50, help="call sites (default 50)")
    ap.add_argument("--repeats", type=H.positive_int, default=None, help="steady-state calls (default 10)")
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_func.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    params = {"n": a.n or (10**4 if a.quick else 10**5), "ops": a.ops, "sites": a.sites,
              "repeats": a.repeats or (3 if a.quick else 10), "threads": a.threads}
    res = {}
    for s in a.systems:
        for v in VARIANTS:
            res[f"{s}:{v}"] = H.run_script_child(__file__, s, {**params, "variant": v}, fresh_cache=True)
    print(H.versions_line({s: res[f"{s}:func"] for s in a.systems}))
    report(res, a.systems, params)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
