"""python -m frostjit bench control --fresh: the medians over fresh kernels."""
import subprocess
import sys


def test_bench_control_fresh_reports_process_thread_and_history_medians():
    p = subprocess.run([sys.executable, "-m", "frostjit", "bench", "control", "--quick", "--n", "64", "--iterations",
                        "5", "--fresh", "2", "--systems", "frostjit"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    for row in ("compile (kernel history, --fresh: median)", "compile CPU (--fresh: median, fresh kernels)",
                "compile CPU, calling thread (--fresh: median)"):
        line = next(x for x in p.stdout.splitlines() if row in x)
        # (a fresh kernel's first call compiles: milliseconds more than its second call)
        assert float(line.split(row)[1].split()[0]) > 0, line
    assert "note:" not in p.stdout
