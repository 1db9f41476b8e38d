"""Shared driver code for the frostjit benchmarks.

Every system (frostjit, drjit, numpy, jax) runs in its own subprocess
(``benchmarks/_workloads.py``), never in the driver: frostjit links LLVM 22
statically through llvmlite while drjit dynamically loads libLLVM-19, and the
two must never share a process.  The driver only launches children, parses the
JSON line each prints, and formats tables.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORKLOADS = HERE / "_workloads.py"
RESULT_MARK = "@@RESULT@@ "

# Dr.Jit aborts with the system LLVM 15 on some kernels on this CPU: use 19.
_LIBLLVM_GLOBS = [
    "/usr/lib/x86_64-linux-gnu/libLLVM-19.so*",
    "/usr/lib/aarch64-linux-gnu/libLLVM-19.so*",
    "/usr/lib/llvm-19/lib/libLLVM-19.so*",
    "/usr/lib/x86_64-linux-gnu/libLLVM.so.19*",
]


def find_libllvm19() -> str | None:
    for pat in _LIBLLVM_GLOBS:
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[0]
    return None


def child_env(system: str, extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYTHONHASHSEED", "0")
    if system == "drjit" and not env.get("DRJIT_LIBLLVM_PATH"):
        lib = find_libllvm19()
        if lib:
            env["DRJIT_LIBLLVM_PATH"] = lib
    if system == "numpy":
        # The machine may pin OpenBLAS to a conservative kernel on some CPUs;
        # benchmark NumPy with the kernel OpenBLAS would pick by itself.
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    if system == "jax":
        env.setdefault("JAX_PLATFORMS", "cpu")
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


def thread_env(system: str, threads: int | None) -> dict:
    """Environment variables that make a ``system`` child run with ``threads`` threads.

    frostjit sizes its thread pool from ``FROSTJIT_NUM_THREADS`` when its backend
    starts, so the variable must be set before the child starts.  drjit has no such
    variable: its children call ``dr.set_thread_count`` (``_workloads.apply_threads``).
    NumPy's ufuncs and JAX are left alone (``--threads`` says so in its help).
    """
    if threads and system == "frostjit":
        return {"FROSTJIT_NUM_THREADS": str(int(threads))}
    return {}


def run_child(system: str, workload: str, params: dict | None = None,
              env_extra: dict | None = None, timeout: float = 900) -> dict:
    """Run one workload for one system in a fresh process; return its JSON.

    ``params["threads"]``, when set, reaches the child both as a parameter (drjit calls
    ``set_thread_count``) and through the environment (frostjit, see :func:`thread_env`).
    """
    params = params or {}
    cmd = [sys.executable, str(WORKLOADS), "--system", system,
           "--workload", workload, "--params", json.dumps(params)]
    env = child_env(system, {**thread_env(system, params.get("threads")), **(env_extra or {})})
    return _run(cmd, env, timeout)


def run_script_child(script: str, system: str, params: dict, timeout: float = 1800,
                     fresh_cache: bool = False) -> dict:
    """Run ``script --child SYSTEM --params JSON`` (a benchmark script's own child side) for one
    system in a fresh process and return the JSON it printed after :data:`RESULT_MARK`.

    ``fresh_cache``: the child gets an empty kernel cache of its own (compile-time figures)."""
    cmd = [sys.executable, os.path.abspath(script), "--child", system, "--params", json.dumps(params)]
    env_threads = thread_env(system, params.get("threads"))
    if not fresh_cache:
        return _run(cmd, child_env(system, env_threads), timeout)
    name = Path(script).stem
    with tempfile.TemporaryDirectory(prefix=f"{name}_{system}_") as cache:
        env_extra, _ = fresh_cache_env(system, cache)
        return _run(cmd, child_env(system, {**env_threads, **env_extra}), timeout)


def child_main(child, system: str, params_json: str, not_available: tuple = ()) -> int:
    """The child side of :func:`run_script_child`: run ``child(system, params)`` and print its
    result after :data:`RESULT_MARK` (``"n/a"`` for the ``not_available`` exceptions, ``"error"``
    with the message for any other)."""
    try:
        res = {"status": "ok", **child(system, json.loads(params_json))}
    except not_available as e:
        res = {"status": "n/a", "reason": str(e)}
    except Exception as e:  # noqa: BLE001  (a failing system is reported, not fatal)
        res = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
    print(RESULT_MARK + json.dumps(res), flush=True)
    return 0


def _run(cmd: list, env: dict, timeout: float) -> dict:
    """Run a child command; its result is the last line starting with :data:`RESULT_MARK`."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(REPO))
    except subprocess.TimeoutExpired:
        return {"status": "error", "reason": f"timeout after {timeout:.0f}s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
    return {"status": "error", "reason": f"exit {p.returncode}: " + " | ".join(tail)}


def fresh_cache_env(system: str, cache_dir: str | None = None) -> tuple[dict, str]:
    """Env vars pointing the system's kernel disk cache at a (new) directory.

    drjit keeps its cache in ``$HOME/.drjit``; frostjit in ``FROSTJIT_CACHE_DIR``.
    """
    d = cache_dir or tempfile.mkdtemp(prefix=f"bench_{system}_cache_")
    if system == "drjit":
        return {"HOME": d}, d
    if system == "frostjit":
        return {"FROSTJIT_CACHE_DIR": d}, d
    return {}, d


# ----------------------------------------------------------------- command line
THREADS_HELP = ("threads for frostjit (FROSTJIT_NUM_THREADS in its process) and drjit "
                "(set_thread_count); default: all cores.  NumPy's ufuncs and JAX are not affected")


def comma_list(allowed: list[str], what: str = "system"):
    """An argparse ``type`` for a comma list whose items must be among ``allowed``."""
    def parse(text: str) -> list[str]:
        items = [x for x in text.split(",") if x]
        bad = [x for x in items if x not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {', '.join(map(repr, bad)) or '(empty list)'}; choose from {','.join(allowed)}")
        return items
    return parse


def positive_int(text: str) -> int:
    """An argparse ``type``: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def add_system_options(ap: argparse.ArgumentParser, systems: list[str]) -> None:
    """The options every side-by-side benchmark takes: ``--systems`` (a comma list from
    ``systems``), ``--threads``, ``--json``, and the hidden ``--child``/``--params`` of the
    subprocess protocol (:func:`child_main`)."""
    default = "both" if len(systems) == 2 else "all"
    ap.add_argument("--systems", type=comma_list(systems), default=systems,
                    help=f"comma list from {','.join(systems)} (default: {default})")
    ap.add_argument("--threads", type=positive_int, default=None, help=THREADS_HELP)
    ap.add_argument("--json", default=None, metavar="PATH", help="write raw results here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--params", default="{}", help=argparse.SUPPRESS)


# ----------------------------------------------------------------- formatting
def ok(r: dict | None) -> bool:
    return bool(r) and r.get("status") == "ok"


def fmt(v, unit: str = "", digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or isinstance(v, int):
        return f"{v}{unit}"
    if v == 0:
        return "0" + unit
    mag = math.floor(math.log10(abs(v)))
    dec = max(0, digits - 1 - mag)
    return f"{v:.{dec}f}{unit}"


def fmt_n(n: int) -> str:
    e = round(math.log10(n)) if n > 0 else 0
    return f"1e{e}" if n == 10 ** e else str(n)


def ratio(a, b) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(r) -> str:
    return "n/a" if r is None else (f"{r:.2f}x" if r < 100 else f"{r:.0f}x")


def cell(r: dict | None, key: str, unit: str = "") -> str:
    if not r:
        return "n/a"
    if r.get("status") == "n/a":
        return "n/a"
    if r.get("status") != "ok":
        return "error"
    return fmt(r.get(key), unit)


def val(r: dict | None, key: str):
    return r.get(key) if ok(r) else None


def table(header: list[str], rows: list[list[str]], indent: str = "  ") -> str:
    cols = [header] + rows
    w = [max(len(str(r[i])) for r in cols) for i in range(len(header))]
    out = []
    for j, r in enumerate(cols):
        out.append(indent + "  ".join(str(c).rjust(w[i]) if i else str(c).ljust(w[i])
                                      for i, c in enumerate(r)).rstrip())
        if j == 0:
            out.append(indent + "  ".join("-" * x for x in w))
    return "\n".join(out)


def check(r, op: str, target: float) -> str:
    if r is None:
        return "n/a"
    good = r <= target if op == "<=" else r >= target
    return "PASS" if good else "FAIL"


def probe_systems(systems: list[str], threads: int | None = None) -> dict[str, dict]:
    """Version/availability of each system (and the threads it runs with), each probed in
    its own process with the same thread setting as the workloads."""
    return {s: run_child(s, "probe", {"threads": threads}, timeout=300) for s in systems}


def machine_line(probes: dict[str, dict]) -> str:
    parts = [f"python {platform.python_version()}", f"{os.cpu_count()} cores",
             platform.processor() or platform.machine()]
    for s, r in probes.items():
        if ok(r):
            v = r.get("version", "?")
            th = r.get("threads")
            parts.append(f"{s} {v}" + (f" ({th} threads)" if th else ""))
        else:
            parts.append(f"{s} n/a")
    return ", ".join(parts)


def notes_for(probes: dict[str, dict]) -> list[str]:
    notes = []
    for s, r in probes.items():
        if not ok(r):
            notes.append(f"{s}: {r.get('reason', r.get('status'))}")
        elif r.get("blas"):
            notes.append(f"{s}: {r['blas']}")
    return notes


def dump_json(path: str | None, data: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(data, indent=1, default=str))
        print(f"raw results written to {path}")
