"""The command line: ``python -m frostjit demo | bench | cache`` and diagnostics."""
import logging
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, cwd=None, env=None, timeout=300):
    e = dict(os.environ, PYTHONPATH=REPO, **(env or {}))
    return subprocess.run([sys.executable, "-m", "frostjit", *args], capture_output=True, text=True,
                          cwd=cwd, env=e, timeout=timeout)


def test_help_and_unknown_command():
    r = run("--help")
    assert r.returncode == 0 and all(c in r.stdout for c in ("demo", "bench", "cache"))
    r = run()
    assert r.returncode == 2 and "COMMAND" in r.stderr
    r = run("frobnicate")
    assert r.returncode == 2 and "invalid choice: 'frobnicate'" in r.stderr


@pytest.mark.llvm_only("the demo's timing tables interpreted by the NumPy reference backend take ~45 s; "
                       "the demo's check against NumPy is the same on both backends")
def test_quick_demo_runs_and_writes_pictures(tmp_path):
    pytest.importorskip("matplotlib")
    r = run("demo", "--quick", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "check vs NumPy" in r.stdout and "MISMATCH" not in r.stdout
    assert "frostjit/frozen" in r.stdout and "unfrozen/frozen" in r.stdout
    for name in ("frostjit_demo_heat.png", "frostjit_demo_fit_target.png", "frostjit_demo_fit_fit.png",
                 "frostjit_demo_fit_loss.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name


@pytest.mark.parametrize("argv, words", [
    (["bench", "--help"], ["core", "freeze", "ad", "dispatch", "--threads", "--systems", "--quick"]),
    (["bench", "-h"], ["core", "dispatch"]),
    (["bench", "core", "--help"], ["--quick", "--systems", "--only", "--repeats", "--threads", "--json",
                                   "FROSTJIT_NUM_THREADS"]),
    (["bench", "freeze", "--help"], ["--quick", "--systems", "--threads", "--json"]),
    (["bench", "ad", "--help"], ["--quick", "--problems", "--threads", "--json"]),
    (["bench", "dispatch", "--help"], ["plum", "ovld"]),
    (["cache", "--help"], ["info", "clear", "FROSTJIT_CACHE_DIR"]),
    (["cache", "info", "--help"], ["cache folder"]),
    (["demo", "--help"], ["heat", "fit", "--quick", "--no-progress", "--backend"]),
    (["demo", "heat", "--help"], ["--n", "--steps", "--timing-sizes"]),
])
def test_every_command_has_help_listing_its_options(argv, words):
    """Regression: `bench --help` printed one usage line and exited 2; `bench dispatch --help`
    ignored --help and ran the whole benchmark."""
    r = run(*argv, timeout=120)
    assert r.returncode == 0, r.stderr
    assert all(w in r.stdout for w in words), r.stdout
    assert r.stdout.startswith("usage: python -m frostjit")


@pytest.mark.parametrize("argv, message", [
    (["bench"], "BENCHMARK"),
    (["bench", "nope"], "invalid choice: 'nope'"),
    (["bench", "core", "--systems", "frostjit,nosuch"], "unknown system 'nosuch'"),
    (["bench", "freeze", "--systems", "numpy"], "unknown system 'numpy'"),
    (["bench", "core", "--only", "W9"], "unknown workload 'W9'"),
    (["bench", "ad", "--problems", "huge"], "unknown problem 'huge'"),
    (["bench", "core", "--threads", "0"], "expected an integer >= 1"),
    (["bench", "dispatch", "--slow"], "unrecognized arguments: --slow"),
    (["cache"], "ACTION"),
    (["cache", "purge"], "invalid choice: 'purge'"),
])
def test_usage_errors_name_the_argument_and_exit_2(argv, message):
    """Regression: options that were accepted and ignored (`bench freeze --systems numpy`,
    `bench core --only W9`, anything after `bench dispatch`) are usage errors."""
    r = run(*argv, timeout=120)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_main_returns_status_instead_of_exiting(capsys):
    from frostjit.cli import main
    assert main(["--help"]) == 0
    assert main(["bench", "--help"]) == 0
    assert main(["bench", "nope"]) == 2
    capsys.readouterr()


def test_cache_info_and_clear(tmp_path):
    env = {"FROSTJIT_CACHE_DIR": str(tmp_path / "cache")}
    r = run("cache", "info", env=env)
    assert r.returncode == 0 and str(tmp_path / "cache") in r.stdout and "entries:" in r.stdout
    r = run("cache", "clear", env=env)
    assert r.returncode == 0 and "removed" in r.stdout


def test_debug_logging_reports_compiles_and_launches(caplog):
    import frostjit as fj
    from frostjit.llvm import Float
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        fj.eval(fj.arange(Float, 7) * 1.2345 + 6.789)
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "frostjit")
    assert "launch kernel" in text
    assert "compiled" in text or "loaded from disk" in text or "memory" in text


def test_cuda_backend_is_a_clear_error():
    import frostjit as fj
    from frostjit.backend import get_backend
    with pytest.raises(RuntimeError, match="CUDA"):
        get_backend(fj.JitBackend.CUDA)


def test_bench_without_benchmarks_folder_says_where_it_looked(tmp_path, monkeypatch, capsys):
    """An installed (non-editable) frostjit has no benchmarks/: help still works, a run says why not."""
    from frostjit import cli
    monkeypatch.setattr(cli, "BENCH_DIR", str(tmp_path / "benchmarks"))
    assert cli.main(["bench", "--help"]) == 0
    assert "source checkout" in capsys.readouterr().out
    assert cli.main(["bench", "core", "--quick"]) == 2
    assert "not found" in capsys.readouterr().err
