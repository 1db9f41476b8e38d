"""`bench --threads N` reaches frostjit: its benchmark processes run N threads (FROSTJIT_NUM_THREADS)."""
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import _harness as H  # noqa: E402
import bench_ad  # noqa: E402

pytestmark = pytest.mark.llvm_only("the thread count of the LLVM backend's thread pool")


def _default_threads():
    env = os.environ.get("FROSTJIT_NUM_THREADS")
    return int(env) if env else len(os.sched_getaffinity(0))


@pytest.mark.parametrize("threads", [1, 3])
def test_workload_process_runs_the_requested_threads(threads):
    """Regression: `--threads` called a `set_thread_count` frostjit does not have, and did nothing."""
    r = H.run_child("frostjit", "probe", {"threads": threads}, timeout=120)
    assert r["status"] == "ok", r
    assert r["threads"] == threads


def test_without_threads_the_default_is_kept():
    r = H.run_child("frostjit", "probe", {}, timeout=120)
    assert r["status"] == "ok" and r["threads"] == _default_threads()


def test_thread_env_is_only_for_frostjit():
    assert H.thread_env("frostjit", 2) == {"FROSTJIT_NUM_THREADS": "2"}
    assert H.thread_env("frostjit", None) == {}
    assert H.thread_env("drjit", 2) == H.thread_env("numpy", 2) == {}


def test_ad_benchmark_child_runs_the_requested_threads():
    r = bench_ad.run_child("frostjit", {"problems": [], "threads": 1}, timeout=120)
    assert r["status"] == "ok" and r["threads"] == 1, r


def test_bench_command_reports_the_thread_count_it_ran(tmp_path):
    r = subprocess.run([sys.executable, "-m", "frostjit", "bench", "core", "--quick", "--only", "W2",
                        "--systems", "frostjit", "--threads", "1"], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": REPO})
    assert r.returncode == 0, r.stderr
    assert re.search(r"frostjit \S+ \(1 threads\)", r.stdout) and "error" not in r.stdout, r.stdout
