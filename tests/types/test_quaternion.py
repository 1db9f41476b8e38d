"""Quaternions: the Hamilton product and functions against a NumPy reference, rotations
(matrices, Euler angles, slerp) against their definitions, AD against finite differences
(float64), frozen == plain, printing."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
from type_helpers import WIDTHS, assert_same, check_gradient


def _hamilton(p, q):
    """NumPy reference: (x, y, z, w) quaternions, shape (4, n)."""
    x1, y1, z1, w1 = p
    x2, y2, z2, w2 = q
    return np.array([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2])


def _quat(a: np.ndarray):
    return T.Quaternion4f64(*[T.Float64(c.copy()) for c in a])


def _unit(rng, n):
    q = rng.standard_normal((4, n))
    return q / np.linalg.norm(q, axis=0)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 7, 33]))
def test_quaternion_algebra_matches_numpy(seed, n):
    rng = np.random.default_rng(seed)
    p, q = rng.standard_normal((4, n)), rng.standard_normal((4, n))
    a, b = _quat(p), _quat(q)
    np.testing.assert_allclose((a * b).numpy(), _hamilton(p, q), rtol=1e-12, atol=1e-12)
    inv = np.array([-q[0], -q[1], -q[2], q[3]]) / (q * q).sum(axis=0)
    np.testing.assert_allclose(fj.rcp(b).numpy(), inv, rtol=1e-10)
    np.testing.assert_allclose((a / b).numpy(), _hamilton(p, inv), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fj.abs(a).numpy(), np.linalg.norm(p, axis=0), rtol=1e-12)
    # exp(log(q)) == q, sqrt(q)^2 == q, q ** 3 == q q q
    np.testing.assert_allclose(fj.exp(fj.log(a)).numpy(), p, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose((fj.sqrt(a) * fj.sqrt(a)).numpy(), p, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose((a ** 3).numpy(), _hamilton(_hamilton(p, p), p), rtol=1e-10, atol=1e-10)


def test_rotations_are_consistent():
    rng = np.random.default_rng(5)
    q = _quat(_unit(rng, 100))
    v = T.Array3f64(*[T.Float64(rng.standard_normal(100)) for _ in range(3)])
    r = fj.quat_to_matrix(T.Matrix3f64, q)
    R = np.moveaxis(r.numpy(), -1, 0)
    np.testing.assert_allclose(R @ np.swapaxes(R, 1, 2), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1, atol=1e-12)
    np.testing.assert_allclose(fj.quat_apply(q, v).numpy(), (r @ v).numpy(), atol=1e-12)
    # q v q* with v as a pure quaternion
    vq = T.Quaternion4f64(v[0], v[1], v[2], 0)
    np.testing.assert_allclose((q * vq * fj.conj(q)).numpy()[:3], fj.quat_apply(q, v).numpy(), atol=1e-12)
    back = fj.matrix_to_quat(r)
    sign = np.sign((back.numpy() * q.numpy()).sum(axis=0))        # q and -q are one rotation
    np.testing.assert_allclose(back.numpy() * sign, q.numpy(), atol=1e-9)
    np.testing.assert_allclose(fj.matrix_to_quat(fj.quat_to_matrix(T.Matrix4f64, q)).numpy() * sign, q.numpy(),
                               atol=1e-9)
    angles = T.Array3f64(T.Float64(rng.uniform(-3, 3, 100)), T.Float64(rng.uniform(-1.5, 1.5, 100)),
                         T.Float64(rng.uniform(-3, 3, 100)))
    np.testing.assert_allclose(fj.quat_to_euler(fj.euler_to_quat(angles)).numpy(), angles.numpy(), atol=1e-9)
    axis = fj.normalize(T.Array3f64(1, 2, 3))
    rot = fj.rotate(T.Quaternion4f64, axis, 0.7)
    np.testing.assert_allclose(fj.quat_apply(rot, axis).numpy(), axis.numpy(), atol=1e-12)    # the axis stays


def test_slerp_interpolates_along_the_shorter_arc():
    rng = np.random.default_rng(6)
    a, b = _quat(_unit(rng, 50)), _quat(_unit(rng, 50))
    np.testing.assert_allclose(fj.slerp(a, b, 0.0).numpy(), a.numpy(), atol=1e-12)
    end = fj.slerp(a, b, 1.0).numpy()
    np.testing.assert_allclose(np.abs((end * b.numpy()).sum(axis=0)), 1, atol=1e-9)      # +-b
    mid = fj.slerp(a, b, 0.5)
    np.testing.assert_allclose(fj.norm(mid).numpy(), 1, atol=1e-12)
    # equal angles to both ends
    da = np.abs((mid.numpy() * a.numpy()).sum(axis=0))
    db = np.abs((mid.numpy() * b.numpy()).sum(axis=0))
    np.testing.assert_allclose(da, db, atol=1e-9)


def test_printing_and_components_follow_drjit():
    assert repr(T.Quaternion4f(1, 2, 3, 4)) == "[1i+2j+3k+4]"
    assert repr(T.Quaternion4f(0, 0, 0.5, -1)) == "[0.5k-1]" and repr(T.Quaternion4f(5)) == "[5]"
    q = T.Quaternion4f(1, 2, 3, 4)
    assert (q.x[0], q.w[0]) == (1, 4) and fj.real(q)[0] == 4 and type(fj.imag(q)) is T.Array3f
    with pytest.raises(TypeError, match="inequality"):
        q < q


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_quaternion_function_equals_plain_calls(width):
    def f(q, r, v):
        return q * r, fj.quat_apply(fj.normalize(q), v), fj.slerp(fj.normalize(q), fj.normalize(r), 0.3), \
            fj.quat_to_euler(fj.normalize(r))

    frozen = fj.freeze(f)
    rng = np.random.default_rng(width)
    for n in (width, width + 4):
        q = T.Quaternion4f(*[T.Float(c) for c in rng.standard_normal((4, n))])
        r = T.Quaternion4f(*[T.Float(c) for c in rng.standard_normal((4, n))])
        v = T.Array3f(*[T.Float(c) for c in rng.standard_normal((3, n))])
        got, want = frozen(q, r, v), f(q, r, v)
        assert [type(x) for x in got] == [type(x) for x in want]
        assert_same(got, want)


def test_quaternion_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    q = AD.Quaternion4f64(*[AD.Float64(c) for c in rng.uniform(0.2, 1, (4, 3))])
    r = AD.Quaternion4f64(*[AD.Float64(c) for c in rng.uniform(0.2, 1, (4, 3))])
    v = AD.Array3f64(*[AD.Float64(c) for c in rng.standard_normal((3, 3))])
    check_gradient(lambda a, b: a * b, (q, r))
    check_gradient(lambda a, b: a / b, (q, r), rtol=1e-5)
    check_gradient(lambda a: fj.exp(a), (q,), rtol=1e-5)
    check_gradient(lambda a: fj.log(a), (q,), rtol=1e-5)
    check_gradient(lambda a, x: fj.quat_apply(fj.normalize(a), x), (q, v), rtol=1e-5)
    check_gradient(lambda a: fj.quat_to_matrix(AD.Matrix3f64, fj.normalize(a)), (q,), rtol=1e-5)


def test_real_base_to_a_quaternion_power_and_real_quaternions_on_the_scalar_backend():
    # 2 ** q raised AttributeError ('int' object has no attribute '_c'); it is exp(q log 2)
    # (Dr.Jit). log/exp/sqrt of a real scalar quaternion raised ZeroDivisionError.
    from frostjit import scalar
    q = T.Quaternion4f(1, T.Float(2, -0.5), 3, T.Float(4, 0.1))
    for base in (2, 2.5, T.Float(1.5, 2)):
        got = np.asarray(base ** q)
        log_base = np.log(np.asarray(base, np.float64) if not isinstance(base, T.Float) else base.numpy())
        want = np.asarray(fj.exp(q * T.Float(np.float32(log_base) if np.ndim(log_base) else float(log_base))))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    sq = scalar.Quaternion4f(1, 2, 3, 4)
    np.testing.assert_allclose(np.asarray(2 ** sq), np.asarray(fj.exp(sq * float(np.log(2.0)))), rtol=1e-6)
    assert np.asarray(fj.log(scalar.Quaternion4f(0, 0, 0, 2))).tolist() == pytest.approx([0, 0, 0, np.log(2)])
    assert np.asarray(fj.sqrt(scalar.Quaternion4f(0, 0, 0, 4))).tolist() == pytest.approx([0, 0, 0, 2])
    assert np.asarray(fj.exp(scalar.Quaternion4f(0, 0, 0, 1))).tolist() == pytest.approx([0, 0, 0, np.e])


@pytest.mark.parametrize("mod", ["llvm", "scalar"])
def test_log_and_sqrt_of_a_negative_real_quaternion_are_nan_as_in_drjit(mod):
    # (session r16: log(-1) was 0 and sqrt(-4) was 2, so exp(log(q)) was |q|; a negative real
    # quaternion has no principal axis and Dr.Jit 1.5 gives NaN imaginary parts there.  log(0)
    # raised ZeroDivisionError on the scalar backend; it is -inf, as Dr.Jit's real part.)
    Q = getattr(fj, mod).Quaternion4f
    lg = np.asarray(fj.log(Q(0, 0, 0, -1))).ravel()
    assert np.isnan(lg[:3]).all() and lg[3] == 0
    assert np.isnan(np.asarray(fj.sqrt(Q(0, 0, 0, -4))).ravel()[:3]).all()
    assert np.asarray(fj.log(Q(0, 0, 0, 0))).ravel()[3] == -np.inf
    # positive real quaternions keep the limit (Dr.Jit: NaN imaginary parts; docs/types.md)
    np.testing.assert_allclose(np.asarray(fj.log(Q(0, 0, 0, 2))).ravel(), [0, 0, 0, np.log(2)], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fj.sqrt(Q(0, 0, 0, 4))).ravel(), [0, 0, 0, 2], rtol=1e-6)
    # a lane with an imaginary part beside it is unchanged
    q = T.Quaternion4f(T.Float(0, 1), 0, 0, T.Float(-1, -1)) if mod == "llvm" else Q(1, 0, 0, -1)
    got = np.asarray(fj.log(q)).reshape(4, -1)[:, -1]
    np.testing.assert_allclose(got, [0.75 * np.pi, 0, 0, 0.5 * np.log(2)], rtol=1e-6)
