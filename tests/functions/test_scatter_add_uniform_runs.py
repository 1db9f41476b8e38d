"""``scatter_add`` whose lanes come in runs of one index, against NumPy, on one thread and several.

A chunk of lanes that all hit one address adds their sum once (codegen/memory.py:
``_uniform_scatter_add``): atomically when other threads run the same launch, with a plain
load/add/store on one thread.  Widths here cover both (launches of 20000 lanes and more are
split over the pool's threads), runs shorter and longer than a chunk (16 or 32 lanes), masked
lanes and a ragged tail, for float and integer targets.  Values are small whole numbers, so every
order of adding them gives the same float sum.
"""
import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, Float64, Int32, UInt32

TYPES = {"Float": (Float, np.float32), "Float64": (Float64, np.float64), "Int32": (Int32, np.int32),
         "UInt32": (UInt32, np.uint32)}


@given(st.sampled_from([1, 7, 31, 1000, 20000, 100003]), st.sampled_from([1, 3, 16, 17, 64, 1000]),
       st.sampled_from(sorted(TYPES)), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_scatter_add_of_index_runs_matches_numpy(width, run, tname, masked, seed):
    cls, dt = TYPES[tname]
    rng = np.random.default_rng(seed)
    idx = (np.arange(width) // run).astype(np.uint32)
    n_bins = int(idx[-1]) + 1
    values = rng.integers(0, 50, width).astype(dt)
    active = rng.random(width) < 0.9 if masked else np.ones(width, bool)
    target = fj.zeros(cls, n_bins)
    fj.scatter_add(target, cls(values), UInt32(idx), Bool(active))
    fj.eval(target)
    want = np.zeros(n_bins, dt)
    np.add.at(want, idx[active].astype(np.int64), values[active])
    assert np.array_equal(target.numpy(), want)


def test_gradient_of_a_gather_by_runs_matches_numpy():
    """The fit demo's pattern: parameters gathered by runs of consecutive lanes, the gradient a
    uniform ``scatter_add`` per chunk in the backward kernel (one thread and several)."""
    for width, run in ((1024, 64), (65536, 64), (100003, 7)):
        p = fj.llvm.ad.Float(np.arange(-(-width // run), dtype=np.float32))
        fj.enable_grad(p)
        idx = np.arange(width) // run
        w = np.arange(width) % 5
        y = fj.gather(fj.llvm.ad.Float, p, fj.llvm.ad.UInt32(idx.astype(np.uint32))) * fj.llvm.ad.Float(w.astype(np.float32))
        fj.backward(fj.sum(y))
        want = np.zeros(len(p), np.float32)
        np.add.at(want, idx, w.astype(np.float32))
        assert np.array_equal(fj.grad(p).numpy(), want)
