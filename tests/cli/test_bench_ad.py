"""python -m frostjit bench ad --interleave: the small problem's frozen steps in interleaved rounds."""
import os
import subprocess
import sys

import pytest


@pytest.mark.backend_independent("a benchmark's command line; its children run the LLVM backend (chosen here)")
def test_bench_ad_interleave_times_each_mode_every_round():
    env = {**os.environ, "FROSTJIT_BACKEND": "llvm"}
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "ad", "--interleave", "--rounds", "2"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for mode in ("frozen", "fwd frozen + step frozen"):
        row = next(x for x in lines if x.split()[:1] == ["frostjit"] and x.split("  ")[-3:] and mode in x
                   and "[" in x)
        wall = row.split(mode)[1].split()
        # median [lowest-highest round] and the CPU time: positive, the median inside the range
        med, lo, hi = float(wall[0]), *(float(v) for v in wall[1].strip("[]").split("-"))
        assert 0 < lo <= med <= hi and float(wall[2]) > 0, row
    if "no Dr.Jit" not in p.stdout:
        assert "ratio to Dr.Jit's frozen step in the same round" in p.stdout


@pytest.mark.backend_independent("the benchmark's command line")
@pytest.mark.parametrize("option", [["--rounds", "3"], ["--base", "."]])
def test_bench_ad_rounds_and_base_need_interleave(option):
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "ad", *option], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "--base and --rounds go with --interleave" in p.stderr
