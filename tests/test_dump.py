"""Generated code is code (frostjit/_dump.py): tracebacks show its lines, FROSTJIT_DUMP writes it out,
and it uses names a reader understands."""
import linecache
import os
import re
import traceback

import numpy as np

import frostjit as fj
from frostjit import _dump
from frostjit.llvm import Float, UInt32


def test_registered_source_is_what_linecache_and_tracebacks_show():
    fn = _dump.register_source("a test function", "def f(x):\n    return 1 / x\n")
    assert linecache.getline(fn, 2) == "    return 1 / x\n"
    ns = {}
    exec(compile(linecache.getline(fn, 1) + linecache.getline(fn, 2), fn, "exec"), ns)
    try:
        ns["f"](0)
    except ZeroDivisionError:
        assert "return 1 / x" in traceback.format_exc()
    _dump.release_source(fn)
    assert linecache.getline(fn, 2) == ""


def _replay_source(ff):
    (entry,) = ff._cache.entries.values()
    return [r for r in entry.order if hasattr(r, "source")][0]


class Pair:
    """A PyTree node of the traversal protocol whose rebuild can be made to fail."""

    fail = False

    def __init__(self, a):
        self.a = a

    def __fj_traverse__(self):
        return {"a": self.a}

    @classmethod
    def __fj_construct__(cls, d):
        if cls.fail:
            raise ValueError("rebuild refused")
        return cls(d["a"])


def test_an_error_inside_a_replay_shows_the_generated_line_in_the_traceback():
    ff = fj.freeze(lambda x: Pair(x + 1))
    for n in (3, 4):
        ff(Float(np.arange(n, dtype=np.float32)))
    Pair.fail = True
    try:
        ff(Float(np.arange(5, dtype=np.float32)))
    except ValueError:
        tb = traceback.format_exc()
    finally:
        Pair.fail = False
    recd = _replay_source(ff)
    assert recd.filename in tb and ".__fj_construct__(" in tb      # the generated line, shown


def test_replay_code_uses_readable_names():
    def f(x, i):
        y = x * 2
        fj.eval(y)
        return fj.gather(Float, y, i) + fj.sum(x)
    ff = fj.freeze(f)
    for n in (3, 4):
        ff(Float(np.arange(n, dtype=np.float32)), fj.arange(UInt32, n))
    src = _replay_source(ff).source
    assert "kernel_0" in src and "launch_size" in src and "buffer_" in src and "node_0" in src
    for opaque in ("NEWB", "RN[", "K0(", "A0[", "b0 =", "N0 ", "Q1"):
        assert opaque not in src, opaque


def test_frostjit_dump_writes_replays_and_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("FROSTJIT_DUMP", str(tmp_path / "dump"))
    fj.flush_kernel_cache()        # (so the kernel below is new to this process's memory cache)
    c = 1.0 + float(np.random.default_rng().integers(1, 2**30)) * 2.0**-40     # a kernel never seen
    ff = fj.freeze(lambda x: x * c + 1)
    ff(Float([1, 2, 3]))
    files = sorted(os.listdir(tmp_path / "dump"))
    replays = [f for f in files if re.match(r"\d{5}_freeze_replay_.*\.py$", f)]
    kernels = [f for f in files if re.match(r"\d{5}_kernel_[0-9a-f]{16}\.(ll|txt)$", f)]
    assert replays and kernels, files
    text = (tmp_path / "dump" / replays[0]).read_text()
    assert text.startswith("def replay(") and _replay_source(ff).filename == str(tmp_path / "dump" / replays[0])
