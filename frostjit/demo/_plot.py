"""The demos' pictures, drawn with matplotlib (the optional ``demo`` extra).

Figures are built with ``matplotlib.figure.Figure`` directly, not ``pyplot``: no GUI
backend is chosen, no global figure state is kept, and saving to PNG uses Agg.
Without matplotlib the demos stop before computing anything and print
:data:`INSTALL_HINT` (or run with ``--no-plot``).
"""
from __future__ import annotations

import numpy as np

try:  # optional dependency: the demos check `available()` before they start
    from matplotlib.figure import Figure
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter
except ImportError as e:  # pragma: no cover - exercised by a subprocess test
    Figure = None
    _IMPORT_ERROR: ImportError | None = e
else:
    _IMPORT_ERROR = None

INSTALL_HINT = ("the demo's pictures need matplotlib, which is not installed.  Install the demo "
                "extra: python -m pip install -e \".[demo]\" (in a source checkout), or "
                "python -m pip install matplotlib; or run with --no-plot to skip the pictures")


def available() -> bool:
    """Whether matplotlib can be imported."""
    return _IMPORT_ERROR is None


def missing_message() -> str:
    """What to tell the user when matplotlib is missing (with the import error)."""
    return f"{INSTALL_HINT} ({type(_IMPORT_ERROR).__name__}: {_IMPORT_ERROR})"


def field_figure(field: np.ndarray, title: str, label: str, vmin: float, vmax: float,
                 cmap: str = "inferno", axis_label: str = "cell") -> Figure:
    """A 2-D field as an image with axes in cells and a colorbar labelled ``label``."""
    f = np.asarray(field)
    h, w = f.shape
    fig = Figure(figsize=(6.4, 5.4), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(f, cmap=cmap, vmin=vmin, vmax=vmax, origin="upper", extent=(0, w, h, 0),
                   interpolation="nearest")
    ax.set_xlabel(f"x ({axis_label})")
    ax.set_ylabel(f"y ({axis_label})")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label=label, shrink=0.9)
    return fig


def loss_figure(losses: np.ndarray, title: str = "training loss") -> Figure:
    """The loss per step, log scale, with labelled axes, numbered ticks and a grid."""
    y = np.asarray(losses, dtype=np.float64)
    fig = Figure(figsize=(6.4, 3.8), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    ax.plot(np.arange(1, len(y) + 1), y, color="tab:red", lw=1.5)
    ax.set_yscale("log")
    # Label every power of ten and the 2x and 5x steps between them, so a curve spanning
    # less than a decade still gets numbers on its axis.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Adam step")
    ax.set_ylabel("loss (mean squared error)")
    ax.set_xlim(1, max(2, len(y)))
    ax.grid(True, which="major", alpha=0.4)
    ax.set_title(title)
    return fig


def save(fig: Figure, path: str) -> tuple[int, int]:
    """Write ``fig`` as a PNG; return its (width, height) in pixels."""
    fig.savefig(path, format="png")
    w, h = fig.canvas.get_width_height()
    return int(w), int(h)
