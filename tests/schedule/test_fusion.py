"""Laziness, fusion and side-effect ordering, observed through the kernel history."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, UInt32, Int32, Float64


@pytest.fixture
def history():
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        yield lambda: [h for h in fj.kernel_history() if h["type"] == "jit"]


def test_operations_are_lazy(history):
    x = fj.arange(Float, 100)
    y = x * 2 + 1
    assert y.state == fj.VarState.Unevaluated
    assert history() == []
    fj.eval(y)
    assert y.state == fj.VarState.Evaluated
    assert len(history()) == 1


def test_twenty_ops_of_one_size_are_one_kernel(history):
    x = Float(np.linspace(0, 1, 1000, dtype=np.float32))
    y = x
    for k in range(20):
        y = y * 1.01 + (x if k % 2 else 0.5)
    fj.eval(y)
    h = history()
    assert len(h) == 1
    assert h[0]["size"] == 1000
    ref = np.linspace(0, 1, 1000, dtype=np.float32)
    r = ref.copy()
    for k in range(20):
        r = r * np.float32(1.01) + (ref if k % 2 else np.float32(0.5))
    np.testing.assert_array_equal(y.numpy(), r)


def test_one_kernel_per_size_group(history):
    a = fj.arange(Float, 10) + 1
    b = fj.arange(Float, 20) * 2
    c = a * 3
    fj.eval(a, b, c)
    sizes = sorted(h["size"] for h in history())
    assert sizes == [10, 20]


def test_eval_of_several_outputs_shares_a_kernel(history):
    x = fj.arange(Float, 64)
    outs = [x * k for k in range(5)]
    fj.eval(outs)
    assert len(history()) == 1
    for k, o in enumerate(outs):
        np.testing.assert_array_equal(o.numpy(), np.arange(64, dtype=np.float32) * k)


def test_reading_evaluates(history):
    x = fj.arange(Float, 5) * 3
    assert x[2] == 6
    assert len(history()) == 1
    assert x[4] == 12
    assert history() == []   # already evaluated


def test_cache_hit_on_second_identical_kernel(history):
    for n in (1000, 1001):   # width is not part of the kernel
        fj.eval(fj.arange(Float, n) * 7.25 - 3)
    h = history()
    assert len(h) == 2
    assert h[0]["hash"] == h[1]["hash"]
    assert h[1]["cache_hit"] is True


@pytest.mark.llvm_only("the history's ir is LLVM IR")
def test_history_entry_holds_the_llvm_ir(history):
    fj.eval(fj.arange(Float, 10) * 7.25 - 3)
    assert "define void" in history()[0]["ir"]


def test_history_entry_fields(history):
    fj.eval(fj.arange(UInt32, 3) + 1)
    (e,) = history()
    for key in ("type", "size", "hash", "ir", "cache_hit", "cache_disk"):
        assert key in e
    assert e["type"] == "jit" and e["size"] == 3


def test_scatters_run_in_program_order(history):
    t = fj.zeros(Float, 8)
    fj.scatter(t, 1.0, fj.arange(UInt32, 8))
    fj.scatter(t, 2.0, UInt32([3, 4]))
    fj.scatter(t, Float([5.0, 6.0, 7.0]), UInt32([0, 1, 2]))
    np.testing.assert_array_equal(t.numpy(), [5, 6, 7, 2, 2, 1, 1, 1])


def test_using_a_scatter_target_sees_the_write():
    t = fj.zeros(Int32, 4)
    fj.scatter(t, 9, UInt32([1]))
    u = t + 1                      # must see the pending scatter
    np.testing.assert_array_equal(u.numpy(), [1, 10, 1, 1])
    g = fj.gather(Int32, t, UInt32([1, 1]))
    np.testing.assert_array_equal(g.numpy(), [9, 9])


def test_scatter_copy_on_write_keeps_earlier_readers():
    t = Float([1.0, 2.0, 3.0])
    lazy = t * 10                   # unevaluated reader of t's buffer
    alias = Float(t)                # shares t's variable
    fj.scatter(t, 0.0, UInt32([0]))
    np.testing.assert_array_equal(t.numpy(), [0, 2, 3])
    np.testing.assert_array_equal(lazy.numpy(), [10, 20, 30])
    np.testing.assert_array_equal(alias.numpy(), [1, 2, 3])


def test_schedule_then_eval(history):
    a = fj.arange(Float, 10) + 1
    b = fj.arange(Float, 10) * 2
    fj.schedule(a, b)
    assert a.state == fj.VarState.Unevaluated
    fj.eval()
    assert a.state == fj.VarState.Evaluated and b.state == fj.VarState.Evaluated
    assert len(history()) == 1


def test_size_one_pending_values_inline_into_wide_kernels(history):
    s = Float(2.0) * 3.0           # size-1, pending
    x = fj.arange(Float, 100) + s
    fj.eval(x)
    assert len(history()) == 1
    np.testing.assert_array_equal(x.numpy(), np.arange(100, dtype=np.float32) + 6)


def test_literals_fold_and_opaque_becomes_memory(history):
    for v in (1.5, 2.5):
        fj.eval(fj.arange(Float, 4) + v)
    h = history()
    assert h[0]["hash"] != h[1]["hash"]           # literal baked into the kernel
    for v in (1.5, 2.5):
        fj.eval(fj.arange(Float, 4) + fj.opaque(Float, v))
    h = history()
    assert h[0]["hash"] == h[1]["hash"]           # value read from memory


def test_size_zero_everywhere(history):
    z = fj.zeros(Float, 0)
    y = fj.sin(z) * 2 + z
    fj.eval(y)
    assert len(y) == 0 and y.numpy().shape == (0,)
    assert fj.sum(y).numpy().tolist() == [0.0]
    assert len(fj.compress(y > 0)) == 0
    assert len(fj.gather(Float, Float([1.0]), fj.zeros(UInt32, 0))) == 0
    assert repr(y) == "[]"


def test_deep_chain_does_not_hit_recursion_limit():
    x = fj.arange(Float64, 10)
    for _ in range(5000):
        x = x + 1
    assert x[9] == 5009


def test_kernel_history_types_compare_as_strings(history):
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.sum(Float([1, 2, 3])).numpy()
        fj.eval(fj.arange(Float, 3) + 2)
        h = fj.kernel_history()
    assert [e["type"] for e in h] == ["reduce", "jit"]
    assert h[1]["type"] == fj.KernelType.JIT
