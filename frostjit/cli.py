"""Command line: ``python -m frostjit demo | bench | cache``."""
from __future__ import annotations

import argparse
import os
import runpy
import sys

USAGE = """usage: python -m frostjit <command> [options]

commands:
  demo [heat|fit] [...]     run the demo (default: heat simulation, then see --help)
  bench core|freeze|ad|dispatch [...]
                            run a benchmark script from benchmarks/ (prints a table)
  cache info                show the on-disk kernel cache (folder, entries, size)
  cache clear               delete the on-disk kernel cache
"""

BENCHES = {"core": "bench_core.py", "freeze": "bench_freeze.py", "ad": "bench_ad.py", "dispatch": "bench_dispatch.py"}


def _bench(argv: list[str]) -> int:
    if not argv or argv[0] not in BENCHES:
        print(f"usage: python -m frostjit bench {{{'|'.join(BENCHES)}}} [options]", file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(os.path.dirname(here), "benchmarks", BENCHES[argv[0]])
    if not os.path.exists(script):
        print(f"frostjit: benchmark script {script} not found (benchmarks/ ships with the source checkout)",
              file=sys.stderr)
        return 2
    sys.argv = [script] + argv[1:]
    sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    return 0


def _cache(argv: list[str]) -> int:
    from .backend.llvm.diskcache import cache_info, clear_disk_cache
    p = argparse.ArgumentParser(prog="python -m frostjit cache")
    p.add_argument("action", choices=["info", "clear"])
    a = p.parse_args(argv)
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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        from .demo import main as demo_main
        return int(demo_main(rest) or 0)
    if cmd == "bench":
        return _bench(rest)
    if cmd == "cache":
        return _cache(rest)
    print(f"frostjit: unknown command {cmd!r}\n\n{USAGE}", file=sys.stderr)
    return 2
