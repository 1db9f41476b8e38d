"""array/eager.py: lane-wise ops computed at once on Python numbers (the scalar backend's kernels)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, strategies as st

from frostjit.array import eager
from frostjit.trace import dtypes as dt
from frostjit.trace.optable import OPS

f32 = st.floats(width=32)


@given(f32, f32, st.one_of(f32, st.floats()))
def test_fma_of_float32_factors_is_the_exact_fma(a, b, c):
    # (the fast path a * b + c: a product of two float32 values is exact in double)
    got, want = eager.python_numbers("fma", (a, b, c)), OPS["fma"].py(a, b, c)
    assert got == want or (math.isnan(got) and math.isnan(want))
    assert math.copysign(1, got) == math.copysign(1, want) or math.isnan(want)


@given(st.floats(), st.floats(), st.floats())
def test_fma_of_doubles_is_the_exact_fma(a, b, c):
    got, want = eager.python_numbers("fma", (a, b, c)), OPS["fma"].py(a, b, c)
    assert got == want or (math.isnan(got) and math.isnan(want))


def test_ops_without_a_python_implementation_run_their_reference():
    assert eager.python_numbers("floordiv", (-7, 2)) == -4
    assert eager.python_numbers("shl", (1, 3)) == 8
    assert eager.python_numbers("select", (False, 1.5, 2.5)) == 2.5


@given(st.lists(st.floats(-1e4, 1e4, width=32), min_size=1, max_size=5), st.floats(-1e4, 1e4))
def test_compute_rounds_to_the_element_type(xs, y):
    col = eager.column(xs, dt.Float32)
    values, vt = eager.compute("mul", [col, y], "Array3f, float")
    assert vt is dt.Float32
    assert values == (np.array(xs, np.float32) * np.float32(y)).tolist()
