"""Buffers still alive at interpreter exit are freed without errors."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_buffer_freed_at_interpreter_exit_prints_no_ignored_exception():
    """HostBuffer.__del__ looked up ``sys``, ``np`` and the pool's limits as module globals, which
    interpreter exit had already set to None: "Exception ignored in HostBuffer.__del__ ...
    'NoneType' object has no attribute 'getrefcount'" on stderr (seen after test runs)."""
    script = textwrap.dedent("""
        import frostjit as fj
        import frostjit.backend.llvm.memory as memory
        from frostjit.llvm import Float
        x = Float([1.0] * 100_000) * 2
        fj.eval(x)
        memory.zz_kept_until_exit = x      # freed with the module's globals, after sys and np
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Exception ignored" not in r.stderr, r.stderr
