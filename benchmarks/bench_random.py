"""Random numbers: PCG32 samples and a Monte Carlo estimate of pi, frostjit beside Dr.Jit and NumPy.

    python benchmarks/bench_random.py [--quick] [--n 10000000] [--systems frostjit,drjit,numpy]
                                      [--threads N] [--json out/random.json]
    python benchmarks/bench_random.py --interleave [--rounds R] [--base CHECKOUT] [--pause S] [--n N] ...

Workloads (n = 1e7 by default), medians of repeated steady-state calls, each system in its own
subprocess (this script re-runs itself with ``--child SYSTEM``; never drjit and frostjit in one
process):

* ``pcg32``: ``x = rng.next_float32()`` for a ``PCG32(size=n)``, evaluate ``x`` and the
  advanced generator, then ``sum(x)``.  NumPy: ``Generator(PCG64).random(n, float32).sum()``.
* ``pi``: ``x, y`` = two ``next_float32()``, count ``x*x + y*y <= 1`` (one fused kernel with
  the generator update, then a reduction); frostjit and Dr.Jit also frozen (``freeze``, the
  generator an input).  NumPy: two ``random(n, float32)`` and ``count_nonzero``.
* ``distance``: ``far - near`` (``PCG32.__sub__``, the steps between two generators, lane ``i``
  ``7919 i`` steps apart) on 1,000 lanes, evaluated, then summed: the fixed cost of a call of
  its loop over the bits (JIT systems only; the sums must agree).  frostjit replays a frozen
  function of the loop for evaluated generators (since session r15), Dr.Jit traces it in C++.
* ``bounded``: a frozen function (the generator an input) drawing ``next_uint32_bounded(2^31 + 1)``
  on 100,000 lanes (about half the draws are rejected: the longest lanes redraw ~15 times), the
  draws summed: its rejection loop is one ``while_loop`` kernel (JIT systems only; the sums must
  agree).

``first`` is the first call (kernel compilation included, disk caches empty: each JIT runs
with a fresh cache directory).  The JIT sides run the same code; their checksums (the sum and
the count) must agree, since frostjit draws Dr.Jit's numbers.  Target: frostjit's steady state
no slower than Dr.Jit's.

``--interleave`` runs the JIT rows in *interleaved* rounds instead (``_harness.interleave_rows``,
as ``bench_types.py --interleave``): one long-lived child per system (and ``frostjit@base``, frostjit
imported from ``--base CHECKOUT``), asked in turn for a batch of 5 calls of each row, the order
rotated each round, so that every system sees the same load of a shared machine; it prints each
row's median over the rounds and the median [range] of the rounds' frostjit / Dr.Jit ratios (the
1e7-sample rows are memory-bound and swing +-20% between separate runs of the table).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit", "numpy"]
ROWS = [("pcg32", "plain"), ("pi", "plain"), ("pi", "frozen"), ("distance", "plain"), ("bounded", "frozen")]
DISTANCE_LANES = 1000       # the distance row: tracing and launching dominate, not the lanes
BOUNDED_LANES, BOUND = 100_000, 2**31 + 1       # the bounded row: heavy rejection


# ----------------------------------------------------------------- child side
def _jit_cases(dr, T, n):
    rng = T.PCG32(size=n)
    dr.eval(rng)

    def pcg32():
        x = rng.next_float32()
        dr.eval(x, rng)
        return float(dr.sum(x)[0])

    def count_inside(r):
        x = r.next_float32()
        y = r.next_float32()
        inside = dr.fma(x, x, y * y) <= 1.0
        dr.eval(inside, r)
        return dr.count(inside)

    # the distance of two generators a few thousand steps apart, one lane each (``rng - other``)
    far = T.PCG32(size=DISTANCE_LANES, initstate=3)
    near = T.PCG32(far)
    far += dr.arange(T.Int64, DISTANCE_LANES) * 7919
    dr.eval(far, near)

    def distance():
        d = far - near
        dr.eval(d)
        return int(dr.sum(d)[0])

    def bounded_sum(r):
        k = r.next_uint32_bounded(BOUND)
        total = dr.sum(T.UInt64(k))
        dr.eval(total, r)
        return total

    bounded_rng = T.PCG32(size=BOUNDED_LANES, initstate=5)
    frozen_bounded = dr.freeze(bounded_sum)
    dr.eval(bounded_rng)

    pi_rng = T.PCG32(size=n, initstate=7)
    frozen_rng = T.PCG32(size=n, initstate=7)
    frozen = dr.freeze(count_inside)
    return {("pcg32", "plain"): pcg32,
            ("pi", "plain"): lambda: int(count_inside(pi_rng)[0]),
            ("pi", "frozen"): lambda: int(frozen(frozen_rng)[0]),
            ("distance", "plain"): distance,
            ("bounded", "frozen"): lambda: int(frozen_bounded(bounded_rng)[0])}


def _numpy_cases(np, n):
    gen = np.random.Generator(np.random.PCG64(0))

    def pcg32():
        return float(gen.random(n, dtype=np.float32).sum())

    def pi():
        x = gen.random(n, dtype=np.float32)
        y = gen.random(n, dtype=np.float32)
        return int(np.count_nonzero(x * x + y * y <= 1.0))
    return {("pcg32", "plain"): pcg32, ("pi", "plain"): pi}


def child(system: str, params: dict) -> dict:
    mod, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    n, repeats = params["n"], params["repeats"]
    cases = _numpy_cases(mod, n) if system == "numpy" else _jit_cases(mod, T, n)
    out = {"version": getattr(mod, "__version__", "?"), "threads": _workloads.thread_count(system, mod)}
    for key, fn in cases.items():
        try:
            out["/".join(key)] = H.steady_state(fn, repeats)
        except Exception as e:  # noqa: BLE001  (a failing case is reported, not fatal)
            out["/".join(key)] = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
    return out


def serve(system: str, params: dict) -> None:
    """The child of ``--interleave``: build the JIT rows, then answer requests on stdin
    (:func:`_harness.serve_requests`: one JSON line ``{"case": "pi/frozen", "calls": k}``)."""
    mod, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    H.serve_requests({"/".join(key): fn for key, fn in _jit_cases(mod, T, params["n"]).items()})


# ----------------------------------------------------------------- driver side
INTERLEAVE_CALLS = 5        # calls per batch: one batch per system, row and round


def run_child(system: str, params: dict, timeout: float = 1800) -> dict:
    return H.run_script_child(__file__, system, params, timeout, fresh_cache=True)


def report(res: dict, systems, n: int) -> None:
    labels = {"pcg32": f"pcg32: {H.fmt_n(n)} next_float32 + sum", "pi": f"pi: {H.fmt_n(n)} points",
              "distance": f"distance: rng - other, {H.fmt_n(DISTANCE_LANES)} lanes",
              "bounded": f"bounded: frozen uint32 < 2^31+1, {H.fmt_n(BOUNDED_LANES)} lanes"}
    # (issue 12's targets: the 1e7-sample rows; the distance row is a figure beside Dr.Jit's)
    H.print_steady_state_table(res, systems, {key: labels[key[0]] for key in ROWS}, ROWS[:3])
    checks = {s: {"/".join(k): H.val(H.case_result(res, s, k), "check") for k in ROWS} for s in systems if s != "numpy"}
    if {"frostjit", "drjit"} <= set(checks):
        same = checks["frostjit"]["pi/plain"] == checks["drjit"]["pi/plain"] \
            and checks["frostjit"]["pi/frozen"] == checks["drjit"]["pi/frozen"]
        print(f"  points inside the circle, frostjit vs drjit (same seeds): {checks['frostjit']['pi/plain']} vs "
              f"{checks['drjit']['pi/plain']} -> {'identical' if same else 'DIFFERENT'}")
        a, b = checks["frostjit"]["distance/plain"], checks["drjit"]["distance/plain"]
        print(f"  sum of the distances, frostjit vs drjit: {a} vs {b} -> {'identical' if a == b else 'DIFFERENT'}")
        a, b = checks["frostjit"]["bounded/frozen"], checks["drjit"]["bounded/frozen"]
        print(f"  sum of the bounded draws, frostjit vs drjit: {a} vs {b} -> {'identical' if a == b else 'DIFFERENT'}")
    H.print_failures(res, systems)


def parser(prog: str = "bench_random.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench random`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (5 instead of 30) and n = 1e6")
    ap.add_argument("--n", type=H.positive_int, default=None, help="samples per call (default 1e7)")
    ap.add_argument("--interleave", action="store_true",
                    help="interleaved rounds of the JIT rows, one long-lived child per system, instead of the table")
    ap.add_argument("--rounds", type=H.positive_int, default=8, help="rounds of --interleave (default 8)")
    ap.add_argument("--base", default=None, help="with --interleave: also run frostjit from this checkout")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="with --interleave: seconds of sleep before each batch (default 0)")
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_random.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.serve:
        serve(a.serve, json.loads(a.params))
        return 0
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    n = a.n or (10**6 if a.quick else 10**7)
    params = {"n": n, "repeats": 5 if a.quick else 30, "threads": a.threads}
    if (a.base or a.rounds != 8 or a.pause) and not a.interleave:
        parser(prog).error("--base, --rounds and --pause go with --interleave")
    if a.interleave:
        systems = [s for s in a.systems if s != "numpy"]
        res, calls = H.interleave_rows(__file__, systems, params, ["/".join(key) for key in ROWS], a.rounds,
                                       INTERLEAVE_CALLS, a.base, None, a.pause)
        H.report_rounds(res, f"interleaved, n = {H.fmt_n(n)}: median over {a.rounds} rounds of the median of "
                             f"{INTERLEAVE_CALLS} calls, ms wall [lowest-highest round]; ratio: median [range] "
                             "of the rounds' ratios")
        H.dump_json(a.json, {"rounds": res, "calls": calls})
        return 0
    res = {s: run_child(s, params) for s in a.systems}
    print(H.versions_line(res))
    report(res, a.systems, n)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
