"""``PCG32.next_float16`` (Dr.Jit 1.5): ``next_float32`` rounded to half precision.

It was missing (``AttributeError``).
"""
import numpy as np
import pytest

from frostjit import llvm, scalar


@pytest.mark.parametrize("size", [1, 7, 1000, 100003])
def test_next_float16_is_next_float32_rounded_to_half(size):
    a = llvm.PCG32(size, 42, 7)
    b = llvm.PCG32(size, 42, 7)
    h = a.next_float16()
    assert type(h) is llvm.Float16
    np.testing.assert_array_equal(h.numpy(), b.next_float32().numpy().astype(np.float16))
    assert np.array_equal(a.state.numpy(), b.state.numpy())        # one 32-bit draw, as next_float32


def test_next_float16_first_value_and_scalar_backend():
    assert scalar.PCG32().next_float16() == 0.1083984375
    assert llvm.PCG32().next_float16().numpy().tolist() == [0.1083984375]


def test_next_float16_masked_lanes_do_not_advance():
    a = llvm.PCG32(4)
    state = a.state.numpy().copy()
    a.next_float16(llvm.Bool(True, False, True, False))
    moved = a.state.numpy() != state
    assert moved.tolist() == [True, False, True, False]
