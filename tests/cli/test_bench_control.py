"""python -m frostjit bench control --fresh: the medians over fresh kernels."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_control  # noqa: E402


def test_bench_control_fresh_reports_process_thread_and_history_medians():
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "control", "--quick", "--n", "64", "--iterations",
                        "5", "--fresh", "2", "--systems", "frostjit"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for row in ("compile (kernel history, --fresh: median)", "compile CPU (--fresh: median, fresh kernels)",
                "compile CPU, calling thread (--fresh: median)"):
        line = next(x for x in p.stdout.splitlines() if row in x)
        value = float(line.split(row)[1].split()[0])
        if "CPU" in row:
            # (both CPU rows are differences of two calls' CPU times: the second call's share of the
            # kernel's own work varies with how the pool splits it, and on CI's 2 loaded cores that
            # outweighed the compile in either row (process -8.67 ms, calling thread -3.55 ms), so
            # only a number here; the kernel history's compile time is measured directly)
            continue
        assert value > 0, line
    assert "note:" not in p.stdout


def test_bench_control_interleave_asks_each_child_in_turn_with_a_fresh_kernel_per_round():
    # two frostjit children (the second, frostjit@base, imported from this checkout) in one run
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "control", "--interleave", "--rounds", "2",
                        "--n", "64", "--iterations", "5", "--systems", "frostjit", "--base", str(REPO)],
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    header = next(x for x in p.stdout.splitlines() if x.strip().startswith("row"))
    assert header.split()[1:] == ["frostjit", "frostjit@base"]
    number = r"(-?[0-9.]+)"
    for row in ("steady state, wall (median of a batch)", "compile (kernel history, a fresh kernel)",
                "compile CPU, calling thread (a fresh kernel)"):
        line = next(x for x in p.stdout.splitlines() if x.strip().startswith(row))
        cells = re.findall(rf"{number} \[{number}-{number}\]", line.split(row)[1])
        assert len(cells) == 2, line                        # the two children: median [lowest-highest]
        for median, low, high in ((float(v) for v in cell) for cell in cells):
            assert low <= median <= high, line
            if "CPU" not in row:
                # (every round's kernel is new: its compile time is never 0; the calling thread's CPU
                # difference is only a number, see the test above)
                assert low > 0, line


@pytest.mark.parametrize("option", [["--rounds", "3"], ["--base", "."], ["--pause", "0.1"]])
def test_bench_control_rounds_base_and_pause_need_interleave(option, capsys):
    with pytest.raises(SystemExit) as e:
        bench_control.main(option)
    assert e.value.code == 2 and "--base, --rounds and --pause go with --interleave" in capsys.readouterr().err


def test_bench_control_interleave_excludes_fresh(capsys):
    with pytest.raises(SystemExit) as e:
        bench_control.main(["--interleave", "--fresh", "2"])
    assert e.value.code == 2 and "--interleave excludes --fresh" in capsys.readouterr().err
