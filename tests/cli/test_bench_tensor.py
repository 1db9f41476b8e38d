"""python -m frostjit bench tensor: registered, its options, usage errors."""
import os
import subprocess
import sys

import pytest


def _run(*args):
    return subprocess.run([sys.executable, "-m", "frostjit", *args], capture_output=True, text=True, timeout=120)


def test_bench_tensor_is_registered_with_its_options():
    p = _run("bench", "tensor", "--help")
    assert p.returncode == 0
    for opt in ("--quick", "--systems", "--threads", "--json"):
        assert opt in p.stdout
    assert "tensor" in _run("bench", "--help").stdout


@pytest.mark.parametrize("args, message", [(["--systems", "torch"], "unknown system 'torch'"),
                                            (["--threads", "0"], "expected an integer >= 1")])
def test_bench_tensor_usage_errors(args, message):
    p = _run("bench", "tensor", *args)
    assert p.returncode == 2 and message in p.stderr


def test_bench_tensor_sums_mode_options_and_a_short_run():
    p = _run("bench", "tensor", "--help")
    for opt in ("--sums", "--rounds", "--cases", "--base", "--by-call", "--settle", "--pause"):
        assert opt in p.stdout
    p = _run("bench", "tensor", "--sums", "--settle", "-1")
    assert p.returncode == 2 and "must be >= 0 seconds" in p.stderr
    p = _run("bench", "tensor", "--sums", "--cases", "3x3/f32")
    assert p.returncode == 2 and "unknown case '3x3/f32'" in p.stderr
    p = _run("bench", "tensor", "--sums", "--systems", "numpy", "--rounds", "1", "--cases", "64x262144/f32",
             "--by-call")
    assert p.returncode == 0, p.stderr
    assert "64x262144/f32" in p.stdout and "interleaved" in p.stdout
    table = p.stdout.split("by call of the batch")[1]
    assert "call 1" in table and "call 5" in table and "64x262144/f32" in table and "numpy" in table
    # The per-thread table, where the counters it reads exist (/proc/PID/task/*/schedstat: Linux
    # with CONFIG_SCHED_INFO; a sandboxed or stripped kernel may have /proc without them).
    if os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat"):
        assert "CPU ms per call by thread" in p.stdout
