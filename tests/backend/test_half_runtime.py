"""Float16 on CPUs without F16C: LLVM calls compiler-runtime conversions that frostjit defines
(backend/llvm/half_runtime.py); before, such a kernel crashed the process (segfault)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import warnings
import numpy as np
import frostjit as fj
from frostjit.llvm import Float, Float16
warnings.simplefilter("ignore")
rng = np.random.default_rng(1)
a = (rng.standard_normal(200000) * 10.0 ** rng.integers(-9, 6, 200000)).astype(np.float32)
a = np.concatenate([a, np.float32([np.inf, -np.inf, 0.0, -0.0, 65504, 65519.99, 65520, 6e-8, 2.98e-8, 5.96e-8])])
assert np.array_equal(Float16(Float(a)).numpy().view(np.uint16), a.astype(np.float16).view(np.uint16))
halves = np.arange(65536, dtype=np.uint16).view(np.float16)
halves = halves[~np.isnan(halves)]
assert np.array_equal(Float(Float16(halves)).numpy(), halves.astype(np.float32))
x = Float16(1.5, 2.5, -3.5)
assert (x * 2 + 1).numpy().tolist() == [4.0, 6.0, -6.0]
assert np.isnan(Float(Float16(Float(float("nan")))).numpy()[0])
print("ok")
"""


@pytest.mark.llvm_only("compiles for a narrower CPU")
@pytest.mark.parametrize("features", ["-f16c", "-avx512f,-avx2,-avx"])
def test_float16_conversions_without_f16c_are_exact(features):
    env = dict(os.environ, FROSTJIT_TARGET_FEATURES=features)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
