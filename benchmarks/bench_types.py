"""Array types: a 4x4 matrix-vector transform and a complex-multiply chain, frostjit beside Dr.Jit and NumPy.

    python benchmarks/bench_types.py [--quick] [--n 1000000] [--k 10] [--systems frostjit,drjit,numpy]
                                     [--threads N] [--json out/types.json]
    python benchmarks/bench_types.py --interleave [--rounds R] [--base CHECKOUT] [--settle S] [--variant NAME:VAR=VALUE]
                                     [--threads N] ...

Workloads (n = 1e6 points by default), medians of repeated steady-state calls, each system in
its own subprocess (this script re-runs itself with ``--child SYSTEM``; never drjit and
frostjit in one process):

* ``transform``: ``Matrix4f`` (one matrix, broadcast) times the homogeneous ``Array4f(p, 1)``
  of ``n`` points, evaluated (16 fma-chained products per point).  NumPy: ``M @ P`` for ``P``
  of shape (4, n) (float32, OpenBLAS).
* ``complex``: ``z = z * c + z0`` ``k`` times (k = 10) on ``n`` ``Complex2f`` numbers, evaluated
  (one fused kernel).  NumPy: the same on ``complex64`` arrays.

Both JITs run plain and frozen (``freeze``); ``first`` is the first call (compilation
included, disk caches empty).  ``--phases`` times the plain calls' Python side instead: tracing
alone and the whole call, in CPU and wall time (``--n 1000``: the kernels take next to nothing;
``--evict`` copies 32 MB before each sample, as a 1e6-point kernel evicts the caches).  The JIT results must agree bit for bit (frostjit computes
Dr.Jit's formulas): their checksums are compared.  Target: frostjit's steady state no
slower than Dr.Jit's.

``--interleave`` runs the JIT rows in *interleaved* rounds instead: one long-lived child per
system (and ``frostjit@base`` with ``--base``, ``frostjit[NAME]`` per ``--variant NAME:VAR=VALUE``:
frostjit with those environment variables), asked in turn for a batch of 10 calls of each row
(the order rotated each round), so that every system sees the same load of a shared machine;
each batch follows ``--settle`` seconds (default 0.03) of untimed calls, so that the previous
child's idle workers have stopped spinning (Dr.Jit's spin 5-20 ms after a launch; ``--settle 0``:
the timed calls start at once);
it prints the median over rounds and, per row, the median and range of the rounds' frostjit /
Dr.Jit ratios; then every call pooled: the wall time's median, 90th and 99th percentile (a
loaded machine's preempted worker threads show in the tail) and the CPU time per call (the mean:
a spinning worker's CPU time reaches the process clock in lumps, see ``_harness.Timing.cpu_ms``);
then, on Linux, each child's CPU time per call split into its calling thread and its other
threads (the scheduler's per-thread counts: how the blocks of a launch were shared, and what the
workers spin), and the other children's CPU time meanwhile (what their idle workers took).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit", "numpy"]
ROWS = [("transform", "plain"), ("transform", "frozen"), ("complex", "plain"), ("complex", "frozen")]


# ----------------------------------------------------------------- child side
def _inputs(np, n: int):
    rng = np.random.default_rng(11)
    points = rng.standard_normal((3, n)).astype(np.float32)
    matrix = rng.standard_normal((4, 4)).astype(np.float32)
    z = rng.standard_normal((2, n)).astype(np.float32) * np.float32(0.5)
    return points, matrix, z


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _jit_cases(dr, T, np, n: int, k: int, phases: bool = False):
    points, matrix, z = _inputs(np, n)
    p = T.Array4f(T.Float(points[0]), T.Float(points[1]), T.Float(points[2]), 1.0)
    m = T.Matrix4f(*[float(v) for v in matrix.ravel()])
    z0 = T.Complex2f(T.Float(z[0]), T.Float(z[1]))
    c = T.Complex2f(0.3, -0.45)
    dr.eval(p, z0)

    def transform(m, p):
        r = m @ p
        dr.eval(r)
        return r

    def chain(z0, c):
        w = z0
        for _ in range(k):
            w = w * c + z0
        dr.eval(w)
        return w

    def synced(fn, *args):
        def run():
            r = fn(*args)
            _workloads.sync(dr)         # Dr.Jit launches asynchronously: wait for the kernel
            return r
        return run

    frozen_transform, frozen_chain = dr.freeze(transform), dr.freeze(chain)

    def check_vector(r):
        return _digest(*[np.asarray(r[i].numpy()) for i in range(4)])

    def check_complex(w):
        return _digest(np.asarray(w.real.numpy()), np.asarray(w.imag.numpy()))

    if phases:
        # (tracing alone, and tracing + evaluation, of the plain calls: see _phases)
        def chain_trace(z0, c):
            w = z0
            for _ in range(k):
                w = w * c + z0
            return w
        return {"transform": (lambda m, p: m @ p, transform, (m, p)), "complex": (chain_trace, chain, (z0, c))}

    return {("transform", "plain"): (synced(transform, m, p), check_vector),
            ("transform", "frozen"): (synced(frozen_transform, m, p), check_vector),
            ("complex", "plain"): (synced(chain, z0, c), check_complex),
            ("complex", "frozen"): (synced(frozen_chain, z0, c), check_complex)}


def _numpy_cases(np, n: int, k: int):
    points, matrix, z = _inputs(np, n)
    hom = np.concatenate([points, np.ones((1, n), np.float32)])
    z0 = (z[0] + 1j * z[1]).astype(np.complex64)
    c = np.complex64(0.3 - 0.45j)

    def transform():
        return matrix @ hom

    def chain():
        w = z0
        for _ in range(k):
            w = w * c + z0
        return w
    return {("transform", "plain"): (transform, lambda r: _digest(r)), ("complex", "plain"): (chain, lambda w: _digest(w))}


def _phases(dr, cases: dict, repeats: int, evict: bool = False) -> dict:
    """CPU time and wall time of a plain call's tracing alone and of the whole call (tracing,
    evaluation, waiting for the kernel), of ``repeats`` interleaved samples: the Python-side cost
    of the plain calls, beside the anchor's.  Wall times are medians.  Tracing runs on the calling
    thread: its CPU time is that thread's (``time.thread_time``; the process's would add what the
    pool's workers spin meanwhile, after a 1e6-lane launch), median.  The whole call's CPU time is
    the process's (all threads), the mean (a worker's time reaches the process clock in lumps,
    ``_harness.Timing.cpu_ms``).

    ``evict``: copy 32 MB with NumPy before each sample, evicting the caches as a 1e6-point
    kernel does between two calls (the interpreter's code and objects are then read from memory:
    what makes the tracing of the 1e6-point calls cost more than that of the 1e3-point ones)."""
    pt, tt, pc = time.process_time, time.thread_time, time.perf_counter
    src = np.ones(8 << 20 if evict else 1, np.float32)
    dst = np.empty_like(src)
    out = {}
    for name, (trace, call, args) in cases.items():
        for _ in range(20):
            call(*args)
            _workloads.sync(dr)
        tc, tw, cc, cw = [], [], [], []
        for _ in range(repeats):
            if evict:
                np.copyto(dst, src)
            c0, w0 = tt(), pc()
            r = trace(*args)
            c1, w1 = tt(), pc()
            del r
            if evict:
                np.copyto(dst, src)
            c2, w2 = pt(), pc()
            call(*args)
            _workloads.sync(dr)
            c3, w3 = pt(), pc()
            tc.append(c1 - c0)
            tw.append(w1 - w0)
            cc.append(c3 - c2)
            cw.append(w3 - w2)
        med = statistics.median
        out[name] = {"status": "ok", "trace_cpu_us": med(tc) * 1e6, "trace_us": med(tw) * 1e6,
                     "call_cpu_us": statistics.fmean(cc) * 1e6, "call_us": med(cw) * 1e6}
    return out


def child(system: str, params: dict) -> dict:
    mod, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    n, k, repeats = params["n"], params["k"], params["repeats"]
    if params.get("phases"):
        if system == "numpy":
            raise _workloads.NotAvailable("no tracing")
        out = _phases(mod, _jit_cases(mod, T, np, n, k, phases=True), repeats, params.get("evict", False))
        out.update(version=getattr(mod, "__version__", "?"), threads=_workloads.thread_count(system, mod))
        return out
    cases = _numpy_cases(np, n, k) if system == "numpy" else _jit_cases(mod, T, np, n, k)
    out = {"version": getattr(mod, "__version__", "?"), "threads": _workloads.thread_count(system, mod)}
    for key, (fn, checksum) in cases.items():
        try:
            out["/".join(key)] = H.steady_state(fn, repeats, checksum)
        except Exception as e:  # noqa: BLE001  (a failing case is reported, not fatal)
            out["/".join(key)] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
    return out


def serve(system: str, params: dict) -> None:
    """The child of ``--interleave``: build the JIT rows, then answer requests on stdin
    (:func:`_harness.serve_requests`: one JSON line ``{"case": "transform/plain", "calls": k}``)."""
    mod, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    cases = _jit_cases(mod, T, np, params["n"], params["k"])
    H.serve_requests({"/".join(key): fn for key, (fn, _check) in cases.items()})


INTERLEAVE_CALLS = 10       # calls per batch: one batch per system, row and round


# Seconds of untimed calls before each batch of --interleave: Dr.Jit's idle worker spins 5-20 ms
# after its last launch (measured on 2 cores), so without them every frostjit batch, which follows
# a Dr.Jit batch, shared the cores with it (~1 ms of CPU per 1e6-lane complex call) while
# frostjit's idle workers, spinning 1 ms, cost Dr.Jit's batches ~0.1 ms per call.
SETTLE_S = 0.03


def interleave(systems: list, params: dict, rounds: int, base: str | None,
               variants: dict | None = None, pause: float = 0.0, settle: float = SETTLE_S) -> tuple[dict, dict]:
    """``--interleave``: :func:`_harness.interleave_rows` over this script's rows, batches of
    :data:`INTERLEAVE_CALLS` calls after ``settle`` seconds of untimed ones."""
    return H.interleave_rows(__file__, systems, params, ["/".join(key) for key in ROWS], rounds, INTERLEAVE_CALLS,
                             base, variants, pause, settle)


def report_interleave(res: dict, n: int, k: int, rounds: int) -> None:
    H.report_rounds(res, f"interleaved, n = {H.fmt_n(n)}, k = {k}: median over {rounds} rounds of the median of "
                         f"{INTERLEAVE_CALLS} calls, ms wall [lowest-highest round]; ratio: median [range] of the "
                         "rounds' ratios")


def report_calls(calls: dict) -> None:
    """The per-call table of ``--interleave``: every call of every round pooled, wall time's median
    and tail (a launch whose worker thread lost its core for a time slice on a loaded machine
    shows in the 90th percentile long before the median), and the process CPU time per call (all
    threads: with several, it includes the workers' spinning between launches), the mean: the
    median misses the CPU time of workers that the process clock counts in lumps
    (``_harness.Timing.cpu_ms``)."""
    print("every call, all rounds pooled: wall ms median / 90th / 99th percentile; CPU ms per call (mean)")
    names = list(calls)
    table = []
    for row in next(iter(calls.values())):
        line = [row]
        for name in names:
            wall, cpu = calls[name][row]["wall"], calls[name][row]["cpu"]
            line.append(f"{H.fmt(_percentile(wall, 50))} / {H.fmt(_percentile(wall, 90))} / "
                        f"{H.fmt(_percentile(wall, 99))}; {H.fmt(statistics.fmean(cpu))}")
        table.append(line)
    print(H.table(["row"] + names, table))


def _percentile(values: list, q: float) -> float:
    """The ``q``-th percentile of ``values`` (nearest rank: a measured call, not an interpolation)."""
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(-(-len(v) * q // 100)) - 1))]


# ----------------------------------------------------------------- driver side
def run_child(system: str, params: dict, timeout: float = 1800) -> dict:
    return H.run_script_child(__file__, system, params, timeout, fresh_cache=True)


def report_phases(res: dict, systems, n: int, k: int, evict: bool = False) -> None:
    print(f"plain calls at {H.fmt_n(n)}: tracing alone, and the whole call (tracing, evaluation, kernel); "
          "us, CPU time / wall time (tracing: the calling thread's CPU, median; whole call: the process's, mean; wall: median)" + ("; caches evicted before each sample" if evict else ""))
    rows = []
    for name in ("transform", "complex"):
        for field, label in (("trace", "tracing"), ("call", "whole call")):
            row = [f"{name}: {label}"]
            for s in systems:
                r = res.get(s, {}).get(name)
                row.append("-" if not r or r.get("status") != "ok" else
                           f"{r[field + '_cpu_us']:.1f} / {r[field + '_us']:.1f}")
            fj, dj = (H.val(res.get(s, {}).get(name), field + "_cpu_us") for s in ("frostjit", "drjit"))
            row.append(H.fmt_ratio(H.ratio(fj, dj)))
            rows.append(row)
    print(H.table(["phase"] + list(systems) + ["frostjit / drjit (CPU)"], rows))
    for s in systems:
        if res.get(s, {}).get("status") in ("error", "n/a"):
            print(f"  note: {s}: {res[s].get('reason')}")


def report(res: dict, systems, n: int, k: int) -> None:
    labels = {"transform": f"Matrix4f @ Array4f, {H.fmt_n(n)} points", "complex": f"z = z*c + z0, {k} steps, "
                                                                                   f"{H.fmt_n(n)} Complex2f"}
    H.print_steady_state_table(res, systems, {key: labels[key[0]] for key in ROWS})
    if "frostjit" in systems and "drjit" in systems:
        for key in ROWS:
            a, b = (H.val(H.case_result(res, s, key), "check") for s in ("frostjit", "drjit"))
            if a is not None and b is not None:
                print(f"  results {'/'.join(key)}, frostjit vs drjit: {'bit-identical' if a == b else 'DIFFERENT'}")
    H.print_failures(res, systems)


def parser(prog: str = "bench_types.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench types`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (5 instead of 30) and n = 1e5")
    ap.add_argument("--n", type=H.positive_int, default=None, help="points per call (default 1e6)")
    ap.add_argument("--k", type=H.positive_int, default=10, help="steps of the complex chain (default 10)")
    ap.add_argument("--phases", action="store_true",
                    help="time the plain calls' tracing alone and whole calls in CPU and wall time, 300 "
                         "interleaved samples (the Python-side cost; try --n 1000), instead of the table")
    ap.add_argument("--evict", action="store_true",
                    help="with --phases: copy 32 MB before each sample (caches evicted, as by a 1e6-point kernel)")
    ap.add_argument("--interleave", action="store_true",
                    help="interleaved rounds of the JIT rows, one long-lived child per system, instead of the table")
    ap.add_argument("--rounds", type=H.positive_int, default=8, help="rounds of --interleave (default 8)")
    ap.add_argument("--base", default=None, help="with --interleave: also run frostjit from this checkout")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="with --interleave: seconds of sleep before each batch (e.g. 0.05: the other children's "
                         "idle workers are asleep by then; default 0)")
    ap.add_argument("--settle", type=float, default=None,
                    help=f"with --interleave: seconds of untimed calls back to back before each batch (default "
                         f"{SETTLE_S}: the other children's idle workers have stopped spinning; 0: none)")
    ap.add_argument("--variant", type=H.variant, action="append", default=[], metavar="NAME:VAR=VALUE[,...]",
                    help="with --interleave: also run a frostjit child 'frostjit[NAME]' with these environment "
                         "variables (e.g. spin0:FROSTJIT_POOL_SPIN_US=0); may be repeated")
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_types.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.serve:
        serve(a.serve, json.loads(a.params))
        return 0
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    n = a.n or (10**5 if a.quick else 10**6)
    params = {"n": n, "k": a.k, "repeats": 5 if a.quick else 30, "threads": a.threads}
    if (a.base or a.rounds != 8 or a.variant or a.pause or a.settle is not None) and not a.interleave:
        parser(prog).error("--base, --rounds, --variant, --pause and --settle go with --interleave")
    if a.interleave:
        if a.phases:
            parser(prog).error("--interleave and --phases exclude each other")
        systems = [s for s in a.systems if s != "numpy"]
        settle = SETTLE_S if a.settle is None else a.settle
        if settle < 0:
            parser(prog).error(f"--settle must be >= 0 seconds, not {settle}")
        res, calls = interleave(systems, params, a.rounds, a.base, dict(a.variant), a.pause, settle)
        report_interleave(res, n, a.k, a.rounds)
        report_calls(calls)
        H.report_threads(calls)
        H.dump_json(a.json, {"rounds": res, "calls": calls})
        return 0
    systems = [s for s in a.systems if not (a.phases and s == "numpy")]
    if a.evict and not a.phases:
        parser(prog).error("--evict goes with --phases")
    if a.phases:
        params.update(phases=True, repeats=50 if a.quick else 300, evict=a.evict)
    res = {s: run_child(s, params) for s in systems}
    print(H.versions_line(res))
    if a.phases:
        report_phases(res, systems, n, a.k, a.evict)
    else:
        report(res, systems, n, a.k)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
