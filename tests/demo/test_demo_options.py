"""The demo's command line: every option it accepts reaches the demo that uses it."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

import frostjit.demo as demo
from frostjit.demo import _options, fit, heat

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAST = ["--no-timing", "--no-plot"]


def test_no_progress_silences_both_demos(capsys):
    """Regression: `demo --no-progress` still printed the fit demo's progress bar."""
    assert demo.main(["--quick", "--no-progress"] + FAST) == 0
    out, err = capsys.readouterr()
    assert "heat demo" in out and "fit demo" in out
    assert err == ""


def test_progress_bars_are_shown_by_default(capsys):
    assert demo.main(["--quick"] + FAST) == 0
    err = capsys.readouterr().err
    assert "frostjit [" in err and "100.0%" in err


@pytest.mark.parametrize("flag", list(_options.SHARED) + ["--backend=drjit"])
def test_every_shared_option_reaches_both_demos(flag, monkeypatch):
    got = {}
    for mod in (heat, fit):
        monkeypatch.setattr(mod, "main", lambda argv, m=mod: got.setdefault(m.__name__, argv) and 0)
    assert demo.main([flag]) == 0
    for name, argv in got.items():
        a = (heat if name.endswith("heat") else fit).parser().parse_args(argv)
        attr = flag[2:].split("=")[0].replace("-", "_")
        assert getattr(a, attr) == ("drjit" if attr == "backend" else True), (name, argv)
    assert len(got) == 2


def test_no_freeze_skips_every_frozen_run(capsys):
    """Regression: `fit --no-freeze` still timed a frozen step."""
    assert fit.main(["--k", "4", "--size", "8", "--steps", "3", "--no-freeze", "--no-plot",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"(?<!un)frozen", out) and "unfrozen ms" in out
    assert heat.main(["--n", "16", "--steps", "3", "--no-freeze", "--no-plot", "--no-progress",
                      "--timing-sizes", "16"]) == 0
    out = capsys.readouterr().out
    assert "frozen" not in out and "numpy/frostjit" in out


def test_no_check_skips_numpy(capsys):
    assert heat.main(["--n", "16", "--steps", "3", "--no-check", "--no-plot", "--no-progress",
                      "--timing-sizes", "16"]) == 0
    out = capsys.readouterr().out
    assert "numpy" not in out.lower() and "frostjit/frozen" in out


def test_timing_tables_are_medians_over_repeats_with_ranges(capsys):
    assert heat.main(["--n", "16", "--steps", "3", "--no-plot", "--no-progress",
                      "--timing-sizes", "16,48"]) == 0
    out = capsys.readouterr().out
    assert "median of 7 repeats x 20 steps" in out
    assert "16 x 16" in out and "48 x 48" in out
    assert "numpy/frozen" in out and "ms per step on the 16 x 16 grid" in out
    assert fit.main(["--k", "4", "--size", "8", "--steps", "3", "--no-plot", "--no-progress",
                     "--quick"]) == 0
    out = capsys.readouterr().out
    assert "median of 5 repeats x 10 steps" in out and "16 x 8x8" in out and "4 x 8x8 (this run)" in out
    assert "ms per step on the 4 x 8x8 problem" in out


@pytest.mark.parametrize("argv, words", [
    (["--help"], ["heat", "fit", "--quick", "--no-progress", "--no-freeze", "--no-timing", "--no-plot",
                  "--backend"]),
    (["heat", "--help"], ["--n", "--steps", "--out", "--timing-sizes", "--no-check", "--quick",
                          "--no-progress"]),
    (["fit", "--help"], ["--k", "--size", "--steps", "--lr", "--out", "--quick", "--no-progress"]),
])
def test_help_lists_the_options_and_exits_0(argv, words, capsys):
    assert demo.main(argv) == 0
    out = capsys.readouterr().out
    assert all(w in out for w in words), out


@pytest.mark.parametrize("argv", [["nosuchdemo"], ["--nosuchflag"], ["heat", "--n", "2"],
                                  ["heat", "--timing-sizes", "x"], ["fit", "--size", "1"]])
def test_usage_errors_exit_2(argv, capsys):
    assert demo.main(argv) == 2
    assert capsys.readouterr().err


def _drjit_demo(tmp_path, *argv):
    return subprocess.run([sys.executable, "-c",
                           "import sys, frostjit.demo as d; sys.exit(d.main(sys.argv[1:]))", *argv],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": REPO})


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="drjit not installed")
def test_heat_demo_on_drjit(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "heat.png"
    p = _drjit_demo(tmp_path, "heat", "--backend", "drjit", "--n", "48", "--steps", "60",
                    "--out", str(out), "--no-progress", "--timing-sizes", "32")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "check vs NumPy" in p.stdout and "MISMATCH" not in p.stdout
    assert "drjit/frozen" in p.stdout and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="drjit not installed")
def test_fit_demo_on_drjit(tmp_path):
    pytest.importorskip("matplotlib")
    prefix = str(tmp_path / "fit")
    p = _drjit_demo(tmp_path, "fit", "--backend", "drjit", "--quick", "--steps", "30",
                    "--out", prefix, "--no-progress")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "drjit training step" in p.stdout
    for suffix in ("target", "fit", "loss"):
        assert open(f"{prefix}_{suffix}.png", "rb").read()[:8] == b"\x89PNG\r\n\x1a\n"
