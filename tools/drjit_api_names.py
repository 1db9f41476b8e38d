"""Write the list of Dr.Jit 1.5's public names (``tools/data/drjit_1_5_names.json``).

The list is the data ``tools/api_coverage.py`` compares frostjit with.  Run it once where
``drjit`` is installed (it is committed; there is no need to run it again unless the anchor
version changes)::

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tools/drjit_api_names.py

The names come from ``dir()`` of ``drjit``, ``drjit.llvm``, ``drjit.llvm.ad``, ``drjit.scalar`` and
``drjit.opt`` (and the submodules ``drjit.nn``, ``drjit.hashgrid``, ``drjit.random``, ``drjit.dda``) in a child process that imports drjit and nothing of frostjit; names starting
with ``_``, typing helpers (``TypeVar``s, ``typing`` aliases, ``from __future__``), imported
modules that are not submodules (``drjit.opt.sys``) and classes/functions imported from the standard
library (``drjit.wraps`` is ``functools.wraps``) are left out.  Each name is recorded with its kind (function, class, enum, constant, module).
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "drjit_1_5_names.json")
MODULES = ("drjit", "drjit.llvm", "drjit.llvm.ad", "drjit.scalar", "drjit.opt", "drjit.nn", "drjit.hashgrid",
           "drjit.random", "drjit.dda")


_TYPING = ("typing", "typing_extensions", "__future__")


def _kind(value, owner: str) -> str | None:
    """The kind of a public value of module ``owner``, or ``None`` for what is left out: typing
    helpers, and modules that are imports rather than submodules (``drjit.opt.sys``)."""
    import enum
    import types
    if type(value).__module__ in _TYPING or getattr(value, "__module__", None) in _TYPING \
            or isinstance(value, types.GenericAlias) \
            or type(value).__name__ in ("TypeVar", "TypeVarTuple", "ParamSpec"):
        return None
    if isinstance(value, types.ModuleType):
        return "module" if value.__name__.startswith(owner + ".") else None
    origin = getattr(value, "__module__", None) or ""
    if (isinstance(value, type) or callable(value)) and isinstance(origin, str) \
            and not origin.startswith(("drjit", "builtins")):
        return None     # imported from the standard library (drjit.nn.MutableMapping, drjit.wraps)
    if isinstance(value, type):
        return "enum" if issubclass(value, enum.Enum) else "class"
    if callable(value):
        return "function"
    return "constant"


def child() -> dict:
    import importlib
    import drjit
    out = {"drjit_version": drjit.__version__, "modules": {}}
    for name in MODULES:
        mod = importlib.import_module(name)
        names = {}
        for n in sorted(dir(mod)):
            if n.startswith("_"):
                continue
            kind = _kind(getattr(mod, n), name)
            if kind is not None:
                names[n] = kind
        out["modules"][name] = names
    return out


def main() -> int:
    env = dict(os.environ)
    if "DRJIT_LIBLLVM_PATH" not in env:
        found = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
        if found:
            env["DRJIT_LIBLLVM_PATH"] = found[0]
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env, capture_output=True,
                       text=True, cwd=HERE)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return r.returncode
    data = json.loads(r.stdout)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    counts = ", ".join(f"{m}: {len(v)}" for m, v in data["modules"].items())
    print(f"wrote {OUT} ({counts})")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        json.dump(child(), sys.stdout)
        sys.exit(0)
    sys.exit(main())
