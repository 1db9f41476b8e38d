"""The gradient API: enabling, reading and writing gradients, traversal flags, scopes."""
from dataclasses import dataclass

import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.llvm import UInt32, Int32
from frostjit.llvm.ad import Float, Float64, Array3f, Array2f


def test_ad_module_reexports_integer_and_bool_types():
    assert llvm.ad.UInt32 is llvm.UInt32 and llvm.ad.Bool is llvm.Bool and llvm.ad.Int32 is llvm.Int32
    assert llvm.ad.Float is not llvm.Float


@pytest.mark.parametrize("make", [lambda: UInt32(1, 2), lambda: Int32(3), lambda: llvm.Bool(True),
                                  lambda: llvm.Float(1.0), lambda: llvm.Array3f(1, 2, 3),
                                  lambda: llvm.Array3u(1, 2, 3), lambda: 1.0, lambda: 1, lambda: None,
                                  lambda: "x"])
def test_enable_grad_of_a_value_that_cannot_carry_gradients_does_nothing(make):
    # Dr.Jit skips them without an error (its test suite enables integer and mask arrays)
    value = make()
    fj.enable_grad(value)
    fj.set_grad_enabled(value, True)
    fj.enable_grad(value, Float(1.0))
    assert not fj.grad_enabled(value)


def test_grad_of_non_enabled_or_non_ad_values_is_zeros_of_the_same_type_and_shape():
    for x in (Float(1, 2, 3), llvm.Float(1, 2), UInt32(4, 5), Array3f(1, 2, 3)):
        g = fj.grad(x)
        assert type(g) is type(x)
        assert np.array_equal(np.asarray(g), np.zeros_like(np.asarray(x)))


def test_grad_enabled_and_disable_grad():
    x = Float(1.0, 2.0)
    assert not fj.grad_enabled(x)
    fj.enable_grad(x)
    assert fj.grad_enabled(x)
    y = x * 2
    assert fj.grad_enabled(y) and fj.grad_enabled([UInt32(1), y])
    fj.disable_grad(x)
    assert not fj.grad_enabled(x)
    assert not fj.grad_enabled(x * 2)


def test_enable_grad_twice_keeps_the_accumulated_gradient():
    x = Float(3.0)
    fj.enable_grad(x)
    fj.backward(x * x)
    fj.enable_grad(x)
    assert fj.grad(x)[0] == 6


def test_backward_gives_gradient_of_leaf_and_clears_interior():
    x = Float(1.0, 2.0, 3.0)
    fj.enable_grad(x)
    y = x * x
    z = fj.sum(y)
    fj.backward(z)
    assert fj.grad(x).numpy().tolist() == [2, 4, 6]
    assert fj.grad(y).numpy().tolist() == [0, 0, 0]       # ADFlag.ClearInterior
    assert fj.grad(z).numpy().tolist() == [0]             # ADFlag.ClearInput


def test_backward_twice_on_one_graph_does_not_double_count():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = x * 3
    fj.backward(y)
    fj.backward(y)            # edges were cleared by the first traversal
    assert fj.grad(x).numpy().tolist() == [3, 3]


def test_gradients_accumulate_over_two_graphs():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    fj.backward(x * 3)
    fj.backward(x * x)
    assert fj.grad(x).numpy().tolist() == [5, 7]


def test_clear_none_keeps_the_graph():
    x = Float(2.0)
    fj.enable_grad(x)
    y = x * x
    fj.backward(y, flags=fj.ADFlag.ClearNone)
    fj.backward(y, flags=fj.ADFlag.ClearNone)
    assert fj.grad(x)[0] == 8


def test_backward_from_non_differentiable_raises_unless_allowed():
    x = Float(1.0)
    with pytest.raises(RuntimeError, match="grad-enabled"):
        fj.backward(x * 2)
    fj.backward(x * 2, flags=fj.ADFlag.Default | fj.ADFlag.AllowNoGrad)


def test_backward_from_static_vector_seeds_each_component():
    x = Float(2.0)
    fj.enable_grad(x)
    v = Array3f(x, x * 2, x)
    fj.backward(v)
    assert fj.grad(x)[0] == 4


def test_set_grad_accum_grad_clear_grad():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    fj.set_grad(x, 3.0)
    assert fj.grad(x).numpy().tolist() == [3, 3]
    fj.accum_grad(x, Float(1.0, 2.0))
    assert fj.grad(x).numpy().tolist() == [4, 5]
    fj.clear_grad(x)
    assert fj.grad(x).numpy().tolist() == [0, 0]


def test_set_grad_on_pytrees():
    @dataclass
    class P:
        a: Float
        b: Array2f
    p = P(Float(1.0), Array2f(1.0, 2.0))
    fj.enable_grad(p)
    fj.set_grad(p, 2.0)
    g = fj.grad(p)
    assert isinstance(g, P) and g.a[0] == 2 and g.b.numpy().ravel().tolist() == [2, 2]
    d = {"x": Float(1.0, 2.0), "n": UInt32(1), "s": "label"}
    fj.enable_grad(d)             # non-differentiable entries inside a PyTree are skipped
    assert fj.grad_enabled(d["x"]) and not fj.grad_enabled(d["n"])
    fj.set_grad(d, {"x": Float(5.0, 6.0), "n": UInt32(0), "s": "label"})
    assert fj.grad(d)["x"].numpy().tolist() == [5, 6]


def test_backward_to_uses_set_grad_of_a_later_variable():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = x * x
    fj.set_grad(y, Float(1.0, 10.0))
    g = fj.backward_to(x)
    assert g.numpy().tolist() == [2, 40]


def test_forward_from_and_forward_to():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = x * x * 3
    fj.forward(x)
    assert fj.grad(y).numpy().tolist() == [6, 12]
    a = Float(1.0, 2.0)
    fj.enable_grad(a)
    b = fj.sin(a) * 2
    fj.set_grad(a, Float(1.0, 0.5))
    g = fj.forward_to(b)
    assert np.allclose(g.numpy(), 2 * np.cos([1.0, 2.0]) * [1.0, 0.5], rtol=1e-6)


def test_detach_keeps_value_and_type_but_drops_the_graph():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = fj.detach(x * 2)
    assert type(y) is Float and not fj.grad_enabled(y)
    assert y.numpy().tolist() == [2, 4]
    z = fj.detach(x, preserve_type=False)
    assert type(z) is llvm.Float
    v = fj.detach(Array3f(x, x, x), preserve_type=False)
    assert type(v) is llvm.Array3f


def test_replace_grad_uses_value_of_first_and_derivative_of_second():
    x = Float(2.0)
    fj.enable_grad(x)
    y = fj.replace_grad(Float(100.0), x * 3)
    assert y[0] == 100
    fj.backward(y * 1)
    assert fj.grad(x)[0] == 3


def test_suspend_grad_stops_recording_and_resume_grad_restarts():
    x = Float(1.0)
    fj.enable_grad(x)
    with fj.suspend_grad():
        assert not fj.grad_enabled(x)
        y = x * 2
        with fj.resume_grad():
            z = x * 3
    assert not fj.grad_enabled(y) and fj.grad_enabled(z)
    assert fj.grad_enabled(x)


def test_suspend_grad_for_some_variables_only():
    a, b = Float(1.0), Float(2.0)
    fj.enable_grad(a, b)
    with fj.suspend_grad(a):
        c = a * b
    fj.backward(c)
    assert fj.grad(a)[0] == 0 and fj.grad(b)[0] == 1


def test_suspend_grad_when_false_does_nothing():
    x = Float(1.0)
    fj.enable_grad(x)
    with fj.suspend_grad(when=False):
        y = x * 2
    assert fj.grad_enabled(y)


def test_isolate_grad_postpones_gradients_of_outer_variables_to_scope_exit():
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = x * x                      # created outside the scope
    with fj.isolate_grad():
        z = y * 3
        fj.backward(fj.sum(z))
        assert fj.grad(x).numpy().tolist() == [0, 0]      # not yet
    assert fj.grad(x).numpy().tolist() == [6, 12]


def test_integer_results_are_never_grad_enabled():
    x = Float(1.5, 2.5)
    fj.enable_grad(x)
    assert not fj.grad_enabled(UInt32(x)) and not fj.grad_enabled(x > 2)


def test_grad_of_float64_variable_in_float64():
    x = Float64(1e-30)
    fj.enable_grad(x)
    fj.backward(x * 1e10)
    assert type(fj.grad(x)) is Float64 and fj.grad(x)[0] == 1e10


def test_intermediate_gradients_are_lazy_until_read():
    x = Float(np.linspace(0, 1, 1000).astype(np.float32))
    fj.enable_grad(x)
    y = fj.sin(x) * 3
    fj.backward(fj.sum(y))
    g = fj.grad(x)
    assert g.state == fj.VarState.Unevaluated
    assert np.allclose(g.numpy(), 3 * np.cos(np.linspace(0, 1, 1000)), atol=1e-5)
