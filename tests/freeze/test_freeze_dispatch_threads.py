"""Frozen functions and multiple dispatch (invalidation); concurrent calls from threads."""
import threading

import numpy as np

import frostjit as fj
from frostjit.dispatch import Dispatcher
from frostjit.llvm import Float

from freeze_helpers import F, same


def test_new_method_invalidates_exactly_dependent_recordings():
    d = Dispatcher()

    @d
    def act(x: object):
        return x * 2

    @d
    def other(x: object):
        return x + 100

    uses_act = fj.freeze(lambda x: act(x) + 1)
    uses_other = fj.freeze(lambda x: other(x))
    plain = fj.freeze(lambda x: x - 1)
    for fz in (uses_act, uses_other, plain):
        fz(F(1, 2))
        fz(F(1, 2, 3))
    assert same(uses_act(F(1, 2)), F(3, 5))

    @d
    def act(x: Float):  # noqa: F811 (a more specific method)
        return x * 3

    assert same(uses_act(F(1, 2)), F(4, 7))
    assert uses_act.n_recordings == 2
    uses_other(F(5, 6))
    plain(F(5, 6))
    assert uses_other.n_recordings == 1 and plain.n_recordings == 1
    uses_act(F(1, 2, 3, 4))
    assert uses_act.n_recordings == 2


def test_two_threads_call_the_same_frozen_function():
    fz = fj.freeze(lambda x, y: fj.sqrt(x * x + y) * 0.5)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for k in range(30):
                n = int(rng.integers(1, 40))
                xs = rng.random(n, dtype=np.float32)
                x, y = Float(xs), Float(xs + 1)
                got = fz(x, y).numpy()
                ref = np.sqrt(xs * xs + (xs + 1)) * 0.5
                if not np.allclose(got, ref, rtol=1e-5):
                    errors.append((seed, k))
        except Exception as e:  # pragma: no cover
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert fz.n_recordings <= 2
