"""A random walk on the non-negative integers with ``if_stmt``: each walker steps left or right
with probability 1/2 and is reflected at 0.  One PCG32 stream per walker.

    python examples/random_walk.py [walkers] [steps]

This file runs unchanged under Dr.Jit when the two frostjit imports below are replaced by
``import drjit as fj`` and ``from drjit.llvm import PCG32, Int``, and prints the same text
(tests/examples/test_control_examples.py checks both).
"""
import sys

import numpy as np

import frostjit as fj
from frostjit.llvm import PCG32, Int


def walk(walkers: int, steps: int):
    """The walkers' positions after ``steps`` steps."""
    rng = PCG32(size=walkers)
    pos = fj.zeros(Int, walkers)
    for _ in range(steps):
        u = rng.next_float32()
        pos = fj.if_stmt((pos,), u < 0.5, lambda p: p - 1, lambda p: p + 1)
        pos = fj.if_stmt((pos,), pos < 0, lambda p: -p, lambda p: p)      # reflect at 0
        fj.eval(pos, rng)
    return pos


def main(walkers: int = 10000, steps: int = 50) -> list:
    pos = walk(walkers, steps).numpy()
    hist = np.bincount(pos, minlength=steps + 1)
    print(f"{walkers} walkers, {steps} steps: mean distance {pos.mean():.4f} "
          f"(sqrt(2 steps / pi) = {np.sqrt(2 * steps / np.pi):.4f})")
    print("histogram of the first 12 positions:", " ".join(str(int(h)) for h in hist[:12]))
    return hist.tolist()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
