"""The fast path of complex ``+``, ``-`` and ``*`` (two operands of one complex class): same
results as the general formulas, parts owned by the result (never an operand's handle), and
the general path for everything else (mixed classes, real operands, the scalar backend)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
import frostjit.scalar as S

WIDTHS = [1, 7, 1000, 100003]


def _random_complex(cls, elem, n, seed):
    rng = np.random.default_rng(seed)
    return cls(elem(rng.standard_normal(n).astype(np.float32)), elem(rng.standard_normal(n).astype(np.float32)))


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_a_result_owns_its_parts(op):
    """An in-place operation on a part of the result leaves the operands alone (and the other way)."""
    a = T.Complex2f(T.Float([1.0, 2.0]), T.Float([3.0, 4.0]))
    b = T.Complex2f(T.Float([0.5, -1.0]), T.Float([2.0, 0.25]))
    f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    r = f(a, b)
    want = f(a.numpy(), b.numpy())
    r.real += 100.0
    r.imag *= 2.0
    assert a.numpy().tolist() == [1 + 3j, 2 + 4j] and b.numpy().tolist() == [0.5 + 2j, -1 + 0.25j]
    np.testing.assert_allclose(r.numpy(), (want.real + 100) + 2j * want.imag, rtol=1e-6)
    a.real += 1.0
    np.testing.assert_allclose(r.numpy(), (want.real + 100) + 2j * want.imag, rtol=1e-6)
    for x in (r, a, b):
        assert all(type(p) is T.Float for p in x._c)


def test_mixed_classes_and_real_operands_take_the_general_path():
    a = T.Complex2f(1.0, 2.0)
    b = T.Complex2f64(3.0, -1.0)
    assert type(a * b) is T.Complex2f64 and type(b - a) is T.Complex2f64
    assert (a * b).numpy().tolist() == [(1 + 2j) * (3 - 1j)]
    g = AD.Complex2f(0.5, 0.25)
    assert type(a + g) is AD.Complex2f and type(g * a) is AD.Complex2f
    assert (a * 2.0).numpy().tolist() == [2 + 4j] and (a - T.Float(1.0)).numpy().tolist() == [2j]
    s = S.Complex2f(1.0, 2.0)
    assert complex((s * s).real, (s * s).imag) == (1 + 2j) ** 2 and type(s + s) is S.Complex2f


def test_gradients_flow_through_the_fast_path():
    z = AD.Complex2f64(AD.Float64([1.0, 2.0]), AD.Float64([0.5, -1.0]))
    w = AD.Complex2f64(AD.Float64([3.0, -0.5]), AD.Float64([2.0, 1.0]))
    fj.enable_grad(z.real, z.imag)
    r = z * w + z - w
    loss = fj.sum(r.real + 2 * r.imag)
    fj.backward(loss)
    # d/dzr (re(zw) + 2 im(zw) + zr + 2 zi) = wr + 2 wi + 1; d/dzi = -wi + 2 wr + 2
    np.testing.assert_allclose(fj.grad(z.real).numpy(), [3.0 + 4.0 + 1.0, -0.5 + 2.0 + 1.0])
    np.testing.assert_allclose(fj.grad(z.imag).numpy(), [-2.0 + 6.0 + 2.0, -1.0 - 1.0 + 2.0])


@settings(max_examples=10, deadline=None)
@given(n=st.sampled_from(WIDTHS), k=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_complex_chain_matches_numpy_plain_and_frozen(n, k, seed):
    """bench_types' chain ``z = z * c + z0``: plain, frozen (recording and a replay) and NumPy's complex64."""
    z0 = _random_complex(T.Complex2f, T.Float, n, seed)
    c = T.Complex2f(0.3, -0.45)

    def chain(z0, c):
        w = z0
        for _ in range(k):
            w = w * c - z0 * 0.5 + z0
        return w

    want = chain(z0.numpy().astype(np.complex128), complex(0.3, -0.45))
    plain = chain(z0, c).numpy()
    np.testing.assert_allclose(plain, want, rtol=1e-4, atol=1e-4)
    frozen = fj.freeze(chain)
    for _ in range(2):
        np.testing.assert_array_equal(frozen(z0, c).numpy(), plain)
