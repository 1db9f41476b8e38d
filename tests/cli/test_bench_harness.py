"""benchmarks/_harness.py: the one timing loop of the benchmarks' children and the interleaved servers."""
import os
import sys
import types

import pytest

pytestmark = pytest.mark.backend_independent("the benchmarks' timing harness")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import _harness as H  # noqa: E402
import bench_tensor  # noqa: E402


def test_time_calls_times_each_repeat_after_untimed_warmup():
    calls = []
    t = H.time_calls(lambda: calls.append(1) or len(calls), repeats=4, warmup=2)
    assert len(calls) == 6 and len(t.walls) == len(t.cpus) == 4
    assert t.result == 6                            # the last call's result
    assert all(w >= 0 for w in t.walls) and t.min_ms <= t.ms


def test_time_calls_warmup_s_calls_untimed_until_the_time_is_up():
    calls = []
    t = H.time_calls(lambda: calls.append(1) or len(calls), repeats=3, warmup=1, warmup_s=0.02)
    assert len(t.walls) == 3 and len(calls) >= 1 + 1 + 3    # (at least one call in the warm-up time)
    assert t.result == len(calls)


def test_time_calls_gap_is_outside_the_timed_call(monkeypatch):
    # A fake clock that only the sleep advances: a gap inside the timed call would show up as
    # exactly 20 ms in a call's time.  (A real clock made this a timing claim: a loaded CI core
    # can preempt even an empty call for more than 20 ms.)
    now = [0.0]
    clock = types.SimpleNamespace(perf_counter=lambda: now[0], process_time=lambda: now[0],
                                  sleep=lambda s: now.__setitem__(0, now[0] + s))
    monkeypatch.setattr(H, "time", clock)
    t = H.time_calls(lambda: None, repeats=3, gap=0.02)
    assert now[0] == pytest.approx(0.06)            # the three gaps were slept
    assert t.walls == [0.0] * 3 and t.cpus == [0.0] * 3


def test_cpu_per_call_is_the_mean_so_that_a_worker_counted_in_lumps_is_not_missed():
    # A spinning worker thread reaches the process clock at a timer tick: one call in four here
    # carries its 3 ms; the median (1 ms, the calling thread alone) would drop it.
    t = H.Timing(walls=[0.001] * 4, cpus=[0.001, 0.001, 0.004, 0.001])
    assert t.cpu_ms == pytest.approx(1.75)
    assert t.ms == pytest.approx(1.0)               # (wall time stays the median)


def test_steady_state_checksums_the_first_result_untimed():
    results = iter(range(10, 20))
    row = H.steady_state(lambda: next(results), repeats=3, checksum=lambda r: f"sum {r}")
    assert row["status"] == "ok" and row["check"] == "sum 10"
    assert set(row) == {"status", "first_ms", "ms", "min_ms", "check"}


def test_servers_answer_interleaved_batches_in_rotating_order():
    """The --sums child protocol: ready, then one batch of timed calls per request (NumPy only)."""
    with H.Servers(bench_tensor.__file__, ["numpy"], threads=None,
                   params={"cases": ["64x262144/f32"]}) as servers:
        res = servers.ask("numpy", {"case": "64x262144/f32", "calls": 3})
        assert len(res["wall"]) == len(res["cpu"]) == 3
        wall_ms, cpu_ms = servers.batch("numpy", {"case": "64x262144/f32", "calls": 2})
        assert wall_ms > 0 and cpu_ms >= 0
        # settle first; the CPU of the watched processes (here this one) during the timed calls
        res = servers.ask("numpy", {"case": "64x262144/f32", "calls": 2, "warmup_s": 0.01, "watch": [os.getpid()]})
        assert len(res["wall"]) == 2
        if sys.platform.startswith("linux"):
            assert res["others_ns"] >= 0 and res["threads"]["main"] > 0


def test_versions_line_names_each_system_and_its_threads():
    line = H.versions_line({"frostjit": {"version": "0.1", "threads": 2}, "numpy": {"status": "n/a"}})
    assert line == f"machine: {os.cpu_count()} cores; frostjit 0.1 (2 threads), numpy n/a"


def test_servers_rotate_the_order_by_one_each_round():
    servers = object.__new__(H.Servers)             # the order alone: no children
    servers.names = ["frostjit", "drjit", "numpy"]
    assert [servers.order(r) for r in range(4)] == [["frostjit", "drjit", "numpy"], ["drjit", "numpy", "frostjit"],
                                                    ["numpy", "frostjit", "drjit"], ["frostjit", "drjit", "numpy"]]
