"""The thread pool's wake-up: short multi-threaded launches back to back and after pauses.

    python benchmarks/bench_pool.py [--rounds R] [--cases chain,transform,chain-plain,...] [--pin]
                                    [--systems frostjit,drjit] [--base CHECKOUT] [--threads N]
                                    [--json out.json]

Each system runs in one long-lived child (``--serve``; never drjit and frostjit in one
process), and each round asks every child in turn, the order rotating, for a batch of calls of
one case with one *pattern*: ``b2b`` (calls back to back), ``pause2`` and ``pause50`` (2 ms or
50 ms of sleep before each call: the workers of both systems have gone idle or to sleep), so
all systems see the same load of a shared machine.  The table gives per case and pattern the
median over rounds of the batch medians, wall time (CPU time of all the process's threads
after the slash: per call, the batch's mean, see ``_harness.Timing.cpu_ms``), and the ratios.  ``idle burn`` is the CPU time a child uses during a 200 ms
pause after a launch: what its idle workers spin.  ``--pin`` pins each child's calling thread to
one CPU and its other threads to the others (on a machine loaded by other processes the workers
otherwise often share the caller's core).

Cases (n = 1e6 lanes): ``chain`` a frozen complex-multiply chain (``z = z*c + z0``, 10 steps;
bench_types), ``transform`` a frozen ``Matrix4f @ Array4f`` (bench_types), ``chain-plain`` and
``transform-plain`` the same unfrozen (traced at each call: ~0.1 ms between launches), ``w1`` the plain
``fma``/``sin`` chain of bench_core's W1 (K = 10), ``sum`` ``sum(t, axis=1)`` of a 4096 x 4096
``TensorXf`` (bench_tensor --sums).  ``--base`` adds frostjit imported from another checkout
(``frostjit@base``, e.g. ``git archive`` of the tree before a change) for before/after figures
in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit"]
CASES = ["chain", "transform", "chain-plain", "transform-plain", "w1", "sum"]
PATTERNS = {"b2b": 0.0, "pause2": 0.002, "pause50": 0.05}
BATCH = 5           # calls per system, case, pattern and round
IDLE_S = 0.2        # the pause whose CPU time is the idle burn


# ----------------------------------------------------------------- child side
def _cases(dr, T, n: int = 1_000_000) -> dict:
    """Per case a callable that runs it once and waits for its result."""
    import numpy as np
    rng = np.random.default_rng(11)
    pts = rng.standard_normal((3, n)).astype(np.float32)
    m = rng.standard_normal((4, 4)).astype(np.float32)
    z = rng.standard_normal((2, n)).astype(np.float32) * np.float32(0.5)
    p = T.Array4f(T.Float(pts[0]), T.Float(pts[1]), T.Float(pts[2]), 1.0)
    matrix = T.Matrix4f(*[float(v) for v in m.ravel()])
    z0 = T.Complex2f(T.Float(z[0]), T.Float(z[1]))
    c = T.Complex2f(0.3, -0.45)
    x = T.Float(rng.random(n, dtype=np.float32))
    y = T.Float((0.5 + 0.5 * rng.random(n, dtype=np.float32)).astype(np.float32))
    t = T.TensorXf(rng.random((4096, 4096)).astype(np.float32))
    dr.eval(p, z0, x, y, t)

    def chain(z0, c):
        w = z0
        for _ in range(10):
            w = w * c + z0
        dr.eval(w)
        return w

    def transform(m, p):
        r = m @ p
        dr.eval(r)
        return r

    def w1(x, y):
        w = x
        for _ in range(10):
            w = dr.fma(w, y, 0.5) * 0.999 + dr.sin(w) * 0.001
        dr.eval(w)
        return w

    def tsum(t):
        r = dr.sum(t, axis=1)
        dr.eval(r)
        return r

    frozen_chain, frozen_transform = dr.freeze(chain), dr.freeze(transform)

    def synced(fn, *args):
        def run():
            r = fn(*args)
            _workloads.sync(dr)
            return r
        return run

    return {"chain": synced(frozen_chain, z0, c), "transform": synced(frozen_transform, matrix, p),
            "chain-plain": synced(chain, z0, c), "transform-plain": synced(transform, matrix, p),
            "w1": synced(w1, x, y), "sum": synced(tsum, t)}


def _pin_threads() -> None:
    """``--pin``: the calling thread on the first CPU this process may use, every other thread
    (the pool's workers) on the next ones, round robin: on a machine loaded by other processes
    a worker otherwise often shares the caller's core, and a two-thread launch runs on one."""
    cpus = sorted(os.sched_getaffinity(0))
    me = threading.get_native_id()
    others = sorted(int(t) for t in os.listdir("/proc/self/task") if int(t) != me)
    os.sched_setaffinity(me, {cpus[0]})
    for k, tid in enumerate(others):
        os.sched_setaffinity(tid, {cpus[1 + k % (len(cpus) - 1)] if len(cpus) > 1 else cpus[0]})


def serve(system: str, params: dict) -> None:
    """Build every case, then answer requests on stdin (one JSON line each: ``{"case", "pattern",
    "calls"}``, or ``{"idle": true}``) with the wall and CPU seconds of each call."""
    dr, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    run = _cases(dr, T)

    def idle(_req) -> dict:
        run["chain"]()
        c0 = time.process_time()
        time.sleep(IDLE_S)
        return {"cpu": time.process_time() - c0}

    # three calls of each case compile (or load) every kernel and record every freeze
    H.serve_requests(run, {"idle": idle}, warm=3, gaps=PATTERNS,
                     before_ready=_pin_threads if params.get("pin") else None)


# ----------------------------------------------------------------- driver side
def measure(systems: list, rounds: int, threads, base: str | None, cases: list, pin: bool = False) -> dict:
    """Interleaved rounds; per system ``{(case, pattern): [(wall ms, cpu ms)], "idle": [cpu ms]}``."""
    with H.Servers(__file__, systems, threads, {"pin": pin}, base) as servers:
        out: dict = {name: {"idle": []} for name in servers.names}
        for r in range(rounds):
            order = servers.order(r)
            for case in cases:
                for pattern in PATTERNS:
                    for name in order:      # the pause: the others' idle workers are asleep by then
                        out[name].setdefault(f"{case}/{pattern}", []).append(servers.batch(
                            name, {"case": case, "pattern": pattern, "calls": BATCH}, pause=0.05))
            for name in order:
                out[name]["idle"].append(servers.ask(name, {"idle": True}, pause=0.05)["cpu"] * 1e3)
    return out


def report(res: dict, rounds: int, cases: list) -> None:
    names = list(res)
    print(f"median over {rounds} rounds of the median of {BATCH} calls: ms wall / ms CPU (all threads, "
          "per call: the batch's mean)")
    ratios = []
    if "frostjit" in names and "drjit" in names:
        ratios.append(("frostjit", "drjit"))
    if "frostjit" in names and "frostjit@base" in names:
        ratios.append(("frostjit", "frostjit@base"))
    header = ["case / pattern"] + names + [f"{a} / {b} (wall)" for a, b in ratios]
    rows = []
    for case in cases:
        for pattern in PATTERNS:
            key, row, med = f"{case}/{pattern}", [f"{case} / {pattern}"], {}
            for name in names:
                walls = [w for w, _ in res[name][key]]
                med[name] = statistics.median(walls)
                row.append(f"{H.fmt(med[name])} / {H.fmt(statistics.median(c for _, c in res[name][key]))}")
            row += [H.fmt_ratio(H.ratio(med[a], med[b])) for a, b in ratios]
            rows.append(row)
    rows.append([f"idle burn (CPU ms in {IDLE_S * 1e3:.0f} ms after a launch)"]
                + [H.fmt(statistics.median(res[name]["idle"])) for name in names] + [""] * len(ratios))
    print(H.table(header, rows))


def parser(prog: str = "bench_pool.py") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=H.positive_int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--cases", type=H.comma_list(CASES, "case"), default=CASES,
                    help=f"comma list from {','.join(CASES)} (default: all)")
    ap.add_argument("--base", default=None, metavar="CHECKOUT",
                    help="also measure frostjit imported from this checkout (frostjit@base)")
    ap.add_argument("--pin", action="store_true",
                    help="pin each child's calling thread to one CPU and its other threads to the others")
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_pool.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.serve:
        serve(a.serve, json.loads(a.params))
        return 0
    print(f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    res = measure(a.systems, a.rounds, a.threads, a.base, a.cases, a.pin)
    report(res, a.rounds, a.cases)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    H.dump_json(a.json, {name: {k: v for k, v in r.items()} for name, r in res.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
