"""Run the same small program under frostjit.dispatch and under plum, and compare.

A *case* is a program (text) and the output plum 2.10.1 prints for it. The program imports
the library as ``LIB`` (``from LIB import dispatch, Dispatcher``); the harness substitutes
``frostjit.dispatch`` or ``plum``. Each test module keeps its cases in a dict and has two
tests per case: frostjit prints the expected output (in this process), and plum prints it
too (all of a module's cases in one plum subprocess, skipped when plum is not installed).
The expected text is what plum printed, so the second test keeps the first honest.

Programs must not print object addresses, and should use their own ``Dispatcher()`` (plum's
global dispatcher groups functions by bare name, so programs sharing a process would clash)
unless they are marked ``fresh`` (then each runs in its own plum subprocess).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import types

PLUM_AVAILABLE = importlib.util.find_spec("plum") is not None
_LIB = re.compile(r"\bLIB\b")


def program_for(source: str, lib: str) -> str:
    return _LIB.sub(lib, textwrap.dedent(source))


def run_here(source: str, name: str = "case") -> str:
    """Run the program with frostjit.dispatch in this process (a fresh module); its output."""
    module = types.ModuleType(f"_plum_case_{name}")
    module.__file__ = f"<case {name}>"
    sys.modules[module.__name__] = module  # forward references and pickling look modules up
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(program_for(source, "frostjit.dispatch"), module.__file__, "exec",
                         dont_inherit=True),
                 module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)
    return out.getvalue()


_RUNNER = r"""
import contextlib, io, json, sys, types
cases = json.load(sys.stdin)
results = {}
for name, source in cases.items():
    module = types.ModuleType("_plum_case_" + name)
    sys.modules[module.__name__] = module
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<case " + name + ">", "exec"), module.__dict__)
    except BaseException as e:
        out.write("UNCAUGHT %s: %s\n" % (type(e).__name__, e))
    results[name] = out.getvalue()
print(json.dumps(results))
"""


def run_plum(cases: dict[str, str]) -> dict[str, str]:
    """Run programs under plum in one subprocess each batch; ``{name: output}``."""
    payload = json.dumps({k: program_for(v, "plum") for k, v in cases.items()})
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # plum must not see this checkout
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=payload, capture_output=True,
                          text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"plum subprocess failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


class Case:
    """A program, the output frostjit must print, and what plum prints when that differs.

    ``plum``: plum's output when frostjit deliberately differs (documented in
    docs/dispatch.md, "Differences from plum"); by default the same as ``expected``.
    """

    def __init__(self, source: str, expected: str, plum: str | None = None):
        self.source = source
        self.expected = textwrap.dedent(expected).lstrip("\n")
        self.plum = self.expected if plum is None else textwrap.dedent(plum).lstrip("\n")
