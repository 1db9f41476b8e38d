"""Gathers whose index is a literal (every lane reads one element): values against NumPy on both
backends (in bounds, out of bounds, negative, masked, every element type, several widths), and
on the LLVM backend their code: one load each, no branches (``nn.matvec`` reads every
coefficient this way; with op_gather's per-chunk tests a 16-wide network's kernels had thousands
of basic blocks and took minutes to compile: docs/nn.md)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, Float16, Float64, Int32, UInt32, UInt64

WIDTHS = (1, 7, 100)
TYPES = {"f32": (Float, np.float32), "f16": (Float16, np.float16), "f64": (Float64, np.float64),
         "i32": (Int32, np.int32), "bool": (Bool, np.bool_)}


def _expected(src: np.ndarray, index: int, active: np.ndarray, width: int) -> np.ndarray:
    if len(src) == 1:       # (a size-1 source broadcasts whatever the index: test_gather_size1_source)
        index = 0
    value = src[index] if 0 <= index < len(src) else np.zeros((), src.dtype)
    return np.where(active, value, np.zeros((), src.dtype))


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(sorted(TYPES)), size=st.integers(0, 9), index=st.integers(-3, 12),
       width=st.sampled_from(WIDTHS), index_type=st.sampled_from(["u32", "i32", "u64"]),
       masked=st.booleans(), seed=st.integers(0, 2**16))
def test_literal_index_gathers_match_numpy(kind, size, index, width, index_type, masked, seed):
    t, np_t = TYPES[kind]
    if index < 0 and index_type != "i32":
        index = -index
    rng = np.random.default_rng(seed)
    src = (rng.standard_normal(size) * 10).astype(np_t) if kind != "bool" else rng.random(size) < 0.5
    idx = {"u32": UInt32, "i32": Int32, "u64": UInt64}[index_type](index)
    active = rng.random(width) < 0.6 if masked else np.ones(width, bool)
    lanes = fj.arange(UInt32, width)
    with fj.scoped_set_flag(fj.JitFlag.Debug, False):   # (out-of-bounds reads give 0, no warning)
        g = fj.gather(t, t(src), idx, Bool(active) if masked else True)
        # the gather (a literal index, width 1) in a kernel of `width` lanes, beside a lane counter
        got = fj.select(lanes < width, g, g)
        fj.eval(got)
    np.testing.assert_array_equal(np.broadcast_to(got.numpy(), (width,)),
                                  _expected(src, index, active, width))


@pytest.mark.llvm_only("the LLVM backend's code generation (IR text)")
def test_literal_index_gathers_compile_to_one_load_each():
    def kernel_ir(count: int) -> str:
        src = Float(np.arange(64, dtype=np.float32))
        x = fj.arange(Float, 1000)
        acc = x
        for k in range(count):
            acc = fj.fma(fj.gather(Float, src, UInt32(k)), x, acc)
        with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
            fj.kernel_history()
            fj.eval(acc)
            (entry,) = [e for e in fj.kernel_history() if e["type"] == "jit"]
        np.testing.assert_allclose(acc.numpy(), np.arange(1000) * (1 + np.arange(count).sum()), rtol=1e-6)
        return entry["ir"]

    small, big = kernel_ir(4), kernel_ir(40)
    # one scalar load per gather, and no basic block of its own (no hardware gather, no branch)
    assert big.count("load float, ptr") - small.count("load float, ptr") == 36
    assert "masked.gather" not in big
    assert big.count("\n  br ") == small.count("\n  br ")
