"""frostjit demos: ``python -m frostjit demo [heat|fit] [options]``.

``frostjit.cli`` calls :func:`main` with the arguments after ``demo``.
Subcommands live in their own modules, each with a ``parser()`` and a ``main(argv) -> int``:

* ``heat``: 2-D heat equation with gather/select, checked against NumPy, one step timed
  (traced, frozen, NumPy) at several grid sizes, a picture of the field.
* ``fit``: 2-D Gaussians fitted to a target picture with Adam (AD), the training step
  timed unfrozen and frozen, pictures of the target, the fit and the loss curve.

Without a subcommand both run, heat first, with the options they share (``_options``).
Pictures need matplotlib (``pip install -e ".[demo]"``).  ``--backend drjit`` runs a
demo on Dr.Jit in a separate process, for comparison.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import _options

SUBCOMMANDS = {
    "heat": "2-D heat equation (gather, select): NumPy check, timings, picture",
    "fit": "fit 2-D Gaussians to a picture with Adam (AD): timings, pictures",
}


def parser() -> argparse.ArgumentParser:
    """``python -m frostjit demo --help``: both demos, with the options they share."""
    listing = "\n".join(f"  {k:6} {v}" for k, v in SUBCOMMANDS.items())
    ap = argparse.ArgumentParser(
        prog="python -m frostjit demo", usage="python -m frostjit demo [heat|fit] [options]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=f"Run both demos (heat, then fit) with the options below, or one of them:\n"
                    f"{listing}",
        epilog="`python -m frostjit demo heat --help` and `... demo fit --help` list each demo's "
               "own options (sizes, steps, output files).")
    return _options.add_shared(ap)


def main(argv=None) -> int:
    """Run ``python -m frostjit demo`` with ``argv``; return the exit status (0 after ``--help``,
    2 for a usage error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            mod = importlib.import_module(f"{__name__}.{argv[0]}")
            return int(mod.main(argv[1:]) or 0)
        if argv and not argv[0].startswith("-"):
            print(f"frostjit demo: unknown demo {argv[0]!r}; choose from {', '.join(SUBCOMMANDS)}",
                  file=sys.stderr)
            return 2
        a = parser().parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else 2
    shared = _options.shared_argv(a)
    rc = main(["heat"] + shared)
    if rc:
        return rc
    print()
    return main(["fit"] + shared)
