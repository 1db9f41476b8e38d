"""Gathers of element pairs (``functions.memory.gather_pair``: elements ``i`` and ``i + 1`` of a
32-bit source as one ``UInt64``) against NumPy, and the texture lookups that read a row's two
texels with one of them (``Texture._pair_rows``) against the same lookups with four gathers:
bit-identical values and gradients, plain and frozen, on whichever backend the suite runs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import frostjit as fj
import frostjit.llvm.ad as AD
from frostjit.backend import current_backend
from frostjit.functions.memory import gather_pair
from frostjit.schedule.kernel import build_kernel
from frostjit.texture import FilterMode, WrapMode
from frostjit.trace.dtypes import UInt64


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 70), st.sampled_from(["Float", "Int", "UInt"]),
       st.sampled_from(["Int", "UInt"]), st.integers(0, 2**16))
def test_gather_pair_matches_numpy(n, lanes, src_type, index_type, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    src = getattr(AD, src_type)(bits.view({"Float": np.float32, "Int": np.int32, "UInt": np.uint32}[src_type]))
    idx = rng.integers(-3, n + 3, lanes)
    if index_type == "UInt":
        idx = np.maximum(idx, 0)
    active = rng.random(lanes) < 0.8
    got = gather_pair(src, getattr(AD, index_type)(idx), AD.Bool(active)).numpy()
    ok = active & (idx >= 0) & (idx + 1 < n)
    safe = np.where(ok, idx, 0)
    want = np.where(ok, bits[safe].astype(np.uint64) | (bits[np.minimum(safe + 1, n - 1)].astype(np.uint64) << 32), 0)
    np.testing.assert_array_equal(got, want.astype(np.uint64))


def test_gather_pair_rejects_what_it_cannot_read():
    with pytest.raises(TypeError, match="32-bit elements"):
        gather_pair(AD.Float64([1, 2]), AD.UInt([0]))
    with pytest.raises(TypeError, match="32-bit integer"):
        gather_pair(AD.Float([1, 2]), AD.UInt64([0]))


@pytest.fixture
def four_gathers(monkeypatch):
    """Within the test, a callable that runs ``fn`` with the backend's pair gathers off."""
    backend = current_backend()

    def run(fn):
        with monkeypatch.context() as m:
            m.setattr(backend, "pair_gathers", False, raising=False)
            return fn()
    return run


@pytest.fixture
def pair_gathers(monkeypatch):
    """The backend's pair gathers on (as on AVX-512 and the reference backend), for the test."""
    monkeypatch.setattr(current_backend(), "pair_gathers", True, raising=False)


@st.composite
def lookups(draw, pairs_only: bool = False):
    """``(D, res (x first), channels, wrap, lanes, masked, seed)``; ``pairs_only``: only lookups
    that read pairs (the others trace no differently)."""
    D = draw(st.integers(1, 3))
    C = draw(st.integers(1, 3))
    rows = pairs_only and C == 1        # (then only a row's texels can pair)
    res = [draw(st.integers(2 if rows and k == 0 else 1, 6)) for k in range(D)]
    wrap = draw(st.sampled_from([WrapMode.Clamp, WrapMode.Mirror] if rows else list(WrapMode)))
    filt = FilterMode.Linear if rows else draw(st.sampled_from(list(FilterMode)))
    n = draw(st.integers(1, 45))
    masked = draw(st.booleans())
    return D, res, C, wrap, filt, n, masked, draw(st.integers(0, 2**16))


def _lookup(D, res, C, wrap, filt, n, masked, seed, grad=False):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(res[::-1] + [C]).astype(np.float32)
    pos = [rng.uniform(-1.2, 2.2, n).astype(np.float32) for _ in range(D)]
    for p in pos:       # texel centers, edges and the clamp/mirror boundaries
        p[: min(n, 4)] = [0.0, 1.0, -0.5, 1.5][: min(n, 4)]
    active = rng.random(n) < 0.7 if masked else True

    def run():
        tensor = AD.TensorXf(data)
        p = [AD.Float(q) for q in pos]
        if grad:
            fj.enable_grad(tensor)
            for q in p:
                fj.enable_grad(q)
        tex = getattr(AD, f"Texture{D}f")(tensor, filter_mode=filt, wrap_mode=wrap)
        act = AD.Bool(active) if masked else True
        out = list(tex.eval(getattr(AD, f"Array{D}f")(*p) if D > 1 else p[0], act))
        kinds = {ins.vt for ins in build_kernel([o._node for o in out], []).instrs if ins.op == "gather"}
        grads = []
        if grad:
            fj.backward(sum(out[1:], out[0]))
            grads = [fj.grad(q).numpy().tobytes() for q in p] + [fj.grad(tensor).numpy().tobytes()]
        return [o.numpy().tobytes() for o in out], grads, kinds
    return run


def _pairs_apply(D, res, C, wrap, filt) -> bool:
    """Whether a lookup reads pairs: a texel's channels 2k, 2k + 1, or a linear lookup's row."""
    return C >= 2 or (filt is FilterMode.Linear and res[0] >= 2 and wrap is not WrapMode.Repeat)


# (the fixtures set a backend attribute: the same for every example)
_FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=25, deadline=None, suppress_health_check=_FIXTURES)
@given(lookups())
def test_lookups_read_pairs_with_the_values_of_four_gathers(pair_gathers, four_gathers, case):
    run = _lookup(*case)
    values, _, kinds = run()
    values4, _, kinds4 = four_gathers(run)
    assert values == values4
    assert UInt64 not in kinds4
    assert (UInt64 in kinds) == _pairs_apply(*case[:5])


@settings(max_examples=8, deadline=None, suppress_health_check=_FIXTURES)
@given(lookups(pairs_only=True))
def test_gradients_through_pair_lookups_are_those_of_four_gathers(pair_gathers, four_gathers, case):
    run = _lookup(*case, grad=True)
    values, grads, _ = run()
    values4, grads4, _ = four_gathers(run)
    assert values == values4
    assert grads == grads4


@pytest.mark.parametrize("wrap,C", [(WrapMode.Clamp, 1), (WrapMode.Mirror, 1), (WrapMode.Repeat, 3)])
def test_a_frozen_pair_lookup_replays_the_plain_call(pair_gathers, wrap, C):
    rng = np.random.default_rng(3)
    tex = AD.Texture2f(AD.TensorXf(rng.random((7, 5, C), dtype=np.float32)), filter_mode=FilterMode.Linear,
                       wrap_mode=wrap)

    def f(t, x, y):
        return t.eval(AD.Array2f(x, y))
    frozen = fj.freeze(f)
    for n in (33, 70, 33):
        x, y = (AD.Float(rng.uniform(-0.5, 1.5, n).astype(np.float32)) for _ in range(2))
        np.testing.assert_array_equal(frozen(tex, x, y).numpy(), f(tex, x, y).numpy())


@pytest.mark.parametrize("D,C,wrap", [(1, 1, WrapMode.Clamp), (2, 1, WrapMode.Mirror), (2, 1, WrapMode.Repeat),
                                      (3, 1, WrapMode.Clamp), (2, 3, WrapMode.Mirror)])
def test_cubic_lookups_read_pairs_with_the_values_of_single_gathers(pair_gathers, four_gathers, D, C, wrap):
    rng = np.random.default_rng(5 + D + C)
    res = [6, 4, 3][:D]
    tensor = AD.TensorXf(rng.standard_normal(res[::-1] + [C]).astype(np.float32))
    tex = getattr(AD, f"Texture{D}f")(tensor, wrap_mode=wrap)
    p = [AD.Float(rng.uniform(-0.3, 1.3, 29).astype(np.float32)) for _ in range(D)]
    p[0][0] = 1.0       # (the last texel's neighbours, where Clamp and Mirror fold back)
    pos = getattr(AD, f"Array{D}f")(*p) if D > 1 else p[0]

    def run():
        if D == 3:      # (the 3-D hessian's kernel takes seconds to compile: the value's checks the pairs)
            value, grad, hess = tex.eval_cubic(pos), [], []
        else:
            value, grad, hess = tex.eval_cubic_hessian(pos)
        kinds = {ins.vt for ins in build_kernel([c._node for c in value], []).instrs if ins.op == "gather"}
        flat = [*value, *(g for v in grad for g in v), *(e for m in hess for row in (m if D > 1 else m) for e in row)]
        return [np.asarray(fj.ravel(c).numpy() if hasattr(c, "numpy") else c).tobytes() for c in flat], kinds
    values, kinds = run()
    values4, kinds4 = four_gathers(run)
    assert values == values4
    assert (UInt64 in kinds) == (C >= 2 or wrap is not WrapMode.Repeat) and UInt64 not in kinds4


@pytest.mark.parametrize("res_x", [2, 3, 5])
def test_clamp_pairs_at_every_texel_boundary(pair_gathers, four_gathers, res_x):
    """A Clamp lookup's x pair (``sampling.linear_clamp_pair``: which half each texel is, from the
    unwrapped index alone) at every texel center and edge and just beside them, beyond both ends,
    and at non-finite and huge positions (whose index conversion overflows): the four gathers'
    values, bit for bit."""
    rng = np.random.default_rng(res_x)
    data = rng.standard_normal((3, res_x, 1)).astype(np.float32)
    k = np.arange(-3, 2 * res_x + 4, dtype=np.float32) / np.float32(2 * res_x)
    x = np.concatenate([k, np.nextafter(k, np.float32(-np.inf)), np.nextafter(k, np.float32(np.inf)),
                        np.float32([np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9])])
    y = rng.uniform(-0.3, 1.3, x.size).astype(np.float32)
    tex = AD.Texture2f(AD.TensorXf(data), wrap_mode=WrapMode.Clamp)

    def run():
        out = tex.eval(AD.Array2f(AD.Float(x), AD.Float(y)))[0]
        kinds = {ins.vt for ins in build_kernel([out._node], []).instrs if ins.op == "gather"}
        return out.numpy().tobytes(), kinds
    values, kinds = run()
    values4, kinds4 = four_gathers(run)
    assert values == values4
    assert UInt64 in kinds and UInt64 not in kinds4
