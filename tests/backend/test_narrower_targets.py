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
             for name in ("test_differential.py", "test_memory_ops.py", "test_math_functions.py")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                       env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
