"""``x.index`` under ``JitFlag.ValueNumbering`` (r16): equal literals and repeated side-effect-free
expressions that still live unevaluated share one number, as in Dr.Jit 1.5 (its test_arithmetic
test08/09, test_init test26).  Differential against Dr.Jit: ``DRJIT`` records, for each pair of
expressions, whether Dr.Jit 1.5.0 gave them one ``.index`` (run side by side, r16).  A
hypothesis test builds one random lane-wise expression twice from the same leaves (one number)
and once with another constant (another number, unless the constant folds away)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, Int, UInt32


def _ab():
    return Float(1, 2, 3), Float(4, 5, 6)


def _chain():
    a, b = _ab()
    c1, c2 = a + b, a + b
    return c1 * 2, c2 * 2


def _after_eval():
    a, b = _ab()
    c1 = a + b
    fj.eval(c1)
    return c1, a + b


def _folded():
    return Int(4) + Int(5), Int(9)


# (pair of expressions, Dr.Jit 1.5.0's `x.index == y.index`)
DRJIT = {
    "literal": (lambda: (UInt32(3), UInt32(3)), True),
    "literal 0.0 / -0.0": (lambda: (Float(0.0), Float(-0.0)), False),
    "literal of two types": (lambda: (Float(1), Float64(1)), False),
    "full, one value": (lambda: (fj.full(Float, 2, 10), fj.full(Float, 2, 10)), True),
    "full, two values": (lambda: (fj.full(Float, 2, 10), fj.full(Float, 2, 11)), False),
    "a + b twice": (lambda: (lambda a, b: (a + b, a + b))(*_ab()), True),
    "a + b, b + a": (lambda: (lambda a, b: (a + b, b + a))(*_ab()), False),
    "through equal operands": (_chain, True),
    "cast": (lambda: (lambda a, b: (Int(a), Int(a)))(*_ab()), True),
    "sin": (lambda: (lambda a, b: (fj.sin(a), fj.sin(a)))(*_ab()), True),
    "select": (lambda: (lambda a, b: (fj.select(a > 1, a, b), fj.select(a > 1, a, b)))(*_ab()), True),
    "fma": (lambda: (lambda a, b: (fj.fma(a, b, a), fj.fma(a, b, a)))(*_ab()), True),
    "a + 1, a + 1.0": (lambda: (lambda a, b: (a + 1, a + 1.0))(*_ab()), True),
    "arange": (lambda: (fj.arange(UInt32, 5), fj.arange(UInt32, 5)), True),
    "zeros": (lambda: (fj.zeros(Float, 3), fj.zeros(Float, 3)), True),
    "evaluated in between": (_after_eval, False),
    "data": (lambda: (Float(1, 2), Float(1, 2)), False),
    "opaque": (lambda: (fj.opaque(Float, 1), fj.opaque(Float, 1)), False),
    "gather, new indices": (lambda: (lambda a, b: (fj.gather(Float, a, UInt32(0, 1)),
                                                   fj.gather(Float, a, UInt32(0, 1))))(*_ab()), False),
    "folded literal": (_folded, True),
}


@pytest.mark.parametrize("name", sorted(DRJIT))
def test_index_equality_follows_drjit(name):
    make, expected = DRJIT[name]
    x, y = make()
    assert (x.index == y.index) is expected
    assert x.index == x.index and y.index == y.index        # stable on the next read


@pytest.mark.parametrize("name", ["literal", "a + b twice", "through equal operands", "folded literal"])
def test_flag_cleared_keeps_numbers_apart(name):
    with fj.scoped_set_flag(fj.JitFlag.ValueNumbering, False):
        x, y = DRJIT[name][0]()
        assert x.index != y.index


def test_number_survives_evaluation_and_lasts_while_one_holder_lives():
    a, b = _ab()
    x, y = a + b, a + b
    i = x.index
    assert y.index == i
    fj.eval(x)                          # evaluated: keeps its number, a new a + b gets another
    assert x.index == i
    assert (a + b).index != i
    u, v = UInt32(7), UInt32(7)
    j = u.index
    assert v.index == j
    del u                               # the first holder goes, the variable lives on in v
    assert UInt32(7).index == j


_UNARY = [lambda x: x * 3, lambda x: x + 1, fj.sqrt, fj.abs, lambda x: -x, lambda x: fj.maximum(x, 2)]
_BINARY = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: fj.minimum(x, y), lambda x, y: x - y]


def _build(steps, leaves, constant):
    vals = list(leaves)
    for kind, i, j, f in steps:
        if kind == 0:
            vals.append(_UNARY[f % len(_UNARY)](vals[i % len(vals)]))
        else:
            vals.append(_BINARY[f % len(_BINARY)](vals[i % len(vals)], vals[j % len(vals)]))
    return vals[-1] + constant


@settings(max_examples=20)
@given(steps=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 50), st.integers(0, 50),
                                st.integers(0, 50)), min_size=1, max_size=8),
       n=st.integers(1, 5), c=st.integers(1, 4))
def test_one_expression_built_twice_has_one_number(steps, n, c):
    leaves = [Float(list(range(k, k + n))) for k in range(3)]
    x, y = _build(steps, leaves, float(c)), _build(steps, leaves, float(c))
    z = _build(steps, leaves, c + 0.5)
    assert x.index == y.index
    assert z.index != x.index
    assert np.array_equal(x.numpy(), y.numpy(), equal_nan=True)     # (sqrt of a negative: NaN)
