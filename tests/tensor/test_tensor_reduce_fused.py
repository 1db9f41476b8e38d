"""Axis reductions of pending tensors fused into the kernel that computes them.

``fj.sum``/``prod``/``min``/``max`` of a tensor expression over an axis or a tuple of axes run as
one ``AxisReduction`` (``Backend.axis_reduction``): on the LLVM backend, a pending expression is
reduced by the kernel that computes it (its values never stored) wherever no ``W``-lane chunk
straddles two rows (the reduced axes last and their length a multiple of ``W``, or the elements
after the reduced axes a multiple of ``W``); an evaluated tensor takes a kernel of the same
order.  Checked: values against NumPy (integers exact, floats to a tight tolerance) on
hypothesis shapes with empty dimensions, the fused result's bits against the evaluated
tensor's, at one and two threads, frozen against plain (at new batch sizes), the kernel history
(one kernel, the expression left unevaluated), and the shapes that keep the generic path.  On
the reference backend the same tests check values and bits (it evaluates, then reduces).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.llvm import TensorXf, TensorXf64, TensorXi, TensorXu

W = getattr(current_backend(), "width", 16)      # the LLVM backend's lanes per chunk
TYPES = {"f32": (TensorXf, np.float32), "f64": (TensorXf64, np.float64),
         "i32": (TensorXi, np.int32), "u32": (TensorXu, np.uint32)}
OPS = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}


def _data(shape, dt, seed=0, small=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dt).kind == "f":
        a = rng.random(shape) * (0.5 if small else 4) + (0.75 if small else -1)
    else:
        a = rng.integers(0, 3 if small else 1000, shape)
    return a.astype(dt)


def _expr(t, dt):
    """A pending tensor of t's type: 2t + 1 (floats), 3t + 1 (integers)."""
    return t * 2 + 1 if np.dtype(dt).kind == "f" else t * 3 + 1


def _numpy_expr(a, dt):
    return a * dt(2) + dt(1) if np.dtype(dt).kind == "f" else a * dt(3) + dt(1)


def _want(name, b, axis, dt):
    """NumPy's reduction in the array's type (integers wrap, as in Dr.Jit); an empty min/max
    gives the identity (NumPy raises)."""
    reduced = [b.shape[k] for k in (axis if isinstance(axis, tuple) else (axis,))]
    if name in ("min", "max") and 0 in reduced:
        shape = np.sum(b, axis=axis).shape
        if np.dtype(dt).kind == "f":
            return np.full(shape, np.inf if name == "min" else -np.inf, dt)
        info = np.iinfo(dt)
        return np.full(shape, info.max if name == "min" else info.min, dt)
    with np.errstate(over="ignore"):
        if name in ("sum", "prod"):
            return OPS[name](b, axis=axis, dtype=dt)
        return OPS[name](b, axis=axis)


def _check(name, got, want, dt):
    assert got.shape == want.shape
    if np.dtype(dt).kind == "f" and name in ("sum", "prod"):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dt == np.float32 else 1e-12, atol=1e-4)
    else:
        assert got.numpy().tobytes() == np.ascontiguousarray(want).tobytes()


@st.composite
def cases(draw):
    """A shape of 1-3 dimensions whose sides are often multiples of W (so that the fused kernel
    applies) and sometimes 0, 1 or odd, and an axis (an int or a tuple) to reduce."""
    side = st.one_of(st.sampled_from([W, 2 * W, 3 * W]), st.sampled_from([0, 1, 3, 5, W + 1]))
    shape = tuple(draw(st.lists(side, min_size=1, max_size=3)))
    nd = len(shape)
    if draw(st.booleans()):
        axis = draw(st.integers(0, nd - 1))
    else:
        axis = tuple(sorted(draw(st.sets(st.integers(0, nd - 1), min_size=1))))
    return shape, axis


@settings(max_examples=40)
@given(case=cases(), name=st.sampled_from(sorted(OPS)), ty=st.sampled_from(sorted(TYPES)), seed=st.integers(0, 99))
def test_fused_axis_reductions_match_numpy_and_the_evaluated_bits(case, name, ty, seed):
    shape, axis = case
    T, dt = TYPES[ty]
    a = _data(shape, dt, seed, small=name == "prod")
    t = T(a)
    fused = getattr(fj, name)(_expr(t, dt), axis=axis)
    _check(name, fused, _want(name, _numpy_expr(a, dt), axis, dt), dt)
    e = _expr(t, dt)
    fj.eval(e)
    stored = getattr(fj, name)(e, axis=axis)
    assert fused.numpy().tobytes() == stored.numpy().tobytes()


@pytest.mark.parametrize("axis", [0, 1, (0, 1), -1])
@pytest.mark.parametrize("ty", sorted(TYPES))
def test_sum_min_max_over_the_axes_of_a_matrix(ty, axis):
    T, dt = TYPES[ty]
    a = _data((96, 8 * W), dt, 3)
    b = _numpy_expr(a, dt)
    t = T(a)
    for name in ("sum", "min", "max"):
        _check(name, getattr(fj, name)(_expr(t, dt), axis=axis), _want(name, b, axis, dt), dt)


@pytest.mark.parametrize("axis", [0, 1, 2, (0, 1), (1, 2), (0, 2)])
def test_three_dimensional_axes_and_keepdims(axis):
    a = _data((6, 2 * W, 3 * W), np.float32, 4)
    got = fj.sum(TensorXf(a) * 2 + 1, axis=axis, keepdims=True)
    want = (a * np.float32(2) + np.float32(1)).sum(axis=axis, keepdims=True)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


@pytest.fixture(params=[1, 2])
def threads(request):
    old = fj.thread_count()
    fj.set_thread_count(request.param)
    yield request.param
    fj.set_thread_count(old)


@pytest.mark.parametrize("shape, axis", [((2, 1 << 20), 1), ((1 << 12, 1 << 9), 0), ((8, 1 << 10, 64), 1),
                                         ((512, 1 << 11), (0, 1))])
def test_the_same_bits_at_any_thread_count(threads, shape, axis):
    # (long rows are cut into segments, each reduced by one thread in a fixed order)
    a = _data(shape, np.float32, 5)
    t = TensorXf(a)
    got = fj.sum(t * 1.5 - 0.25, axis=axis).numpy().tobytes()
    fj.set_thread_count(3 - threads)
    assert fj.sum(t * 1.5 - 0.25, axis=axis).numpy().tobytes() == got
    e = t * 1.5 - 0.25
    fj.eval(e)
    assert fj.sum(e, axis=axis).numpy().tobytes() == got
    np.testing.assert_allclose(np.frombuffer(got, np.float32),
                               (a * np.float32(1.5) - np.float32(0.25)).sum(axis=axis, dtype=np.float64).ravel(),
                               rtol=1e-4, atol=1e-2)


def test_frozen_axis_reductions_equal_plain_at_new_batch_sizes():
    # axes of a fixed length: the same AxisReduction recorded and replayed, the same bits
    def f(t):
        return fj.max(t * t, axis=1), fj.sum(t * 0.5, axis=1), fj.sum(t - 1, axis=2), fj.min(t + 1, axis=(1, 2))
    frozen = fj.freeze(f)
    for k, batch in enumerate([4, 4, 9, 33]):
        t = TensorXf(_data((batch, 3 * W, 2 * W), np.float32, k))
        for a, b in zip(frozen(t), f(t)):
            assert a.shape == b.shape
            assert a.numpy().tobytes() == b.numpy().tobytes()
    assert frozen.n_recordings == 1


def test_frozen_sums_over_the_batch_axis_agree_with_plain_to_rounding():
    # (an axis whose length follows the batch size keeps the level structure inside a frozen
    # function, so that one recording replays at every size: another order of the additions)
    frozen = fj.freeze(lambda t: fj.sum(t * 2 - 1, axis=0))
    for k, batch in enumerate([4, 9, 33]):
        t = TensorXf(_data((batch, 4 * W), np.float32, k))
        np.testing.assert_allclose(frozen(t).numpy(), fj.sum(t * 2 - 1, axis=0).numpy(), rtol=1e-5, atol=1e-5)


def test_mean_over_an_axis_of_an_expression():
    a = _data((40, 2 * W), np.float32, 6)
    got = fj.mean(TensorXf(a) * 3, axis=0)
    np.testing.assert_allclose(got.numpy(), (a * np.float32(3)).mean(axis=0), rtol=1e-6)


@pytest.mark.parametrize("shape, axis", [((7, W + 3), 1), ((5, 3, W - 1), 0), ((4, 6), 0)])
def test_shapes_that_keep_the_generic_path_give_numpy_values(shape, axis):
    a = _data(shape, np.float32, 7)
    for name in ("sum", "min", "max"):
        _check(name, getattr(fj, name)(TensorXf(a) * 2 + 1, axis=axis),
               _want(name, _numpy_expr(a, np.float32), axis, np.float32), np.float32)


@pytest.mark.parametrize("axis", [0, 1])
def test_min_and_max_ignore_nan_and_an_all_nan_line_gives_the_identity(axis):
    a = _data((2 * W, 2 * W), np.float32, 11)
    a[3, :] = np.nan
    a[:, 5] = np.nan
    a[7, 9] = np.nan
    t = TensorXf(a)
    for name, ident in (("min", np.inf), ("max", -np.inf)):
        got = getattr(fj, name)(t * 1, axis=axis).numpy()
        with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
            want = getattr(np, "nan" + name)(a, axis=axis)
        want = np.where(np.isnan(want), np.float32(ident), want)
        assert got.tobytes() == want.astype(np.float32).tobytes()


def test_an_ad_tensor_without_gradients_keeps_its_type():
    from frostjit.llvm.ad import TensorXf as ADTensor
    a = _data((3 * W, 2 * W), np.float32, 12)
    got = fj.sum(ADTensor(a) * 2, axis=0)
    assert type(got) is ADTensor
    np.testing.assert_allclose(got.numpy(), (a * 2).sum(axis=0), rtol=1e-6)


def test_gradients_flow_through_an_axis_sum_of_an_expression():
    from frostjit.llvm.ad import TensorXf as ADTensor
    a = _data((3 * W, 2 * W), np.float32, 8)
    t = ADTensor(a)
    fj.enable_grad(t)
    s = fj.sum(t * t, axis=0)
    fj.backward(fj.sum(s))
    np.testing.assert_allclose(fj.grad(t).numpy(), 2 * a, rtol=1e-6)


@pytest.mark.llvm_only("fused axis reductions are the LLVM backend's kernels")
@pytest.mark.parametrize("shape, axis", [((64, 16 * W), 0), ((64, 16 * W), 1), ((4, 8 * W, 2 * W), (1, 2)),
                                         ((4, 8 * W, 2 * W), 1)])
def test_an_axis_reduction_of_an_expression_is_one_kernel_and_stores_nothing(shape, axis):
    t = TensorXf(_data(shape, np.float32, 9))
    e = t * 3 + 2
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        fj.eval(fj.sum(e, axis=axis))
        history = fj.kernel_history()
    assert [h["type"] for h in history] == [fj.KernelType.JIT]
    assert history[0]["size"] == int(np.prod(shape))
    assert e.array.state == fj.VarState.Unevaluated


@pytest.mark.llvm_only("which shapes fuse is the LLVM backend's choice")
def test_a_row_length_that_is_not_a_multiple_of_the_width_is_evaluated_first():
    # (a chunk of W lanes would straddle two rows: the expression is evaluated, then reduced)
    t = TensorXf(_data((64, W + 3), np.float32, 10))
    e = t * 3 + 2
    fj.sum(e, axis=1)
    assert e.array.state == fj.VarState.Evaluated


@pytest.mark.llvm_only("which shapes fuse is the LLVM backend's choice")
def test_a_short_axis_over_wide_rows_keeps_the_gather_level():
    # (its segments could not be shared by the threads without partial rows as large as the input)
    a = _data((4, 1 << 18), np.float32, 12)
    t = TensorXf(a)
    e = t * 3 + 2
    got = fj.sum(e, axis=0)
    assert e.array.state == fj.VarState.Evaluated
    np.testing.assert_allclose(got.numpy(), (a * np.float32(3) + np.float32(2)).sum(axis=0), rtol=1e-6)
