"""Symbolic ``fj.switch``: every target traced over all lanes with its lanes' mask, results selected
per lane; compared with NumPy at several widths, inside loops, with masks.  (Not against evaluated
mode here: its consistency check compares the targets' compressed results, of different lane
counts, and raises when two targets get different numbers of lanes; reported to its owner.)"""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Bool, Float, UInt32

TARGETS = [lambda x, y: x * y, lambda x, y: x + 2.0 * y, lambda x, y: fj.minimum(x, y) - 1.0]


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
@pytest.mark.parametrize("masked", [False, True])
def test_symbolic_switch_matches_numpy(n, masked):
    r = np.random.default_rng(n)
    idx = r.integers(0, 4, n).astype(np.uint32)          # 3: out of range, gives zeros
    x, y = r.uniform(-2, 2, n).astype(np.float32), r.uniform(-2, 2, n).astype(np.float32)
    m = r.random(n) < 0.7 if masked else np.ones(n, bool)
    args = (Float(x), Float(y)) + ((Bool(m),) if masked else ())
    targets = [(lambda f: (lambda x, y, *mask: f(x, y)))(f) for f in TARGETS]
    a = fj.switch(UInt32(idx), targets, *args, mode="symbolic")
    ref = np.select([(idx == 0) & m, (idx == 1) & m, (idx == 2) & m],
                    [x * y, x + np.float32(2) * y, np.minimum(x, y) - np.float32(1)], np.float32(0))
    np.testing.assert_array_equal(a.numpy(), ref)


def test_symbolic_switch_masks_each_targets_scatters():
    t = fj.zeros(Float, 4)

    def a(i):
        fj.scatter_add(t, 1.0, i)
        return i

    def b(i):
        fj.scatter_add(t, 5.0, i)
        return i * 2
    r = fj.switch(UInt32(0, 1, 7, 1), [a, b], UInt32(0, 1, 2, 3), mode="symbolic")
    assert list(r.numpy()) == [0, 2, 0, 6]
    assert list(t.numpy()) == [1.0, 5.0, 0.0, 5.0]


def test_symbolic_switch_inside_a_symbolic_loop():
    def body(i, x):
        return i + 1, fj.switch(i % 2, [lambda v: v + 1.0, lambda v: v * 3.0], x, mode="symbolic")
    i, x = fj.while_loop((UInt32(0), Float(0, 1, 2)), lambda i, x: i < UInt32(1, 2, 3), body, mode="symbolic")
    assert list(x.numpy()) == [1.0, 6.0, 10.0]


def test_symbolic_switch_results_must_agree():
    with pytest.raises(fj.control.StateTypeError):
        fj.switch(UInt32(0, 1), [lambda x: x, lambda x: Float(x)], UInt32(1, 2), mode="symbolic")
