"""frostjit.dda: grid traversal against a brute-force enumeration of the cells, the JIT modes
against the scalar backend, and the exact line integral against its numerical reference, its
derivatives and Dr.Jit's recorded values."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm.ad as J
import frostjit.scalar as S
from frostjit.dda import dda, integrate, integrate_ref


def cells_by_enumeration(o, d, ray_max, res_zyx, lo, hi):
    """Every cell the segment crosses with positive length, in order, in double precision:
    (t, index (z, y, x), entry fraction, exit fraction, length in the grid frame)."""
    n = len(res_zyx)
    res = tuple(reversed(res_zyx))
    scale = [res[i] / (hi[i] - lo[i]) for i in range(n)]
    og = [(o[i] - lo[i]) * scale[i] for i in range(n)]
    dg = [d[i] * scale[i] for i in range(n)]
    if all(v == 0 for v in dg):
        return []
    found = []
    for idx in itertools.product(*[range(r) for r in res]):
        t0, t1 = 0.0, ray_max
        for i in range(n):
            if dg[i] == 0:      # (a ray along a face between two cells walks the upper one)
                if not (idx[i] <= og[i] < idx[i] + 1 or idx[i] == res[i] - 1 and og[i] == res[i]):
                    t0, t1 = 1.0, 0.0
                continue
            a, b = (idx[i] - og[i]) / dg[i], (idx[i] + 1 - og[i]) / dg[i]
            t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
        if t0 < t1:
            length = (t1 - t0) * math.sqrt(sum(v * v for v in dg))
            found.append((t0, tuple(reversed(idx)), [og[i] + dg[i] * t0 - idx[i] for i in range(n)],
                          [og[i] + dg[i] * t1 - idx[i] for i in range(n)], length))
    return sorted(found, key=lambda c: c[0])


def record_cells(state, index, p_in, p_out, active):
    if active:
        state.append((tuple(int(v) for v in index), [float(v) for v in p_in], [float(v) for v in p_out]))
    return state, True


def scalar_walk(o, d, ray_max, res, lo, hi):
    A = S.Array3f if len(o) == 3 else S.Array2f
    U = S.Array3u if len(o) == 3 else S.Array2u
    return dda(A(o), A(d), ray_max, U(res), A(lo), A(hi), record_cells, [], True)


TINY = 1e-4     # cells shorter than this (in cell units) are round-off: float32 may see them or not


def assert_same_walk(ref, got):
    ref = [c for c in ref if c[4] > TINY]
    got = [c for c in got if math.dist(c[1], c[2]) > TINY]
    assert [c[1] for c in ref] == [c[0] for c in got]
    for r, g in zip(ref, got):
        assert np.allclose(r[2] + r[3], g[1] + g[2], rtol=1e-4, atol=1e-4), (r, g)


@pytest.mark.parametrize("s", [-1, 1])
@pytest.mark.parametrize("case", [
    dict(o=(0.5, 0.5, 0.5), d=(0.1, 0.2, 0.3), ray_max=1.0, res=(1, 1, 1)),            # inside one cell
    dict(o=(0, 0, -1.1), d=(0.1, 0.2, 0.3), res=(3, 4, 5), lo=(-1,) * 3, hi=(1,) * 3),  # from outside
    dict(o=(0, 0, -1.1), d=(0, 0.2, 0.3), res=(9, 8, 1), lo=(-1,) * 3, hi=(1,) * 3),    # a still axis
    dict(o=(1e-10, 3, 4), d=(0, 0.25, 0.3), res=(9, 8, 1), hi=(1, 8, 9)),              # on boundaries
    dict(o=(1e-10, 3.4, 4.5), d=(0, 0.25, 0.3), ray_max=3.5, res=(9, 8, 1), hi=(1, 8, 9)),
    dict(o=(-1, -1, -1), d=(1, 1, 1), res=(10, 10, 10), lo=(-1,) * 3, hi=(1,) * 3),    # through corners
])
def test_walk_visits_the_cells_the_segment_crosses_in_order(case, s):
    lo, hi = case.get("lo", (0,) * 3), case.get("hi", (1,) * 3)
    # s = -1: the same case mirrored through the grid's center
    o = case["o"] if s > 0 else tuple(lo[i] + hi[i] - case["o"][i] for i in range(3))
    d = tuple(s * v for v in case["d"])
    args = (o, d, case.get("ray_max", math.inf), case["res"], lo, hi)
    ref = cells_by_enumeration(*args)
    assert ref, "the case should cross cells"
    assert_same_walk(ref, scalar_walk(*args))


def test_a_ray_without_direction_or_missing_the_grid_visits_nothing():
    assert scalar_walk((0.5,) * 3, (0, 0, 0), math.inf, (3, 3, 3), (0,) * 3, (1,) * 3) == []
    assert scalar_walk((2, 0.5, 0.5), (0, 1, 0), math.inf, (3, 3, 3), (0,) * 3, (1,) * 3) == []
    assert scalar_walk((-1, 0.5, 0.5), (-1, 0, 0), math.inf, (3, 3, 3), (0,) * 3, (1,) * 3) == []


coordinate = st.floats(-2, 2, allow_nan=False).map(lambda v: round(v, 3))
direction = st.floats(-1, 1, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=40)
@given(o=st.tuples(coordinate, coordinate, coordinate), d=st.tuples(direction, direction, direction),
       res=st.tuples(*[st.integers(1, 5)] * 3), ray_max=st.sampled_from([math.inf, 0.5, 3.0]))
def test_walk_matches_enumeration_on_random_rays(o, d, res, ray_max):
    args = (o, d, ray_max, res, (-1, -1, -1), (1, 1, 1))
    assert_same_walk(cells_by_enumeration(*args), scalar_walk(*args))


def count_and_length(state, index, p_in, p_out, active):
    count, length = state
    delta = p_out - p_in
    return (count + 1, length + fj.sqrt(fj.dot(delta, delta))), True


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("width", [1, 7, 300])
def test_jit_lanes_walk_like_the_scalar_backend(mode, width):
    rng = np.random.default_rng(width)
    o = rng.uniform(-2, 2, (3, width)).round(3)
    d = rng.uniform(-1, 1, (3, width)).round(2)
    res, lo, hi = (4, 3, 5), (-1, -1, -1), (1, 1.5, 1)
    count, length = dda(J.Array3f(o), J.Array3f(d), J.Float(math.inf), J.Array3u(res), J.Array3f(lo),
                        J.Array3f(hi), count_and_length, (J.UInt32(0), J.Float(0)), J.Bool(True),
                        mode=mode)
    count, length = count.numpy(), length.numpy()
    for k in range(width):
        cells = [c for c in cells_by_enumeration(o[:, k], d[:, k], math.inf, res, lo, hi)]
        long_cells = [c for c in cells if c[4] > TINY]
        assert len(long_cells) <= count[k] <= len(long_cells) + 3 * len(long_cells), k
        assert length[k] == pytest.approx(sum(c[4] for c in cells), rel=1e-4, abs=1e-4)


def test_a_lane_stops_when_the_function_says_so_and_inactive_lanes_never_walk():
    def first_two(count, index, p_in, p_out, active):
        return count + 1, count + 1 < 2
    count = dda(J.Array3f(-1.5, [-0.9, -0.9, 0.2], 0), J.Array3f(1, 0, 0), J.Float(math.inf),
                J.Array3u(2, 2, 10), J.Array3f(-1), J.Array3f(1), first_two, J.UInt32(0),
                J.Bool(True, True, False))
    assert count.numpy().tolist() == [2, 2, 0]


def test_wrong_arguments_are_named():
    with pytest.raises(TypeError, match="'ray_o'"):
        dda(J.Float(0), J.Array3f(1), 1.0, J.Array3u(2), J.Array3f(0), J.Array3f(1), record_cells, [], True)
    with pytest.raises(TypeError, match="'grid_res'"):
        dda(J.Array3f(0), J.Array3f(1), 1.0, J.Array2u(2), J.Array3f(0), J.Array3f(1), record_cells, [], True)


# --- integrate ------------------------------------------------------------------------------------

def ramp_x():
    """Node values 0, 1, 2 along x on [0, 1]: the interpolant is 2x."""
    return J.TensorXf([0.0, 1, 2, 0, 1, 2], shape=(2, 3))


@pytest.mark.parametrize("o, d, t, expected", [
    # values recorded with Dr.Jit 1.5 (drjit.dda.integrate, LLVM backend)
    ((0, 0.5), (1, 0), 0.25, 0.0625), ((0, 0.5), (1, 0), 0.5, 0.25), ((0, 0.5), (1, 0), 1.0, 1.0),
    ((0.5, 0.5), (0, 1), 1.0, 0.5), ((0.1, 0.5), (1, 0), 1.0, 0.99), ((0.2, 0.5), (1, 0), 1.0, 0.96),
])
def test_integrate_is_the_arc_length_integral_inside_the_grid(o, d, t, expected):
    got = integrate(J.Array2f(*o), J.Array2f(*d), J.Float(t), J.Array2f(0), J.Array2f(1), ramp_x())
    assert got.numpy()[0] == pytest.approx(expected, rel=1e-6, abs=1e-7)


def test_integrate_of_a_constant_is_the_length_inside_the_grid():
    ones = J.TensorXf([1.0] * 4, shape=(2, 2))
    got = integrate(J.Array2f([-1, -2, 0], 0), J.Array2f([2, 4, 2], 0), J.Float(1), J.Array2f(-1),
                    J.Array2f(1), ones)
    assert got.numpy().tolist() == pytest.approx([2, 2, 1])


def random_problem(shape, width, seed):
    n = len(shape)
    rng = np.random.default_rng(seed)
    A = J.Array3f if n == 3 else J.Array2f
    vol = J.TensorXf(rng.uniform(-1, 1, shape).astype(np.float32))
    lo, hi = A(0), A(*range(1, n + 1))
    p0 = rng.uniform(0, 1, (n, width)) * np.arange(1, n + 1)[:, None]
    p1 = rng.uniform(0, 1, (n, width)) * np.arange(1, n + 1)[:, None]
    return A(p0), A(p1 - p0), lo, hi, vol


@settings(max_examples=8)
@given(shape=st.sampled_from([(3, 3), (3, 2), (2, 4), (3, 3, 3), (3, 2, 5), (2, 2, 2)]),
       width=st.sampled_from([1, 7, 100]), seed=st.integers(0, 2 ** 16),
       mode=st.sampled_from([None, "evaluated"]))
def test_integrate_matches_dense_sampling(shape, width, seed, mode):
    o, d, lo, hi, vol = random_problem(shape, width, seed)
    exact = integrate(o, d, J.Float(1), lo, hi, vol, mode=mode).numpy()
    sampled = integrate_ref(o, d, J.Float(1), lo, hi, vol, 4096).numpy()
    assert np.allclose(exact, sampled, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape", [(3, 3), (3, 2, 5)])
def test_integrate_derivatives_are_those_of_the_reference_and_adjoint(shape):
    o, d, lo, hi, vol = random_problem(shape, 16, 5)
    tangent = J.Float(np.random.default_rng(1).uniform(-1, 1, math.prod(shape)).astype(np.float32))
    weights = J.Float(np.random.default_rng(2).uniform(-1, 1, 16).astype(np.float32))
    results = {}
    for name, run in (("exact", lambda: integrate(o, d, J.Float(1), lo, hi, vol)),
                      ("sampled", lambda: integrate_ref(o, d, J.Float(1), lo, hi, vol, 2048))):
        fj.enable_grad(vol)
        vol.grad = tangent
        fwd = fj.forward_to(run())
        fj.disable_grad(vol)
        fj.enable_grad(vol)
        out = run()
        out.grad = weights
        rev = fj.backward_to(vol)
        fj.disable_grad(vol)
        results[name] = fwd.numpy(), rev.numpy().ravel()
    (fwd, rev), (fwd_ref, rev_ref) = results["exact"], results["sampled"]
    assert np.allclose(fwd, fwd_ref, rtol=1e-3, atol=1e-3)
    assert np.allclose(rev, rev_ref, rtol=1e-3, atol=1e-3)
    # <weights, J tangent> == <J^T weights, tangent>
    assert np.dot(weights.numpy(), fwd) == pytest.approx(np.dot(rev, tangent.numpy()), rel=1e-4)


def test_integrate_frozen_equals_plain_at_new_widths():
    frozen = fj.freeze(lambda o, d, vol: integrate(o, d, J.Float(1), J.Array2f(0), J.Array2f(1, 2), vol))
    for width in (7, 1000, 33):
        o, d, _, _, vol = random_problem((3, 4), width, width)
        plain = integrate(o, d, J.Float(1), J.Array2f(0), J.Array2f(1, 2), vol)
        assert np.array_equal(frozen(o, d, vol).numpy(), plain.numpy())
    assert frozen.n_recordings == 1


def test_integrate_refuses_what_it_cannot_do():
    o, d = J.Array2f(0.1, 0.5), J.Array2f(1, 0)
    with pytest.raises(ValueError, match="at least 2"):
        integrate(o, d, J.Float(1), J.Array2f(0), J.Array2f(1), J.TensorXf([1.0, 2.0], shape=(1, 2)))
    with pytest.raises(ValueError, match="2 dimensions"):
        integrate(o, d, J.Float(1), J.Array2f(0), J.Array2f(1), J.TensorXf([1.0] * 8, shape=(2, 2, 2)))
    with pytest.raises(TypeError, match="'vol'"):
        integrate(o, d, J.Float(1), J.Array2f(0), J.Array2f(1), J.Float(1, 2, 3, 4))
    fj.enable_grad(o)
    with pytest.raises(NotImplementedError, match="'ray_o'"):
        integrate(o, d, J.Float(1), J.Array2f(0), J.Array2f(1), ramp_x())
    with pytest.raises(ValueError, match="n_samples"):
        integrate_ref(J.Array2f(0.1, 0.5), d, J.Float(1), J.Array2f(0), J.Array2f(1), ramp_x(), 1)
