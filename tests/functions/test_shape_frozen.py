"""Reshaping inside a frozen function: tile, repeat, reverse, ravel, unravel and meshgrid read
sizes with width() (symbolic while recording), so a replay at a new width is exact and records
nothing new, frozen against plain calls at widths 1, 7, 1000, 100003."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, Array3f

CASES = {
    "tile": lambda x: fj.tile(x, 3),
    "repeat": lambda x: fj.repeat(x, 2),
    "reverse": lambda x: fj.reverse(x),
    "ravel": lambda x: fj.ravel(Array3f(x, x * 2, x + 1)),
    "ravel C": lambda x: fj.ravel(Array3f(x, x * 2, x + 1), order="C"),
    "unravel": lambda x: fj.unravel(Array3f, fj.tile(x, 3)),
    "meshgrid": lambda x: fj.meshgrid(x, x * 2)[1],
}


def values(r):
    return r.numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_reshaping_in_a_frozen_function_replays_at_new_widths(name):
    """Regression: these read len(x), which pinned a recording to the exact width: every new
    width recorded again (5 recordings for 5 widths)."""
    f = CASES[name]
    frozen = fj.freeze(f)
    widths = [7, 1000, 100003, 33] if name != "meshgrid" else [7, 300, 33]
    for n in widths:
        x = Float(np.random.default_rng(n).standard_normal(n).astype(np.float32))
        np.testing.assert_array_equal(values(frozen(x)), values(f(x)))
    assert frozen.n_recordings == 1


@pytest.mark.parametrize("name", ["tile", "repeat", "reverse", "unravel"])
def test_reshaping_in_a_frozen_function_at_width_one_matches_the_plain_call(name):
    f = CASES[name]
    frozen = fj.freeze(f)
    for n in [7, 1, 7]:
        x = Float(np.arange(n, dtype=np.float32) + 1)
        np.testing.assert_array_equal(values(frozen(x)), values(f(x)))
