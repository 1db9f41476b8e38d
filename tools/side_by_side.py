"""Run one snippet file under Dr.Jit 1.5 and under frostjit, each in its own process, and print
the sections whose output differs.

    python tools/side_by_side.py probes.py            # the differing sections
    python tools/side_by_side.py probes.py --all      # every section
    python tools/side_by_side.py probes.py --errors   # also sections where both raise (other types)

A snippet file is Python split into sections by lines starting with ``#--`` (the rest of the line
names the section).  Each section runs in a fresh namespace holding ``dr`` (``drjit`` or
``frostjit``), ``L``/``A``/``S`` (its ``llvm``, ``llvm.ad`` and ``scalar`` modules), ``np`` and every
name of ``llvm.ad`` (``Float``, ``Array3f``, ...); what it prints is compared, an exception as
``!! Type: message``.  Text before the first ``#--`` runs once, first.  A section that kills the
process (a Dr.Jit segfault or abort) is reported as ``CRASH`` and the run resumes after it.
Sections are written to files under a temporary folder so that ``@dr.syntax`` can read them.

Never import drjit and frostjit in one process (DEVELOPERS.md): this script imports neither.
The behaviours it finds different are fixed with a test of their own or listed in docs/.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile


def _sections(path: str):
    prelude, sections, cur = "", [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#--"):
                cur = [line[3:].strip(), ""]
                sections.append(cur)
            elif cur is None:
                prelude += line
            else:
                cur[1] += line
    return prelude, sections


def child(system: str, path: str, start: int, folder: str) -> None:
    """Run the sections from ``start`` on, printing one JSON line per section."""
    name = "drjit" if system == "dr" else "frostjit"
    dr = __import__(name)
    for sub in ("opt", "llvm", "llvm.ad", "scalar"):
        with contextlib.suppress(ImportError):
            __import__(f"{name}.{sub}")
    import numpy as np
    base = {"dr": dr, "L": dr.llvm, "A": dr.llvm.ad, "S": dr.scalar, "np": np, "__name__": "__side_by_side__"}
    exec(f"from {name}.llvm.ad import *", base)
    prelude, sections = _sections(path)
    exec(prelude, base)
    for k, (title, code) in enumerate(sections):
        if k < start:
            continue
        ns = dict(base)
        out = io.StringIO()
        fn = os.path.join(folder, re.sub(r"[^A-Za-z0-9_.-]", "_", title) + f"_{k}.{system}.py")
        with open(fn, "w") as f:
            f.write(code)
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, fn, "exec"), ns)
            text = out.getvalue()
        except BaseException as e:      # (SystemExit too: a section must not end the run)
            text = out.getvalue() + f"!! {type(e).__name__}: {str(e)[:300]}"
        print("@@SECTION@@" + json.dumps([k, title, text]), flush=True)


def run(system: str, path: str, n: int, folder: str) -> dict:
    results, start = {}, 0
    while start < n:
        p = subprocess.run([sys.executable, __file__, "--child", system, path, str(start), folder],
                           capture_output=True, text=True, timeout=1800)
        got = [json.loads(line[11:]) for line in p.stdout.splitlines() if line.startswith("@@SECTION@@")]
        for k, _, text in got:
            results[k] = text
        if p.returncode == 0:
            break
        start = got[-1][0] + 1 if got else start
        if start < n:
            last = p.stderr.strip().splitlines()[-1:] if p.stderr.strip() else []
            results[start] = f"CRASH rc={p.returncode} {last}"
            start += 1
    return results


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        child(argv[1], argv[2], int(argv[3]), argv[4])
        return 0
    path = argv[0]
    show_all, errors = "--all" in argv, "--errors" in argv
    _, sections = _sections(path)
    with tempfile.TemporaryDirectory() as folder:
        res = {s: run(s, path, len(sections), folder) for s in ("dr", "fj")}
    differing = 0
    for k, (title, _) in enumerate(sections):
        a, b = res["dr"].get(k), res["fj"].get(k)
        both_raise = a and b and a.startswith("!!") and b.startswith("!!")
        same = a == b or (both_raise and not errors and a.split(":")[0] == b.split(":")[0])
        differing += not same
        if not same or show_all:
            print(f"=== {title} {'same' if same else 'DIFF'}\n--- Dr.Jit:\n{a}\n--- frostjit:\n{b}")
    print(f"{differing} of {len(sections)} sections differ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
