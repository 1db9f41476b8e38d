"""Printing arrays as Dr.Jit 1.5 does (frostjit/array/printing.py, fj.format, fj.print).

Numbers are compared with the C library's ``printf("%g")`` (what Dr.Jit uses), called through
ctypes: an independent reference for every float32 and float64 value hypothesis draws.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import io

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.array.printing import format_scalar
from frostjit.llvm import Array2f, Array3f, Bool, Float, Float64, Int, UInt32

_libc = ctypes.CDLL(ctypes.util.find_library("c"))


def c_printf_g(v: float) -> str:
    buf = ctypes.create_string_buffer(64)
    _libc.snprintf(buf, 64, b"%g", ctypes.c_double(v))
    return buf.value.decode()


@given(st.floats(width=32, allow_nan=True, allow_infinity=True))
def test_float32_values_print_as_c_printf_g(v):
    a = np.array([v], dtype=np.float32)
    assert repr(Float(a)) == "[" + c_printf_g(float(a[0])) + "]"


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_float64_values_print_as_c_printf_g(v):
    assert repr(Float64(np.array([v]))) == "[" + c_printf_g(v) + "]"


@pytest.mark.parametrize("bits", [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF])
def test_nan_prints_with_its_sign_bit_as_printf_does(bits):
    v = np.array([bits], dtype=np.uint32).view(np.float32)
    assert format_scalar(v[0]) == c_printf_g(float(v[0]))


@given(st.integers(0, 60), st.integers(0, 40))
def test_long_arrays_show_three_entries_at_each_end(n, limit):
    text = fj.format(fj.arange(Int, n), limit=limit)
    if n <= limit or n <= 6:
        assert text == "[" + ", ".join(str(i) for i in range(n)) + "]"
    else:
        assert text == f"[0, 1, 2, .. {n - 6} skipped .., {n - 3}, {n - 2}, {n - 1}]"


def test_six_entries_with_a_small_limit_print_whole():
    # Dr.Jit 1.5 crashes here ("Buffer::expand(): out of memory"); nothing would be skipped.
    assert fj.format(fj.arange(Int, 6), limit=1) == "[0, 1, 2, 3, 4, 5]"


@pytest.mark.parametrize("width", [1, 7, 1000, 100003])
def test_static_vectors_print_one_lane_per_line(width):
    x = fj.arange(Float, width)
    text = repr(Array2f(x, x * 2))
    lines = text.split("\n")
    if width <= 20:
        assert lines == [("[" if k == 0 else " ") + f"[{k}, {2 * k}]" + ("]" if k == width - 1 else ",")
                         for k in range(width)]
    else:
        assert lines[3] == f" .. {width - 6} skipped ..," and lines[-1] == f" [{width - 1}, {2 * width - 2}]]"


def test_str_is_repr_and_unevaluated_arrays_print_their_values():
    y = fj.arange(Float, 4) * 0.5 + 1
    assert str(y) == repr(y) == "[1, 1.5, 2, 2.5]"


def test_format_of_pytrees_indents_nested_arrays_under_their_bracket():
    text = fj.format({"v": [Array3f([1, 2], [3, 4], [5, 6])], "s": "x", "f": 0.1})
    assert text == "{\n  'v': [\n    [[1, 3, 5],\n     [2, 4, 6]]\n  ],\n  's': 'x',\n  'f': 0.1\n}"


def test_format_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="missing keyword argument \"y\""):
        fj.format("{y}", x=1)
    with pytest.raises(RuntimeError, match="position 3"):
        fj.format("{} {}", 1)
    with pytest.raises(TypeError, match="limit"):
        fj.format(Float(1), limit="3")
    with pytest.raises(TypeError, match="active"):
        fj.format("{}", Float(1, 2), active=UInt32(1, 0))


def test_print_writes_to_the_file_and_skips_an_all_inactive_mask():
    buf = io.StringIO()
    fj.print("{x=}", x=Float(1, 2, 3), active=Bool(False, True, True), file=buf, end="|")
    fj.print("{}", Float(1, 2), active=Bool(False, False), file=buf)
    assert buf.getvalue() == "x=[2, 3]|"
    with pytest.raises(ValueError, match="mode"):
        fj.print("x", mode="delayed")
