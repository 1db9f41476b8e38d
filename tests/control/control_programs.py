"""Random straight-line programs for the control-flow tests, run both as frostjit arrays and as
NumPy arrays (the reference).

A program is a list of ``(op, constant)`` steps applied to a ``Float`` value; every step is exact
in float32 (adds and multiplies by small dyadic constants, min/max, an abs) so frostjit and NumPy
agree bit for bit.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import frostjit as fj

WIDTHS = (1, 7, 1000)

OPS = ("add", "mul", "sub", "min", "max", "abs")
CONSTANTS = (-2.0, -0.5, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)

steps = st.lists(st.tuples(st.sampled_from(OPS), st.sampled_from(CONSTANTS)), min_size=1, max_size=4)


def run_fj(program, x):
    """``program`` on a frostjit array."""
    for op, c in program:
        if op == "add":
            x = x + c
        elif op == "mul":
            x = x * c
        elif op == "sub":
            x = c - x
        elif op == "min":
            x = fj.minimum(x, c)
        elif op == "max":
            x = fj.maximum(x, c)
        else:
            x = fj.abs(x)
    return x


def run_np(program, x: np.ndarray) -> np.ndarray:
    """``program`` on a float32 NumPy array (the reference)."""
    c32 = np.float32
    for op, c in program:
        if op == "add":
            x = x + c32(c)
        elif op == "mul":
            x = x * c32(c)
        elif op == "sub":
            x = c32(c) - x
        elif op == "min":
            x = np.minimum(x, c32(c))
        elif op == "max":
            x = np.maximum(x, c32(c))
        else:
            x = np.abs(x)
    return x.astype(np.float32)


def lanes(seed: int, n: int, low: float = -4.0, high: float = 4.0) -> np.ndarray:
    """``n`` float32 values, multiples of 1/4 (exact in every step above for a few steps)."""
    rng = np.random.default_rng(seed)
    return (rng.integers(int(low * 4), int(high * 4), n) / 4).astype(np.float32)
