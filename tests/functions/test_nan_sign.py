"""NaNs from arguments outside a function's domain print as Dr.Jit 1.5 prints them (measured side by
side): x86's default NaN has the sign bit set (``-nan``); ``erfinv`` outside [-1, 1] gives ``+nan``."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, Float64


@pytest.mark.parametrize("cls", [Float, Float64])
@pytest.mark.parametrize("fn", [fj.log, fj.log2, fj.acosh, fj.sqrt])
def test_domain_errors_give_the_hardware_nan(cls, fn):
    x = fj.opaque(cls, -2.0 if fn is not fj.acosh else 0.5, 3)
    y = fn(x)
    assert np.all(np.isnan(y.numpy())) and np.all(np.signbit(y.numpy()))
    assert str(y) == "[-nan, -nan, -nan]"


@pytest.mark.llvm_only("the sign of the NaN of the vectorized erfinv kernel")
@pytest.mark.parametrize("cls", [Float, Float64])
def test_erfinv_outside_its_domain_is_a_positive_nan(cls):
    y = fj.erfinv(cls(2.0, -2.0, 1.0, -1.0))
    assert str(y) == "[nan, nan, inf, -inf]"
