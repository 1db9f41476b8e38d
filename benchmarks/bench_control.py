"""Symbolic control flow: a Mandelbrot set with a symbolic ``while_loop``, frostjit beside Dr.Jit.

    python benchmarks/bench_control.py [--quick] [--n 1000000] [--iterations 1000]
                                       [--systems frostjit,drjit] [--threads N] [--json out/control.json]
    python benchmarks/bench_control.py --interleave [--rounds R] [--base CHECKOUT] [--pause S] [--n N] ...

Workload: ``n`` points of a square grid over [-2, 1] x [-1.5, 1.5] (n = 1e6: 1000 x 1000), each
iterating ``z = z*z + c`` until ``|z| >= 2`` or ``iterations`` steps (1,000): a per-lane
iteration count, one symbolic loop (``mode="symbolic"``) inside one kernel; the iteration counts
are evaluated.  Each system runs in its own subprocess (this script re-runs itself with
``--child SYSTEM``; never drjit and frostjit in one process) with an empty kernel cache:

* ``first``: the first call, tracing + compilation + the run (wall time), and the compile share
  reported by each system's kernel history (``codegen_time + backend_time``);
* ``steady``: the median of repeated calls (the kernel found in memory), wall and CPU time of
  the process (both cores run the kernel, so CPU time is about twice the wall time).

``--fresh K`` adds two medians over ``K`` fresh kernels (iteration bounds 1001, 1002, ...: each a
new kernel) on a 64 x 64 grid: ``compile CPU``, the process CPU time of the first call minus that
of the second (the kernel found in memory): compilation alone, robust to a loaded machine where
wall times are not (Dr.Jit's includes its worker threads' spinning after each launch, so
``compile CPU, calling thread`` gives the same difference of the calling thread's CPU time alone:
both JITs compile on the thread that evaluates); and the kernel history's compile share of each first call (``compile`` above
is one such wall-clock sample, which a shared machine's scheduler can stretch 2-5x).  ``--avx2`` makes both systems generate AVX2 code (frostjit:
``FROSTJIT_TARGET_FEATURES=-avx512f``; Dr.Jit: its ``jit_llvm_set_target``, ``haswell``, 8 lanes)
to measure the AVX2 code paths on an AVX-512 machine.

``--interleave [--rounds R] [--base CHECKOUT] [--pause S]`` runs the rows in *interleaved* rounds
instead (one long-lived child per system, and ``frostjit@base`` with frostjit imported from
``--base``, each with an empty kernel cache of its own, asked in turn, the order rotated each
round: :class:`_harness.Servers`): per round and child, ``steady`` is the median of a batch of 5
calls (wall ms, the kernel in memory), and the two compile rows come from one fresh kernel (the
bound ``iterations + 1 + round`` on the 64 x 64 grid): the kernel history's compile time and the
calling thread's CPU time of its first call minus that of its second.  It prints each row's median
[range] over the rounds and the median [range] of the rounds' frostjit / Dr.Jit ratios: single runs
swing with the host's slow phases, a ratio of two systems in the same round much less.

The iteration counts of both systems must agree (same float32 arithmetic, no fused multiply-add
in the formula as written): their checksums are compared.  Targets: steady state <= Dr.Jit,
compile <= Dr.Jit.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness as H  # noqa: E402
import _workloads  # noqa: E402

SYSTEMS = ["frostjit", "drjit"]
COMPILE_LANES = 64 * 64     # the grid of the fresh kernels (--fresh, --interleave): compilation dominates


# ----------------------------------------------------------------- child side
def _target_avx2(system: str) -> None:
    """Make ``system`` generate AVX2 code (before anything is compiled).

    frostjit reads FROSTJIT_TARGET_FEATURES when its backend starts; Dr.Jit 1.5 has no Python
    entry for its target, so its C function ``jit_llvm_set_target`` is called (its LLVM backend
    must be initialized first: one evaluation)."""
    if system == "frostjit":
        os.environ["FROSTJIT_TARGET_FEATURES"] = "-avx512f"
        return
    import ctypes
    import glob
    import drjit as dr
    import drjit.llvm as T
    dr.eval(T.Float(1.0))
    libs = glob.glob(os.path.join(os.path.dirname(dr.__file__), "libdrjit-core*"))
    fn = getattr(ctypes.CDLL(libs[0]), "_Z19jit_llvm_set_targetPKcS0_j", None) if libs else None
    if fn is None:
        raise _workloads.NotAvailable("drjit: jit_llvm_set_target not found (needed by --avx2)")
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32]
    fn(b"haswell", b"+avx2,+fma,+f16c,+avx,+sse4.2,-avx512f", 8)


def _compile_once(dr, T, cr, ci, iterations: int) -> dict:
    """Compile and run the Mandelbrot kernel of bound ``iterations`` (a new one), then run it again
    (found in memory): the CPU ms of compiling it, the process's (``cpu_ms``: first call minus
    second) and the calling thread's (``thread_ms``), and the kernel history's compile share of the
    first call (``hist_ms``, wall).  The kernel history must be enabled."""
    import time
    dr.kernel_history()
    c0, t0 = time.process_time(), time.thread_time()
    _mandelbrot(dr, T, cr, ci, iterations)
    _workloads.sync(dr)
    c1, t1 = time.process_time(), time.thread_time()
    hist = H.compile_ms(dr)
    _mandelbrot(dr, T, cr, ci, iterations)
    _workloads.sync(dr)
    return {"cpu_ms": ((c1 - c0) - (time.process_time() - c1)) * 1e3,
            "thread_ms": ((t1 - t0) - (time.thread_time() - t1)) * 1e3, "hist_ms": hist}


def _compile_fresh(dr, T, rounds: int) -> dict:
    """Medians over ``rounds`` fresh Mandelbrot kernels (see the docstring and :func:`_compile_once`):
    ``compile_cpu_ms``, ``compile_thread_ms`` and ``compile_hist_ms`` (the ``compile`` row's
    figure, over many kernels instead of one)."""
    import statistics
    cr, ci = _grid(dr, T, COMPILE_LANES)
    dr.set_flag(dr.JitFlag.KernelHistory, True)
    got = [_compile_once(dr, T, cr, ci, 1001 + k) for k in range(rounds)]
    dr.set_flag(dr.JitFlag.KernelHistory, False)
    return {f"compile_{key}": statistics.median([g[key] for g in got]) for key in ("cpu_ms", "thread_ms", "hist_ms")}


def _grid(dr, T, n: int):
    """The points ``c`` of a ``side x side`` grid (side = sqrt(n), rounded down)."""
    side = max(int(round(n ** 0.5)), 1)
    idx = dr.arange(T.UInt32, side * side)
    col = T.Float(idx % side)
    row = T.Float(idx // side)
    cr = col * (3.0 / side) - 2.0
    ci = row * (3.0 / side) - 1.5
    dr.eval(cr, ci)
    return cr, ci


def _mandelbrot(dr, T, cr, ci, iterations: int):
    def cond(i, zr, zi):
        return (i < iterations) & (zr * zr + zi * zi < 4.0)

    def body(i, zr, zi):
        return i + 1, zr * zr - zi * zi + cr, 2.0 * zr * zi + ci

    i, zr, zi = dr.while_loop((T.UInt32(0), T.Float(0.0), T.Float(0.0)), cond, body, mode="symbolic")
    dr.eval(i)
    return i


def child(system: str, params: dict) -> dict:
    if params.get("avx2"):
        _target_avx2(system)
    dr, T = _workloads.load(system)
    _workloads.apply_threads(system, params.get("threads"))
    n, iterations, repeats = params["n"], params["iterations"], params["repeats"]
    cr, ci = _grid(dr, T, n)
    _workloads.sync(dr)
    dr.set_flag(dr.JitFlag.KernelHistory, True)
    dr.kernel_history()

    def run():
        r = _mandelbrot(dr, T, cr, ci, iterations)
        _workloads.sync(dr)         # Dr.Jit launches asynchronously: wait for the kernel
        return r

    first_ms, i = H.time_first(run)
    compile_ms = H.compile_ms(dr)
    counts = np.asarray(i.numpy(), dtype=np.uint32)
    dr.set_flag(dr.JitFlag.KernelHistory, False)
    steady = H.time_calls(run, repeats)
    fresh = _compile_fresh(dr, T, params["fresh"]) if params.get("fresh") else {}
    return {"version": getattr(dr, "__version__", "?"), "threads": _workloads.thread_count(system, dr),
            "mandelbrot": {"status": "ok", "first_ms": first_ms, "compile_ms": compile_ms,
                           "ms": steady.ms, "cpu_ms": steady.cpu_ms,
                           "min_ms": steady.min_ms, "lanes": int(counts.size),
                           "iterations": int(counts.sum()),
                           "check": hashlib.sha256(counts.tobytes()).hexdigest()[:16], **fresh}}


def serve(system: str, params: dict) -> None:
    """The child of ``--interleave``: with an empty kernel cache of its own (set before the JIT is
    imported: a fresh bound must compile, not load from disk), answer requests on stdin
    (:func:`_harness.serve_requests`): ``{"case": "steady", "calls": k}`` times ``k`` calls of the
    ``n``-lane Mandelbrot, ``{"compile": true, "iterations": b}`` compiles the kernel of bound ``b``
    (:func:`_compile_once`)."""
    env, cache = H.fresh_cache_env(system)
    os.environ.update(env)
    try:
        dr, T = _workloads.load(system)
        _workloads.apply_threads(system, params.get("threads"))
        cr, ci = _grid(dr, T, params["n"])
        small = _grid(dr, T, COMPILE_LANES)

        def steady():
            _mandelbrot(dr, T, cr, ci, params["iterations"])
            _workloads.sync(dr)

        def compile_(req):
            dr.set_flag(dr.JitFlag.KernelHistory, True)
            try:
                return _compile_once(dr, T, *small, req["iterations"])
            finally:
                dr.set_flag(dr.JitFlag.KernelHistory, False)
        H.serve_requests({"steady": steady}, {"compile": compile_})
    finally:
        shutil.rmtree(cache, ignore_errors=True)


# ----------------------------------------------------------------- driver side
INTERLEAVE_CALLS = 5        # steady-state calls per batch: one batch per child and round
INTERLEAVE_ROWS = (("steady state, wall (median of a batch)", "steady"),
                   ("compile (kernel history, a fresh kernel)", "hist_ms"),
                   ("compile CPU, calling thread (a fresh kernel)", "thread_ms"))


def interleave(systems: list, params: dict, rounds: int, base: str | None, pause: float = 0.0) -> dict:
    """``--interleave``: per child (``frostjit``, ``drjit``, ``frostjit@base``) and row of
    :data:`INTERLEAVE_ROWS`, the list of the rounds' values (ms).  Round ``r`` compiles the bound
    ``iterations + 1 + r`` in every child: a new kernel for each, never one found in a cache."""
    with H.Servers(__file__, systems, params.get("threads"), params, base) as servers:
        out = {name: {row: [] for row, _ in INTERLEAVE_ROWS} for name in servers.names}
        for r in range(rounds):
            for name in servers.order(r):
                wall, _cpu = servers.batch(name, {"case": "steady", "calls": INTERLEAVE_CALLS}, pause)
                got = {"steady": wall, **servers.ask(name, {"compile": True, "iterations": params["iterations"] + 1 + r},
                                                     pause)}
                for row, key in INTERLEAVE_ROWS:
                    out[name][row].append(got[key])
    return out


def run_child(system: str, params: dict, timeout: float = 1800) -> dict:
    return H.run_script_child(__file__, system, params, timeout, fresh_cache=True)


def report(res: dict, systems, n: int, iterations: int, avx2: bool = False) -> None:
    def get(s):
        r = res.get(s, {})
        return r if r.get("status") == "error" else r.get("mandelbrot")

    rows = []
    for what, key, unit in (("steady state, wall", "ms", " ms"), ("steady state, CPU", "cpu_ms", " ms"),
                            ("first call (trace + compile + run)", "first_ms", " ms"),
                            ("compile (kernel history)", "compile_ms", " ms"),
                            ("compile (kernel history, --fresh: median)", "compile_hist_ms", " ms"),
                            ("compile CPU (--fresh: median, fresh kernels)", "compile_cpu_ms", " ms"),
                            ("compile CPU, calling thread (--fresh: median)", "compile_thread_ms", " ms")):
        if key in ("compile_hist_ms", "compile_cpu_ms", "compile_thread_ms") and all(H.val(get(s), key) is None for s in systems):
            continue
        row = [what] + [H.cell(get(s), key, unit) for s in systems]
        row.append(H.fmt_ratio(H.ratio(H.val(get("frostjit"), key), H.val(get("drjit"), key))))
        rows.append(row)
    r0 = get(systems[0]) or {}
    side_n = r0.get("lanes", n)
    print(f"Mandelbrot, {H.fmt_n(side_n)} lanes x up to {iterations} iterations, symbolic while_loop "
          f"({r0.get('iterations', '?')} iterations in all){', AVX2 code' if avx2 else ''}")
    print(H.table(["", *systems, "frostjit / drjit"], rows))
    for what, key in (("steady state (wall)", "ms"), ("compile", "compile_ms")):
        r = H.ratio(H.val(get("frostjit"), key), H.val(get("drjit"), key))
        print(f"  target: {what} <= Dr.Jit: {H.fmt_ratio(r)} {H.check(r, '<=', 1.0)}")
    a, b = H.val(get("frostjit"), "check"), H.val(get("drjit"), "check")
    if a is not None and b is not None:
        print(f"  iteration counts, frostjit vs drjit: {'identical' if a == b else 'DIFFERENT'}")
    for s in systems:
        r = res.get(s, {})
        if r.get("status") in ("error", "n/a"):
            print(f"  note: {s}: {r.get('reason')}")
        m = r.get("mandelbrot")
        if isinstance(m, dict) and m.get("status") == "error":
            print(f"  note: {s}: {m.get('reason')}")


def parser(prog: str = "bench_control.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench control`` shows it with ``--help``)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n = 1e5 lanes and 3 repetitions (instead of 1e6 and 10)")
    ap.add_argument("--n", type=H.positive_int, default=None, help="lanes (default 1e6, a square grid)")
    ap.add_argument("--iterations", type=H.positive_int, default=1000, help="iteration bound (default 1000)")
    ap.add_argument("--repeats", type=H.positive_int, default=None, help="steady-state calls (default 10)")
    ap.add_argument("--fresh", type=H.positive_int, default=None, metavar="K",
                    help="also the median compile CPU time over K fresh kernels (64 x 64 grid)")
    ap.add_argument("--avx2", action="store_true", help="both systems generate AVX2 code (AVX-512 machines)")
    ap.add_argument("--interleave", action="store_true",
                    help="interleaved rounds (steady state and a fresh kernel's compile time), one long-lived "
                         "child per system, instead of the table")
    ap.add_argument("--rounds", type=H.positive_int, default=8, help="rounds of --interleave (default 8)")
    ap.add_argument("--base", default=None, help="with --interleave: also run frostjit from this checkout")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="with --interleave: seconds of sleep before each request (default 0)")
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_control.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.serve:
        serve(a.serve, json.loads(a.params))
        return 0
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    if (a.base or a.rounds != 8 or a.pause) and not a.interleave:
        parser(prog).error("--base, --rounds and --pause go with --interleave")
    if a.interleave and (a.fresh or a.avx2 or a.repeats):
        parser(prog).error("--interleave excludes --fresh, --avx2 and --repeats")
    n = a.n or (10**5 if a.quick else 10**6)
    params = {"n": n, "iterations": a.iterations, "repeats": a.repeats or (3 if a.quick else 10),
              "threads": a.threads, "fresh": a.fresh, "avx2": a.avx2}
    if a.interleave:
        res = interleave(a.systems, params, a.rounds, a.base, a.pause)
        H.report_rounds(res, f"Mandelbrot, interleaved, {H.fmt_n(n)} lanes x up to {a.iterations} iterations: median "
                             f"over {a.rounds} rounds [lowest-highest round], ms; steady: the median of {INTERLEAVE_CALLS} "
                             f"calls; compile: one fresh kernel ({COMPILE_LANES} lanes) per round; ratio: median "
                             "[range] of the rounds' ratios")
        H.dump_json(a.json, res)
        return 0
    res = {s: run_child(s, params) for s in a.systems}
    print(H.versions_line(res))
    report(res, a.systems, n, a.iterations, a.avx2)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
