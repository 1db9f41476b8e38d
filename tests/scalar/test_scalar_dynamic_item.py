"""``item()`` of the scalar backend's 1-D arrays (``ArrayXf``, ``ArrayXi``, ...): the one entry as
a Python number, ``RuntimeError`` for any other size, as a JIT array's ``item()`` and Dr.Jit's.

Missing before session r15 (``AttributeError``; Dr.Jit's ``test_tensor.py`` test23, 9 types).
Expected values: NumPy's ``item()`` of the same one-element array.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit.scalar as S

TYPES = {"ArrayXf": np.float32, "ArrayXf64": np.float64, "ArrayXi": np.int32, "ArrayXu": np.uint32,
         "ArrayXi64": np.int64, "ArrayXu8": np.uint8, "ArrayXi8": np.int8}


@settings(max_examples=30)
@given(name=st.sampled_from(sorted(TYPES)), v=st.integers(0, 100), n=st.integers(0, 4))
def test_item_of_one_entry_and_the_error_otherwise(name, v, n):
    cls, dt = getattr(S, name), TYPES[name]
    a = cls([v] * n)
    if n == 1:
        got, want = a.item(), np.array([v], dt).item()
        assert got == want and type(got) is type(want)
    else:
        with pytest.raises(RuntimeError, match="can only convert arrays of length 1"):
            a.item()
