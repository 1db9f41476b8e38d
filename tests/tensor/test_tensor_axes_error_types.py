"""Error types of ``expand_dims``/``squeeze``/``stack`` as Dr.Jit 1.5 raises them (and NumPy's
``ValueError`` kept): found in session r15 by Dr.Jit's ``test_tensor.py`` test31/32/34, whose
``pytest.raises(RuntimeError / TypeError, match=...)`` frostjit's plain ``ValueError`` failed."""
import pytest

import frostjit as fj
from frostjit.llvm import TensorXu, UInt32


def _t(shape):
    n = 1
    for d in shape:
        n *= d
    return TensorXu(fj.arange(UInt32, n), shape)


@pytest.mark.parametrize("cls", [RuntimeError, ValueError])
def test_expand_dims_duplicate_axis(cls):
    with pytest.raises(cls, match="duplicate"):
        fj.expand_dims(_t((2, 3)), axis=(0, 0))


@pytest.mark.parametrize("cls", [RuntimeError, ValueError])
def test_squeeze_of_an_axis_longer_than_one(cls):
    with pytest.raises(cls, match="not 1"):
        fj.squeeze(_t((2, 3)), axis=0)


@pytest.mark.parametrize("cls", [TypeError, ValueError, RuntimeError])
def test_stack_of_different_shapes(cls):
    with pytest.raises(cls, match="same shape"):
        fj.stack([_t((2, 3)), _t((3, 4))])


@pytest.mark.parametrize("cls", [RuntimeError, ValueError])
def test_stack_of_nothing(cls):
    with pytest.raises(cls, match="at least one"):
        fj.stack([])
