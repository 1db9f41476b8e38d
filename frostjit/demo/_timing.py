"""Step timings for the demos: medians over repeats, and ratios that say when they are noise.

A single timing on a shared machine can be off by 2x, so every figure the demos print is
the median over several repeats, each repeat timing a block of steps.  The variants being
compared (NumPy, traced, frozen) run interleaved, repeat by repeat, so a change of machine
load hits all of them alike; a ratio is then taken per repeat, and its range over the
repeats is printed beside its median.  A range that contains 1 means "no clear difference".
"""
from __future__ import annotations

import statistics
import textwrap
import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class Samples:
    """Seconds per step, one value per repeat (each the mean over a block of steps)."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)


def time_interleaved(runners: dict[str, Callable[[int], object]], repeats: int, steps: int,
                     warmup: int = 2) -> dict[str, Samples]:
    """Seconds per step of each runner: ``repeats`` blocks of ``steps`` steps, interleaved.

    ``runners[name](k)`` runs ``k`` steps and returns once they are finished (it must
    synchronize asynchronous work itself); what it returns is ignored.  Each runner first runs ``warmup`` steps, which
    are not timed (tracing, compiling, recording a frozen function).
    """
    if repeats < 1 or steps < 1:
        raise ValueError(f"need repeats >= 1 and steps >= 1, got repeats={repeats}, steps={steps}")
    for run in runners.values():
        if warmup:
            run(warmup)
    out: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            t0 = time.perf_counter()
            run(steps)
            out[name].append((time.perf_counter() - t0) / steps)
    return {name: Samples(tuple(v)) for name, v in out.items()}


def ratio(num: Samples, den: Samples) -> tuple[float, float, float]:
    """(median, min, max) over the repeats of ``num / den``, paired repeat by repeat."""
    rs = [a / b for a, b in zip(num.values, den.values) if b > 0]
    if not rs:
        return float("nan"), float("nan"), float("nan")
    return statistics.median(rs), min(rs), max(rs)


def is_clear(num: Samples, den: Samples) -> bool:
    """Whether ``num`` and ``den`` differ beyond noise: every repeat's ratio is on one side of 1."""
    _, lo, hi = ratio(num, den)
    return lo > 1.0 or hi < 1.0


NOISE_NOTE = "~1x: the ratio's range over the repeats contains 1, so there is no clear difference"


def ratio_text(num: Samples, den: Samples) -> str:
    """``'5.40x (4.90-5.80)'``: the median ratio and its range over the repeats.

    When the range contains 1 the text is ``'~1x (0.85-1.20)'`` instead of a median that is
    noise (:data:`NOISE_NOTE` explains it under a table).
    """
    med, lo, hi = ratio(num, den)
    if med != med:  # NaN: no usable repeat
        return "n/a"
    if not is_clear(num, den):
        return f"~1x ({lo:.2f}-{hi:.2f})"
    return f"{med:.2f}x ({lo:.2f}-{hi:.2f})"


def note(text: str, width: int = 100) -> str:
    """An explanation under a table: indented, wrapped at ``width`` columns."""
    return textwrap.fill(text, width, initial_indent="  ", subsequent_indent="    ")


def ms(s: Samples | float) -> str:
    """A time in milliseconds with 3 significant digits."""
    v = (s.median if isinstance(s, Samples) else s) * 1e3
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def table(header: list[str], rows: list[list[str]], indent: str = "  ") -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cols = [header] + rows
    w = [max(len(r[i]) for r in cols) for i in range(len(header))]
    lines = []
    for j, r in enumerate(cols):
        lines.append(indent + "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i])
                                        for i, c in enumerate(r)).rstrip())
        if j == 0:
            lines.append(indent + "  ".join("-" * x for x in w))
    return "\n".join(lines)
