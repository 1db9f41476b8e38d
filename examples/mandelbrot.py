"""Mandelbrot set with ``while_loop``: every pixel (lane) iterates until it escapes, so lanes run
different numbers of iterations.

    python examples/mandelbrot.py [width] [height] [max iterations]

This file runs unchanged under Dr.Jit when the two frostjit imports below are replaced by
``import drjit as fj`` and ``from drjit.llvm import Float, UInt32``, and prints the same text
(tests/examples/test_control_examples.py checks both).  frostjit runs the loop in evaluated mode
until its symbolic mode lands (Dr.Jit: symbolic); the per-pixel counts are the same.
"""
import sys

import frostjit as fj
from frostjit.llvm import Float, UInt32


def mandelbrot(width: int, height: int, max_iter: int):
    """The iteration count of every pixel of a ``width`` x ``height`` view of [-2, 1] x [-1.2, 1.2]."""
    n = width * height
    idx = fj.arange(UInt32, n)
    cr = Float(idx % width) * (3.0 / width) - 2.0
    ci = Float(idx // width) * (2.4 / height) - 1.2

    def cond(i, zr, zi):
        return (i < max_iter) & (zr * zr + zi * zi <= 4.0)

    def body(i, zr, zi):
        return i + 1, zr * zr - zi * zi + cr, 2.0 * zr * zi + ci

    i, zr, zi = fj.while_loop((fj.zeros(UInt32, n), fj.zeros(Float, n), fj.zeros(Float, n)), cond, body,
                              label="mandelbrot")
    return i


def main(width: int = 64, height: int = 24, max_iter: int = 200) -> list:
    counts = mandelbrot(width, height, max_iter).numpy().reshape(height, width)
    shades = " .:-=+*#%@"
    for row in counts:
        print("".join(shades[min(int(c) * len(shades) // (max_iter + 1), len(shades) - 1)] for c in row))
    inside = int((counts == max_iter).sum())
    print(f"{inside} of {width * height} pixels inside after {max_iter} iterations; "
          f"{int(counts.sum())} iterations in all")
    return counts.tolist()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
