"""The code paths of narrower machines (AVX2: 8 float lanes per register) run here too.

FROSTJIT_TARGET_FEATURES=-avx512f makes the backend generate code as for an AVX2-only
CPU; the differential and memory-operation tests must pass unchanged in that mode.
"""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.llvm_only("LLVM target features")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_avx2_code_paths_pass_the_differential_tests(tmp_path):
    import llvmlite.binding as llvm
    if "+avx2" not in llvm.get_host_cpu_features().flatten():
        pytest.skip("the host cannot run AVX2 code")
    env = dict(os.environ, FROSTJIT_TARGET_FEATURES="-avx512f", FROSTJIT_CACHE_DIR=str(tmp_path),
               PYTHONPATH=REPO, HYPOTHESIS_PROFILE="dev")
    probe = subprocess.run([sys.executable, "-c", "from frostjit.backend import current_backend as c; "
                            "print(c().width)"], env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "16"        # two AVX2 registers of 8 floats per iteration
    tests = [os.path.join(REPO, "tests", "functions", name)
             for name in ("test_differential.py", "test_memory_ops.py", "test_math_functions.py",
                          "test_gather_index_runs.py")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                       env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def _host_masks_chunks() -> bool:
    import llvmlite.binding as llvm
    return "+avx512f" in llvm.get_host_cpu_features().flatten()


def test_the_other_chunk_shape_passes_the_differential_tests(tmp_path):
    """Kernels load and store every chunk masked (CPUs with mask registers) or only the last one
    (the others, codegen/frame.py): run the memory-touching tests with the shape this CPU does
    not use by default, so both are checked on every machine."""
    other = "0" if _host_masks_chunks() else "1"
    env = dict(os.environ, FROSTJIT_MASKED_CHUNKS=other, FROSTJIT_CACHE_DIR=str(tmp_path),
               PYTHONPATH=REPO, HYPOTHESIS_PROFILE="dev")
    tests = [os.path.join(REPO, "tests", *parts) for parts in
             (("functions", "test_differential.py"), ("functions", "test_memory_ops.py"),
              ("functions", "test_gather_index_runs.py"), ("texture", "test_texture_reference.py"))]
    tests = [t for t in tests if os.path.exists(t)]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                       env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


@pytest.mark.parametrize("masked", ["0", "1"])
def test_chunk_shape_tail_lanes(tmp_path, masked):
    """Every launch width around the chunk size: loads, stores and gathers of the last, partial
    chunk touch exactly its lanes (a full-chunk load past the end would read, a store write,
    the next buffer)."""
    code = ("import numpy as np, frostjit as fj\n"
            "from frostjit.llvm import Float, UInt32\n"
            "for n in list(range(1, 70)) + [1000, 4099]:\n"
            "    a = np.arange(n, dtype=np.float32)\n"
            "    x = Float(a); y = x * 2 + 1; fj.eval(y)\n"
            "    assert np.array_equal(y.numpy(), a * 2 + 1), n\n"
            "    i = UInt32(np.arange(n, dtype=np.uint32)[::-1].copy())\n"
            "    g = fj.gather(Float, x, i, i % 3 != 0); fj.eval(g)\n"
            "    ref = np.where(np.arange(n)[::-1] % 3 != 0, a[::-1], 0)\n"
            "    assert np.array_equal(g.numpy(), ref), n\n"
            "    e = fj.gather(Float, Float(np.zeros(0, np.float32)), i, False); fj.eval(e)\n"
            "    assert not e.numpy().any(), n\n"
            "print('ok')\n")
    env = dict(os.environ, FROSTJIT_MASKED_CHUNKS=masked, FROSTJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=REPO)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout[-2000:] + r.stderr[-2000:]


def test_chunk_shape_setting_is_checked(tmp_path):
    env = dict(os.environ, FROSTJIT_MASKED_CHUNKS="yes", FROSTJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=REPO)
    r = subprocess.run([sys.executable, "-c", "import frostjit as fj; from frostjit.llvm import Float; "
                        "fj.eval(Float(1, 2) + 1)"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "FROSTJIT_MASKED_CHUNKS" in r.stderr, r.stderr[-2000:]
