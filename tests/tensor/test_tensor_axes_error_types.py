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


# Session r16 (Dr.Jit's test_tensor.py test35-37): the axis rearrangements Dr.Jit defines only on
# tensors refuse a 1-D array with its TypeError (frostjit took it as a tensor of shape (n,)), and
# transpose's/split's argument errors have Dr.Jit's RuntimeError type and wording.
_REARRANGE = {
    "transpose": lambda a: fj.transpose(a),
    "swapaxes": lambda a: fj.swapaxes(a, 0, 1),
    "moveaxis": lambda a: fj.moveaxis(a, 0, 0),
    "squeeze": lambda a: fj.squeeze(a),
    "expand_dims": lambda a: fj.expand_dims(a, 0),
    "split": lambda a: fj.split(a, 1),
    "array_split": lambda a: fj.array_split(a, 1),
}


@pytest.mark.parametrize("name", sorted(_REARRANGE))
@pytest.mark.parametrize("array", [lambda: UInt32(1, 2, 3), lambda: fj.scalar.ArrayXf(1, 2), lambda: 1.0],
                         ids=["llvm.UInt", "scalar.ArrayXf", "float"])
def test_rearrangements_refuse_a_non_tensor(name, array):
    with pytest.raises(TypeError, match=rf"{name}\(\): expected a tensor input \(got "):
        _REARRANGE[name](array())


@pytest.mark.parametrize("cls", [RuntimeError, ValueError])
@pytest.mark.parametrize("axes, match", [((0,), r"'axes' must have length 2 \(got 1\)"),
                                         ((0, 1, 2), r"'axes' must have length 2 \(got 3\)"),
                                         ((0, 5), "out of bounds"),
                                         ((0, -3), "out of bounds"),
                                         ((1, 1), r"must be a permutation of \(0, 1, \.\.\., 1\)"),
                                         ((-1, 1), "must be a permutation")])
def test_transpose_axes_errors(cls, axes, match):
    with pytest.raises(cls, match=match):
        fj.transpose(_t((2, 3)), axes)


def test_transpose_of_valid_axes_still_permutes():
    t = _t((2, 3, 4))
    assert fj.transpose(t, (-1, 0, 1)).shape == (4, 2, 3)
    assert fj.transpose(t, [2, 1, 0]).shape == (4, 3, 2)


@pytest.mark.parametrize("cls", [RuntimeError, ValueError])
def test_split_into_unequal_parts(cls):
    with pytest.raises(cls, match="of size 10 along axis 0 cannot be equally split into 3 parts"):
        fj.split(_t((10,)), 3)


@pytest.mark.parametrize("cls", [TypeError, ValueError])
@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4)])
def test_T_of_a_tensor_that_is_not_2d(cls, shape):
    # Dr.Jit test_tensor test27: '.T' is only defined for 2-D tensors (TypeError); frostjit's .T
    # reversed every axis.  fj.transpose still does.
    t = _t(shape)
    with pytest.raises(cls, match=r"'\.T' is only defined for 2-D tensors \(got rank"):
        t.T
    assert fj.transpose(t).shape == shape[::-1]


@pytest.mark.parametrize("cls", [TypeError, ValueError])
@pytest.mark.parametrize("shape", [(), (5,)])
def test_mT_of_a_tensor_of_rank_below_2(cls, shape):
    with pytest.raises(cls, match="at least 2 dimensions"):
        _t(shape).mT


def test_T_of_a_2d_tensor_is_its_transpose():
    assert fj.all(_t((2, 3)).T == TensorXu([[0, 3], [1, 4], [2, 5]]), axis=None)
