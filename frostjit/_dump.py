"""Generated code made debuggable: registered with ``linecache``, written out on request.

frostjit generates Python (frozen functions' replays, dispatch call paths) and kernel code
(LLVM IR).  :func:`register_source` gives generated Python a file name under which
tracebacks, ``pdb`` and ``inspect`` show its lines; with the environment variable
``FROSTJIT_DUMP=<folder>`` every generated function and kernel is also written into that
folder (one file each, numbered in creation order), and Python is compiled under the
written file's path, so a debugger opens the real file.

This module imports nothing but the standard library: any part of frostjit (the JIT,
dispatch) may use it.

Examples
--------
>>> filename = register_source("freeze replay step", "def replay(x):\\n    return x + 1\\n")
>>> code = compile(linecache.getline(filename, 1) + linecache.getline(filename, 2), filename, "exec")
"""
from __future__ import annotations

import itertools
import linecache
import os
import re
import threading

_numbers = itertools.count()
_lock = threading.Lock()
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def dump_folder() -> str | None:
    """The folder named by ``FROSTJIT_DUMP`` (created when missing), or ``None`` when unset."""
    folder = os.environ.get("FROSTJIT_DUMP")
    if not folder:
        return None
    os.makedirs(folder, exist_ok=True)
    return folder


def _file_stem(name: str) -> str:
    with _lock:
        k = next(_numbers)
    return f"{k:05d}_{_UNSAFE.sub('_', name).strip('_')[:80]}"


def register_source(name: str, source: str) -> str:
    """Make generated Python source visible to tracebacks; return the file name to compile it under.

    Parameters
    ----------
    name : str
        What the code is, in a few words (``"freeze replay step"``); part of the file name.
    source : str
        The complete source text.

    Returns
    -------
    str
        ``"<frostjit NNNNN_name>"``, registered in :mod:`linecache` (kept until
        :func:`release_source`), or with ``FROSTJIT_DUMP`` set the path of the file the source
        was written to.
    """
    stem = _file_stem(name)
    folder = dump_folder()
    if folder is not None:
        path = os.path.join(folder, stem + ".py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        return path
    filename = f"<frostjit {stem}>"
    # mtime None: linecache.checkcache() keeps the entry (there is no file to compare with).
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return filename


def release_source(filename: str) -> None:
    """Forget source registered by :func:`register_source` (the code it compiled is gone)."""
    if filename.startswith("<frostjit "):
        linecache.cache.pop(filename, None)


def dump_text(name: str, text: str, suffix: str) -> str | None:
    """With ``FROSTJIT_DUMP`` set, write ``text`` (kernel code) to a new file ``NNNNN_name.suffix``
    in that folder and return its path; otherwise do nothing and return ``None``."""
    folder = dump_folder()
    if folder is None:
        return None
    path = os.path.join(folder, f"{_file_stem(name)}.{suffix.lstrip('.')}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path
