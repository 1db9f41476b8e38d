"""Arrays of other frameworks and 0-d NumPy arrays as operands of arithmetic (Dr.Jit 1.5 takes
them: ``Float(1, 2) + torch.tensor(1.0)``, ``TensorXf(...)[0, 0, 0] == torch_tensor`` in its
test_conversion.py; frostjit raised ``TypeError`` before session r12). Differential: an operand
given as a PyTorch tensor or a 0-d array gives the type and values of the same operand given as
a frostjit array of its dtype (1-d and more) or as the Python number it holds converted to the
array's element type (0-d: Dr.Jit 1.5 gives ``Int(1, 2, 3) * np.array(2.5) == Int(2, 4, 6)``,
checked side by side in session r13; r12 typed it as the Python float, a ``Float``)."""
import operator

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm

torch = pytest.importorskip("torch")

OPS = [operator.add, operator.mul, operator.sub, operator.lt, operator.eq, fj.maximum]
LEFT = [llvm.Float, llvm.Int, llvm.Float64, llvm.UInt]
DTYPES = {torch.float32: llvm.Float, torch.float64: llvm.Float64, torch.int32: llvm.Int,
          torch.int64: llvm.Int64}
small = st.integers(-20, 20)


def _same(got, want):
    assert type(got) is type(want), (type(got).__name__, type(want).__name__)
    assert np.array_equal(np.asarray(got.numpy()), np.asarray(want.numpy()))


@given(vals=st.lists(small, min_size=1, max_size=6), other=st.lists(small, min_size=1, max_size=6),
       op=st.sampled_from(OPS), left=st.sampled_from(LEFT), dtype=st.sampled_from(list(DTYPES)))
def test_torch_operand_of_a_flat_array(vals, other, op, left, dtype):
    n = min(len(vals), len(other))
    a = left([abs(v) for v in vals[:n]] if left is llvm.UInt else vals[:n])
    t = torch.tensor(other[:n], dtype=dtype)
    _same(op(a, t), op(a, DTYPES[dtype](other[:n])))


@given(vals=st.lists(small, min_size=1, max_size=6), x=small, op=st.sampled_from(OPS),
       left=st.sampled_from(LEFT + [llvm.TensorXf, llvm.TensorXi]), as_float=st.booleans(),
       framework=st.sampled_from(["torch", "numpy"]))
def test_zero_dim_operand_is_an_element_of_the_arrays_type(vals, x, op, left, as_float, framework):
    a = left([abs(v) for v in vals] if left is llvm.UInt else vals)
    x = abs(x) if left is llvm.UInt else x
    number = x + 0.5 if as_float else x
    zero_d = torch.tensor(number) if framework == "torch" else np.array(number)
    integral = left in (llvm.Int, llvm.UInt, llvm.TensorXi)
    _same(op(a, zero_d), op(a, int(number) if integral else number))    # (int(): toward zero, as a cast)


@pytest.mark.parametrize("left, value", [(llvm.UInt, -1), (llvm.Int, 2**40), (llvm.TensorXi, 2**31)])
def test_zero_dim_integer_that_is_no_value_of_the_type_raises(left, value):
    # Dr.Jit 1.5: "Could not promote type 'ndarray' to 'drjit.llvm.UInt'" (a Python int widens instead)
    with pytest.raises(RuntimeError, match="could not promote"):
        left([1, 2]) + np.array(value)


@given(vals=st.lists(st.lists(small, min_size=3, max_size=3), min_size=1, max_size=4),
       other=st.lists(small, min_size=3, max_size=3), op=st.sampled_from(OPS),
       dtype=st.sampled_from([np.float32, np.float64, np.int32]))
def test_numpy_operand_of_a_static_array_gives_its_components(vals, other, op, dtype):
    # Dr.Jit 1.5: Array3f(1, 2, 3) + np.array([1., 2., 3.]) is Array3f64(2, 4, 6), entry k of the
    # NumPy array meeting component k; frostjit added the whole NumPy array to every component
    # (an Array3f64 of three 3-lane arrays) before session r13.
    cols = np.array(vals, dtype=np.float32).T           # (3, lanes)
    a = llvm.Array3f(cols)
    b = np.array(other, dtype=dtype)
    want_cls = llvm.Array3f64 if dtype == np.float64 else llvm.Array3f
    _same(op(a, b), op(a, want_cls(*[float(v) for v in other])))
    a2 = llvm.Array3i(cols.astype(np.int32))
    _same(op(a2, np.array(2.5)), op(a2, 2))       # 0-d: an element of Array3i's type


def test_tensor_with_a_torch_tensor_broadcasts():
    a = llvm.TensorXf([[1, 2, 3], [4, 5, 6]])
    _same(a * torch.tensor([[2.0], [3.0]]), a * llvm.TensorXf([[2.0], [3.0]]))
    e = fj.zeros(llvm.TensorXf, shape=(3, 3, 3))[0, 0, 0]
    r = e == torch.tensor(0.0)
    assert type(r) is llvm.TensorXb and r.array.numpy().tolist() == [True]


@given(vals=st.lists(small, min_size=1, max_size=6), x=small, op=st.sampled_from(OPS),
       left=st.sampled_from([llvm.Float, llvm.Int, llvm.UInt, llvm.Float16, llvm.TensorXi]),
       np_type=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.float16]))
def test_numpy_scalar_operand_is_an_element_of_the_arrays_type(vals, x, op, left, np_type):
    # Dr.Jit 1.5 converts a NumPy scalar (np.float64 included) as it converts a 0-d array:
    # Int(1, 2, 3) == np.float32(2.5) is true at 2; frostjit typed it as the Python number (all
    # false, and Int + np.float32(2.5) a Float) before session r13.  (In-range values only:
    # frostjit widens an out-of-range NumPy int where Dr.Jit raises, docs/types.md.)
    a = left([abs(v) for v in vals] if left is llvm.UInt else vals)
    x = abs(x) if left is llvm.UInt else x
    number = np_type(x + 0.5) if np.dtype(np_type).kind == "f" else np_type(x)
    integral = left in (llvm.Int, llvm.UInt, llvm.TensorXi)
    _same(op(a, number), op(a, int(number) if integral else float(number)))
