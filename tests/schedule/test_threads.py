"""Tracing and evaluating from several Python threads at once gives correct results."""
import threading

import numpy as np

import frostjit as fj
from frostjit.llvm import Float, UInt32


def test_concurrent_trace_and_eval():
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(30):
                a = rng.standard_normal(rng.integers(1, 3000)).astype(np.float32)
                x = Float(a)
                y = fj.fma(x, 2.0, 1.0) * fj.cos(x * 0.0)   # cos(0) = 1
                t = fj.zeros(Float, len(a))
                fj.scatter(t, y, fj.arange(UInt32, len(a)))
                np.testing.assert_array_equal(t.numpy(), (a.astype(np.float64) * 2 + 1).astype(np.float32))
                s = fj.sum(Float(np.ones(len(a), np.float32)))
                assert s[0] == len(a)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
