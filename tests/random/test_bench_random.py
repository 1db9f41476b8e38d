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
    for key in ("pcg32/plain", "pi/plain", "pi/frozen", "distance/plain", "bounded/frozen"):
        assert fj[key]["status"] == "ok", fj[key]
    assert fj["pi/plain"]["check"] == fj["pi/frozen"]["check"]      # same seed, frozen or not
    assert fj["distance/plain"]["check"] == 7919 * sum(range(bench_random.DISTANCE_LANES))
    if importlib.util.find_spec("drjit") is None:
        pytest.skip("Dr.Jit is not installed")
    dj = bench_random.run_child("drjit", params, timeout=300)
    assert dj["status"] == "ok", dj
    assert dj["pi/plain"]["check"] == fj["pi/plain"]["check"]
    assert dj["distance/plain"]["check"] == fj["distance/plain"]["check"]
    assert dj["bounded/frozen"]["check"] == fj["bounded/frozen"]["check"]
    assert dj["pcg32/plain"]["check"] == pytest.approx(fj["pcg32/plain"]["check"], rel=1e-5)


def test_bench_random_interleave_asks_each_child_in_turn():
    # two frostjit children (the second, frostjit@base, imported from this checkout) in one run
    r = subprocess.run([sys.executable, "-m", "frostjit", "bench", "random", "--interleave", "--rounds", "2",
                        "--n", "100", "--systems", "frostjit", "--base", REPO], capture_output=True, text=True,
                       cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    header = next(x for x in r.stdout.splitlines() if x.strip().startswith("row"))
    assert header.split()[1:] == ["frostjit", "frostjit@base"]
    for row in ("pcg32/plain", "pi/plain", "pi/frozen", "distance/plain", "bounded/frozen"):
        line = next(x for x in r.stdout.splitlines() if x.strip().startswith(row))
        median, spread = line.split(row)[1].split()[:2]
        low, high = (float(v) for v in spread.strip("[]").split("-"))
        assert 0 < low <= float(median) <= high, line


def test_bench_random_rounds_need_interleave():
    r = subprocess.run([sys.executable, "-m", "frostjit", "bench", "random", "--rounds", "3"], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "--base, --rounds and --pause go with --interleave" in r.stderr
