"""A float array built from a sequence of NumPy float scalars (``Float([xs[k] for k in kept])``, r13
port q_rr) skips the per-item checks (session r15, lane wholeprog): it must convert exactly as the
checked path does, which the same values as Python floats take (float64 then the array's type,
overflow to infinity, Float16 through float32)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit.llvm as L

NP_FLOATS = [np.float16, np.float32, np.float64]
ARRAY_TYPES = [L.Float, L.Float16, L.Float64]
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.sampled_from([0.0, -0.0, 1e40, -1e40, 65520.0, 3.4028235e38, 5e-324, 1e-45, 6e-8]))


def _bits(a):
    x = np.asarray(a.numpy())
    return x.dtype.str, x.shape, x.tobytes()


@settings(max_examples=40)
@given(t=st.sampled_from(ARRAY_TYPES), items=st.lists(st.tuples(st.sampled_from(NP_FLOATS), values), max_size=40))
def test_numpy_float_scalars_convert_as_python_floats(t, items):
    with np.errstate(over="ignore"):
        np_items = [k(v) for k, v in items]
    py_items = [float(v) for v in np_items]      # (exact: every NumPy float fits a float64)
    assert _bits(t(np_items)) == _bits(t(py_items))
    assert _bits(t(tuple(np_items))) == _bits(t(py_items))


@pytest.mark.parametrize("bad", [None, "1.5", [1.0]])
def test_a_non_scalar_among_numpy_floats_is_still_refused(bad):
    with pytest.raises(TypeError):
        L.Float([np.float32(1), bad, np.float64(2)])

