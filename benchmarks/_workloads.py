"""Benchmark workloads, run ONE system per process.

    python benchmarks/_workloads.py --system drjit --workload W1 --params '{"n": 1000, "k": 10}'

prints one line ``@@RESULT@@ {json}``.  ``status`` is ``ok``, ``n/a`` (system
not importable / workload not applicable) or ``error``.

The drjit and frostjit sides are the SAME code: each workload takes ``dr`` (the
``drjit`` or ``frostjit`` module) and ``T`` (its ``llvm`` submodule), exactly as
a user would write ``import drjit as dr; from drjit import llvm as T``.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import traceback

import numpy as np

RESULT_MARK = "@@RESULT@@ "
perf = time.perf_counter


# ------------------------------------------------------------------ systems
class NotAvailable(Exception):
    pass


def load(system: str):
    """Return (dr, T) for jit systems, (np, None) for numpy, (jax, jnp) for jax."""
    try:
        if system == "drjit":
            import drjit as dr
            import drjit.llvm as T
            return dr, T
        if system == "frostjit":
            import frostjit as fj
            import frostjit.llvm as T
            if not (hasattr(fj, "eval") and hasattr(T, "Float")):
                raise ImportError("frostjit engine not built yet (no fj.eval / frostjit.llvm.Float)")
            return fj, T
        if system == "numpy":
            return np, None
        if system == "jax":
            import jax
            import jax.numpy as jnp
            return jax, jnp
    except Exception as e:  # ImportError, or a half-built engine
        raise NotAvailable(f"cannot import {system}: {type(e).__name__}: {e}")
    raise NotAvailable(f"unknown system {system}")


def thread_count(system: str, mod) -> int | None:
    """The number of threads ``system`` launches kernels on in this process."""
    tc = getattr(mod, "thread_count", None)
    if callable(tc):
        return int(tc())
    if system == "frostjit":  # no public thread_count() yet: ask the LLVM backend's pool
        from frostjit.backend import get_backend
        return get_backend(mod.JitBackend.LLVM).threads.n_threads
    return None


def apply_threads(system: str, threads) -> None:
    """Run this child's kernels on ``threads`` threads (frostjit and drjit), and check it.

    frostjit reads FROSTJIT_NUM_THREADS (set by the driver, ``_harness.thread_env``) when
    its backend starts; drjit is told with ``set_thread_count``.  A mismatch is an error,
    so a table never shows figures measured with another thread count than asked for.
    """
    if not threads or system not in ("drjit", "frostjit"):
        return
    mod, _ = load(system)
    if system == "drjit":
        mod.set_thread_count(int(threads))
    got = thread_count(system, mod)
    if got != int(threads):
        raise RuntimeError(f"{system} runs {got} threads, --threads asked for {threads} "
                           f"(FROSTJIT_NUM_THREADS={os.environ.get('FROSTJIT_NUM_THREADS')})")


def sync(dr) -> None:
    f = getattr(dr, "sync_thread", None)
    if f is not None:
        f()


def history_on(dr) -> bool:
    try:
        dr.set_flag(dr.JitFlag.KernelHistory, True)
        dr.kernel_history_clear() if hasattr(dr, "kernel_history_clear") else dr.kernel_history()
        return True
    except Exception:
        return False


def history(dr) -> list[dict]:
    try:
        return [{k: v for k, v in h.items() if isinstance(v, (int, float, str))}
                for h in dr.kernel_history()]
    except Exception:
        return []


def med(ts):
    return statistics.median(ts)


def timed(fn, repeats: int, inner: int = 1) -> list[float]:
    """Seconds per call of fn(), `repeats` samples of `inner` calls each."""
    out = []
    for _ in range(repeats):
        t0 = perf()
        for _ in range(inner):
            fn()
        out.append((perf() - t0) / inner)
    return out


def inputs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.random(n, dtype=np.float32)
    y = (0.5 + 0.5 * rng.random(n, dtype=np.float32)).astype(np.float32)
    return x, y


def to_numpy(a) -> np.ndarray:
    return np.asarray(a.numpy() if hasattr(a, "numpy") else a, dtype=np.float64)


# ------------------------------------------------------------------ W1
# z = x; repeat K: z = fma(z, y, 0.5) * 0.999 + sin(z) * 0.001; eval(z)
def w1_jit(dr, T, x, y, k):
    z = x
    for _ in range(k):
        z = dr.fma(z, y, 0.5) * 0.999 + dr.sin(z) * 0.001
    dr.eval(z)
    sync(dr)
    return z


def w1_numpy(x, y, k):
    z = x
    for _ in range(k):
        z = (z * y + np.float32(0.5)) * np.float32(0.999) + np.sin(z) * np.float32(0.001)
    return z


def w1_jax_fn(jnp, k):
    def f(x, y):
        z = x
        for _ in range(k):
            z = (z * y + 0.5) * 0.999 + jnp.sin(z) * 0.001
        return z
    return f


def workload_W1(system, p):
    n, k = int(p["n"]), int(p["k"])
    repeats, warmup = int(p.get("repeats", 15)), int(p.get("warmup", 3))
    xn, yn = inputs(n)
    if system == "numpy":
        t0 = perf(); z = w1_numpy(xn, yn, k); first = perf() - t0
        for _ in range(warmup):
            w1_numpy(xn, yn, k)
        ts = timed(lambda: w1_numpy(xn, yn, k), repeats)
    elif system == "jax":
        jax, jnp = load("jax")
        f = jax.jit(w1_jax_fn(jnp, k))
        xj, yj = jnp.asarray(xn), jnp.asarray(yn)
        t0 = perf(); z = f(xj, yj).block_until_ready(); first = perf() - t0
        for _ in range(warmup):
            f(xj, yj).block_until_ready()
        ts = timed(lambda: f(xj, yj).block_until_ready(), repeats)
    else:
        dr, T = load(system)
        x, y = T.Float(xn), T.Float(yn)
        dr.eval(x, y); sync(dr)
        t0 = perf(); z = w1_jit(dr, T, x, y, k); first = perf() - t0
        for _ in range(warmup):
            w1_jit(dr, T, x, y, k)
        ts = timed(lambda: w1_jit(dr, T, x, y, k), repeats)
    zn = to_numpy(z)
    return {"median_s": med(ts), "min_s": min(ts), "first_s": first,
            "checksum": float(zn.mean()), "samples": ts}


# ------------------------------------------------------------------ W2
def workload_W2(system, p):
    """Tracing cost: build `ops` operations (z = z*1.0001 + 0.5), no eval.

    Reports wall time and the calling thread's CPU time (tracing runs on it in both
    systems): on a loaded machine the CPU time is the comparable figure.
    """
    if system in ("numpy", "jax"):
        raise NotAvailable("tracing cost does not apply")
    dr, T = load(system)
    n, ops, repeats = int(p.get("n", 1000)), int(p.get("ops", 10000)), int(p.get("repeats", 7))
    x = T.Float(np.ones(n, dtype=np.float32))
    dr.eval(x); sync(dr)

    def build():
        z = x
        c0 = time.thread_time()
        t0 = perf()
        for _ in range(ops // 2):
            z = z * 1.0001 + 0.5
        t = perf() - t0
        c = time.thread_time() - c0
        del z  # discard unevaluated
        return t, c

    build()  # warm up Python-side caches
    ts, cs = [], []
    for _ in range(repeats):
        t, c = build()
        ts.append(t)
        cs.append(c)
        gc.collect()
    return {"us_per_op": med(ts) / ops * 1e6, "cpu_us_per_op": med(cs) / ops * 1e6, "median_s": med(ts),
            "ops": ops, "samples": ts, "cpu_samples": cs}


# ------------------------------------------------------------------ W5
def workload_W5(system, p):
    """Fixed cost of one evaluation: y = x + 1; eval(y) on a Float of 16 elements."""
    if system in ("numpy", "jax"):
        raise NotAvailable("evaluation cost does not apply")
    dr, T = load(system)
    n, repeats, inner = int(p.get("n", 16)), int(p.get("repeats", 9)), int(p.get("inner", 2000))
    x = T.Float(np.arange(n, dtype=np.float32))
    dr.eval(x); sync(dr)

    def step():
        y = x + 1
        dr.eval(y)
        return y

    for _ in range(200):            # warm: the kernel is compiled and cached
        step()
    sync(dr)
    wall, cpu = [], []
    for _ in range(repeats):
        c0, t0 = time.thread_time(), perf()
        for _ in range(inner):
            step()
        sync(dr)
        wall.append((perf() - t0) / inner)
        cpu.append((time.thread_time() - c0) / inner)
    return {"wall_us": med(wall) * 1e6, "cpu_us": med(cpu) * 1e6, "cpu_best_us": min(cpu) * 1e6,
            "checksum": float(to_numpy(step()).sum())}


# ------------------------------------------------------------------ W3
def w3_build(x, c, ops):
    z = x
    for _ in range(ops // 2):
        z = z * c + 0.5
    return z


def workload_W3(system, p):
    """First eval of a fresh `ops`-op kernel (unique constant c) vs steady state.

    Run twice with the same cache dir and constant: first process measures
    compile, second measures load from the disk cache.
    """
    if system in ("numpy", "jax"):
        raise NotAvailable("no kernel compiler")
    dr, T = load(system)
    n, ops, c = int(p.get("n", 1000)), int(p.get("ops", 100)), float(p["c"])
    repeats = int(p.get("repeats", 15))
    x = T.Float(np.linspace(0, 1, n, dtype=np.float32))
    dr.eval(x); sync(dr)
    hist = history_on(dr)

    def run():
        z = w3_build(x, c, ops)
        dr.eval(z)
        sync(dr)
        return z

    t0 = perf(); z = run(); first = perf() - t0
    h = history(dr) if hist else []
    for _ in range(3):
        run()
    ts = timed(run, repeats)
    steady = med(ts)
    out = {"first_s": first, "steady_s": steady, "extra_s": first - steady,
           "checksum": float(to_numpy(z).mean())}
    if h:
        out["kernels"] = len(h)
        out["backend_ms"] = sum(k.get("backend_time", 0.0) for k in h)
        out["codegen_ms"] = sum(k.get("codegen_time", 0.0) for k in h)
        out["cache_hit"] = [k.get("cache_hit") for k in h]
        out["cache_disk"] = [k.get("cache_disk") for k in h]
    return out


# ------------------------------------------------------------------ W4
def workload_W4(system, p):
    """Compile time of one large kernel: `z = fma(z, z, x) * 0.5 + 0.25` unrolled K times (3K ops).

    Over n = 1e4 float32 elements with an empty kernel cache.  ``compile_s`` is the first
    evaluation minus the steady state (a cache hit: same trace, same run), so it holds what the
    first call adds: IR generation and LLVM (or a disk load).  ``backend_ms`` is the kernel
    history's own figure for the LLVM part.
    """
    if system in ("numpy", "jax"):
        raise NotAvailable("no kernel compiler")
    dr, T = load(system)
    n, k = int(p.get("n", 10000)), int(p["k"])
    repeats = int(p.get("repeats", 3))
    x = T.Float(np.linspace(0, 0.5, n, dtype=np.float32))
    dr.eval(x); sync(dr)
    hist = history_on(dr)

    def run():
        z = x
        for _ in range(k):
            z = dr.fma(z, z, x) * 0.5 + 0.25
        dr.eval(z)
        sync(dr)
        return z

    c0 = time.process_time(); t0 = perf(); z = run(); first = perf() - t0; first_cpu = time.process_time() - c0
    h = history(dr) if hist else []
    ts, cpu = [], []
    for _ in range(repeats):
        c0 = time.process_time(); t0 = perf(); run(); ts.append(perf() - t0); cpu.append(time.process_time() - c0)
    steady = med(ts)
    # CPU seconds of the process (every thread): less sensitive than wall time to other load
    # on the machine, so the two systems compare fairly on a busy machine.
    out = {"first_s": first, "steady_s": steady, "compile_s": first - steady, "ops": 3 * k,
           "compile_cpu_s": first_cpu - med(cpu), "checksum": float(to_numpy(z).mean())}
    if h:
        out["kernels"] = len(h)
        out["backend_ms"] = sum(e.get("backend_time", 0.0) for e in h)
        out["codegen_ms"] = sum(e.get("codegen_time", 0.0) for e in h)
        out["cache_hit"] = [e.get("cache_hit") for e in h]
    return out


# ------------------------------------------------------------------ freeze
def f_loop(fn, repeats, inner):
    return med(timed(fn, repeats, inner))


def workload_Fa(system, p):
    """Frozen call overhead of a trivial x + 1 on 16 elements."""
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)
    repeats, inner = int(p.get("repeats", 9)), int(p.get("inner", 200))
    x = T.Float(np.arange(16, dtype=np.float32)); dr.eval(x); sync(dr)
    f = dr.freeze(lambda a: a + 1)
    for _ in range(5):
        f(x)
    sync(dr)

    def frozen():
        f(x)

    def plain():
        y = x + 1
        dr.eval(y)

    tf = f_loop(frozen, repeats, inner); sync(dr)
    tp = f_loop(plain, repeats, inner); sync(dr)
    chk = float(to_numpy(f(x)).sum())
    return {"frozen_us": tf * 1e6, "plain_us": tp * 1e6, "checksum": chk}


def workload_Fb(system, p):
    """Frozen call taking a list of L Float arrays, returning xs[0] + 1."""
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)
    leaves = [int(v) for v in p.get("leaves", [1, 10, 100, 1000])]
    repeats = int(p.get("repeats", 7))
    out = {}
    for L in leaves:
        xs = [T.Float(np.full(16, i, dtype=np.float32)) for i in range(L)]
        dr.eval(*xs); sync(dr)
        f = dr.freeze(lambda xs: xs[0] + 1)
        for _ in range(4):
            f(xs)
        sync(dr)
        inner = max(5, 2000 // L)
        t = f_loop(lambda: f(xs), repeats, inner)
        sync(dr)
        out[str(L)] = t * 1e6
    ls = sorted(out, key=int)
    lo, hi = ls[0], ls[-1]
    slope = (out[hi] - out[lo]) / (int(hi) - int(lo)) if hi != lo else None
    return {"call_us": out, "us_per_leaf": slope,
            "us_per_leaf_at_max": out[hi] / int(hi)}


def workload_Fc(system, p):
    """W1 (N=1e3, K=10): frozen vs unfrozen."""
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)
    n, k = int(p.get("n", 1000)), int(p.get("k", 10))
    repeats, inner = int(p.get("repeats", 9)), int(p.get("inner", 50))
    xn, yn = inputs(n)
    x, y = T.Float(xn), T.Float(yn); dr.eval(x, y); sync(dr)

    def w1(x, y):
        z = x
        for _ in range(k):
            z = dr.fma(z, y, 0.5) * 0.999 + dr.sin(z) * 0.001
        return z

    fz = dr.freeze(w1)
    for _ in range(4):
        fz(x, y)
        w1_jit(dr, T, x, y, k)
    sync(dr)
    tf = f_loop(lambda: (fz(x, y), sync(dr)), repeats, inner)
    tu = f_loop(lambda: w1_jit(dr, T, x, y, k), repeats, inner)
    a, b = to_numpy(fz(x, y)), to_numpy(w1_jit(dr, T, x, y, k))
    return {"frozen_us": tf * 1e6, "unfrozen_us": tu * 1e6,
            "speedup": tu / tf, "max_abs_diff": float(np.abs(a - b).max()),
            "checksum": float(a.mean())}


def _hidden_reader(n):
    """A function reading ``n`` hidden values (class attributes, not inputs) and a class holding
    them, defined in this module (its globals are a module's, as user code's are)."""
    name = f"_Hidden{n}"
    globals()[name] = type(name, (), {f"a{i}": float(i) for i in range(n)})
    terms = " + ".join(f"{name}.a{i}" for i in range(n)) or "0.0"
    exec(f"def _reads{n}(a):\n    return a + ({terms})\n", globals())   # noqa: S102 - a fixed template
    return globals()[f"_reads{n}"], globals()[name]


def workload_Fg(system, p):
    """Guards: a frozen x + c whose c sums N hidden values (class attributes), N = 0 and 100."""
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)
    repeats, inner = int(p.get("repeats", 9)), int(p.get("inner", 200))
    counts = [int(v) for v in p.get("hidden", [0, 100])]
    x = T.Float(np.arange(16, dtype=np.float32)); dr.eval(x); sync(dr)
    out = {}
    for n in counts:
        fn, _ = _hidden_reader(n)
        f = dr.freeze(fn)
        for _ in range(5):
            f(x)
        sync(dr)
        out[str(n)] = f_loop(lambda: f(x), repeats, inner) * 1e6
        sync(dr)
    lo, hi = str(min(counts)), str(max(counts))
    per = (out[hi] - out[lo]) / (int(hi) - int(lo)) if hi != lo else None
    return {"call_us": out, "us_per_guard": per, "ratio": out[hi] / out[lo]}


def workload_Fh(system, p):
    """A training loop with a learning-rate schedule (a new Python float every step), N params."""
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)
    n = int(p.get("n", 1000))
    steps = int(p.get("steps", 200))
    w0 = T.Float(np.linspace(-1, 1, n, dtype=np.float32))
    m0 = T.Float(np.zeros(n, dtype=np.float32))
    dr.eval(w0, m0); sync(dr)

    def step(w, m, lr):
        g = 2 * (w - 3) + 0.1 * dr.sin(w)
        m = 0.9 * m + 0.1 * g
        w = w - lr * m
        loss = dr.sum(dr.square(w - 3))
        dr.eval(w, m, loss)
        return w, m, loss
    fz = dr.freeze(step)

    def loop(fn, k0):
        w, m = w0, m0
        t = time.perf_counter()
        for i in range(steps):
            w, m, loss = fn(w, m, 0.1 * 0.99 ** (k0 + i))
        sync(dr)
        return (time.perf_counter() - t) / steps, w
    loop(fz, 0)                 # warm up: records (twice: the rate becomes a parameter)
    loop(step, 0)
    n_rec = getattr(fz, "n_recordings", None)
    tf = med([loop(fz, 1000 * r)[0] for r in range(int(p.get("repeats", 5)))])
    tu = med([loop(step, 1000 * r)[0] for r in range(int(p.get("repeats", 5)))])
    a, b = to_numpy(loop(fz, 7)[1]), to_numpy(loop(step, 7)[1])
    return {"frozen_us": tf * 1e6, "unfrozen_us": tu * 1e6, "speedup": tu / tf,
            "max_abs_diff": float(np.abs(a - b).max()), "recordings": n_rec,
            "recordings_after": getattr(fz, "n_recordings", None)}


def workload_Fd(system, p):
    """A function launching 100 separate kernels (eval after each step)."""
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)
    n, steps = int(p.get("n", 1000)), int(p.get("kernels", 100))
    repeats, inner = int(p.get("repeats", 7)), int(p.get("inner", 10))
    x = T.Float(np.linspace(0, 1, n, dtype=np.float32)); dr.eval(x); sync(dr)

    def many(x):
        z = x
        for _ in range(steps):
            z = z * 1.0001 + 0.5
            dr.eval(z)
        return z

    fz = dr.freeze(many)
    for _ in range(3):
        fz(x); many(x)
    sync(dr)
    hist = history_on(dr)
    fz(x); sync(dr)
    nk = len(history(dr)) if hist else None
    tf = f_loop(lambda: (fz(x), sync(dr)), repeats, inner)
    tu = f_loop(lambda: (many(x), sync(dr)), repeats, inner)
    return {"frozen_ms": tf * 1e3, "unfrozen_ms": tu * 1e3, "speedup": tu / tf,
            "kernels_per_replay": nk, "checksum": float(to_numpy(fz(x)).mean())}


def workload_Fe(system, p):
    """Replay at a NEW width: first call at each new width (no compile wanted).

    jit systems: dr.freeze(W1) recorded at width n0, then called once at each
    new width.  jax: jax.jit(W1) compiled at n0, first call at each new shape
    (retrace + recompile).
    """
    k, n0 = int(p.get("k", 10)), int(p.get("n0", 1000))
    widths = [int(w) for w in p.get("widths", [1500, 2000, 3000, 5000, 7000])]
    if system == "jax":
        jax, jnp = load("jax")
        f = jax.jit(w1_jax_fn(jnp, k))
        x0, y0 = (jnp.asarray(a) for a in inputs(n0))
        for _ in range(3):
            f(x0, y0).block_until_ready()
        steady = f_loop(lambda: f(x0, y0).block_until_ready(), 7, 50)
        firsts = []
        for w in widths:
            xw, yw = (jnp.asarray(a) for a in inputs(w))
            t0 = perf(); f(xw, yw).block_until_ready(); firsts.append(perf() - t0)
        return {"new_width_ms": med(firsts) * 1e3, "steady_us": steady * 1e6,
                "new_width_all_ms": [t * 1e3 for t in firsts]}
    if system not in ("drjit", "frostjit"):
        raise NotAvailable("no freeze")
    dr, T = load(system)

    def w1(x, y):
        z = x
        for _ in range(k):
            z = dr.fma(z, y, 0.5) * 0.999 + dr.sin(z) * 0.001
        return z

    fz = dr.freeze(w1)
    x0, y0 = (T.Float(a) for a in inputs(n0))
    dr.eval(x0, y0); sync(dr)
    for _ in range(3):
        fz(x0, y0)
    sync(dr)
    steady = f_loop(lambda: (fz(x0, y0), sync(dr)), 7, 50)
    hist = history_on(dr)
    rec0 = getattr(fz, "n_recordings", None)
    firsts, compiled, correct = [], 0, True
    for w in widths:
        xn, yn = inputs(w)
        xw, yw = T.Float(xn), T.Float(yn)
        dr.eval(xw, yw); sync(dr)
        if hist:
            history(dr)  # clear
        t0 = perf(); z = fz(xw, yw); sync(dr); firsts.append(perf() - t0)
        if hist:
            compiled += sum(1 for h in history(dr) if not h.get("cache_hit", 1))
        ref = w1_numpy(xn, yn, k)
        correct &= bool(np.allclose(to_numpy(z), ref, rtol=1e-4, atol=1e-5))
    return {"new_width_ms": med(firsts) * 1e3, "steady_us": steady * 1e6,
            "new_width_all_ms": [t * 1e3 for t in firsts],
            "kernels_compiled": compiled if hist else None, "correct": correct,
            "re_recordings": (fz.n_recordings - rec0) if rec0 is not None else None}


# ------------------------------------------------------------------ probe
def workload_probe(system, p):
    mod, sub = load(system)
    out = {"version": getattr(mod, "__version__", "?")}
    if system in ("drjit", "frostjit"):
        out["threads"] = thread_count(system, mod)
        x = sub.Float(np.arange(4, dtype=np.float32))
        y = mod.sin(x) + 1
        mod.eval(y)
        out["smoke"] = to_numpy(y).tolist()
    if system == "numpy":
        try:
            from threadpoolctl import threadpool_info
            info = [f"{i.get('internal_api')} {i.get('version')} kernel={i.get('architecture')} threads={i.get('num_threads')}"
                    for i in threadpool_info()]
            out["blas"] = "; ".join(info) + (
                f" (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')},"
                f" OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', 'unset')})")
        except ImportError:
            out["blas"] = "threadpoolctl not installed"
    if system == "jax":
        out["devices"] = [str(d) for d in mod.devices()]
    return out


WORKLOADS = {"probe": workload_probe, "W1": workload_W1, "W2": workload_W2,
             "W3": workload_W3, "W4": workload_W4, "W5": workload_W5, "Fa": workload_Fa, "Fb": workload_Fb,
             "Fc": workload_Fc, "Fd": workload_Fd, "Fe": workload_Fe, "Fg": workload_Fg, "Fh": workload_Fh}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True,
                    choices=["frostjit", "drjit", "numpy", "jax"])
    ap.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    ap.add_argument("--params", default="{}")
    a = ap.parse_args(argv)
    p = json.loads(a.params)
    try:
        apply_threads(a.system, p.get("threads"))
        res = {"status": "ok", **WORKLOADS[a.workload](a.system, p)}
    except NotAvailable as e:
        res = {"status": "n/a", "reason": str(e)}
    except Exception as e:
        traceback.print_exc()
        res = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
    res["system"] = a.system
    res["workload"] = a.workload
    sys.stdout.flush()
    print(RESULT_MARK + json.dumps(res, default=float), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
