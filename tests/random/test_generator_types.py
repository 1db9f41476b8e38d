"""``fj.rng()`` samples every array family (nested arrays, matrices, complex numbers,
quaternions, ``ArrayXf``, tensors) with exactly Dr.Jit 1.5's numbers (recorded by
``make_rng_type_data.py``)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import frostjit as fj
import frostjit.llvm as L

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import rng_type_cases  # noqa: E402
from make_rng_type_data import DATA  # noqa: E402

EXPECTED = json.loads(DATA.read_text())["cases"]


def test_every_family_draws_drjits_numbers():
    got = rng_type_cases.run(fj, L)
    assert sorted(got) == sorted(EXPECTED)
    for key, want in EXPECTED.items():
        assert got[key] == want, key


def test_shapes_must_fit_the_static_sizes():
    g = fj.rng()
    with pytest.raises(ValueError, match=r"expected \(3, 3, width\)"):
        g.random(L.Array33f, (3, 5))
    with pytest.raises(ValueError, match=r"expected \(n, width\)"):
        g.random(L.ArrayXf, 5)
    with pytest.raises(TypeError, match="dtype"):
        g.random(L.Array3i, (3, 5))          # (Float16 static arrays are drawn, as in Dr.Jit)
    with pytest.raises(TypeError, match="dtype"):
        g.integers(L.TensorXu, (2, 2), 5)
