"""A path-tracer-style loop with Russian roulette, written as plain Python under ``@fj.syntax``:
each lane is a light path that bounces until it hits an emitter, is terminated by Russian
roulette (survivors are re-weighted so the estimate stays unbiased), or reaches the maximum depth.

    python examples/path_tracer_roulette.py [paths] [max depth]

The scene is a "furnace": each bounce hits an emitter of radiance 0.8 with probability 0.3 and
otherwise scatters with albedo 0.7, so the expected radiance is the series
sum_k 0.3 * 0.8 * (0.7 * 0.7)^k, about 0.4706 without a depth limit.

This file runs unchanged under Dr.Jit when the two frostjit imports below are replaced by
``import drjit as fj`` and ``from drjit.llvm import PCG32, Bool, Float, UInt32``, and prints the
same text (tests/examples/test_control_examples.py checks both).
"""
import sys

import numpy as np

import frostjit as fj
from frostjit.llvm import PCG32, Bool, Float, UInt32


@fj.syntax
def trace(n: int, max_depth: int):
    """Radiance and depth of ``n`` paths."""
    rng = PCG32(size=n)
    throughput = fj.full(Float, 1.0, n)
    radiance = fj.zeros(Float, n)
    depth = fj.zeros(UInt32, n)
    active = fj.full(Bool, True, n)
    while fj.hint(active, label="path"):
        hit = rng.next_float32() < 0.3
        radiance = fj.select(hit, radiance + throughput * 0.8, radiance)
        throughput *= 0.7
        depth += 1
        if depth > 2:                                     # Russian roulette
            q = fj.minimum(throughput, 0.95)
            survive = rng.next_float32() < q
            throughput = fj.select(survive, throughput / q, throughput)
            active &= survive
        active &= ~hit & (depth < max_depth)
    return radiance, depth


def main(n: int = 100000, max_depth: int = 64) -> float:
    radiance, depth = trace(n, max_depth)
    r = radiance.numpy().astype(np.float64)
    d = np.bincount(depth.numpy(), minlength=8)
    expected = 0.3 * 0.8 / (1 - 0.49)
    print(f"{n} paths: radiance {r.mean():.6f} (expected ~{expected:.4f}), mean depth {depth.numpy().mean():.4f}")
    print("paths ending at depth 1..7:", " ".join(str(int(x)) for x in d[1:8]))
    return float(r.mean())


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
