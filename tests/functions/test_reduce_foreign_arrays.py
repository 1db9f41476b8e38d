"""Reductions of another framework's array (a PyTorch tensor, a NumPy array of Booleans) reduce
its outermost axis with the Python operator, as Dr.Jit 1.5 reduces any iterable: ``fj.all(t)``
is ``t[0] & t[1] & ...``, ``fj.sum(t)`` is ``t[0] + t[1] + ...`` (a 0-d tensor for a 1-D one).

Found by Dr.Jit's ``test_wrap.py`` (session r15): ``dr.all(torch_a == torch_b)`` raised
"expects a Bool array or bool, got Tensor", and ``fj.sum(torch_tensor)`` "cannot reduce a
sequence holding a Tensor". Expected values are NumPy's reductions over axis 0; Dr.Jit 1.5.0
was run side by side on the same inputs (``all``/``any``/``none``/``sum``/``prod`` of 1-D
PyTorch tensors and of 2-D Boolean NumPy arrays give these values).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj

torch = pytest.importorskip("torch")

FOLDS = {"all": np.logical_and.reduce, "any": np.logical_or.reduce,
         "none": lambda a: ~np.logical_or.reduce(a)}


@settings(max_examples=30)
@given(bits=st.lists(st.booleans(), min_size=1, max_size=9), rows=st.integers(1, 3),
       name=st.sampled_from(sorted(FOLDS)))
def test_boolean_reductions_of_foreign_arrays(bits, rows, name):
    a = np.array(bits * rows).reshape(rows, len(bits))         # 2-D: rows combined element-wise
    want = FOLDS[name](a)
    got_np = getattr(fj, name)(a)
    assert np.array_equal(np.asarray(got_np), want)
    t = torch.tensor(bits)                                     # 1-D: a 0-d tensor
    got_t = getattr(fj, name)(t)
    assert isinstance(got_t, torch.Tensor)
    assert bool(got_t) == bool(FOLDS[name](np.array(bits)))


@settings(max_examples=30)
@given(values=st.lists(st.integers(-9, 9), min_size=1, max_size=6),
       dtype=st.sampled_from(["float32", "float64", "int64"]))
def test_arithmetic_reductions_of_a_tensor(values, dtype):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    assert isinstance(fj.sum(t), torch.Tensor)
    assert fj.sum(t).item() == np.sum(values)
    assert fj.prod(t).item() == np.prod(values)


def test_non_boolean_foreign_arrays_are_refused_by_all_and_any():
    for name in ("all", "any", "none"):
        with pytest.raises(TypeError):
            getattr(fj, name)(torch.tensor([1.0, 0.0]))
        with pytest.raises(TypeError):
            getattr(fj, name)(np.array([1.0, 0.0]))


def test_the_test_wrap_pattern():
    # dr.all(torch_result == torch_expected), as Dr.Jit's test_wrap.py asserts on wrapped outputs
    x = torch.arange(3, dtype=torch.float32)
    assert fj.all(x * 2 == torch.tensor([0.0, 2.0, 4.0]))
    assert not fj.all(x * 2 == torch.tensor([0.0, 2.0, 5.0]))
