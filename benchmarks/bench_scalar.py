"""Scalar-backend operation cost: CPU time per call of small eager operations.

    python benchmarks/bench_scalar.py [--quick] [--system frostjit|drjit] [--json]

Each workload is timed with ``time.process_time()`` over a batch of calls, repeated; the
median per call is printed in microseconds.  ``--system drjit`` runs the same workloads on
``drjit.scalar`` (set ``DRJIT_LIBLLVM_PATH``; never in the same process as frostjit).
"""
from __future__ import annotations

import argparse
import sys
import json
import statistics
import time


def workloads(system: str) -> dict:
    if system == "drjit":
        import drjit as fj
        import drjit.scalar as s
    else:
        import frostjit as fj
        import frostjit.scalar as s
    a, b = s.Array3f(1, 2, 3), s.Array3f(4, 5, 6)
    u = s.Array3u(0x12345678, 7, 0xFFFFFFFF)
    m = s.Matrix4f(*[float(k) for k in range(16)])
    v = s.Array4f(1, 2, 3, 4)
    rng = s.PCG32()
    return {
        "Array3f + Array3f": lambda: a + b,
        "Array3f * 2.0": lambda: a * 2.0,
        "dot(Array3f, Array3f)": lambda: fj.dot(a, b),
        "Array3u ^ (Array3u >> 3)": lambda: u ^ (u >> 3),
        "Matrix4f @ Array4f": lambda: m @ v,
        "PCG32.next_uint32()": rng.next_uint32,
        "PCG32.next_float32()": rng.next_float32,
    }


def measure(fn, calls: int, repeats: int) -> float:
    """Median CPU time per call (microseconds) over ``repeats`` batches of ``calls``."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        times.append((time.process_time() - t0) / calls * 1e6)
    return statistics.median(times)


def parser(prog: str = "bench_scalar.py") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    p.add_argument("--system", choices=("frostjit", "drjit"), default="frostjit")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def main(argv=None, prog: str = "bench_scalar.py") -> int:
    args = parser(prog).parse_args(argv)
    calls, repeats = (200, 5) if args.quick else (2000, 9)
    out = {name: measure(fn, calls, repeats) for name, fn in workloads(args.system).items()}
    if args.json:
        print(json.dumps(out))
    else:
        for name, us in out.items():
            print(f"{name:28s} {us:9.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
