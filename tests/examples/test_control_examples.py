"""The control-flow ports under examples/ (Mandelbrot with while_loop, a random walk with if_stmt,
an @fj.syntax path tracer with Russian roulette) run, do what they say, and print exactly what
Dr.Jit 1.5 prints for the same file with the imports swapped, when Dr.Jit is installed."""
from __future__ import annotations

import glob
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SWAPS = {
    "mandelbrot": ("from frostjit.llvm import Float, UInt32\n", "from drjit.llvm import Float, UInt32\n"),
    "random_walk": ("from frostjit.llvm import PCG32, Int\n", "from drjit.llvm import PCG32, Int\n"),
    "path_tracer_roulette": ("from frostjit.llvm import PCG32, Bool, Float, UInt32\n",
                             "from drjit.llvm import PCG32, Bool, Float, UInt32\n"),
}
ARGS = {"mandelbrot": ["48", "20", "120"], "random_walk": ["5003", "30"], "path_tracer_roulette": ["20011", "32"]}


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(script: Path, args, env_extra=None) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_mandelbrot_counts_match_a_numpy_escape_loop(capsys):
    mod = _load("mandelbrot")
    w, h, m = 20, 9, 50
    counts = np.array(mod.mandelbrot(w, h, m).numpy())
    idx = np.arange(w * h, dtype=np.uint32)
    cr = (idx % w).astype(np.float32) * np.float32(3.0 / w) - np.float32(2.0)
    ci = (idx // w).astype(np.float32) * np.float32(2.4 / h) - np.float32(1.2)
    zr, zi, it = np.zeros_like(cr), np.zeros_like(ci), np.zeros(w * h, np.uint32)
    for _ in range(m):
        act = (it < m) & (zr * zr + zi * zi <= 4)
        zr, zi = np.where(act, zr * zr - zi * zi + cr, zr), np.where(act, np.float32(2) * zr * zi + ci, zi)
        it += act
    assert np.array_equal(counts, it)
    assert len(set(counts.tolist())) > 5            # lanes ran different numbers of iterations
    mod.main(w, h, m)
    assert "pixels inside" in capsys.readouterr().out


def test_random_walk_stays_non_negative_with_parity_of_the_step_count():
    mod = _load("random_walk")
    pos = mod.walk(1001, 11).numpy()
    assert pos.min() >= 0 and np.all(pos % 2 == 1)
    assert abs(pos.mean() - np.sqrt(2 * 11 / np.pi)) < 0.5


def test_path_tracer_estimate_is_unbiased_and_depth_limited():
    mod = _load("path_tracer_roulette")
    radiance, depth = mod.trace(50000, 16)
    assert abs(radiance.numpy().astype(np.float64).mean() - 0.3 * 0.8 / (1 - 0.49)) < 0.01
    assert depth.numpy().max() <= 16 and depth.numpy().min() >= 1


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="Dr.Jit is not installed")
@pytest.mark.parametrize("name", sorted(SWAPS))
def test_example_prints_what_drjit_prints(name, tmp_path):
    src = (EXAMPLES / f"{name}.py").read_text()
    old, new = SWAPS[name]
    swapped = src.replace("import frostjit as fj\n", "import drjit as fj\n").replace(old, new)
    assert "import frostjit" not in swapped and "from frostjit" not in swapped
    script = tmp_path / f"{name}_drjit.py"
    script.write_text(swapped)
    lib = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
    env = {"DRJIT_LIBLLVM_PATH": lib[0]} if lib and not os.environ.get("DRJIT_LIBLLVM_PATH") else {}
    assert _run(script, ARGS[name], env) == _run(EXAMPLES / f"{name}.py", ARGS[name])
