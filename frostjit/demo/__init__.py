"""frostjit demos: ``python -m frostjit demo [heat|fit] [options]``.

``frostjit.cli`` calls :func:`main` with the arguments after ``demo``.
Subcommands live in their own modules, each with a ``main(argv) -> int``:

* ``heat``: 2-D heat equation with gather/select, timed beside NumPy (traced and
  frozen), cross-checked, and written to a PNG.
* ``fit``: 2-D Gaussians fitted to a target picture with Adam (needs AD).

Without a subcommand both run, heat first (``--quick`` applies to both).

``--backend drjit`` runs a demo on Dr.Jit instead (for testing before the
engine exists; drjit is never a requirement and runs in its own process).
"""
from __future__ import annotations

import importlib
import sys

SUBCOMMANDS = {
    "heat": "2-D heat equation (gather, select), timed beside NumPy, PNG output",
    "fit": "fit 2-D Gaussians to a picture with Adam (AD), PNG output",
}
DEFAULT = "all"


def _usage() -> str:
    lines = ["usage: python -m frostjit demo [SUBCOMMAND] [options]", "", "subcommands:"]
    lines += [f"  {k:6} {v}" for k, v in SUBCOMMANDS.items()]
    lines += ["", "default: heat, then fit (--quick shortens both); "
              "`python -m frostjit demo SUBCOMMAND --help` for options"]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name = DEFAULT
    if argv and not argv[0].startswith("-"):
        name, argv = argv[0], argv[1:]
    if name == "all":
        rc = main(["heat"] + argv)
        if rc:
            return rc
        print()
        return main(["fit"] + [a for a in argv if a in ("--quick", "--backend", "drjit")])
    if name not in SUBCOMMANDS:
        print(f"unknown demo {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        mod = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        print(f"demo {name!r} is not available yet", file=sys.stderr)
        return 2
    return int(mod.main(argv) or 0)
