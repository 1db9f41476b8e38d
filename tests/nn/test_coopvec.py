"""Cooperative vectors: construction, arithmetic and lane-wise functions stay cooperative vectors."""
import numpy as np
import pytest

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm.ad import Float, Float16, UInt32


def values(v):
    return [np.asarray(c.numpy()).tolist() for c in v]


def test_coopvec_flattens_arrays_numbers_and_pytrees():
    x = nn.CoopVec(Float(1, 2), 3.0, [Float(4, 5), (Float(6, 7),)], {"a": Float(8, 9)})
    assert isinstance(x, nn.CoopVec) and len(x) == 5 and x.type is Float
    assert values(x) == [[1, 2], [3, 3], [4, 5], [6, 7], [8, 9]]     # (numbers widened, as Dr.Jit)
    assert repr(x) == "frostjit.nn.CoopVec[frostjit.llvm.ad.Float, shape=(5, 2)]"
    assert [type(c) for c in x] == [Float] * 5
    # Dr.Jit 1.5: CoopVec(Float(1, 2), Float(3), 5.0) -> [[1, 2], [3, 3], [5, 5]]
    assert values(nn.CoopVec(Float(1, 2), Float(3), 5.0)) == [[1, 2], [3, 3], [5, 5]]
    assert values(nn.CoopVec(Float(1), 2.0)) == [[1], [2]]


def test_coopvec_needs_one_jit_array_and_converts_to_the_first_ones_type():
    with pytest.raises(TypeError, match="at least one JIT-compiled"):
        nn.CoopVec(1.0, 2.0)
    assert nn.CoopVec(Float16(1.5), 2.0).type is Float16
    # Dr.Jit 1.5 (measured): the first JIT array gives the element type, the others are
    # converted: CoopVec(Float16(1), 3.0, Array2f(4, 5)) (coop_vec.rst) is four Float16s,
    # CoopVec(UInt32(2), Float(1.5)) two UInts [2], [1]
    from frostjit.llvm.ad import Array2f
    v = nn.CoopVec(Float16(1), 3.0, Array2f(4, 5))
    assert v.type is Float16 and [type(c) for c in v] == [Float16] * 4 and values(v) == [[1], [3], [4], [5]]
    v = nn.CoopVec(UInt32(2), Float(1.5))
    assert v.type is UInt32 and values(v) == [[2], [1]]
    v = nn.CoopVec(Float(1.5), UInt32(2))
    assert v.type is Float and values(v) == [[1.5], [2]]
    # conversions between AD types keep the gradients flowing
    h = Float16(1.0, 2.0)
    fj.enable_grad(h)
    v = nn.CoopVec(Float(2, 3), h)
    fj.backward(fj.sum(v * v))
    assert fj.grad(h).numpy().tolist() == [2, 4]


def test_coopvec_flattens_generators_and_iterators():
    # the guide's `nn.CoopVec(dr.sin(v) for v in x)`
    x = nn.CoopVec(Float(0, 1), Float(2, 3))
    y = nn.CoopVec(fj.sin(c) for c in x)
    assert len(y) == 2 and y.type is Float
    np.testing.assert_allclose(values(y), np.sin([[0, 1], [2, 3]]), rtol=1e-6)
    assert values(nn.CoopVec(iter([Float(1), Float(2)]), map(Float, [3]))) == [[1], [2], [3]]


def test_coopvec_arithmetic_and_lane_functions_return_coopvecs():
    x = nn.CoopVec(Float(1, 2), Float(3, 4))
    for r in (x + 1, 1 + x, x - 1, 1 - x, 2 * x, x * x, abs(x), fj.maximum(x, 2.5), fj.minimum(x, 2.5),
              fj.fma(x, x, 1.0), fj.exp2(x), fj.tanh(x), fj.select(x > 2, x, 0),
              fj.clip(x, 0, 3)):
        assert isinstance(r, nn.CoopVec), type(r)
    assert values(fj.maximum(x, 2.5)) == [[2.5, 2.5], [3, 4]]
    assert values(fj.step(x, 3.0)) == [[0, 0], [1, 1]]
    assert values(fj.select(x > 1, x, 0)) == [[0, 2], [3, 4]]
    assert np.asarray(fj.sum(x).numpy()).tolist() == [4, 6]       # Dr.Jit: the sum of the components


def test_coopvec_carries_gradients():
    a = Float(1.0, 2.0)
    fj.enable_grad(a)
    x = nn.CoopVec(a, 3.0)
    y = fj.sum(x * x)
    fj.backward(y)
    assert fj.grad(a).numpy().tolist() == [2, 4]


def test_widened_numbers_follow_the_width_in_frozen_functions():
    @fj.freeze
    def f(x):
        return fj.sum(nn.CoopVec(x, 2.0) * 3)

    for n in (1, 7, 1000, 7):
        x = fj.arange(Float, n)
        assert np.asarray(f(x).numpy()).tolist() == (np.arange(n) * 3 + 6).tolist()


@pytest.mark.parametrize("dtype, expected", [
    (Float16, [[1.5, 2.0], [3.25, 3.25]]),
    (fj.llvm.ad.Float64, [[1.5, 2.0], [3.25, 3.25]]),
    (UInt32, [[1, 2], [3, 3]]),             # (floats to integers truncate, as Dr.Jit)
])
def test_cast_converts_every_component(dtype, expected):
    out = nn.cast(nn.CoopVec(Float(1.5, 2), Float(3.25)), dtype)
    assert isinstance(out, nn.CoopVec) and len(out) == 2
    assert all(type(c) is dtype for c in out)
    assert [c.numpy().tolist() for c in out] == expected


def test_cast_keeps_gradients_and_checks_its_arguments():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    second = list(nn.cast(nn.CoopVec(x, x * 2), Float16))[1]
    fj.backward(second)
    assert x.grad.numpy().tolist() == [2, 2]
    with pytest.raises(TypeError, match="'vec'"):
        nn.cast(Float(1), Float16)
    with pytest.raises(TypeError, match="'dtype'"):
        nn.cast(nn.CoopVec(Float(1)), float)


def test_step_of_cooperative_vectors_keeps_their_element_type():
    out = fj.step(nn.CoopVec(Float(0.1), Float(0.2)), nn.CoopVec(Float(0.15), Float(0.15)))
    assert isinstance(out, nn.CoopVec) and all(type(c) is Float for c in out)
    assert [c.numpy().tolist() for c in out] == [[0.0], [1.0]]
    assert type(fj.step(Float(1), Float(2))) is fj.llvm.ad.Int       # plain arrays: Int (Dr.Jit)


def test_a_views_dtype_is_the_public_var_type():
    buffer = fj.llvm.ad.TensorXf16(np.arange(6, dtype=np.float16).reshape(2, 3))
    assert nn.view(buffer).dtype == fj.VarType.Float16
    packed = nn.pack(buffer)                # (one tensor in: one view out, as Dr.Jit 1.5)
    assert packed.dtype == fj.VarType.Float16


def test_evaluating_a_cooperative_vector_raises_as_in_drjit():
    # (fj.eval/schedule/make_opaque evaluated the components; Dr.Jit refuses: unpack first)
    x = nn.CoopVec(Float(1, 2), Float(3, 4)) * 2
    for f in (fj.eval, fj.schedule, fj.make_opaque):
        with pytest.raises(RuntimeError, match="Cooperative vectors cannot be evaluated. They must be unpacked"):
            f(x)
    a, b = x
    fj.eval(a, b)
    assert a.numpy().tolist() == [2, 4] and b.numpy().tolist() == [6, 8]


def test_enable_grad_of_a_cooperative_vector_needs_grad_enabled_components():
    with pytest.raises(RuntimeError, match="construct it from grad-enabled components"):
        fj.enable_grad(nn.CoopVec(Float(1), Float(2)))
    a, b = Float(1), Float(2)
    fj.enable_grad(a, b)
    z = nn.CoopVec(a, b)
    fj.enable_grad(z)                                   # (its components carry gradients: fine)
    assert fj.grad_enabled(z) and not fj.grad_enabled(fj.detach(z))
    x, y = z
    x.grad, y.grad = 4, 5
    fj.backward_to(a, b)
    assert (a.grad.numpy().tolist(), b.grad.numpy().tolist()) == ([4], [5])
    fj.disable_grad(z)
    assert not fj.grad_enabled(z)
