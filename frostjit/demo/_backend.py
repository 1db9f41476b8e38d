"""Choosing the array module for the demos.

The demos are written against a module handle ``dr`` and its LLVM submodule
``T``: ``(frostjit, frostjit.llvm)`` or ``(drjit, drjit.llvm)``.  drjit (which
dynamically loads libLLVM-19) and frostjit (LLVM 22 through llvmlite) must never
share a process, so the drjit backend always runs in a child process that
imports this directory's modules as top-level modules, without the frostjit
package.
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys

DEMO_DIR = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ("frostjit", "drjit")

_LIBLLVM_GLOBS = ["/usr/lib/x86_64-linux-gnu/libLLVM-19.so*",
                  "/usr/lib/aarch64-linux-gnu/libLLVM-19.so*",
                  "/usr/lib/llvm-19/lib/libLLVM-19.so*"]


class BackendUnavailable(RuntimeError):
    pass


def load(name: str):
    """Return (dr, T) for backend `name`, or raise BackendUnavailable."""
    try:
        if name == "frostjit":
            import frostjit as dr
            import frostjit.llvm as T
            if not (hasattr(dr, "eval") and hasattr(T, "Float")):
                raise ImportError("the frostjit engine is not built yet")
            return dr, T
        if name == "drjit":
            if "llvmlite" in sys.modules:
                raise BackendUnavailable(
                    "drjit must not be loaded into a process that has llvmlite")
            import drjit as dr
            import drjit.llvm as T
            return dr, T
    except ImportError as e:
        hint = (" (try --backend drjit if drjit is installed)" if name == "frostjit"
                else " (pip install drjit; see DEVELOPERS.md)")
        raise BackendUnavailable(f"backend {name!r} unavailable: {e}{hint}") from e
    raise BackendUnavailable(f"unknown backend {name!r}; choose from {BACKENDS}")


def in_isolated_process() -> bool:
    return os.environ.get("FROSTJIT_DEMO_CHILD") == "1"


def run_isolated(module: str, argv: list[str]) -> int:
    """Run `module`.main(argv) in a child process that does not import frostjit."""
    env = dict(os.environ)
    env["FROSTJIT_DEMO_CHILD"] = "1"
    if not env.get("DRJIT_LIBLLVM_PATH"):
        for pat in _LIBLLVM_GLOBS:
            hits = sorted(glob.glob(pat))
            if hits:
                env["DRJIT_LIBLLVM_PATH"] = hits[0]
                break
    code = (f"import sys; sys.path.insert(0, {DEMO_DIR!r}); import {module}; "
            f"sys.exit({module}.main({argv!r}))")
    return subprocess.call([sys.executable, "-c", code], env=env)


def ad_module(dr, T, name: str):
    """The AD-enabled variant of T (``drjit.llvm.ad`` / ``frostjit.llvm.ad``)."""
    try:
        import importlib
        return importlib.import_module(T.__name__ + ".ad")
    except ImportError as e:
        raise BackendUnavailable(f"backend {name!r} has no AD types ({T.__name__}.ad): {e}") from e
