"""Hash-grid encodings: forward and backward pass (gradients of the parameters), frostjit beside Dr.Jit.

    python benchmarks/bench_hashgrid.py [--quick] [--systems frostjit,drjit] [--threads N]
                                        [--json out/hashgrid.json]

Cases: ``HashGridEncoding(Float, D, n_levels=16, n_features_per_level=2)`` (Dr.Jit's defaults:
hashmap 2**19, base resolution 16, scale 2; 11.2M parameters for D = 2, 16.6M for D = 3) on
``n`` random points, ``D`` in (2, 3), ``n`` in (1e4, 1e6) (``--quick``: 1e4 only).  A step is
``out = enc(p)``, ``loss = sum(out[0] + ... + out[31])`` evaluated (forward), then
``backward(loss)`` and the parameters' gradient evaluated (backward).  Each system runs in its
own subprocess with an empty kernel cache (never drjit and frostjit in one process).

Reported per case and pass: ``first`` (CPU seconds of the first step, compilation included),
``steady`` (mean CPU seconds over the following steps: the process's time, all threads, so
less sensitive to other load than wall time) and the launches of one steady step (all kernel
history entries; Dr.Jit counts its memsets too).  The check is the sum of the gradient.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit"]


# ----------------------------------------------------------------- child side
def _step(dr, enc, pts, Float):
    """One forward and one backward pass: (forward CPU s, backward CPU s, forward launches,
    backward launches, gradient sum)."""
    c0 = time.process_time()
    out = enc(pts)
    y = out[0]
    for k in range(1, len(out)):
        y = y + out[k]
    loss = dr.sum(y)
    dr.eval(loss)
    c1 = time.process_time()
    n_fwd = len(dr.kernel_history())
    dr.backward(loss)
    g = dr.grad(enc.data)
    dr.eval(g)
    c2 = time.process_time()
    n_bwd = len(dr.kernel_history())
    check = float(dr.sum(g)[0])
    dr.clear_grad(enc.data)
    return c1 - c0, c2 - c1, n_fwd, n_bwd, check


def child(system: str, params: dict) -> dict:
    dr, _ = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    if system == "drjit":
        import drjit.hashgrid as hg
        from drjit.llvm.ad import Float
    else:
        import frostjit.hashgrid as hg
        from frostjit.llvm.ad import Float
    dr.set_flag(dr.JitFlag.KernelHistory, True)
    out = {"version": getattr(dr, "__version__", "?"), "threads": _workloads.thread_count(system, dr)}
    for D in (2, 3):
        for n in params["ns"]:
            enc = hg.HashGridEncoding(Float, D, n_levels=16, n_features_per_level=2)
            dr.enable_grad(enc.data)
            rng = dr.rng(seed=1)
            pts = [rng.random(Float, n) for _ in range(D)]
            dr.eval(enc.data, pts)
            dr.kernel_history()
            f_fwd, f_bwd, _, _, check = _step(dr, enc, pts, Float)
            steps = [_step(dr, enc, pts, Float) for _ in range(params["repeats"])]
            out[f"{D}d/{n}"] = {
                "status": "ok", "first_fwd": f_fwd, "first_bwd": f_bwd,
                "fwd": sum(s[0] for s in steps) / len(steps), "bwd": sum(s[1] for s in steps) / len(steps),
                "fwd_launches": steps[-1][2], "bwd_launches": steps[-1][3], "check": check}
            del enc, pts
    return out


# ----------------------------------------------------------------- driver side
def report(res: dict, systems, ns) -> None:
    rows = []
    for D in (2, 3):
        for n in ns:
            for s in systems:
                r = H.case_result(res, s, (f"{D}d", str(n)))
                if not H.ok(r):
                    rows.append([f"{D}-D, {H.fmt_n(n)}", s, (r or {}).get("reason", "n/a")[:60]] + [""] * 6)
                    continue
                rows.append([f"{D}-D, {H.fmt_n(n)}", s, f"{r['first_fwd']:.3f}", f"{r['first_bwd']:.3f}",
                             f"{r['fwd']:.4f}", f"{r['bwd']:.4f}", str(r["fwd_launches"]),
                             str(r["bwd_launches"]), f"{r['check']:.6g}"])
    print(H.table(["case", "system", "first fwd s", "first bwd s", "steady fwd s", "steady bwd s",
                   "fwd launches", "bwd launches", "sum(grad)"], rows))
    H.print_failures(res, systems)


def parser(prog: str = "bench_hashgrid.py") -> argparse.ArgumentParser:
    """The command line."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1e4 points only, 3 steady steps (else 5)")
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_hashgrid.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    ns = [10**4] if a.quick else [10**4, 10**6]
    params = {"ns": ns, "repeats": 3 if a.quick else 5, "threads": a.threads}
    res = {s: H.run_script_child(__file__, s, params, timeout=3600, fresh_cache=True) for s in a.systems}
    print(H.versions_line(res))
    report(res, a.systems, ns)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
