"""Bitwise operators of integer arrays and masks, as Dr.Jit 1.5's Python operators (side by side):
``x & mask`` keeps ``x`` where the mask is set (``x & True`` too: a Python bool right of ``&`` is a
mask), while ``|`` and ``^`` count a mask as 0/1.  ``x | mask`` set every bit (``[-1, 5]`` for
``Int(-3, 5) | Bool(True, False)``; Dr.Jit: ``[-3, 5]``), ``x & True`` gave ``x & 1`` and
``2.5 & mask`` a mask; ``x ^ mask`` raised TypeError.
"""
import numpy as np
import pytest

from frostjit import llvm

BITS = np.array([True, False, True, False, True], bool)
INTS = {llvm.Int: np.array([-3, 5, 7, -1, 0], np.int32), llvm.UInt32: np.array([3, 5, 7, 2**32 - 1, 0], np.uint32),
        llvm.Int64: np.array([-3, 5, 2**40, -1, 0], np.int64)}


@pytest.mark.parametrize("cls", list(INTS))
def test_integer_array_with_a_mask(cls):
    a, m = INTS[cls], llvm.Bool(BITS)
    x = cls(a)
    np.testing.assert_array_equal((x & m).numpy(), np.where(BITS, a, 0))
    np.testing.assert_array_equal((x | m).numpy(), a | BITS.astype(a.dtype))
    np.testing.assert_array_equal((x ^ m).numpy(), a ^ BITS.astype(a.dtype))
    np.testing.assert_array_equal((m & x).numpy(), BITS.astype(a.dtype) & a)      # the mask left: 0/1
    np.testing.assert_array_equal((m | x).numpy(), BITS.astype(a.dtype) | a)
    for r in (x & m, x | m, x ^ m):
        assert type(r) is cls


@pytest.mark.parametrize("cls", list(INTS))
def test_integer_array_with_a_python_bool(cls):
    a = INTS[cls]
    x = cls(a)
    np.testing.assert_array_equal((x & True).numpy(), a)       # a mask right of '&'
    np.testing.assert_array_equal((x & False).numpy(), np.zeros_like(a))
    np.testing.assert_array_equal((True & x).numpy(), a & 1)   # left of it: 1
    np.testing.assert_array_equal((x | True).numpy(), a | 1)
    np.testing.assert_array_equal((x ^ True).numpy(), a ^ 1)
    y = cls(a)
    y &= True
    np.testing.assert_array_equal(y.numpy(), a)


def test_python_numbers_with_a_mask_and_static_arrays_and_tensors():
    m = llvm.Bool(BITS)
    r = 2.5 & m
    assert type(r) is llvm.Float
    np.testing.assert_array_equal(r.numpy(), np.where(BITS, 2.5, 0))
    np.testing.assert_array_equal((3 | m).numpy(), 3 | BITS.astype(np.int32))
    np.testing.assert_array_equal((3 ^ m).numpy(), 3 ^ BITS.astype(np.int32))
    v = llvm.Array3i(-3, 5, 7) | llvm.Array3b(True, False, True)
    assert np.asarray(v).reshape(-1).tolist() == [-3, 5, 7]
    assert np.asarray(llvm.Array3i(-3, 5, 7) & True).reshape(-1).tolist() == [-3, 5, 7]
    t = llvm.TensorXi(np.array([[-3, 5], [2, 7]], np.int32))
    np.testing.assert_array_equal((t | llvm.TensorXb(np.array([[True, False], [True, True]]))).numpy(), [[-3, 5], [3, 7]])
    np.testing.assert_array_equal((t & True).numpy(), [[-3, 5], [2, 7]])
