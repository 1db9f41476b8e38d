"""Element-wise functions on the argument types a Dr.Jit program passes them (found side by side
with Dr.Jit 1.5, session r9): integer interpolation, complex/quaternion predicates and roots."""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm


@pytest.mark.parametrize("t", [0.0, 0.25, 0.5, 1.0])
def test_lerp_of_unsigned_integers_promotes_before_negating(t):
    # -a of a UInt32 wrapped before the promotion to float: lerp(UInt32(3), UInt32(3), 0.5) gave 2**31
    a = np.array([0, 1, 3, 5, 2**31, 2**32 - 1, 12345], np.uint32)
    b = np.array([7, 0, 3, 2**32 - 1, 2**31, 0, 54321], np.uint32)
    got = fj.lerp(llvm.UInt32(a), llvm.UInt32(b), t)
    assert type(got) is llvm.Float
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want = a32.astype(np.float64) + (b32.astype(np.float64) - a32) * t
    np.testing.assert_allclose(got.numpy(), want.astype(np.float32), rtol=2e-6)


@pytest.mark.parametrize("cls", [llvm.UInt32, llvm.UInt64, llvm.Int32, llvm.Float, llvm.Float64])
def test_lerp_of_equal_endpoints_is_the_endpoint(cls):
    a = cls(3, 5)
    np.testing.assert_array_equal(fj.lerp(a, a, 0.5).numpy(), [3, 5])
    np.testing.assert_array_equal(fj.lerp(a, 11, llvm.Float(0, 1)).numpy(), [3, 11])
