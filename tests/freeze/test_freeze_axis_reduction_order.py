"""A tensor reduction over an axis whose length follows the batch size replays with the plain
call's bits (docs/freeze.md, "Reductions over the batch axis"): where the backend reduces the
axis as one ``AxisReduction`` (or, over the last axes, as rows) the recording keeps the length
open and the backend resolves it for each call's length; elsewhere levels of 16 masked taps give
the tree of the plain call's levels.  Frozen vs plain, bit for bit, in checking mode, at batch
sizes crossing 16, 32 and 256, on both backends."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, TensorXf

_BATCHES = (1, 2, 5, 8, 15, 16, 17, 20, 31, 32, 33, 64, 100, 255, 256, 257, 300)


def _tensor(batch: int, inner: int, seed: int):
    return TensorXf(fj.sin(fj.arange(Float, inner * batch) * 0.7 + seed), shape=(batch, inner))


def _sum0(t):
    return fj.sum(t, axis=0).array


def _bits(x) -> bytes:
    return np.ascontiguousarray(x.numpy()).tobytes()


def test_a_replayed_batch_axis_reduction_has_the_plain_calls_bits():
    frozen = fj.freeze(_sum0, check=True)
    for inner in (3, 64):
        for batch in (8, 300, 20, 17, 32):
            got = frozen(_tensor(batch, inner, 1))
            assert _bits(got) == _bits(_sum0(_tensor(batch, inner, 1))), f"batch {batch}, inner {inner}"


def test_a_batch_axis_reduction_records_once_per_level_count_not_per_batch_size():
    frozen = fj.freeze(_sum0)
    for batch in (20, 40, 100, 200, 255):       # fused (inner 64): one recording for all
        frozen(_tensor(batch, 64, 0))
    assert frozen.n_recordings == 1
    frozen = fj.freeze(_sum0)
    for batch in (20, 40, 100, 200, 255):       # the gathers (inner 3 on LLVM): two levels each
        frozen(_tensor(batch, 3, 0))
    assert frozen.n_recordings == 1


def _data(rng, shape, op):
    a = rng.standard_normal(shape).astype(np.float32)
    if op == "prod":
        a = (1 + 0.05 * a).astype(np.float32)       # (no overflow: bits stay comparable)
    if a.ndim >= 2 and a.shape[1] and rng.random() < 0.5:          # a column of -0.0 keeps its sign
        a[:, 0] = -0.0
    if op in ("min", "max") and a.size and rng.random() < 0.3:
        a.reshape(-1)[rng.integers(0, a.size)] = np.nan     # (ignored, as the flat reductions do)
    return a


_OPS = {"sum": fj.sum, "prod": fj.prod, "min": fj.min, "max": fj.max, "mean": fj.mean}


@settings(max_examples=20, deadline=None)
@given(op=st.sampled_from(sorted(_OPS)),
       batches=st.lists(st.sampled_from(_BATCHES), min_size=2, max_size=3),
       rest=st.sampled_from([(3,), (16,), (64,), (17,), (1,), (0,), (3, 16), (16, 3), (2, 32)]),
       axis=st.sampled_from([0, 1, -1, (0, 1), None]),
       seed=st.integers(0, 2**31 - 1))
def test_frozen_batch_axis_reductions_match_the_plain_call_bitwise(op, batches, rest, axis, seed):
    nd = 1 + len(rest)
    if isinstance(axis, tuple) and nd < 2:
        axis = 0

    def f(t):
        return _OPS[op](t, axis=axis)

    frozen = fj.freeze(f, check=True)       # (checking mode compares every replay too)
    rng = np.random.default_rng(seed)
    for batch in batches:
        a = _data(rng, (batch,) + rest, op)
        got = frozen(TensorXf(a))
        ref = f(TensorXf(a))
        assert got.shape == ref.shape
        assert _bits(got) == _bits(ref), f"{op} axis {axis} of {(batch,) + rest}"


@pytest.mark.no_freeze_check      # (counts recordings; the failure is the replay's shape)
def test_a_block_reduction_of_size_1_recorded_is_guarded():
    """Found in r15: a block reduction whose result had one element when recorded (batch 1) was
    replayed at every width with one element (its symbol lost without the size-1 guard every
    other size-1 result gets): ``fj.mean(t, axis=1)`` of a (B, 3) tensor recorded at B = 1 gave
    shape (1,) at B = 2."""
    def f(t):
        return fj.mean(t, axis=1)

    def g(x):
        return fj.block_sum(x, 3) * 2.0

    frozen, frozen_flat = fj.freeze(f), fj.freeze(g)
    for batch in (1, 2, 3, 1):
        a = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
        got, ref = frozen(TensorXf(a)), f(TensorXf(a))
        assert got.shape == ref.shape and _bits(got) == _bits(ref), f"batch {batch}"
        x = fj.arange(Float, batch * 3)
        assert _bits(frozen_flat(x)) == _bits(g(x)), f"flat, width {batch * 3}"
    assert frozen.n_recordings == 2 and frozen_flat.n_recordings == 2      # (size 1 and wider)
