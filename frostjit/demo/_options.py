"""The options every demo takes, defined once.

``python -m frostjit demo`` (both demos) parses these and hands them on to ``heat`` and
``fit``, which define them with the same function, so no option is accepted by one entry
point and silently dropped on the way to the other.
"""
from __future__ import annotations

import argparse

try:  # package import (python -m frostjit demo) ...
    from ._backend import BACKENDS
except ImportError:  # ... or top-level import in the isolated drjit child
    from _backend import BACKENDS

SHARED = {
    "--quick": "short run: smaller problems, fewer steps and repeats",
    "--no-progress": "no progress bars",
    "--no-freeze": "skip everything frozen (dr.freeze): train unfrozen, no frozen timings",
    "--no-timing": "skip the timing tables (medians over repeats)",
    "--no-plot": "write no pictures (the pictures need matplotlib: the 'demo' extra)",
}


def add_shared(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the shared options (flags above and ``--backend``) to ``p``; return ``p``."""
    for flag, text in SHARED.items():
        p.add_argument(flag, action="store_true", help=text)
    p.add_argument("--backend", default="frostjit", choices=BACKENDS,
                   help="array module (default frostjit); drjit, for comparison, runs in a "
                        "separate process that does not import frostjit")
    return p


def shared_argv(a: argparse.Namespace) -> list[str]:
    """The command-line form of the shared options in ``a`` (to hand them on)."""
    out = [flag for flag in SHARED if getattr(a, flag[2:].replace("-", "_"))]
    return out + ["--backend", a.backend]
