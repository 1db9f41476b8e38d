"""benchmarks/bench_scalar.py: a tiny run prints a positive time for every workload."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.backend_independent("the scalar arrays' benchmark")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_quick_json_run_times_every_workload():
    r = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "bench_scalar.py"), "--quick", "--json"],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"Array3f + Array3f", "PCG32.next_float32()", "Matrix4f @ Array4f"} <= set(out)
    assert all(v > 0 for v in out.values())
