"""python -m frostjit bench types --phases: the plain calls' tracing and whole-call times."""
import argparse
import os
import subprocess
import sys

import pytest

from hypothesis import given, strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))
import bench_types  # noqa: E402


def test_bench_types_phases_times_tracing_and_whole_calls():
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "types", "--phases", "--quick", "--n", "7",
                        "--k", "2", "--systems", "frostjit", "--evict"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for row in ("transform: tracing", "transform: whole call", "complex: tracing", "complex: whole call"):
        line = next(x for x in p.stdout.splitlines() if row in x)
        cpu, wall = (float(v) for v in line.split(row)[1].split()[:3:2])
        assert cpu > 0 and wall > 0, line
    assert "note:" not in p.stdout


def test_bench_types_evict_needs_phases():
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "types", "--evict"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "--evict goes with --phases" in p.stderr


def test_bench_types_interleave_asks_each_system_in_turn():
    # (a variant child too: frostjit with a setting from the environment, in the same rounds)
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "types", "--interleave", "--rounds", "1", "--n", "7",
                        "--k", "2", "--systems", "frostjit", "--variant", "t1:FROSTJIT_NUM_THREADS=1"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rounds, calls = p.stdout.split("every call, all rounds pooled")
    calls, threads = calls.split("CPU ms per call by thread") if sys.platform.startswith("linux") else (calls, "")
    assert "frostjit[t1]" in rounds and "frostjit[t1]" in calls
    for row in ("transform/plain", "transform/frozen", "complex/plain", "complex/frozen"):
        line = next(x for x in rounds.splitlines() if x.strip().startswith(row))
        assert float(line.split()[1]) > 0 and float(line.split()[3]) > 0, line
        # the per-call table: wall median <= 90th <= 99th percentile, and a CPU time
        line = next(x for x in calls.splitlines() if x.strip().startswith(row))
        walls, cpu = line.split(row)[1].split(";")[:2]
        p50, p90, p99 = (float(v) for v in walls.split("/"))
        assert 0 < p50 <= p90 <= p99 and float(cpu.split()[0]) > 0, line
        if threads:
            # calling thread + others, per child; the one-thread variant's others run no blocks
            line = next(x for x in threads.splitlines() if x.strip().startswith(row))
            # [the other children's threads meanwhile]: after --settle's untimed calls, a number
            cells = [cell for cell in line.split(row)[1].split("  ") if "+" in cell]
            (main, others, meanwhile), (main1, others1, meanwhile1) = [
                (float(a), float(b.split("[")[0]), float(b.split("[")[1].rstrip("] "))) for a, b in
                (cell.split("+") for cell in cells)]
            assert main > 0 and others >= 0 and main1 > 0 and others1 < main1, line
            assert meanwhile >= 0 and meanwhile1 >= 0, line


def test_variant_option_parses_name_and_environment():
    import _harness as H
    assert H.variant("spin0:FROSTJIT_POOL_SPIN_US=0") == ("spin0", {"FROSTJIT_POOL_SPIN_US": "0"})
    assert H.variant("x:A=1,B=") == ("x", {"A": "1", "B": ""})
    for bad in ("spin0", ":A=1", "x:", "x:A", "x:=1"):
        with pytest.raises(argparse.ArgumentTypeError):
            H.variant(bad)


@pytest.mark.parametrize("option", [["--rounds", "3"], ["--pause", "0.05"], ["--settle", "0"]])
def test_bench_types_rounds_base_and_pause_need_interleave(option):
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "types", *option], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "--base, --rounds, --variant, --pause and --settle go with --interleave" in p.stderr


@given(st.lists(st.floats(0, 100), min_size=1, max_size=50), st.sampled_from([1, 50, 90, 99, 100]))
def test_percentile_is_the_nearest_rank(values, q):
    got = bench_types._percentile(values, q)
    assert got in values
    # nearest rank: at least q% of the values are <= it, and fewer than q% are < it
    assert sum(v <= got for v in values) * 100 >= q * len(values)
    assert sum(v < got for v in values) * 100 < q * len(values)
