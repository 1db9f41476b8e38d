"""benchmarks/bench_random.py: the command line, and a tiny run whose checksums agree."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import bench_random  # noqa: E402


def test_bench_random_is_a_cli_benchmark():
    r = subprocess.run([sys.executable, "-m", "frostjit", "bench", "random", "--help"], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0
    for opt in ("--quick", "--n", "--systems", "--threads", "--json"):
        assert opt in r.stdout


def test_tiny_run_draws_the_same_points_as_drjit():
    params = {"n": 1001, "repeats": 1}
    fj = bench_random.run_child("frostjit", params, timeout=300)
    assert fj["status"] == "ok", fj
    for key in ("pcg32/plain", "pi/plain", "pi/frozen"):
        assert fj[key]["status"] == "ok", fj[key]
    assert fj["pi/plain"]["check"] == fj["pi/frozen"]["check"]      # same seed, frozen or not
    if importlib.util.find_spec("drjit") is None:
        pytest.skip("Dr.Jit is not installed")
    dj = bench_random.run_child("drjit", params, timeout=300)
    assert dj["status"] == "ok", dj
    assert dj["pi/plain"]["check"] == fj["pi/plain"]["check"]
    assert dj["pcg32/plain"]["check"] == pytest.approx(fj["pcg32/plain"]["check"], rel=1e-5)
