"""Adversarial programs against ``fj.freeze`` (session r16, lane redteam2): each calls the frozen
function and the plain function side by side, changes state between calls, and requires
bit-equal results and write-backs (never a stale replay).

Found stale before r16 and fixed:

* a NaN Python-number parameter (``fj.lerp(a, b, t)``, ``fj.minimum(x, t)``, ``(x - t) - y``
  with ``t = nan``): the plain call folds the NaN as a literal, and LLVM's folding of an operation
  on two NaNs keeps another one than the CPU's instruction the replay runs with the parameter
  (+NaN replayed, -NaN plain: r15's known gap); a NaN is never a parameter now (keyed by its bits).
"""
import struct

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float
from freeze_helpers import bits

pytestmark = pytest.mark.no_freeze_check      # (the test compares with the plain call itself)


def _nan(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


NANS = (float("nan"), -float("nan"), _nan(0x7FF8000000000123), _nan(0xFFF8000000000456))


# -- NaN parameters --------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda a, b, t: fj.lerp(a, b, t),
    lambda a, b, t: (a - t) - (b * 0 + float("-nan")),
    lambda a, b, t: fj.minimum(a * float("nan"), t),
    lambda a, b, t: fj.fma(a, t, b) + t,
    lambda a, b, t: fj.lerp(a, b, np.float32(t)),
], ids=["lerp", "sub", "minimum", "fma", "np.float32"])
@pytest.mark.parametrize("w", (1, 7))
def test_a_nan_parameter_replays_the_plain_calls_nan(op, w):
    fz = fj.freeze(op)
    seq = (0.5, 0.25) + NANS + (0.75,) + NANS
    for k, t in enumerate(seq):
        a = Float(np.arange(w, dtype=np.float32) - 1)
        b = Float(np.where(np.arange(w) % 3 == 2, np.nan, np.arange(w) + 4).astype(np.float32))
        assert bits(fz(a, b, t)) == bits(op(a, b, t)), (k, t)
    assert fz.n_recordings <= 2 + 2 * len(NANS)


def test_a_nan_numpy_scalar_parameter():
    def f(a, t):
        return fj.lerp(a, a * 2, t)

    fz = fj.freeze(f)
    for t in (np.float32(0.5), np.float32(0.25), np.float32("nan"), -np.float32("nan"), np.float32(0.125)):
        a = Float(1, 2, float("nan"))
        assert bits(fz(a, t)) == bits(f(a, t)), t
