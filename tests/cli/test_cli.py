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
    assert r.returncode == 0 and "demo" in r.stdout and "cache" in r.stdout
    r = run("frobnicate")
    assert r.returncode == 2 and "unknown command" in r.stderr


def test_quick_demo_runs_and_writes_pictures(tmp_path):
    r = run("demo", "--quick", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "check vs NumPy" in r.stdout and "OK" in r.stdout
    assert "frozen" in r.stdout
    for name in ("frostjit_demo_heat.png", "frostjit_demo_fit_target.png", "frostjit_demo_fit_fit.png",
                 "frostjit_demo_fit_loss.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name


def test_bench_usage_error():
    r = run("bench", "nope")
    assert r.returncode == 2 and "usage" in r.stderr


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
