"""Choosing the CPU backend: FROSTJIT_BACKEND at start-up, fj.set_cpu_backend at run time."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(code, backend):
    env = {**os.environ, "PYTHONPATH": REPO, "FROSTJIT_BACKEND": backend}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=env)


def test_the_environment_variable_chooses_the_backend_and_the_reference_loads_no_llvm():
    r = run("""
        import json, sys
        import frostjit as fj
        from frostjit.llvm import Float
        x = fj.sin(fj.arange(Float, 5)) * 2
        f = fj.freeze(lambda a: a + 1)
        out = [f(x).numpy().tolist(), f(x * 2).numpy().tolist()]
        print(json.dumps([fj.cpu_backend(), x.numpy().tolist(), out, "llvmlite" in sys.modules]))
    """, "reference")
    assert r.returncode == 0, r.stderr
    name, x, (once, twice), llvm_loaded = json.loads(r.stdout)
    assert name == "reference"
    x = np.array(x)
    assert np.allclose(x, np.sin(np.arange(5)) * 2, rtol=1e-6)
    assert np.allclose(once, x + 1, rtol=1e-6) and np.allclose(twice, x * 2 + 1, rtol=1e-6)
    assert not llvm_loaded          # a process on the reference backend never loads LLVM


def test_an_unknown_backend_in_the_environment_is_an_error_naming_the_variable():
    r = run("import frostjit as fj; from frostjit.llvm import Float; fj.eval(Float([1]) + 1)", "cuda-ish")
    assert r.returncode != 0
    assert "FROSTJIT_BACKEND='cuda-ish' is not a backend" in r.stderr


def test_switching_backends_gives_the_same_results_and_drops_recordings():
    f = fj.freeze(lambda a: a * 2 + 1)
    start = fj.cpu_backend()
    other = "reference" if start == "llvm" else "llvm"
    x = Float(np.arange(6, dtype=np.float32))
    before = f(x).numpy()
    assert f.n_cached_recordings == 1
    assert fj.set_cpu_backend(other) == start
    try:
        assert fj.cpu_backend() == other
        assert f.n_cached_recordings == 0           # the recording held the other backend's kernels
        y = Float(np.arange(6, dtype=np.float32))
        assert np.array_equal(f(y).numpy(), before)
        with pytest.raises(TypeError, match="set_cpu_backend"):
            fj.eval(x * 3)                          # x's memory belongs to the previous backend
    finally:
        fj.set_cpu_backend(start)


def test_set_cpu_backend_runs_pending_scatters_on_the_backend_that_queued_them():
    start = fj.cpu_backend()
    other = "reference" if start == "llvm" else "llvm"
    t = fj.zeros(Float, 4)
    fj.scatter(t, 5.0, fj.arange(fj.llvm.UInt32, 2))
    fj.set_cpu_backend(other)
    try:
        pass
    finally:
        fj.set_cpu_backend(start)
    assert np.array_equal(t.numpy(), [5, 5, 0, 0])


def test_an_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown CPU backend 'cuda'"):
        fj.set_cpu_backend("cuda")
    with pytest.raises(RuntimeError, match="CUDA backend is not implemented"):
        from frostjit.backend import get_backend
        get_backend(fj.JitBackend.CUDA)
    with pytest.raises(RuntimeError, match="Metal backend is not implemented"):
        from frostjit.backend import get_backend
        get_backend(fj.JitBackend.Metal)
