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
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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


# ----------------------------------------------------------------- timing (child side)
@dataclass(frozen=True, slots=True)
class Timing:
    """The times of repeated calls (seconds): wall time (``perf_counter``) and the CPU time of the
    whole process (``process_time``: every thread's work, less sensitive than wall time to other
    load on a shared machine), one entry per call, and the last call's result."""
    walls: list
    cpus: list
    result: object = None

    @property
    def ms(self) -> float:
        """The median wall time, milliseconds."""
        return statistics.median(self.walls) * 1e3

    @property
    def cpu_ms(self) -> float:
        """The CPU time of the process per call, milliseconds: the *mean* (total / calls).

        Not the median: Linux adds a thread's CPU time to the process clock only when the thread
        enters the scheduler (a system call that blocks or yields, a preemption) or at a timer
        tick (every 1-4 ms).  A worker thread that spins without system calls (Dr.Jit's
        nanothread workers) is therefore counted in lumps, at a few calls out of many: most
        calls of a ~1 ms launch show only the calling thread's time, and their median missed
        about half of Dr.Jit's CPU time (measured 2026-12-02: median 0.9-1.2 ms per call, mean
        1.8-2.4 ms, the threads' own counters in ``/proc/PID/task/*/schedstat`` 1.8-2.5 ms).
        frostjit's workers yielded every ~50 us while they spun (before session r12; now only
        on the caller's CPU), so they were counted call by call; the median then compared half
        of one system's work with all of the other's."""
        return statistics.fmean(self.cpus) * 1e3

    @property
    def min_ms(self) -> float:
        """The lowest wall time, milliseconds."""
        return min(self.walls) * 1e3


def time_calls(fn: Callable[[], object], repeats: int, warmup: int = 0, gap: float = 0.0,
               warmup_s: float = 0.0) -> Timing:
    """Call ``fn()`` ``warmup`` times untimed, then for ``warmup_s`` seconds untimed, then
    ``repeats`` times, each call timed alone.

    ``gap``: seconds of sleep before each timed call (outside its time), so that idle worker
    threads have gone to sleep when it starts.  ``warmup_s``: the calls before the timed ones run
    back to back for that long (a steady loop: this process's workers spin, another process's
    idle workers have stopped).  The one timing loop of every benchmark's child.

    Examples
    --------
    >>> t = time_calls(lambda: sum(range(100)), repeats=5)
    >>> len(t.walls), t.result
    (5, 4950)
    """
    result = None
    for _ in range(warmup):
        result = fn()
    if warmup_s > 0:
        until = time.perf_counter() + warmup_s
        while time.perf_counter() < until:
            result = fn()
    walls, cpus = [], []
    for _ in range(repeats):
        if gap:
            time.sleep(gap)
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return Timing(walls, cpus, result)


def time_first(fn: Callable[[], object]) -> tuple[float, object]:
    """``(milliseconds, result)`` of one call of ``fn()``, wall time: a first call, compilation
    included."""
    t0 = time.perf_counter()
    result = fn()
    return (time.perf_counter() - t0) * 1e3, result


def steady_state(fn: Callable[[], object], repeats: int, checksum: Callable[[object], object] = lambda r: r) -> dict:
    """A case's row: its first call (``first_ms``; ``checksum`` of its result, untimed, as
    ``check``), then the median (``ms``) and lowest (``min_ms``) wall time of ``repeats`` calls."""
    first_ms, result = time_first(fn)
    check = checksum(result)
    t = time_calls(fn, repeats)
    return {"status": "ok", "first_ms": first_ms, "ms": t.ms, "min_ms": t.min_ms, "check": check}


def compile_ms(dr) -> float:
    """The compile share (``codegen_time + backend_time``, milliseconds) of the launches in
    ``dr``'s kernel history since it was last read (it must be enabled: ``JitFlag.KernelHistory``)."""
    return sum(float(h.get("codegen_time", 0.0)) + float(h.get("backend_time", 0.0))
               for h in dr.kernel_history())


# ----------------------------------------------------------------- long-lived children (interleaved rounds)
def serve_requests(run: dict[str, Callable[[], object]], extra: dict[str, Callable[[dict], dict]] | None = None,
                   warm: int = 2, gaps: dict[str, float] | None = None,
                   before_ready: Callable[[], None] | None = None) -> None:
    """The child side of :class:`Servers`: call every case ``warm`` times (compile or load every
    kernel, record every freeze), print ``ready``, then answer each request read from stdin (one
    JSON line: ``{"case": name, "calls": k, "pattern": p}``) with ``{"wall": [...], "cpu": [...]}``
    (seconds, one entry per call; ``gaps[p]`` seconds of sleep before each call).  A request with
    a key of ``extra`` (e.g. ``{"idle": true}``) is answered by ``extra[key](request)``.
    ``before_ready`` runs after the warm-up calls (e.g. pinning the threads the warm-up started)."""
    for fn in run.values():
        for _ in range(warm):
            fn()
    if before_ready is not None:
        before_ready()
    print(RESULT_MARK + json.dumps({"status": "ready"}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        handler = next((h for key, h in (extra or {}).items() if req.get(key)), None)
        if handler is not None:
            res = handler(req)
        else:
            fn = run[req["case"]]
            if req.get("warmup_s"):
                time_calls(fn, 0, warmup_s=float(req["warmup_s"]))
            watch = req.get("watch", [])
            mine, others = thread_cpu_ns(os.getpid()), _total_cpu_ns(watch)
            t = time_calls(fn, req["calls"], gap=(gaps or {}).get(req.get("pattern"), 0.0))
            res = {"wall": t.walls, "cpu": t.cpus}
            # (per thread, over the timed calls alone; and what the processes in "watch", the
            # other children, burnt meanwhile: their idle workers spinning into this batch)
            mine_after, others_after = thread_cpu_ns(os.getpid()), _total_cpu_ns(watch)
            if mine is not None and mine_after is not None:
                res["threads"] = {tid: ns - mine.get(tid, 0) for tid, ns in mine_after.items()}
            if others is not None and others_after is not None:
                res["others_ns"] = others_after - others
        print(RESULT_MARK + json.dumps(res), flush=True)


def thread_cpu_ns(pid: int) -> dict[str, int] | None:
    """The CPU time (ns) each thread of process ``pid`` has used so far, by thread id (``"main"``:
    the calling thread), from ``/proc/PID/task/*/schedstat``: the scheduler's own count, exact
    for a spinning worker (the process clock gets such a thread's time in lumps, see
    :attr:`Timing.cpu_ms`); ``None`` where there is no such file (not Linux)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    out = {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out["main" if tid == str(pid) else tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue            # (a thread that ended meanwhile)
    return out


def _total_cpu_ns(pids: list) -> int | None:
    """The CPU time (ns) all threads of the processes ``pids`` have used so far (None without ``/proc``)."""
    total = 0
    for pid in pids:
        threads = thread_cpu_ns(pid)
        if threads is None:
            return None
        total += sum(threads.values())
    return total


class Servers:
    """One long-lived ``script --serve SYSTEM --params JSON`` child per system (and
    ``frostjit@base``, frostjit imported from the checkout ``base``, for before/after figures in
    the same run), asked in turn for batches of calls: every system sees the same load of a shared
    machine.  A context manager; the children end when it closes.

    Examples
    --------
    >>> with Servers(__file__, ["frostjit", "drjit"], threads=None, params={}) as s:  # doctest: +SKIP
    ...     for r in range(rounds):
    ...         for name in s.order(r):
    ...             wall_ms, cpu_ms = s.batch(name, {"case": "sum", "calls": 5}, pause=0.05)
    """

    def __init__(self, script: str, systems: list, threads, params: dict, base: str | None = None,
                 variants: dict[str, dict] | None = None):
        # variants: name -> environment variables of one more frostjit child, "frostjit[name]"
        # (e.g. {"spin0": {"FROSTJIT_POOL_SPIN_US": "0"}}: a setting beside the default, same rounds)
        variants = variants or {}
        self.names = (list(systems) + (["frostjit@base"] if base else [])
                      + [f"frostjit[{v}]" for v in variants])
        self._procs = {}
        try:
            for name in self.names:
                system = "frostjit" if name.startswith("frostjit") else name
                env = child_env(system, thread_env(system, threads))
                if name == "frostjit@base":
                    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(base), env["PYTHONPATH"]])
                if name.startswith("frostjit["):
                    env.update({k: str(v) for k, v in variants[name[len("frostjit["):-1]].items()})
                cmd = [sys.executable, os.path.abspath(script), "--serve", system,
                       "--params", json.dumps({"threads": threads, **params})]
                self._procs[name] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                                     env=env, cwd=str(REPO))
            for name in self.names:
                self._read(name)            # "ready": every kernel compiled
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "Servers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for p in self._procs.values():
            if p.stdin and not p.stdin.closed:
                p.stdin.close()
            p.wait()

    def order(self, round_: int) -> list:
        """The systems in the order of round ``round_``: rotated by one each round."""
        k = round_ % len(self.names)
        return self.names[k:] + self.names[:k]

    def ask(self, name: str, request: dict, pause: float = 0.0) -> dict:
        """Send ``request`` to ``name``'s child after ``pause`` seconds (the other children's idle
        workers are asleep by then) and return its answer."""
        if pause:
            time.sleep(pause)
        p = self._procs[name]
        p.stdin.write(json.dumps(request) + "\n")
        p.stdin.flush()
        return self._read(name)

    def batch(self, name: str, request: dict, pause: float = 0.0) -> tuple[float, float]:
        """``(median wall ms, mean CPU ms)`` of one batch of calls (:func:`serve_requests`; the
        CPU time's mean, not its median: see :attr:`Timing.cpu_ms`)."""
        res = self.ask(name, request, pause)
        return statistics.median(res["wall"]) * 1e3, statistics.fmean(res["cpu"]) * 1e3

    def pids(self, exclude: str | None = None) -> list[int]:
        """The children's process ids (but ``exclude``'s)."""
        return [p.pid for name, p in self._procs.items() if name != exclude]

    def _read(self, name: str) -> dict:
        p = self._procs[name]
        for line in p.stdout:
            if line.startswith(RESULT_MARK):
                return json.loads(line[len(RESULT_MARK):])
        raise RuntimeError(f"the {name} child of {p.args[1]} ended early (exit {p.wait()})")


def interleave_rows(script: str, systems: list, params: dict, rows: list[str], rounds: int, calls: int,
                    base: str | None = None, variants: dict | None = None,
                    pause: float = 0.0, settle: float = 0.0) -> tuple[dict, dict]:
    """Interleaved rounds of ``script``'s rows (its ``--serve`` children, :class:`Servers`): each
    round asks every child in turn (the order rotated each round) for a batch of ``calls`` calls of
    each row, so that every system sees the same load of a shared machine.

    Returns ``(rounds, pooled)``: per child name and row, the list of the rounds' median wall ms;
    and every call's wall and CPU ms (``{"wall": [...], "cpu": [...]}``, all rounds pooled) with the
    CPU ns each thread used in all those calls (``"threads"``: thread id -> ns, ``"main"`` the
    calling thread; empty where ``/proc`` has no per-thread counts) and the CPU ns the *other*
    children used meanwhile (``"others"``).  ``pause``: seconds of sleep before each batch, so that
    the other children's idle workers have gone to sleep.  ``settle``: seconds of untimed calls
    back to back before each batch's timed ones, so that the other children's idle workers have
    stopped spinning while this child's own keep spinning as in any loop.  Without either, a
    batch that follows Dr.Jit's shares the cores with Dr.Jit's idle worker (it spins 5-20 ms
    after a launch, frostjit's 1 ms): measured on 2 cores, ~1 ms of CPU per frostjit call of the
    1e6-lane complex chain against ~0.1 per Dr.Jit call (docs/benchmarks.md, r14 lane kernel2)."""
    with Servers(script, systems, params.get("threads"), params, base, variants) as servers:
        out = {name: {row: [] for row in rows} for name in servers.names}
        pooled = {name: {row: {"wall": [], "cpu": [], "threads": {}, "others": 0} for row in rows}
                  for name in servers.names}
        for r in range(rounds):
            for row in rows:
                for name in servers.order(r):
                    request = {"case": row, "calls": calls, "watch": servers.pids(exclude=name)}
                    if settle:
                        request["warmup_s"] = settle
                    got = servers.ask(name, request, pause)
                    out[name][row].append(statistics.median(got["wall"]) * 1e3)
                    into = pooled[name][row]
                    for key in ("wall", "cpu"):
                        into[key].extend(t * 1e3 for t in got[key])
                    for tid, ns in got.get("threads", {}).items():
                        into["threads"][tid] = into["threads"].get(tid, 0) + ns
                    into["others"] += got.get("others_ns", 0)
    return out, pooled


def report_rounds(res: dict, title: str) -> None:
    """Print :func:`interleave_rows`' rounds: per row and child the median over rounds [lowest-highest
    round], and for each frostjit child the median [range] of the rounds' ratios to Dr.Jit's."""
    names = list(res)
    print(title)
    pairs = [(a, "drjit") for a in names if a.startswith("frostjit") and "drjit" in names]
    header = ["row"] + names + [f"{a} / drjit" for a, _ in pairs]
    lines = []
    for row in next(iter(res.values())):
        line = [row]
        for name in names:
            v = res[name][row]
            line.append(f"{fmt(statistics.median(v))} [{fmt(min(v))}-{fmt(max(v))}]")
        for a, b in pairs:
            ratios = sorted(x / y for x, y in zip(res[a][row], res[b][row]))
            line.append(f"{statistics.median(ratios):.2f}x [{ratios[0]:.2f}-{ratios[-1]:.2f}]")
        lines.append(line)
    print(table(header, lines))


def report_threads(calls: dict) -> None:
    """The per-thread table of an interleaved run (:func:`interleave_rows`' pooled calls): CPU ms
    per call of the calling thread and of the others together (every timed call of every round;
    the scheduler's per-thread counts, which see a worker's spinning and its share of the blocks
    exactly), and of the *other children* meanwhile (their idle workers still spinning: the cores this child did not have)."""
    names = [n for n in calls if any(calls[n][row]["threads"] for row in calls[n])]
    if not names:
        return
    print("CPU ms per call by thread (/proc/PID/task/*/schedstat, all rounds): calling thread + other threads "
          "[+ the other children's threads meanwhile]")
    lines = []
    for row in next(iter(calls.values())):
        line = [row]
        for name in names:
            c = calls[name][row]
            n = len(c["wall"])
            main = c["threads"].get("main", 0) / n / 1e6
            others = sum(v for k, v in c["threads"].items() if k != "main") / n / 1e6
            line.append(f"{fmt(main)} + {fmt(others)} [{fmt(c.get('others', 0) / n / 1e6)}]")
        lines.append(line)
    print(table(["row"] + names, lines))


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


def variant(text: str) -> tuple[str, dict]:
    """An argparse ``type`` for ``NAME:VAR=VALUE[,VAR=VALUE...]``: a frostjit child ``frostjit[NAME]``
    run with those environment variables (:class:`Servers`)."""
    name, sep, rest = text.partition(":")
    pairs = [p.partition("=") for p in rest.split(",") if p]
    if not sep or not name or not pairs or any(not k or not eq for k, eq, _ in pairs):
        raise argparse.ArgumentTypeError(f"expected NAME:VAR=VALUE[,VAR=VALUE...], not {text!r}")
    return name, {k: v for k, _, v in pairs}


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


def case_result(res: dict, system: str, key: tuple) -> dict | None:
    """The result of case ``key`` (e.g. ``("pi", "frozen")``, stored as ``"pi/frozen"``) in
    ``system``'s child result, or the child's own result when the whole child failed."""
    r = res.get(system, {})
    return r if r.get("status") == "error" else r.get("/".join(key))


def print_steady_state_table(res: dict, systems: list, rows: dict[tuple, str], targets=None) -> None:
    """The table of :func:`steady_state` results: per case (``rows``: key -> label) each system's
    median ms with its first call in parentheses, frostjit / drjit and numpy / frostjit (NumPy
    has only the ``plain`` variant of each case), then the target line of each case (of those in
    ``targets``, when given)."""
    table_rows = []
    for key, label in rows.items():
        row = [f"{label} ({key[1]})"]
        for s in systems:
            r = case_result(res, s, key)
            row.append("-" if r is None and s == "numpy" else
                       f"{cell(r, 'ms', ' ms')} (first {cell(r, 'first_ms', ' ms')})")
        fj, dj = val(case_result(res, "frostjit", key), "ms"), val(case_result(res, "drjit", key), "ms")
        npy = val(case_result(res, "numpy", (key[0], "plain")), "ms")
        row += [fmt_ratio(ratio(fj, dj)), fmt_ratio(ratio(npy, fj))]
        table_rows.append(row)
    print("median ms per call (steady state); first call in parentheses (compilation included)")
    print(table(["workload"] + list(systems) + ["frostjit / drjit", "numpy / frostjit"], table_rows))
    for key in rows if targets is None else targets:
        r = ratio(val(case_result(res, "frostjit", key), "ms"), val(case_result(res, "drjit", key), "ms"))
        print(f"  target: steady state <= Dr.Jit, {'/'.join(key)}: {fmt_ratio(r)} {check(r, '<=', 1.0)}")


def print_failures(res: dict, systems: list) -> None:
    """A ``note:`` line for each system whose child failed or was not available, and for each of
    its cases that failed."""
    for s in systems:
        r = res.get(s, {})
        if r.get("status") in ("error", "n/a"):
            print(f"  note: {s}: {r.get('reason')}")
        for key, v in r.items():
            if isinstance(v, dict) and v.get("status") == "error":
                print(f"  note: {s} {key}: {v.get('reason')}")


def versions_line(res: dict[str, dict]) -> str:
    """``machine: N cores; frostjit 0.x (2 threads), drjit 1.5.0 (2 threads)``: each system's
    version and thread count, from its child's result (``res``: system -> result)."""
    parts = [f"{s} {r.get('version', 'n/a')}" + (f" ({r['threads']} threads)" if r.get("threads") else "")
             for s, r in res.items()]
    return f"machine: {os.cpu_count()} cores; " + ", ".join(parts)


def dump_json(path: str | None, data: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(data, indent=1, default=str))
        print(f"raw results written to {path}")
