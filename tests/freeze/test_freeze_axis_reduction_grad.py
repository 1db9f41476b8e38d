"""The last replay-vs-plain gaps of tensor reductions over an axis that follows the batch size
(r16; r15's ``test_freeze_axis_reduction_order.py`` covers arrays without a gradient):

* a **grad-enabled** tensor (a training step's ``fj.mean(loss, axis=0)``): the forward value,
  the backward gradients (seeded with values that depend on the forward bits) and the forward
  mode's tangents, inside the frozen function and through it (``freeze/through.py``);
* **two axes** that follow the batch size (an outer product ``(B, B)``, a ``(B, 2, B)`` stack):
  the axis reduced, its rows or both are symbolic while recording;
* ``mode="symbolic"`` reductions of a batch laid along the last axis (``(3, B)``).

Frozen vs plain, bit for bit, in checking mode, on both backends (``--backend reference``).
Every tensor stays under 8192 elements: a multi-threaded float ``scatter_add`` (the adjoint of a
broadcast, the gathers' adjoints, ``mode="symbolic"``'s row sums) is not bit-reproducible run
to run, in the plain call too (docs/freeze.md, "Known gaps")."""
import warnings

import numpy as np
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float, TensorXf

_OPS = {"sum": fj.sum, "prod": fj.prod, "min": fj.min, "max": fj.max, "mean": fj.mean}
_BATCHES = (2, 5, 8, 16, 17, 32, 33, 64, 100, 257)
_LANES = 8192           # the LLVM backend's threads share launches from here on


def _fitting(batches, size) -> list:
    """The batch sizes ``b`` whose tensor (``size(b)`` elements) one thread reduces."""
    return [b for b in batches if size(b) < _LANES] or [2]
_SETTINGS = settings(max_examples=12, deadline=None)


def _bits(x) -> bytes:
    return np.ascontiguousarray(x.numpy()).tobytes()


def _data(rng, shape, op):
    a = rng.standard_normal(shape).astype(np.float32)
    if op == "prod":
        a = (1 + 0.05 * a).astype(np.float32)       # (no overflow: bits stay comparable)
    if op in ("min", "max") and a.size and rng.random() < 0.3:
        a.reshape(-1)[rng.integers(0, a.size)] = a.reshape(-1)[0]      # a tie: both get the gradient
    return a


def _differentiate(y, x, direction: str):
    """The gradients of ``y`` against ``x``: backward with a seed that depends on ``y``'s bits,
    or forward with tangents that depend on ``x``'s bits."""
    if direction == "backward":
        fj.set_grad(y, fj.cos(fj.detach(y)) + 1.5)
        fj.backward_from(y)
        return fj.grad(x).array
    fj.set_grad(x, fj.sin(fj.detach(x)) + 0.5)
    fj.forward_from(x)
    return fj.grad(y).array


def _assert_same(frozen, plain, args_of, where):
    got, ref = frozen(*args_of()), plain(*args_of())
    for g, r in zip(got, ref):
        assert _bits(g) == _bits(r), where


@_SETTINGS
@given(op=st.sampled_from(sorted(_OPS)), direction=st.sampled_from(["backward", "forward"]),
       rest=st.sampled_from([(3,), (16,), (64,), (2, 32)]), axis=st.sampled_from([0, (0, 1)]),
       batches=st.lists(st.sampled_from(_BATCHES), min_size=2, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_grad_enabled_batch_axis_reductions_replay_the_plain_calls_bits(op, direction, rest, axis, batches, seed):
    if axis == (0, 1) and len(rest) < 2:
        axis = 0

    def step(t):
        x = TensorXf(t.array * 1.0, shape=t.shape)
        fj.enable_grad(x)
        y = _OPS[op](x * x, axis=axis)
        return y.array, _differentiate(y, x, direction)

    frozen = fj.freeze(step, check=True)
    rng = np.random.default_rng(seed)
    for batch in _fitting(batches, lambda b: b * int(np.prod(rest))):
        a = _data(rng, (batch,) + rest, op)
        _assert_same(frozen, step, lambda: (TensorXf(a),), f"{op} {direction} axis {axis} of {(batch,) + rest}")


@_SETTINGS
@given(op=st.sampled_from(sorted(_OPS)), inner=st.sampled_from([3, 16, 64]),
       batches=st.lists(st.sampled_from(_BATCHES), min_size=2, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_gradients_through_a_frozen_batch_axis_reduction_match_the_plain_call(op, inner, batches, seed):
    def forward(t):
        return _OPS[op](t * t, axis=0)

    def run(fn, a):
        t = TensorXf(a)
        fj.enable_grad(t)
        y = fn(t)
        fj.set_grad(y, fj.cos(fj.detach(y)) + 1.5)
        fj.backward_from(y)
        return y.array, fj.grad(t).array

    frozen = fj.freeze(forward, check=True)
    rng = np.random.default_rng(seed)
    for batch in _fitting(batches, lambda b: b * inner):
        a = _data(rng, (batch, inner), op)
        for g, r in zip(run(frozen, a), run(forward, a)):
            assert _bits(g) == _bits(r), f"{op} of {(batch, inner)}"


def _two_batch_axes(x, kind: str):
    """A tensor two of whose axes have the batch size ``B = width(x)``."""
    w = fj.width(x)
    if kind == "outer":         # (B, B)
        return TensorXf(x, shape=(w, 1)) * TensorXf(fj.cos(x) + 0.25, shape=(1, w))
    a = TensorXf(x, shape=(w, 1, 1)) * TensorXf(fj.cos(x) + 0.25, shape=(1, 1, w))      # (B, 2, B)
    return fj.concat([a, a * 0.5 + 1.0], axis=1)


@_SETTINGS
@given(op=st.sampled_from(sorted(_OPS)), kind=st.sampled_from(["outer", "stack"]),
       axis=st.sampled_from([0, 1, -1, (0, 1), (1, 2)]), grad=st.booleans(),
       batches=st.lists(st.sampled_from(_BATCHES), min_size=2, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_reductions_over_two_batch_axes_replay_the_plain_calls_bits(op, kind, axis, grad, batches, seed):
    def f(x):
        x = Float(x)
        if grad:
            fj.enable_grad(x)
        t = _two_batch_axes(x, kind)
        ax = axis if isinstance(axis, int) or t.ndim == 3 else 0
        y = _OPS[op](t, axis=ax)
        if not grad:
            return (y.array,)
        return y.array, _differentiate(y, x, "backward")

    frozen = fj.freeze(f, check=True)
    rng = np.random.default_rng(seed)
    for batch in _fitting(batches, lambda b: b * b * (2 if kind == "stack" else 1)):
        a = _data(rng, (batch,), op)
        _assert_same(frozen, f, lambda: (Float(a),), f"{op} axis {axis} of {kind} at B = {batch}, grad {grad}")


@_SETTINGS
@given(op=st.sampled_from(sorted(_OPS)), rows=st.sampled_from([1, 3, 16]), two=st.booleans(),
       batches=st.lists(st.sampled_from(_BATCHES), min_size=2, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_symbolic_mode_batch_axis_reductions_replay_the_plain_calls_bits(op, rows, two, batches, seed):
    """``mode="symbolic"`` over a batch laid along the last axis (``(rows, B)``, or ``(B, B)``)."""
    def f(x):
        x = Float(x)
        if two:
            t = _two_batch_axes(x, "outer")
        else:
            w = fj.width(x) // rows
            t = TensorXf(x, shape=(rows, w))
        if op == "mean":
            return (fj.mean(t, axis=-1, mode="symbolic").array,)
        return (_OPS[op](t, axis=-1, mode="symbolic").array,)

    frozen = fj.freeze(f, check=True)
    rng = np.random.default_rng(seed)
    for batch in _fitting(batches, lambda b: b * (b if two else rows)):
        a = _data(rng, (batch * (1 if two else rows),), op)
        _assert_same(frozen, f, lambda: (Float(a),), f"{op} of {'(B, B)' if two else (rows, batch)}")


def test_a_grad_enabled_reduction_records_once_for_every_batch_size():
    """Found in r16: a derivative's ``arange`` over the input of an axis reduction (or block
    reduction) had the recorded call's concrete size, which held the recording to that batch
    size: ``fj.sum(x, axis=1)`` of a grad-enabled ``(B, 64)`` tensor recorded once per batch
    size."""
    for shape_rest, axis in (((64,), 1), ((3,), 1), ((64,), 0)):
        def step(t):
            x = TensorXf(t.array * 1.0, shape=t.shape)
            fj.enable_grad(x)
            y = fj.prod(x * 0.5, axis=axis)
            return y.array, _differentiate(y, x, "backward")

        frozen = fj.freeze(step, check=True)
        for batch in (20, 33, 100, 40):
            a = (1 + 0.05 * np.arange(batch * shape_rest[0]) % 1.0).astype(np.float32).reshape((batch,) + shape_rest)
            _assert_same(frozen, step, lambda: (TensorXf(a),), f"axis {axis} of {(batch,) + shape_rest}")
        assert frozen.n_recordings == 1, f"axis {axis} of (B,) + {shape_rest}"


@settings(max_examples=10, deadline=None)
@given(rest=st.sampled_from([(), (3,), (16,)]), two=st.booleans(), axis=st.sampled_from([0, -1]),
       reverse=st.booleans(), exclusive=st.booleans(), grad=st.booleans(),
       batches=st.lists(st.sampled_from(_BATCHES), min_size=2, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_prefix_sums_over_a_batch_axis_replay_the_plain_calls_bits(rest, two, axis, reverse, exclusive, grad,
                                                                   batches, seed):
    """``fj.prefix_sum`` along an axis that follows the batch size: over the last axis (a 1-D
    tensor of the batch, the rows of ``(B, B)``) the plain call's one block prefix sum; over
    another, its levels (radix 2 with a gradient: the adjoints' order)."""
    def f(x):
        x = Float(x)
        if grad:
            fj.enable_grad(x)
        t = _two_batch_axes(x, "outer") if two else TensorXf(x, shape=(fj.width(x) // max(size, 1),) + rest)
        y = fj.prefix_sum(t, axis=axis, reverse=reverse, exclusive=exclusive)
        if not grad:
            return (y.array,)
        return y.array, _differentiate(y, x, "backward")

    size = int(np.prod(rest))
    frozen = fj.freeze(f, check=True)
    rng = np.random.default_rng(seed)
    for batch in _fitting(batches, lambda b: b * (b if two else size)):
        a = _data(rng, (batch * (1 if two else size),), "sum")
        _assert_same(frozen, f, lambda: (Float(a),), f"axis {axis} of {'(B, B)' if two else (batch,) + rest}")


def test_a_block_size_computed_from_the_width_is_guarded():
    """Found in r16: ``fj.block_sum(x, fj.width(x) // 4)`` inside a frozen function was never
    replayed (the symbolic block size reached the recorded block reduction, whose ``TypeError``
    made every call a plain one with a ``FreezeWarning``); the block size is now the number it
    stands for, guarded (a replay at another width records again)."""
    for block in (fj.block_sum, fj.block_prefix_sum):
        def f(x):
            return block(x * 2.0, fj.width(x) // 4)

        frozen = fj.freeze(f, check=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", fj.FreezeWarning)
            for w in (16, 32, 16, 32):
                x = fj.sin(fj.arange(Float, w) * 0.3)
                assert _bits(frozen(x)) == _bits(f(x)), f"{block.__name__} at width {w}"
        assert frozen.n_recordings == 2
