"""Float16, Int8 and UInt8: promotion, conversions, Python operands, memory, AD and freeze.

(The op table's generated tests, tests/trace/test_optable.py, check every op on these types
against its NumPy reference; test_element_anchor.py compares them with Dr.Jit 1.5.)
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
from frostjit.errors import ConversionOverflowError

WIDTHS = [1, 7, 1000, 100_003]

# Dr.Jit 1.5 (measured): the type of a + b.
PROMOTION = [
    ("Int8", "Float16", "Float16"), ("UInt8", "Int8", "UInt8"), ("UInt8", "Int32", "Int32"),
    ("Int8", "Int64", "Int64"), ("Float16", "Int64", "Float16"), ("Float16", "Float32", "Float32"),
    ("Float16", "UInt8", "Float16"), ("Float16", "Float64", "Float64"), ("UInt8", "UInt32", "UInt32"),
]


@pytest.mark.parametrize("a,b,want", PROMOTION)
def test_promotion_follows_drjits_order(a, b, want):
    A, B = getattr(T, a), getattr(T, b)
    assert type(A(1) + B(1)).__name__ == want
    assert type(B(1) + A(1)).__name__ == want


def test_python_floats_promote_8_bit_integers_to_float32_and_keep_float16():
    assert type(T.Int8(1) + 1.5) is T.Float32
    assert type(T.UInt8(1) * 0.5) is T.Float32
    assert type(T.Float16(1) + 1.5) is T.Float16


@pytest.mark.parametrize("cls,value,want", [("Int8", -128, -127), ("Int8", 127, -128), ("Int8", 255, 0),
                                            ("UInt8", 255, 0), ("UInt8", -128, 129)])
def test_python_ints_of_8_bits_wrap_with_the_array(cls, value, want):
    assert (getattr(T, cls)(1) + value)[0] == want


@pytest.mark.parametrize("cls", ["Int8", "UInt8"])
@pytest.mark.parametrize("value", [-129, 256, 1000, 2**40])
def test_python_ints_beyond_8_bits_raise_as_in_drjit(cls, value):
    x = getattr(T, cls)(1, 2)
    with pytest.raises(ConversionOverflowError, match=str(value)):
        x + value
    with pytest.raises(ConversionOverflowError):
        value * x


def test_8_bit_constructors_check_the_range_and_numpy_arrays_wrap():
    with pytest.raises(ConversionOverflowError):
        T.Int8(300)
    with pytest.raises(ConversionOverflowError):
        T.UInt8([1, -1])
    assert T.Int8(np.array([1, 2, 300])).numpy().tolist() == [1, 2, 44]      # astype, as Dr.Jit
    assert T.Int8(1.9)[0] == 1


# 1 + 2^-11 + 2^-30: one rounding to half gives 1 + 2^-10, two (through float32) give 1.
_TIE = 1 + 2.0**-11 + 2.0**-30


def test_python_floats_reach_float16_through_float32_as_in_drjit():
    for x in (T.Float16(_TIE), T.Float16([_TIE]), fj.full(T.Float16, _TIE, 3), T.Float16(T.Float64(_TIE)),
              T.Float16(1) * _TIE):
        assert np.all(x.numpy() == 1.0), x


def test_numpy_arrays_convert_to_float16_with_one_rounding_as_in_drjit():
    assert T.Float16(np.array([_TIE]))[0] == 1 + 2.0**-10


@pytest.mark.parametrize("width", WIDTHS)
def test_float16_arithmetic_is_float32_arithmetic_rounded_after_each_step(width):
    rng = np.random.default_rng(width)
    a, b, c = (rng.standard_normal(width).astype(np.float16) for _ in range(3))
    x, y, z = T.Float16(a), T.Float16(b), T.Float16(c)
    got = ((x * y + z) / (x - y)).numpy()
    f32 = np.float32
    with np.errstate(all="ignore"):
        step = (a.astype(f32) * b.astype(f32)).astype(np.float16)
        step = (step.astype(f32) + c.astype(f32)).astype(np.float16)
        want = (step.astype(f32) / (a.astype(f32) - b.astype(f32)).astype(np.float16).astype(f32)).astype(np.float16)
    np.testing.assert_array_equal(got, want)


def test_float16_sums_accumulate_in_float32():
    # 1000 x 0.1 rounded after each addition would stall at 256 (Dr.Jit: 100)
    assert fj.sum(fj.full(T.Float16, 0.1, 1000))[0] == 100.0
    x = fj.full(T.Float16, 0.1, 5000)
    assert fj.cumsum(x)[4999] == 500.0 and fj.prefix_sum(x)[4999] == 499.75    # 4999.78 and 499.88, rounded


@given(st.lists(st.integers(-128, 127), min_size=1, max_size=50), st.lists(st.integers(0, 255), min_size=1,
                                                                           max_size=50))
def test_8_bit_arithmetic_wraps_like_numpy(xs, ys):
    n = min(len(xs), len(ys))
    a, b = np.array(xs[:n], np.int8), np.array(ys[:n], np.uint8)
    x, y = T.Int8(a), T.UInt8(b)
    np.testing.assert_array_equal((x * x - 3).numpy(), a * a - np.int8(3))
    np.testing.assert_array_equal((y + y * 7).numpy(), b + b * np.uint8(7))
    np.testing.assert_array_equal((x + y).numpy(), a.astype(np.uint8) + b)    # UInt8 wins
    np.testing.assert_array_equal((x >> 2).numpy(), a >> 2)


@pytest.mark.parametrize("index_type", ["Int8", "UInt8"])
def test_8_bit_integers_index_gathers_and_scatters(index_type):
    idx = getattr(T, index_type)(2, 0, 1)
    assert fj.gather(T.Float, T.Float(10, 20, 30), idx).numpy().tolist() == [30, 10, 20]
    target = T.Float(0, 0, 0)
    fj.scatter(target, T.Float(1, 2, 3), idx)
    assert target.numpy().tolist() == [2, 3, 1]


@pytest.mark.parametrize("cls", ["Float16", "Int8", "UInt8"])
def test_new_element_types_gather_scatter_and_scatter_add(cls):
    C = getattr(T, cls)
    src = C(1, 2, 3, 4)
    assert fj.gather(C, src, T.UInt32(3, 0)).numpy().tolist() == [4, 1]
    acc = fj.zeros(C, 2)
    fj.scatter_add(acc, fj.full(C, 1, 100), fj.arange(T.UInt32, 100) % 2)
    assert acc.numpy().tolist() == ([50, 50] if cls != "Int8" else [50, 50])


def test_float16_is_differentiable():
    x = AD.Float16(1.5, 2.0)
    fj.enable_grad(x)
    y = fj.sin(x) * x
    fj.backward(y)
    want = (np.cos(np.float32([1.5, 2.0])) * np.float32([1.5, 2.0]) + np.sin(np.float32([1.5, 2.0])))
    np.testing.assert_allclose(fj.grad(x).numpy().astype(np.float32), want, atol=2e-3)     # half precision
    assert type(fj.grad(x)) is AD.Float16


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_functions_on_new_element_types_equal_plain_calls(width):
    def f(h, i, u):
        return fj.fma(h, h, 1.5) * i, (u << 1) ^ 0x55, fj.sum(T.Float16(i) * h)

    frozen = fj.freeze(f)
    rng = np.random.default_rng(width)
    for w in (width, width + 3):
        args = (T.Float16(rng.standard_normal(w).astype(np.float16)), T.Int8(rng.integers(-128, 128, w, dtype=np.int8)),
                T.UInt8(rng.integers(0, 256, w, dtype=np.uint8)))
        for got, want in zip(frozen(*args), f(*args)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
