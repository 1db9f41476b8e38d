"""Frozen-function benchmarks: frostjit's fj.freeze beside drjit's dr.freeze
(and jax.jit for the new-width case).

    python benchmarks/bench_freeze.py [--quick] [--json out/freeze.json]

  (a) frozen call overhead, trivial x + 1 on 16 elements
  (b) overhead per input leaf: f(list of L Floats) -> xs[0] + 1, L = 1..1000
  (c) W1 (N=1e3, K=10) frozen vs unfrozen
  (d) a function launching 100 separate kernels (eval after each step): replay
  (e) replay at a NEW width (should compile nothing) vs jax.jit's first call
      at a new shape (retrace + recompile)
  (f) guards: a frozen function reading 0 and 100 hidden values (class attributes):
      cost per guard, and the ratio of the two
  (g) a training loop with a learning-rate schedule (a new Python float every step),
      1e3 parameters: frozen vs unfrozen per step, and how often it was traced

Each system runs in its own subprocess; absent systems show "n/a".
`python -m frostjit bench freeze` calls `main(argv)`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402

JIT = ["frostjit", "drjit"]


def run_all(systems, quick, threads):
    rep = 3 if quick else 9
    res = {}
    for s in systems:
        if s not in JIT:
            continue
        base = {"threads": threads, "repeats": rep}
        res[("Fa", s)] = H.run_child(s, "Fa", {**base, "inner": 50 if quick else 200})
        res[("Fb", s)] = H.run_child(s, "Fb", {**base, "leaves": [1, 10, 100] if quick
                                                else [1, 10, 100, 1000]})
        res[("Fc", s)] = H.run_child(s, "Fc", {**base, "inner": 10 if quick else 50})
        res[("Fd", s)] = H.run_child(s, "Fd", {**base, "inner": 3 if quick else 10})
        res[("Fe", s)] = H.run_child(s, "Fe", {"threads": threads},
                                     H.fresh_cache_env(s)[0])
        res[("Fg", s)] = H.run_child(s, "Fg", {**base, "inner": 50 if quick else 200})
        res[("Fh", s)] = H.run_child(s, "Fh", {**base, "steps": 50 if quick else 200,
                                               "repeats": 3 if quick else 5})
    if "jax" in systems:
        res[("Fe", "jax")] = H.run_child("jax", "Fe", {})
    return res


def report(res):
    g = lambda w, s, k: H.val(res.get((w, s)), k)  # noqa: E731
    c = lambda w, s, k, u="": H.cell(res.get((w, s)), k, u)  # noqa: E731

    print("(a) frozen call overhead: f = freeze(lambda x: x + 1), 16 elements, us/call")
    print(H.table(["system", "frozen", "unfrozen (x+1; eval)"],
                  [[s, c("Fa", s, "frozen_us", " us"), c("Fa", s, "plain_us", " us")]
                   for s in JIT]))
    r = H.ratio(g("Fa", "frostjit", "frozen_us"), g("Fa", "drjit", "frozen_us"))
    print(f"  target: frozen overhead <= drjit's: fj/drjit {H.fmt_ratio(r)} {H.check(r, '<=', 1.0)}")
    print()

    print("(b) per input leaf: f(xs: list of L Float[16]) -> xs[0] + 1, us/call")
    Ls = sorted({int(L) for s in JIT for L in (g("Fb", s, "call_us") or {})}) or [1, 10, 100, 1000]
    rows = []
    for s in JIT:
        calls = g("Fb", s, "call_us") or {}
        rows.append([s] + [H.fmt(calls.get(str(L)), " us") if calls else c("Fb", s, "x")
                           for L in Ls]
                    + [c("Fb", s, "us_per_leaf", " us")])
    print(H.table(["system"] + [f"L={L}" for L in Ls] + ["slope us/leaf"], rows))
    r = H.ratio(g("Fb", "frostjit", "us_per_leaf"), g("Fb", "drjit", "us_per_leaf"))
    print(f"  target: per-leaf <= drjit's: fj/drjit {H.fmt_ratio(r)} {H.check(r, '<=', 1.0)}")
    print()

    print("(c) W1 N=1e3 K=10: frozen vs unfrozen, us/call")
    print(H.table(["system", "frozen", "unfrozen", "unfrozen/frozen", "max |diff|"],
                  [[s, c("Fc", s, "frozen_us", " us"), c("Fc", s, "unfrozen_us", " us"),
                    H.fmt_ratio(g("Fc", s, "speedup")), c("Fc", s, "max_abs_diff")]
                   for s in JIT]))
    r = H.ratio(g("Fc", "frostjit", "frozen_us"), g("Fc", "drjit", "frozen_us"))
    sp = g("Fc", "frostjit", "speedup")
    print(f"  targets: fj frozen <= drjit frozen: {H.fmt_ratio(r)} {H.check(r, '<=', 1.0)};"
          f"  fj frozen >= 10x faster than fj unfrozen: {H.fmt_ratio(sp)} {H.check(sp, '>=', 10)}")
    print()

    print("(d) 100 separate kernels (z = z*1.0001 + 0.5; eval) x 100, N=1e3, ms/call")
    print(H.table(["system", "frozen replay", "unfrozen", "unfrozen/frozen", "kernels/replay"],
                  [[s, c("Fd", s, "frozen_ms", " ms"), c("Fd", s, "unfrozen_ms", " ms"),
                    H.fmt_ratio(g("Fd", s, "speedup")), c("Fd", s, "kernels_per_replay")]
                   for s in JIT]))
    r = H.ratio(g("Fd", "frostjit", "frozen_ms"), g("Fd", "drjit", "frozen_ms"))
    print(f"  target: replay <= drjit's: fj/drjit {H.fmt_ratio(r)} {H.check(r, '<=', 1.0)}")
    print()

    print("(e) first call at a NEW width (recorded/compiled at N=1000; widths 1500..7000), W1 K=10")
    rows = []
    for s in JIT + ["jax"]:
        allv = g("Fe", s, "new_width_all_ms")
        rows.append([s, c("Fe", s, "new_width_ms", " ms"),
                     H.fmt(allv[0], " ms") if allv else c("Fe", s, "x"),
                     H.fmt(max(allv), " ms") if allv else c("Fe", s, "x"),
                     c("Fe", s, "steady_us", " us"),
                     c("Fe", s, "kernels_compiled") if s != "jax" else "(recompiles)",
                     c("Fe", s, "re_recordings") if s != "jax" else "",
                     str(g("Fe", s, "correct")) if s != "jax" and H.ok(res.get(("Fe", s))) else ""])
    print(H.table(["system", "median new width", "first new width", "max", "steady same width",
                   "kernels compiled", "re-recordings", "correct"], rows))
    print("  (jax: jax.jit first call at a new shape = retrace + XLA recompile)")
    print()

    print("(f) guards: frozen x + (sum of N hidden class attributes), 16 elements, us/call")
    rows = []
    for s in JIT:
        calls = g("Fg", s, "call_us") or {}
        rows.append([s, H.fmt(calls.get("0"), " us") if calls else c("Fg", s, "x"),
                     H.fmt(calls.get("100"), " us") if calls else c("Fg", s, "x"),
                     c("Fg", s, "us_per_guard", " us"), H.fmt_ratio(g("Fg", s, "ratio"))])
    print(H.table(["system", "N=0", "N=100", "per hidden value", "N=100 / N=0"], rows))
    per, rr = g("Fg", "frostjit", "us_per_guard"), g("Fg", "frostjit", "ratio")
    print(f"  targets: per guard <= 0.1 us: {H.fmt(per, ' us')} {H.check(per, '<=', 0.1)};"
          f"  100 hidden values <= 2x none: {H.fmt_ratio(rr)} {H.check(rr, '<=', 2.0)}")
    print("  (Dr.Jit does not watch hidden values: its replays of N=100 are stale once one changes)")
    print()

    print("(g) training loop with a learning-rate schedule, 1e3 parameters, us/step")
    print(H.table(["system", "frozen", "unfrozen", "unfrozen/frozen", "traced (of 250 steps)", "max |diff|"],
                  [[s, c("Fh", s, "frozen_us", " us"), c("Fh", s, "unfrozen_us", " us"),
                    H.fmt_ratio(g("Fh", s, "speedup")), c("Fh", s, "recordings"), c("Fh", s, "max_abs_diff")]
                   for s in JIT]))
    sp = g("Fh", "frostjit", "speedup")
    print(f"  target: fj frozen >= 10x faster than fj unfrozen: {H.fmt_ratio(sp)} {H.check(sp, '>=', 10)}"
          "  (Dr.Jit keys a Python float by value: it traces every step)")
    for (w, s), r in sorted(res.items()):
        if r.get("status") == "error":
            print(f"  error: {w} {s}: {r.get('reason')}")


SYSTEMS = ["frostjit", "drjit", "jax"]


def parser(prog: str = "bench_freeze.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench freeze`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, leaves and inner loops")
    ap.add_argument("--systems", type=H.comma_list(SYSTEMS), default=SYSTEMS,
                    help=f"comma list from {','.join(SYSTEMS)} (default: all; jax runs case (e) only)")
    ap.add_argument("--threads", type=H.positive_int, default=None, help=H.THREADS_HELP)
    ap.add_argument("--json", default=None, metavar="PATH", help="write raw results here")
    return ap


def main(argv=None, prog: str = "bench_freeze.py") -> int:
    a = parser(prog).parse_args(argv)
    systems = a.systems
    t0 = time.time()
    probes = H.probe_systems(systems, a.threads)
    print("frostjit freeze benchmarks:", H.machine_line(probes))
    for note in H.notes_for(probes):
        print("  note:", note)
    print()
    res = run_all(systems, a.quick, a.threads)
    report(res)
    print(f"\ntotal {time.time() - t0:.0f} s")
    H.dump_json(a.json, {"probes": probes, **{f"{w}/{s}": v for (w, s), v in res.items()}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
