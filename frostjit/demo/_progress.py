"""A tiny dependency-free progress bar on stderr."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str = "", width: int = 30, stream=None,
                 enabled: bool = True):
        self.total, self.label, self.width = max(1, total), label, width
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._last_draw = -1.0
        self._last_pct = -1
        self.done = 0
        self.info = ""       # shown after the bar, e.g. "loss 1.2e-03"

    def render(self, done: int) -> str:
        frac = min(1.0, done / self.total)
        fill = int(round(frac * self.width))
        el = time.perf_counter() - self.t0
        rate = f"{el / done * 1e3:7.2f} ms/step" if done else "   --   ms/step"
        eta = (el / done) * (self.total - done) if done else 0.0
        return (f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] {frac * 100:5.1f}% "
                f"{done}/{self.total} {rate} eta {eta:5.1f}s" + (f"  {self.info}" if self.info else ""))

    def update(self, done: int, info: str | None = None) -> None:
        self.done = done
        if info is not None:
            self.info = info
        if not self.enabled:
            return
        now = time.perf_counter()
        if self.tty:
            if done < self.total and now - self._last_draw < 0.05:
                return
            self._last_draw = now
            self.stream.write("\r" + self.render(done))
        else:  # log-friendly: one line every 25%
            pct = int(100 * done / self.total) // 25 * 25
            if pct == self._last_pct:
                return
            self._last_pct = pct
            self.stream.write(self.render(done) + "\n")
        self.stream.flush()

    def __call__(self, done: int, info: str | None = None) -> None:
        self.update(done, info)

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r" + self.render(self.done) + "\n")
            self.stream.flush()
