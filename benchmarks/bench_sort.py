"""Sorting: ``sort`` and ``argsort`` of 1e6 keys, frostjit beside Dr.Jit and NumPy.

    python benchmarks/bench_sort.py [--quick] [--n 1000000] [--systems frostjit,drjit,numpy]
                                    [--threads N] [--json out/sort.json]

Cases (each system in its own subprocess; this script re-runs itself with ``--child SYSTEM``):
``sort`` and ``argsort`` of ``n`` random ``Float32`` keys (with duplicates, negatives, -0)
and of ``n`` random ``UInt32`` keys; ``argsort`` of the Float32 keys also inside a frozen
function.  The input is evaluated once; each call sorts and evaluates the result.  NumPy:
``np.sort``/``np.argsort`` with ``kind="stable"`` (Dr.Jit's tie order) of the Float32 keys (its
NaN-free input orders as the JITs' total order).

Reported per case: the mean CPU time of the process per call (``cpu ms``: all its threads;
meaningful on a loaded machine, unlike wall time), the median wall time, and the first call
(compilation included, fresh disk caches).  The JIT sides' checksums (a hash of the result)
must agree: same order, same ties.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit", "numpy"]
ROWS = [("sort_f32", "plain"), ("argsort_f32", "plain"), ("sort_u32", "plain"), ("argsort_u32", "plain"),
        ("argsort_f32", "frozen")]


def _keys(n: int):
    import numpy as np
    rng = np.random.default_rng(1)
    f = (rng.integers(-n // 4, n // 4, n) * 0.5).astype(np.float32)      # duplicates, negatives, 0
    f[::97] = -0.0
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    return f, u


def _digest(a) -> int:
    import numpy as np
    a = np.asarray(a)
    return int((a.view(f"u{a.itemsize}").astype(np.uint64) * np.arange(1, a.shape[0] + 1, dtype=np.uint64)).sum()
               % (2**61 - 1))


def _jit_cases(dr, T, n):
    f, u = _keys(n)
    x, k = T.Float(f), T.UInt(u)
    dr.eval(x, k)

    def run(fn, v):
        def call():
            r = fn(v)
            dr.eval(r)
            return r
        return call
    frozen = dr.freeze(lambda v: dr.argsort(v))
    return {("sort_f32", "plain"): run(dr.sort, x), ("argsort_f32", "plain"): run(dr.argsort, x),
            ("sort_u32", "plain"): run(dr.sort, k), ("argsort_u32", "plain"): run(dr.argsort, k),
            ("argsort_f32", "frozen"): run(frozen, x)}


def _numpy_cases(np, n):
    f, u = _keys(n)
    return {("sort_f32", "plain"): lambda: np.sort(f, kind="stable"),
            ("argsort_f32", "plain"): lambda: np.argsort(f, kind="stable").astype(np.uint32),
            ("sort_u32", "plain"): lambda: np.sort(u, kind="stable"),
            ("argsort_u32", "plain"): lambda: np.argsort(u, kind="stable").astype(np.uint32)}


def _case(fn, repeats: int) -> dict:
    first_ms, result = H.time_first(fn)
    t = H.time_calls(fn, repeats)
    import numpy as np
    return {"status": "ok", "first_ms": first_ms, "ms": t.ms, "cpu_ms": t.cpu_ms,
            "check": _digest(np.asarray(result))}


def child(system: str, params: dict) -> dict:
    mod, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    n, repeats = params["n"], params["repeats"]
    cases = _numpy_cases(mod, n) if system == "numpy" else _jit_cases(mod, T, n)
    out = {"version": getattr(mod, "__version__", "?"), "threads": _workloads.thread_count(system, mod)}
    for key, fn in cases.items():
        try:
            out["/".join(key)] = _case(fn, repeats)
        except Exception as e:  # noqa: BLE001  (a failing case is reported, not fatal)
            out["/".join(key)] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
    return out


def report(res: dict, systems, n: int) -> None:
    rows = []
    for key in ROWS:
        row = [f"{key[0]} {H.fmt_n(n)} ({key[1]})"]
        for s in systems:
            r = H.case_result(res, s, key)
            row.append("-" if r is None else f"{H.cell(r, 'cpu_ms', ' ms')} / {H.cell(r, 'ms', ' ms')} "
                                             f"(first {H.cell(r, 'first_ms', ' ms')})")
        fj = H.val(H.case_result(res, "frostjit", key), "cpu_ms")
        dj = H.val(H.case_result(res, "drjit", key), "cpu_ms")
        npy = H.val(H.case_result(res, "numpy", key), "cpu_ms")
        row += [H.fmt_ratio(H.ratio(fj, dj)), H.fmt_ratio(H.ratio(fj, npy))]
        rows.append(row)
    print("CPU ms per call (mean, all threads) / median wall ms; first call in parentheses")
    print(H.table(["case"] + list(systems) + ["frostjit / drjit (cpu)", "frostjit / numpy (cpu)"], rows))
    if {"frostjit", "drjit"} <= set(systems):
        same = all(H.val(H.case_result(res, "frostjit", k), "check") == H.val(H.case_result(res, "drjit", k), "check")
                   for k in ROWS)
        print(f"  results, frostjit vs drjit (a hash of each result): {'identical' if same else 'DIFFERENT'}")
    H.print_failures(res, systems)


def parser(prog: str = "bench_sort.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench sort`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (3 instead of 10) and n = 1e5")
    ap.add_argument("--n", type=H.positive_int, default=None, help="keys per call (default 1e6)")
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_sort.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    n = a.n or (10**5 if a.quick else 10**6)
    params = {"n": n, "repeats": 3 if a.quick else 10, "threads": a.threads}
    res = {s: H.run_script_child(__file__, s, params, 1800, fresh_cache=True) for s in a.systems}
    print(H.versions_line(res))
    report(res, a.systems, n)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
