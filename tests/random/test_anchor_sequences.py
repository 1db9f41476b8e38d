"""frostjit's generators draw exactly Dr.Jit 1.5's numbers for the same seeds.

The expected values were drawn by Dr.Jit (``make_anchor_data.py``, committed in ``data/``);
every case of ``anchor_cases.py`` is run here under frostjit and compared bit for bit (floats
by their bits; NaN with NaN).  ``test_reference_data_regenerates`` reruns Dr.Jit when it is
installed and checks that the committed data is what it draws today.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm as L

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import anchor_cases  # noqa: E402
import make_anchor_data  # noqa: E402

DATA = np.load(make_anchor_data.DATA)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == np.uint32 or a.dtype == np.uint64:
        fa = a.view(np.float32 if a.dtype == np.uint32 else np.float64)
        fb = b.view(fa.dtype)
        nan = np.isnan(fa) & np.isnan(fb)
        return bool(np.all((a == b) | nan))
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("name,family,seed,width", anchor_cases.cases(), ids=[c[0] for c in anchor_cases.cases()])
def test_sequences_match_drjit(name, family, seed, width):
    got = anchor_cases.run_case(fj, L, family, seed, width)
    n_expected = sum(1 for k in DATA.files if k.startswith(name + "/"))
    assert len(got) == n_expected
    for i, g in enumerate(got):
        want = DATA[f"{name}/{i}"]
        if not _same(np.asarray(g), want):
            bad = np.flatnonzero(np.asarray(g).ravel() != want.ravel()) if g.shape == want.shape else "shape"
            pytest.fail(f"{name}: output {i} differs from Dr.Jit's (at {bad[:10] if len(bad) else bad}): "
                        f"{np.asarray(g).ravel()[:8]} vs {want.ravel()[:8]}")


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="Dr.Jit is not installed")
def test_reference_data_regenerates():
    """Dr.Jit still draws the committed numbers (the data is its output, not hand-made)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "now.npz")
        make_anchor_data.run_child("drjit", out)
        now = np.load(out)
        assert sorted(now.files) == sorted(DATA.files)
        differ = [k for k in now.files if not np.array_equal(now[k], DATA[k])]
        assert not differ, differ


def test_math_digests_are_recorded():
    digests = json.loads(bytes(DATA["math_digests"]).decode())
    assert set(digests) == set(make_anchor_data.math_inputs())


def test_reference_programs_cover_each_method_of_the_api():
    """Every sampling method of PCG32 / Philox4x32 is exercised by a reference program (a method
    added later must get a case too)."""
    aliases = {"bounded32": "next_uint32_bounded", "bounded64": "next_uint64_bounded"}
    pcg = {aliases.get(s[0], s[0]) for s in anchor_cases.PCG_PROGRAM}
    assert {m for m in dir(L.PCG32) if m.startswith(("next_", "prev_"))} <= pcg
    philox = {s[0] for s in anchor_cases.PHILOX_PROGRAM}
    assert {m for m in dir(L.Philox4x32) if m.startswith("next_")} <= philox
