"""``fj.reorder_threads``: Dr.Jit 1.5's argument checks and messages (its LLVM backend), and the
value returned unchanged (new handles on the same variables), also inside symbolic control flow,
frozen functions and AD."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
import frostjit.scalar as scalar
from frostjit.llvm import Array3f, Array3u, Bool, Float, Int32, TensorXf, UInt32, UInt64
from frostjit.llvm.ad import Float as FloatAD, UInt32 as UInt32AD

KEY_MESSAGE = "'key' must be a JIT-compiled 32 bit unsigned integer array"


def test_reorder_threads_returns_the_value_as_new_handles():
    x = Float(10, 20, 30)
    r = fj.reorder_threads(UInt32(1, 2, 3) % 4, 2, x)
    assert r is not x and list(r.numpy()) == [10, 20, 30]
    r += 1                                   # a new handle: the caller's array is unchanged
    assert list(x.numpy()) == [10, 20, 30]
    tree = {"a": x, "b": (1, "s"), "v": Array3f(1, 2, 3), "t": TensorXf([1, 2, 3])}
    out = fj.reorder_threads(UInt32(1), 16, tree)
    assert out is not tree and out["b"] == (1, "s") and list(out["a"].numpy()) == [10, 20, 30]
    assert list(out["t"].numpy()) == [1, 2, 3] and isinstance(out["v"], Array3f)


@pytest.mark.parametrize("bits", [0, 1, 16, 17, -1, 2**31 - 1, -2**31, True])
def test_reorder_threads_accepts_any_32_bit_num_bits_as_drjit_llvm(bits):
    assert list(fj.reorder_threads(UInt32(1, 2), bits, Float(1, 2)).numpy()) == [1, 2]


@pytest.mark.parametrize("bits", [2**31, -2**31 - 1, 2.0, "2"])
def test_reorder_threads_num_bits_outside_int32_is_a_type_error(bits):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        fj.reorder_threads(UInt32(1), bits, Float(1))


@pytest.mark.parametrize("key", [Float(1, 2), Int32(1), UInt64(1), Bool(True), Array3u(1, 2, 3),
                                 scalar.ArrayXu(1)], ids=["Float", "Int32", "UInt64", "Bool", "Array3u", "scalar"])
def test_reorder_threads_key_must_be_a_jit_uint32_array(key):
    with pytest.raises(RuntimeError, match=KEY_MESSAGE):
        fj.reorder_threads(key, 2, Float(1))


@pytest.mark.parametrize("key", [3, np.uint32(3)])
def test_reorder_threads_key_not_an_array_is_a_type_error(key):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        fj.reorder_threads(key, 2, Float(1))


@pytest.mark.parametrize("value", [(), [1, 2], {"a": 1}, 5])
def test_reorder_threads_value_without_jit_array_raises(value):
    with pytest.raises(RuntimeError, match="'value' must be a valid PyTree containing at least one JIT-compiled type"):
        fj.reorder_threads(UInt32(1), 2, value)
    with pytest.raises(TypeError):
        fj.reorder_threads(UInt32(1), 2, None)


def test_reorder_threads_ad_key_and_gradients_flow_through():
    a = FloatAD(1, 2, 3)
    fj.enable_grad(a)
    r = fj.reorder_threads(UInt32AD(1, 2, 3), 2, a)
    assert fj.grad_enabled(r)
    fj.backward(r * r)
    assert list(fj.grad(a).numpy()) == [2, 4, 6]


def test_reorder_threads_before_symbolic_switch_and_inside_loops_and_freeze():
    def f(idx, x):
        x = fj.reorder_threads(idx, 2, x)
        y = fj.switch(idx, [lambda v: v + 1, lambda v: v * 2], x, mode="symbolic")
        _, z = fj.while_loop((UInt32(0), y), lambda i, z: i < 3,
                             lambda i, z: (i + 1, fj.reorder_threads(i, 4, z) * 2), mode="symbolic")
        return z
    frozen = fj.freeze(f)
    for n in (7, 1000, 7):
        idx = UInt32(np.arange(n, dtype=np.uint32) % 2)
        x = Float(np.arange(n, dtype=np.float32))
        ref = np.where(np.arange(n) % 2 == 0, np.arange(n) + 1, np.arange(n) * 2).astype(np.float32) * 8
        np.testing.assert_array_equal(frozen(idx, x).numpy(), ref)
        np.testing.assert_array_equal(f(idx, x).numpy(), ref)
    assert frozen.n_recordings == 1
