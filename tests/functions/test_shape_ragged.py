"""``fj.shape`` of nested Python sequences and ``fj.reshape`` of Python values, as Dr.Jit 1.5.

The expected values were measured with drjit 1.5.0 (``drjit.shape``/``drjit.reshape`` in a
separate process); the one deliberate difference (a tensor inside a list has a shape here,
Dr.Jit raises "unsupported type") is in docs/types.md."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.errors import LayoutArgumentError, RaggedArrayError
from frostjit.llvm import Array3f, Float, TensorXf

# (input, Dr.Jit 1.5's shape); None: Dr.Jit raises "the input is ragged"
MEASURED = [
    (lambda: ([1, 2], [3]), (2, 2)),
    (lambda: ([1], [2, 3]), (2, 2)),
    (lambda: ([], [1, 2]), (2, 2)),                 # an empty first entry takes the next size
    (lambda: ([1, 2], []), None),
    (lambda: ([1, 2], [3, 4, 5]), None),
    (lambda: (Float(1, 2), Float(3)), (2, 2)),
    (lambda: (Float(1, 2), Float(3, 4, 5)), None),
    (lambda: (Float(1, 2), Float()), None),
    (lambda: [Float(1, 2, 3), 4], None),
    (lambda: [4, Float(1, 2, 3)], None),
    (lambda: [[[1, 2], [3]], [[4], [5, 6]]], (2, 2, 2)),
    (lambda: [[[1, 2], [3, 4, 5]], [[4], [5, 6]]], None),
    (lambda: [Array3f(1, 2, 3), Array3f([1, 2], [3, 4], [5, 6])], (2, 3, 2)),
    (lambda: Array3f(Float(1, 2), Float(3), Float(4, 5)), (3, 2)),
    (lambda: Array3f(Float(1, 2), Float(3, 4, 5), Float(4, 5)), None),
    (lambda: [], (0,)),
    (lambda: [[], []], (2, 0)),
    (lambda: [[1, 2], [[3]]], None),
    (lambda: (1, [2, 3]), None),
    (lambda: object(), ()),
    (lambda: 3, ()),
]


@pytest.mark.parametrize("make, expected", MEASURED)
def test_shape_of_sequences_as_drjit(make, expected):
    value = make()
    if expected is None:
        with pytest.raises(RaggedArrayError, match="ragged") as info:
            fj.shape(value)
        assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    else:
        assert fj.shape(value) == expected


@given(st.tuples(st.lists(st.integers(1, 3), max_size=2), st.integers(0, 3)).flatmap(
    lambda d: st.tuples(st.just((*d[0], d[1])), st.lists(st.booleans(), min_size=len(d[0]) + 1, max_size=len(d[0]) + 1))))
def test_shape_of_nested_lists_is_the_broadcast_shape(case):
    """A nested list where some entries have size 1 along an axis (NumPy would broadcast them) has
    the full shape; an entry whose size differs by another value than 1 makes it ragged.  (Only
    the last axis may be empty here: ``[]`` has shape ``(0,)``, whatever it was meant to be.)"""
    dims, shrink = case
    a = np.arange(int(np.prod(dims))).reshape(dims)
    nested = a.tolist()
    assert fj.shape(nested) == dims
    assert fj.shape(a) == dims                      # a NumPy array: its shape

    def shrink_last(x, depth):                      # the last entry along each chosen axis -> size 1
        if not isinstance(x, list) or not x:
            return x
        out = [shrink_last(e, depth + 1) for e in x]
        if shrink[depth] and len(out) > 1:
            out[-1] = out[-1][:1] if isinstance(out[-1], list) and out[-1] else out[-1]
        return out

    shrunk = shrink_last(nested, 0)
    assert fj.shape(shrunk) == dims
    if len(dims) >= 2 and dims[0] >= 2 and dims[1] >= 3:
        nested[0] = nested[0][:2]                   # size 2 against 3: neither is 1
        with pytest.raises(RaggedArrayError):
            fj.shape(nested)


def test_shape_of_a_tensor_inside_a_list():
    # frostjit: the tensors' shape (Dr.Jit 1.5 raises "unsupported type in input")
    assert fj.shape([TensorXf([1, 2, 3]), TensorXf([1, 2, 3])]) == (2, 3)


def test_shape_refuses_none_strings_and_mappings():
    for value in (None, "ab", {"a": 1}):
        with pytest.raises(TypeError):
            fj.shape(value)


@pytest.mark.parametrize("value", [5, 5.0, True, 1.5 + 2j, "ab", (5, 6)])
@pytest.mark.parametrize("shape", [4, -1, (2, 3), ()])
def test_reshape_returns_python_values_as_they_are(value, shape):
    # Dr.Jit 1.5: reshape(5, 4) == 5 (a Python value has no shape to change)
    out = fj.reshape(value, shape)
    assert out == value and type(out) is type(value)


def test_reshape_of_python_values_checks_its_arguments():
    obj = object()
    assert fj.reshape(obj, 3) is obj and fj.reshape(5, 4, order="F") == 5 and fj.reshape(5, 4, shrink=True) == 5
    with pytest.raises(LayoutArgumentError, match="'order' argument must equal"):
        fj.reshape(5, 4, order="Q")
    with pytest.raises(TypeError, match="shape must be an int or a sequence of ints"):
        fj.reshape(5, 3.5)
    with pytest.raises(TypeError):
        fj.reshape(None, 3)


def test_reshape_to_a_tensor_type_of_a_number():
    t = fj.reshape(TensorXf, 5, (1, 1))
    assert type(t) is TensorXf and t.shape == (1, 1) and t.numpy().tolist() == [[5.0]]
    with pytest.raises(ValueError, match="mismatched array sizes"):
        fj.reshape(TensorXf, 5, (2,))


def test_reshape_of_a_tree_keeps_its_python_leaves():
    out = fj.reshape({"a": 5, "b": [Float(1, 2, 3, 4), "s"]}, -1)
    assert out["a"] == 5 and out["b"][1] == "s" and out["b"][0].shape == (4,)
