"""examples/monte_carlo_pi.py runs, estimates pi, and prints exactly what Dr.Jit prints for the
same program (the imports swapped), when Dr.Jit is installed."""
from __future__ import annotations

import glob
import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "monte_carlo_pi.py"
ARGS = ["200003", "3"]          # a width that is not a multiple of the SIMD width


def _run(script: Path, env_extra=None) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, str(script), *ARGS], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_example_estimates_pi():
    out = _run(EXAMPLE)
    last = out.strip().splitlines()[-1]
    estimate = float(last.split()[2])
    assert abs(estimate - math.pi) < 0.01
    assert len(out.strip().splitlines()) == 4


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="Dr.Jit is not installed")
def test_example_prints_what_drjit_prints(tmp_path):
    src = EXAMPLE.read_text()
    swapped = src.replace("import frostjit as fj\n", "import drjit as fj\n") \
                 .replace("from frostjit.llvm import PCG32\n", "from drjit.llvm import PCG32\n")
    assert "import frostjit" not in swapped and "from frostjit" not in swapped
    script = tmp_path / "monte_carlo_pi_drjit.py"
    script.write_text(swapped)
    lib = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
    env = {"DRJIT_LIBLLVM_PATH": lib[0]} if lib and not os.environ.get("DRJIT_LIBLLVM_PATH") else {}
    assert _run(script, env) == _run(EXAMPLE)
