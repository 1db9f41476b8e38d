"""Known gap (docs/freeze.md, "Known gaps"): a tensor reduction over an axis whose length follows
the batch size replays in another order than the plain call.  The values agree to float32
round-off at every batch size (tested); the bits do not where the two reduction trees differ
(strict xfail: remove the mark when the two paths reduce in one order)."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, TensorXf

pytestmark = pytest.mark.no_freeze_check      # (checking mode would report the known difference)


def _tensor(batch: int, inner: int, seed: int):
    return TensorXf(fj.sin(fj.arange(Float, inner * batch) * 0.7 + seed), shape=(batch, inner))


def _sum0(t):
    return fj.sum(t, axis=0).array


@pytest.mark.parametrize("inner", [3, 64])
def test_a_replayed_batch_axis_reduction_agrees_to_round_off(inner):
    frozen = fj.freeze(_sum0)
    for batch in (8, 5, 13, 20, 40, 300):
        for seed in range(2):
            got = frozen(_tensor(batch, inner, seed)).numpy()
            ref = _sum0(_tensor(batch, inner, seed)).numpy()
            assert got.shape == ref.shape == (inner,)
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * batch)


@pytest.mark.xfail(strict=True, reason="r15 known gap: the replay's reduction tree (levels of 16 masked "
                                        "taps) differs from the plain call's fused AxisReduction")
def test_a_replayed_batch_axis_reduction_has_the_plain_calls_bits():
    frozen = fj.freeze(_sum0)
    for batch in (8, 300, 20):
        got = frozen(_tensor(batch, 64, 1)).numpy()
        ref = _sum0(_tensor(batch, 64, 1)).numpy()
        assert got.tobytes() == ref.tobytes(), f"batch {batch}"
