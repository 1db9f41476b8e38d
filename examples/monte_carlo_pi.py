"""Monte Carlo estimate of pi with PCG32, in Dr.Jit's idiom.

    python examples/monte_carlo_pi.py [samples per round] [rounds]

Throw points uniformly into the unit square; the fraction that lands inside the quarter
circle x^2 + y^2 <= 1 tends to pi / 4.  One generator per lane (``PCG32(size=n)``), a frozen
function per round (the generator is its input: replays advance it), one fused kernel per round.

This file runs unchanged under Dr.Jit when the two frostjit imports below are replaced by
``import drjit as fj`` and ``from drjit.llvm import PCG32``, and prints the same digits: frostjit's
PCG32 draws Dr.Jit's numbers (tests/examples/test_monte_carlo_pi.py checks both).
"""
import math
import sys

import frostjit as fj
from frostjit.llvm import PCG32


def count_inside(rng):
    """How many of this round's points (one per lane) fall inside the quarter circle."""
    x = rng.next_float32()
    y = rng.next_float32()
    return fj.count(fj.fma(x, x, y * y) <= 1.0)


def main(n: int = 10_000_000, rounds: int = 5) -> float:
    rng = PCG32(size=n)
    step = fj.freeze(count_inside)
    total = 0
    for r in range(rounds):
        inside = int(step(rng)[0])
        total += inside
        print(f"round {r}: {inside} of {n} inside, pi ~ {4 * inside / n:.7f}")
    estimate = 4 * total / (n * rounds)
    print(f"pi ~ {estimate:.7f} from {n * rounds} samples (error {abs(estimate - math.pi):.2e})")
    return estimate


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
