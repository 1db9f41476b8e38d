"""Symbolic control flow: a Mandelbrot set with a symbolic ``while_loop``, frostjit beside Dr.Jit.

    python benchmarks/bench_control.py [--quick] [--n 1000000] [--iterations 1000]
                                       [--systems frostjit,drjit] [--threads N] [--json out/control.json]

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

The iteration counts of both systems must agree (same float32 arithmetic, no fused multiply-add
in the formula as written): their checksums are compared.  Targets: steady state <= Dr.Jit,
compile <= Dr.Jit.
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


def _compile_fresh(dr, T, rounds: int) -> dict:
    """Medians over ``rounds`` fresh Mandelbrot kernels (see the docstring): the CPU milliseconds of
    compiling one, the process's (``compile_cpu_ms``) and the calling thread's
    (``compile_thread_ms``), and the kernel history's compile share of its first call
    (``compile_hist_ms``, wall: the ``compile`` row's figure, over many kernels instead of one)."""
    import statistics
    import time
    cr, ci = _grid(dr, T, 64 * 64)
    costs, thread, hist = [], [], []
    dr.set_flag(dr.JitFlag.KernelHistory, True)
    for k in range(rounds):
        dr.kernel_history()
        c0, t0 = time.process_time(), time.thread_time()
        _mandelbrot(dr, T, cr, ci, 1001 + k)
        _workloads.sync(dr)
        c1, t1 = time.process_time(), time.thread_time()
        hist.append(H.compile_ms(dr))
        _mandelbrot(dr, T, cr, ci, 1001 + k)
        _workloads.sync(dr)
        costs.append((c1 - c0) - (time.process_time() - c1))
        thread.append((t1 - t0) - (time.thread_time() - t1))
    dr.set_flag(dr.JitFlag.KernelHistory, False)
    return {"compile_cpu_ms": statistics.median(costs) * 1e3, "compile_thread_ms": statistics.median(thread) * 1e3,
            "compile_hist_ms": statistics.median(hist)}


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


# ----------------------------------------------------------------- driver side
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
    H.add_system_options(ap, SYSTEMS)
    return ap


def main(argv=None, prog: str = "bench_control.py") -> int:
    a = parser(prog).parse_args(argv)
    if a.child:
        return H.child_main(child, a.child, a.params, (_workloads.NotAvailable,))
    n = a.n or (10**5 if a.quick else 10**6)
    params = {"n": n, "iterations": a.iterations, "repeats": a.repeats or (3 if a.quick else 10),
              "threads": a.threads, "fresh": a.fresh, "avx2": a.avx2}
    res = {s: run_child(s, params) for s in a.systems}
    print(H.versions_line(res))
    report(res, a.systems, n, a.iterations, a.avx2)
    H.dump_json(a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
