"""Tensors as inputs, outputs and state of frozen functions: the trailing shape is part of the
key, the leading (batch) dimension follows the width, frozen == plain at several batch sizes."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, TensorXf, TensorXf64, TensorXi, UInt32

# fj.upsample is deprecated (a DeprecationWarning, as Dr.Jit 1.5's): these tests still check what it does
pytestmark = pytest.mark.filterwarnings("ignore:frostjit.upsample\\(\\) is deprecated:DeprecationWarning")

SIZES = [1, 7, 1000, 100003]
K = [None]       # a (5, 2) TensorXf64, made by the first test that needs it (no frostjit buffer at import)


def batch_ops(t, w):
    """Tensor operations on a batch ``t`` of shape (N, 3) that do not reduce the batch axis."""
    a = t * w + t[:, :1]                                    # broadcasting, slicing
    b = fj.sum(a * a, axis=1)                               # (N,)
    c = fj.max(t, axis=-1, keepdims=True)                   # (N, 1)
    d = t[:, UInt32(2, 0)] - fj.cumsum(t, axis=1)[:, 1:]    # index arrays, prefix sums
    e = fj.concat([t, d], axis=1) @ K[0]                    # (N, 5) @ (5, 2)
    f = fj.reshape(fj.transpose(e), (-1,))                  # (2N,)
    g = fj.tensor.upsample(t, scale_factor=(1, 2))          # (N, 6)
    return {"a": a, "b": b + c[:, 0], "d": d, "e": e, "f": f, "g": g, "n": t.shape[0] * 2, "shape": t.shape}


def batch_reductions(t):
    """Reductions over the batch axis (their level structure follows the batch size)."""
    return fj.mean(t, axis=0), fj.prefix_sum(t, axis=0), fj.min(t, axis=(0, 1))


def _inputs(n, seed=0):
    rng = np.random.default_rng(seed + n)
    return TensorXf64(rng.standard_normal((n, 3))), TensorXf64(rng.standard_normal(3))


def _check_equal(got, want):
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            _check_equal(got[k], want[k])
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _check_equal(g, w)
    elif hasattr(want, "numpy"):
        assert type(got) is type(want) and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    else:
        assert got == want


def test_frozen_equals_plain_and_replays_at_new_batch_sizes():
    K[0] = TensorXf64(np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 0.25], [1.0, -2.0], [0.5, 3.0]]))
    f = fj.freeze(batch_ops)
    for n in SIZES:
        t, w = _inputs(n)
        _check_equal(f(t, w), batch_ops(t, w))
    # width 1 broadcasts (another layout); every other batch size replays the second recording
    assert f.n_recordings == 2
    for n in (5, 4096):
        t, w = _inputs(n, seed=1)
        _check_equal(f(t, w), batch_ops(t, w))
    assert f.n_recordings == 2
    K[0] = None


def test_reductions_over_the_batch_axis_trace_again_only_when_their_levels_change():
    f = fj.freeze(batch_reductions)
    for n in SIZES + [8, 9]:
        t, _ = _inputs(n)
        _check_equal(f(t), batch_reductions(t))
    # n = 7, 8, 9 share one level (and one recording); 1, 1000 and 100003 each have their own
    assert f.n_recordings == 4


def test_sums_over_a_long_trailing_axis_replay_at_new_batch_sizes():
    f = fj.freeze(lambda t: (fj.sum(t, axis=1), fj.mean(t * t, axis=-1)))
    for n in (3, 50, 1000):
        a = np.random.default_rng(n).standard_normal((n, 300))
        s, m = f(TensorXf64(a))
        np.testing.assert_allclose(s.numpy(), a.sum(1), rtol=1e-12)
        np.testing.assert_allclose(m.numpy(), (a * a).mean(1), rtol=1e-12)
    assert f.n_recordings == 1


def test_another_trailing_shape_traces_again_the_same_width_too():
    f = fj.freeze(lambda t: t * 2 + fj.sum(t, axis=-1, keepdims=True))
    f(TensorXf(np.ones((10, 3), np.float32)))
    f(TensorXf(np.ones((20, 3), np.float32)))
    assert f.n_recordings == 1
    out = f(TensorXf(np.ones((15, 2), np.float32)))           # width 30 again, other shape
    assert f.n_recordings == 2 and out.shape == (15, 2)
    np.testing.assert_array_equal(out.numpy(), np.full((15, 2), 4))
    out = f(TensorXf(np.ones((30,), np.float32)))             # 1-D: another number of dimensions
    assert f.n_recordings == 3 and out.shape == (30,)
    out = f(TensorXf(np.ones((2, 3, 5), np.float32)))
    assert f.n_recordings == 4 and out.shape == (2, 3, 5)


def test_leading_dimension_of_an_empty_inner_shape_is_keyed():
    f = fj.freeze(lambda t: fj.sum(t, axis=1) + 1)
    out = f(TensorXf(np.zeros((4, 0), np.float32)))
    assert out.shape == (4,) and out.numpy().tolist() == [1, 1, 1, 1]
    out = f(TensorXf(np.zeros((6, 0), np.float32)))
    assert out.shape == (6,) and f.n_recordings == 2


def test_zero_dimensional_tensors():
    f = fj.freeze(lambda s, t: t * s)
    t = TensorXf(np.ones((5, 2), np.float32))
    out = f(TensorXf(np.float32(3)), t)
    assert out.shape == (5, 2) and out.numpy()[0, 0] == 3


def test_a_zero_dimensional_numpy_operand_of_a_tensor_is_an_input_not_a_constant():
    # TensorXf * np.array(v): the tensor path took the number the array held, a constant of the
    # recording, so each new v re-recorded (the 1-D arrays' path records it as an input);
    # TensorXi * np.array(2.5) is a TensorXi, as in Dr.Jit 1.5 (session r13)
    def fn(t, z):
        return t * z + 1
    frozen = fj.freeze(fn)
    z = np.array(2.0, dtype=np.float32)
    for v in (2.0, 3.0, -1.5, 0.25):
        z.fill(v)
        for n in (1, 5):
            t = TensorXf(np.arange(2 * n, dtype=np.float32).reshape(n, 2))
            np.testing.assert_array_equal(frozen(t, z).numpy(), fn(t, z).numpy())
    assert frozen.n_recordings <= 2
    r = fj.llvm.TensorXi([1, 2, 3]) * np.array(2.5)
    assert type(r) is fj.llvm.TensorXi and r.numpy().tolist() == [2, 4, 6]


def test_mutated_tensor_inputs_are_written_back():
    @fj.freeze
    def step(state, x):
        state["t"] += x                     # rebinds the tensor's array
        state["t"][:, 0] = 0.0              # a scatter into it
        state["count"] = state["count"] + 1
        return fj.sum(state["t"], axis=1)

    for n in (4, 9, 9, 33):
        st = {"t": TensorXf(np.ones((n, 2), np.float32)), "count": TensorXi(np.zeros(1, np.int32))}
        for _ in range(3):
            out = step(st, TensorXf([1.0, 2.0]))
        np.testing.assert_array_equal(st["t"].numpy(), np.tile([0, 7], (n, 1)))
        np.testing.assert_array_equal(out.numpy(), np.full(n, 7))
        assert st["t"].shape == (n, 2) and st["count"].numpy()[0] == 3
    assert step.n_recordings <= 2


def test_textures_in_frozen_functions():
    from frostjit.llvm import Array2f, Texture2f

    @fj.freeze
    def lookup(tex, pos):
        return tex.eval(pos), tex.shape

    rng = np.random.default_rng(0)
    for h in (4, 5, 16):
        tex = Texture2f(TensorXf(rng.standard_normal((h, 6, 2)).astype(np.float32)))
        pos = Array2f(Float(rng.uniform(0, 1, 100).astype(np.float32)), Float(rng.uniform(0, 1, 100).astype(np.float32)))
        (v, shape) = lookup(tex, pos)
        ref = tex.eval(pos)
        assert shape == (h, 6, 2)
        np.testing.assert_array_equal(v.numpy(), ref.numpy())
    assert lookup.n_recordings == 1             # the first resolution follows the width
    tex = Texture2f(TensorXf(np.ones((4, 7, 2), np.float32)))
    lookup(tex, pos)
    assert lookup.n_recordings == 2             # another trailing resolution traces again


def test_textures_as_outputs():
    from frostjit.llvm import Texture2f

    @fj.freeze
    def f(tex):
        return Texture2f(tex.tensor() * 2, wrap_mode=fj.WrapMode.Repeat), fj.upsample(tex, scale_factor=(2, 1))

    for h in (3, 5, 9):
        tex = Texture2f(TensorXf(np.arange(h * 8, dtype=np.float32).reshape(h, 4, 2)))
        a, b = f(tex)
        assert type(a) is Texture2f and a.shape == (h, 4, 2) and a.wrap_mode() is fj.WrapMode.Repeat
        np.testing.assert_array_equal(a.tensor().numpy(), 2 * tex.tensor().numpy())
        np.testing.assert_array_equal(b.tensor().numpy(), fj.upsample(tex, scale_factor=(2, 1)).tensor().numpy())
    assert f.n_recordings == 1


def test_slices_of_the_batch_axis_replay_at_new_batch_sizes():
    def f(t):
        return t[1:] - t[:-1], t[2:-3, 1], t[-4:], t[:5]

    ff = fj.freeze(f)
    for n in (9, 17, 40):
        t = TensorXf64(np.random.default_rng(n).standard_normal((n, 2)))
        _check_equal(ff(t), f(t))
    assert ff.n_recordings == 1
    t = TensorXf64(np.ones((3, 2)))                     # shorter than the slices: traced again
    _check_equal(ff(t), f(t))

