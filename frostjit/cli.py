"""Command line: ``python -m frostjit demo | bench | cache`` (also installed as ``frostjit``).

Each command has its own argparse help (``python -m frostjit COMMAND --help``) and
returns an exit status: 0 on success and after ``--help``, 2 for a usage error.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from .backend.llvm.diskcache import cache_info, clear_disk_cache
from .demo import main as demo_main

PROG = "python -m frostjit"

COMMANDS = {
    "demo": "run the demos: heat simulation timed beside NumPy, then a Gaussian fit with AD",
    "bench": "run a benchmark from benchmarks/ (a table of frostjit beside its anchors)",
    "cache": "show or clear the on-disk kernel cache",
}

BENCHES = {
    "control": ("bench_control.py", "symbolic control flow: a Mandelbrot while_loop (1e6 lanes) beside Dr.Jit"),
    "core": ("bench_core.py", "W1 fused arithmetic, W2 tracing cost, W3 compile and disk-cache load"),
    "func": ("bench_func.py", "@fj.func: 50 call sites of a 200-operation function, compiled once, beside Dr.Jit"),
    "freeze": ("bench_freeze.py", "frozen functions: call overhead, per input leaf, replay, new widths"),
    "ad": ("bench_ad.py", "the fit demo's training step (AD + Adam), unfrozen and frozen"),
    "nn": ("bench_nn.py", "the nn guide's training program (TriEncode + 4 Linear layers): first-use compile and steady state beside Dr.Jit"),
    "pool": ("bench_pool.py", "the thread pool's wake-up: short launches back to back and after pauses, beside Dr.Jit"),
    "dispatch": ("bench_dispatch.py", "multiple dispatch: cost of a cached call beside plum, ovld, ..."),
    "random": ("bench_random.py", "PCG32 samples and a Monte Carlo estimate of pi beside Dr.Jit and NumPy"),
    "hashgrid": ("bench_hashgrid.py", "a 16-level hash grid's forward and backward pass (2-D, 3-D) beside Dr.Jit"),
    "sort": ("bench_sort.py", "sort and argsort of 1e6 Float32/UInt32 keys (plain and frozen) beside Dr.Jit and NumPy"),
    "scalar": ("bench_scalar.py", "the scalar backend's eager operations (CPU time per call), beside Dr.Jit's scalar backend"),
    "tensor": ("bench_tensor.py", "tensors and textures: texture lookups (forward, backward), sums over an axis"),
    "types": ("bench_types.py", "array types: a 4x4 matrix transform of points, a complex-multiply chain"),
}

# benchmarks/ ships with the source checkout, beside the package folder.
BENCH_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def _command_parser(prog: str, commands: dict[str, str], description: str, epilog: str,
                    metavar: str) -> argparse.ArgumentParser:
    """A parser taking one command name and leaving the rest of the line to that command."""
    listing = "\n".join(f"  {name:9} {text}" for name, text in commands.items())
    p = argparse.ArgumentParser(prog=prog, description=f"{description}\n\n{metavar.lower()}s:\n{listing}",
                                epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(metavar.lower(), metavar=metavar, choices=list(commands),
                   help=f"one of {', '.join(commands)}")
    # Shown in the help only: parse_command() parses the name alone and leaves the rest alone.
    p.add_argument("args", nargs="*", default=[], metavar="OPTION", help=f"the {metavar.lower()}'s own options")
    return p


def parse_command(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[str, list[str]]:
    """(command name, the rest of the line) of a :func:`_command_parser` parser.

    Only the first word is parsed here, so options meant for the command (``--quick``,
    ``--help`` after the name) reach it untouched.
    """
    a = parser.parse_args(argv[:1])
    return next(v for k, v in vars(a).items() if k != "args"), argv[1:]


def main_parser() -> argparse.ArgumentParser:
    """``python -m frostjit --help``."""
    return _command_parser(
        PROG, COMMANDS, "frostjit: a tracing JIT for wide arrays with Dr.Jit's Python API.",
        f"`{PROG} COMMAND --help` lists a command's options.", "COMMAND")


# ------------------------------------------------------------------ bench
def _load_bench(name: str):
    """Import benchmarks/<script> as a module (it is a script, not part of the package)."""
    path = os.path.join(BENCH_DIR, BENCHES[name][0])
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(f"_frostjit_bench_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_parser() -> argparse.ArgumentParser:
    """``python -m frostjit bench --help``: the benchmarks and each one's options."""
    lines = []
    for name in BENCHES:
        if not os.path.isdir(BENCH_DIR):
            break
        usage = _load_bench(name).parser(f"{PROG} bench {name}").format_usage()
        lines.append(usage.replace("usage: ", "  ", 1).rstrip())
    if lines:
        epilog = ("options of each benchmark (`" + PROG + " bench NAME --help` explains them):\n"
                  + "\n".join(lines))
    else:
        epilog = f"benchmarks/ was not found beside the package ({BENCH_DIR}): it ships with the source checkout."
    return _command_parser(
        f"{PROG} bench", {k: v[1] for k, v in BENCHES.items()},
        "Run one benchmark script from benchmarks/.  Every system (frostjit, Dr.Jit, NumPy, JAX)\n"
        "runs in its own process; a system that is not installed shows n/a.", epilog, "BENCHMARK")


def _bench(argv: list[str]) -> int:
    name, rest = parse_command(bench_parser(), argv)
    mod = _load_bench(name)
    if mod is None:
        print(f"frostjit: benchmark script {os.path.join(BENCH_DIR, BENCHES[name][0])} not found "
              "(benchmarks/ ships with the source checkout)", file=sys.stderr)
        return 2
    return int(mod.main(rest, prog=f"{PROG} bench {name}") or 0)


# ------------------------------------------------------------------ cache
def cache_parser() -> argparse.ArgumentParser:
    """``python -m frostjit cache --help``."""
    p = argparse.ArgumentParser(
        prog=f"{PROG} cache", description="The on-disk kernel cache: compiled object code, one folder "
        "per LLVM/CPU configuration, under $FROSTJIT_CACHE_DIR (default $XDG_CACHE_HOME/frostjit or "
        "~/.cache/frostjit).")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("info", help="print the folder, the number of cached kernels and their size",
                   description="Print the cache folder, the number of cached kernels and their size.")
    sub.add_parser("clear", help="delete every cached kernel",
                   description="Delete every cached kernel (they are recompiled when needed).")
    return p


def _cache(argv: list[str]) -> int:
    a = cache_parser().parse_args(argv)
    if a.action == "info":
        info = cache_info()
        print(f"kernel cache folder: {info['folder']}")
        print(f"entries: {info['entries']}  size: {info['bytes'] / 1024:.1f} KiB")
        for name, c in info["configurations"].items():
            print(f"  {name}: {c['entries']} entries, {c['bytes'] / 1024:.1f} KiB")
    else:
        n = clear_disk_cache()
        print(f"removed {n} cached kernels")
    return 0


# ------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    """Run ``python -m frostjit`` with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        main_parser().print_help(sys.stderr)
        return 2
    try:
        command, rest = parse_command(main_parser(), argv)
        if command == "demo":
            return int(demo_main(rest) or 0)
        if command == "bench":
            return _bench(rest)
        return _cache(rest)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
