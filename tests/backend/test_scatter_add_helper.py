"""Many ``scatter_add`` in one kernel (a hash grid's backward pass): each one's per-lane updates
are a call of one shared looping helper per type (codegen/memory.py: ``_lane_loop_add``),
out of line beyond INLINE_MATH_CALLS uses, so the kernel's code grows by a few blocks per
scatter, not 2 x W.  Results against NumPy on one thread and several (launches of 20000
lanes and more are split over the pool's threads, which makes the adds atomic), with random
indices (duplicates within a chunk), masks and ragged tails.  Values are small whole numbers,
so every order of adding them gives the same sum."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, Float64, Int32, UInt32

TYPES = {"Float": (Float, np.float32), "Float64": (Float64, np.float64), "Int32": (Int32, np.int32)}


def _scatters(cls, dt, width, n_bins, k, seed):
    rng = np.random.default_rng(seed)
    target = fj.zeros(cls, n_bins)
    want = np.zeros(n_bins, dt)
    x = cls(rng.integers(0, 20, width).astype(dt))       # one input: the k scatters share a kernel
    for i in range(k):
        idx = rng.integers(0, n_bins, width).astype(np.uint32)
        active = rng.random(width) < 0.8
        fj.scatter_add(target, x + i, UInt32(idx), Bool(active))
        np.add.at(want, idx[active].astype(np.int64), x.numpy()[active] + dt(i))
    return target, want


@settings(max_examples=10)
@given(width=st.sampled_from([1, 33, 1000, 20011]), n_bins=st.sampled_from([1, 5, 300]),
       k=st.sampled_from([1, 3, 6]), tname=st.sampled_from(sorted(TYPES)), seed=st.integers(0, 2 ** 32 - 1))
def test_many_scatter_adds_in_one_kernel_match_numpy(width, n_bins, k, tname, seed):
    cls, dt = TYPES[tname]
    target, want = _scatters(cls, dt, width, n_bins, k, seed)
    fj.eval(target)
    assert np.array_equal(target.numpy(), want)


@pytest.mark.llvm_only("the LLVM backend's code generation (IR text)")
def test_scatter_adds_share_one_out_of_line_helper():
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        target, want = _scatters(Float, np.float32, 1000, 50, 8, 1)
        fj.eval(target)
        kernels = fj.kernel_history((fj.KernelType.JIT,))
    assert np.array_equal(target.numpy(), want)
    ir = "\n".join(k["ir"] for k in kernels)
    # one definition per kind of update (atomic, plain), out of line, called by all 8 scatters
    assert ir.count("define internal void @fj_scatter_add_") == 2
    assert ir.count(") noinline #0 {") >= 2
    assert ir.count("call void @fj_scatter_add_atomic") == 8
    # the per-lane atomics live in the helper only (one per lane, W <= 32), plus one per scatter
    # for a uniform chunk (before: W per scatter, 264 in all)
    assert ir.count("atomicrmw") <= 32 + 8
