"""The demos' pictures (matplotlib): labelled axes with numbers, colorbars, PNG files; and a clear
message instead of a traceback when matplotlib is missing."""
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from frostjit.demo import _plot, fit, heat  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tick_labels(axis):
    FigureCanvasAgg(axis.figure).draw()
    lo, hi = sorted(axis.get_view_interval())
    return [t.get_text() for t, v in zip(axis.get_ticklabels(), axis.get_ticklocs())
            if t.get_text() and lo <= v <= hi]


@pytest.mark.parametrize("losses", [np.geomspace(0.13, 2.6e-3, 80), np.linspace(0.05, 0.03, 40),
                                    np.array([1.0])])
def test_loss_plot_has_axis_labels_and_numbers(losses):
    """Regression: the loss curve had no axis labels and no numbers."""
    fig = _plot.loss_figure(losses)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "Adam step" and "loss" in ax.get_ylabel()
    assert ax.get_yscale() == "log"
    for axis in (ax.xaxis, ax.yaxis):
        labels = _tick_labels(axis)
        assert len(labels) >= 2 or len(losses) == 1, labels
        assert all(any(c.isdigit() for c in t) for t in labels)
    # numbers on a log axis even when the curve spans less than a decade
    if losses.max() / losses.min() < 10:
        assert len(_tick_labels(ax.yaxis)) >= 2


def test_field_picture_has_axes_and_labelled_colorbar(tmp_path):
    n = 24
    field = heat.simulate_numpy(10, n)
    path = str(tmp_path / "heat.png")
    w, h = heat.save_picture(field, n, 10, path)
    img = imread(path)
    assert img.shape[:2] == (h, w) and img.shape[2] in (3, 4)
    fig = _plot.field_figure(field.reshape(n, n), "t", "temperature", -0.6, 1.0)
    ax, cax = fig.axes
    assert ax.get_xlabel() == "x (cell)" and ax.get_ylabel() == "y (cell)"
    assert cax.get_ylabel() == "temperature"
    assert _tick_labels(ax.xaxis) and _tick_labels(cax.yaxis)


def test_fit_pictures_are_written(tmp_path):
    size = 8
    target = fit.target_image(size)
    losses = np.geomspace(0.1, 0.01, 12)
    paths = fit.save_pictures(str(tmp_path / "fit"), target, target * 0.9, losses, k=4)
    assert [os.path.basename(p) for p in paths] == ["fit_target.png", "fit_fit.png", "fit_loss.png"]
    for p in paths:
        img = imread(p)
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100


def _run_without_matplotlib(*argv):
    """Run the demo in a process where ``import matplotlib`` fails."""
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from frostjit.demo import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=300, env={**os.environ, "PYTHONPATH": REPO})


@pytest.mark.parametrize("argv", [["heat", "--quick"], ["fit", "--quick"], ["--quick"],
                                  ["heat", "--quick", "--backend", "drjit"]])
def test_missing_matplotlib_is_a_clear_message_before_any_work(argv):
    r = _run_without_matplotlib(*argv)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "matplotlib" in r.stderr and '".[demo]"' in r.stderr and "--no-plot" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_no_plot_runs_without_matplotlib(tmp_path):
    r = _run_without_matplotlib("heat", "--n", "16", "--steps", "5", "--no-timing", "--no-progress",
                                "--no-plot", "--out", str(tmp_path / "x.png"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout and not (tmp_path / "x.png").exists()
