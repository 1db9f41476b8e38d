"""The read set follows the bytecode of Python 3.10 to 3.13 (LOAD_METHOD / LOAD_ATTR with the
method bit, PRECALL, LOAD_FAST_LOAD_FAST, inlined comprehensions) and the hook each version has
(``sys.settrace`` up to 3.11, ``sys.monitoring`` from 3.12): the same program must give the same
reads everywhere.  Runs the probe under every other interpreter found on this machine (skipped
when there is none)."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "readset_probe.py")
READSET = os.path.normpath(os.path.join(HERE, "..", "..", "frostjit", "freeze"))


def _runs(python, version) -> bool:
    try:
        out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30)
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def _interpreters():
    found = {}
    for v in ("3.10", "3.11", "3.12", "3.13"):
        cands = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{v}*/bin/python"))) + [shutil.which(f"python{v}")]
        for c in cands:
            if c and os.path.exists(c) and _runs(c, v):
                found[v] = c
                break
    me = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return {v: c for v, c in found.items() if v != me}


def _probe(python):
    out = subprocess.run([python, PROBE, READSET], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("version", sorted(_interpreters()) or ["none"])
def test_read_set_is_the_same_on_every_python(version):
    others = _interpreters()
    if version not in others:
        pytest.skip("no other Python interpreter (3.10-3.13) on this machine")
    ref = _probe(sys.executable)
    assert ref.startswith("42.5 None None"), ref
    assert _probe(others[version]) == ref
