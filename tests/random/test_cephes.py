"""frostjit.random.cephes rounds exactly as Dr.Jit 1.5's log, log2, erfinv and sincos do, on
every input the generators can feed them (all 2^23 Float32 uniforms; 2^20 random Float64 ones).

The expected results are SHA-256 digests of Dr.Jit's outputs stored by ``make_anchor_data.py``.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import frostjit.llvm as L
from frostjit.llvm import Float, Float64
from frostjit.random import cephes

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_anchor_data  # noqa: E402

FNS = {"log": cephes.log, "log2": cephes.log2, "erfinv": cephes.erfinv, "sincos": cephes.sincos}
EXPECTED = json.loads(bytes(np.load(make_anchor_data.DATA)["math_digests"]).decode())


@pytest.mark.llvm_only("every Float32 uniform (2^23 inputs per function) interpreted by NumPy takes ~3 min "
                       "on 2 cores; the reference backend's ops are checked bit for bit against the kernels "
                       "by tests/backend/test_backend_differential.py")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_math_is_bit_exact_with_drjit(name):
    got = make_anchor_data.math_digests(L, FNS, only=name)
    assert got[name] == EXPECTED[name]


@pytest.mark.parametrize("T", [Float, Float64])
def test_special_values_in_the_generators_domain(T):
    assert cephes.log(T(0.0))[0] == -math.inf
    assert cephes.log2(T(0.0))[0] == -math.inf
    assert cephes.log(T(1.0))[0] == 0 and cephes.log2(T(1.0))[0] == 0
    assert math.isnan(cephes.erfinv(T(-1.0))[0])        # as Dr.Jit's erfinv(-1)
    s, c = cephes.sincos(T(0.0))
    assert (s[0], c[0]) == (0.0, 1.0)


@pytest.mark.parametrize("T,tol", [(Float, 3e-7), (Float64, 1e-15)])
def test_accuracy_against_numpy(T, tol):
    """The replicas are the accurate approximations they claim to be (not just self-consistent)."""
    rs = np.random.default_rng(3)
    dt = np.float32 if T is Float else np.float64
    x = rs.random(20000).astype(dt) + dt(1e-3)
    np.testing.assert_allclose(cephes.log(T(x)).numpy(), np.log(x.astype(np.float64)), rtol=tol * 8, atol=tol)
    np.testing.assert_allclose(cephes.log2(T(x)).numpy(), np.log2(x.astype(np.float64)), rtol=tol * 8, atol=tol)
    a = (x * 2 * np.pi).astype(dt)
    s, c = cephes.sincos(T(a))
    np.testing.assert_allclose(s.numpy(), np.sin(a.astype(np.float64)), atol=tol * 8)
    np.testing.assert_allclose(c.numpy(), np.cos(a.astype(np.float64)), atol=tol * 8)
    y = ((2 * rs.random(20000) - 1) * 0.999).astype(dt)
    from math import erf
    back = np.array([erf(v) for v in cephes.erfinv(T(y)).numpy().astype(np.float64)])
    np.testing.assert_allclose(back, y, atol=5e-6 if T is Float else 1e-6)
