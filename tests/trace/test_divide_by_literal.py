"""A float division by a literal multiplies by the literal's reciprocal (r16), as Dr.Jit 1.5's core
does (``jitc_var_div``: ``x / c -> x * rcp(c)`` for float32/float64 literals while
``JitFlag.ConstantPropagation`` is set).  The two differ in the last bit for about half of all ``x``
(``x / 7.0``): side by side, Dr.Jit 1.5.0 matched ``x * float32(1 / 7)`` on 4000 of 4000 lanes and
``x / 7`` on 1820.  Checked: recorded Dr.Jit outputs; NumPy with the rule, on both backends, float32
and float64, flat arrays, tensors and static arrays; Float16, a non-literal divisor and a cleared
flag keep the division; a frozen function's replay gives the plain call's bits where the divisor is
a width or a Python number (the recording has no literal there)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Float, Float16, Float64, TensorXf

# (x, Dr.Jit 1.5.0's Float(x) / 7.0): lanes where the division would round the other way
DRJIT_F32_DIV7 = [(18.905338287353516, 2.7007627487182617), (-52.274845123291016, -7.467835426330566),
                  (-244.14674377441406, -34.878108978271484), (179.97073364257812, 25.710105895996094)]
DRJIT_F64_DIV7 = [("0x1.4cbbe46666667p+4", "0x1.7c4472be2be2cp+1"), ("-0x1.6b7ef4999999ap+5", "-0x1.9f6c8541d41d4p+2"),
                  ("-0x1.0c8fb9199999ap+8", "-0x1.32ed65d41d41dp+5")]


def test_recorded_drjit_values():
    x = np.array([v for v, _ in DRJIT_F32_DIV7], np.float32)
    got = (Float(x) / 7.0).numpy()
    assert got.tolist() == [w for _, w in DRJIT_F32_DIV7]
    assert not np.array_equal(got, x / np.float32(7))           # (these lanes do differ)
    x64 = np.array([float.fromhex(v) for v, _ in DRJIT_F64_DIV7])
    assert [v.hex() for v in (Float64(x64) / 7.0).numpy().tolist()] == [w for _, w in DRJIT_F64_DIV7]


def _rule(x, c, dtype):
    with np.errstate(all="ignore"):
        c = np.float64(np.asarray(c, dtype))        # (the literal: c rounded to the type first)
        return x * (1.0 / c).astype(dtype)


def _same(a, b):
    return np.array_equal(a, b, equal_nan=True)


finite = dict(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=20)
@given(xs=st.lists(st.floats(-1e6, 1e6, **finite), min_size=1, max_size=40),
       c=st.one_of(st.floats(-1e3, 1e3, **finite), st.sampled_from([0.0, -0.0, 3.0, 1e-40, 1e38])))
def test_flat_tensor_and_static_arrays_follow_the_rule(xs, c):
    x = np.array(xs, np.float32)
    want = _rule(x, c, np.float32)
    assert _same((Float(x) / c).numpy(), want)
    assert _same((Float(x) / Float(c)).numpy(), want)                # a literal array divisor too
    assert _same((TensorXf(x) / c).numpy(), want)
    v = Array3f(Float(x), Float(x), Float(x)) / (c, 2.0, c)          # literal components
    assert _same(v[0].numpy(), want) and _same(v[2].numpy(), want)
    x64 = x.astype(np.float64) * 1.1
    assert _same((Float64(x64) / c).numpy(), _rule(x64, c, np.float64))


@settings(max_examples=10)
@given(xs=st.lists(st.floats(-1e4, 1e4, **finite), min_size=1, max_size=20),
       c=st.floats(0.5, 100, **finite))
def test_the_division_stays_where_dr_jit_keeps_it(xs, c):
    x = np.array(xs, np.float32)
    y = np.full_like(x, c)
    assert _same((Float(x) / Float(y)).numpy(), x / y)              # divisor in memory
    assert _same((c / Float(x)).numpy(), np.float32(c) / x)           # literal dividend
    assert _same((Float(c) / 7.0).numpy(), np.float32(np.float32(c) / np.float32(7)).reshape(1))  # folded
    h = x.astype(np.float16)
    assert _same((Float16(h) / c).numpy(), (h.astype(np.float32) / np.float32(np.float16(c))).astype(np.float16))
    with fj.scoped_set_flag(fj.JitFlag.ConstantPropagation, False):
        assert _same((Float(x) / c).numpy(), x / np.float32(c))


FROZEN = {
    "python number": lambda x, c: x / c,
    "literal array": lambda x, c: x / Float(c),
    "constant": lambda x, c: x / 7.0,
    "width": lambda x, c: x / fj.width(x),
    "width times number": lambda x, c: x / (Float(c) * fj.width(x)),
    "folded from a number": lambda x, c: x / (Float(c) * 2 + 1),
    "number over number": lambda x, c: x + Float(fj.width(x)) / 3,
    "opaque": lambda x, c: x / fj.opaque(Float, c),
    "mean": lambda x, c: x - fj.mean(x),
}


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_frozen_replays_give_the_plain_call_bits(name):
    f = FROZEN[name]
    frozen = fj.freeze(f)
    rng = np.random.default_rng(len(name))
    for n, c in [(40, 7.0), (40, 3.0), (25, 7.0), (33, 11.0), (40, 7.0)]:
        x = Float((rng.standard_normal(n) * 100).astype(np.float32))
        assert _same(frozen(x, c).numpy(), f(x, c).numpy()), (n, c)


# -- a static array divided by an operand of lower depth: one reciprocal (array/vector.py) ------

def _vec(cls, comps):
    return cls(*[Float(c) for c in comps])


@settings(max_examples=10)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_static_arrays_divide_by_a_lower_depth_array_through_its_reciprocal(n, seed):
    from frostjit.llvm import Array2f, Array22f, Complex2f, Matrix2f, Quaternion4f
    rng = np.random.default_rng(seed)
    xs = [(rng.standard_normal(n) * 100).astype(np.float32) for _ in range(4)]
    s = (rng.standard_normal(n) * 10).astype(np.float32)
    with np.errstate(all="ignore"):
        r = np.float32(1) / s
    for cls, k in ((Array3f, 3), (Complex2f, 2), (Quaternion4f, 4)):
        v = _vec(cls, xs[:k]) / Float(s)
        for i in range(k):
            assert _same(v[i].numpy(), xs[i] * r), (cls.__name__, i)
    m = Matrix2f(*[Float(x) for x in xs]) / Float(s)
    assert _same(m[1][0].numpy(), xs[2] * r)
    w = Array22f(_vec(Array2f, xs[:2]), _vec(Array2f, xs[2:])) / _vec(Array2f, [s, xs[0]])
    assert _same(w[1][0].numpy(), xs[2] * r)
    v = _vec(Array3f, xs[:3])
    v /= Float(s)                                   # in place too
    assert _same(v[1].numpy(), xs[1] * r)
    with fj.scoped_set_flag(fj.JitFlag.ConstantPropagation, False):
        c = _vec(Complex2f, xs[:2]) / 7.0           # a complex number: the reciprocal of a number too
        assert _same(c[1].numpy(), xs[1] * np.float32(1 / 7))
        a = _vec(Array3f, xs[:3]) / 7.0             # a plain static array: divides
        assert _same(a[1].numpy(), xs[1] / np.float32(7))
    q = _vec(Array3f, xs[:3]) / _vec(Array3f, xs[1:4])  # same depth: divides
    assert _same(q[0].numpy(), xs[0] / xs[1])
