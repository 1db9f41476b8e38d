"""Behaviours of the gradient API that programs written for Dr.Jit 1.5 rely on (each checked
side by side with Dr.Jit): values given as sequences, error classes, detached gradient types,
``replace_grad`` with Python numbers and other types, copies inside ``suspend_grad``."""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.errors import GradArgumentError, GradSizeError
from frostjit.llvm.ad import Array3f, Float, Float64, UInt32


def values(a):
    return a.numpy().tolist()


@pytest.mark.parametrize("value", [[5, 6, 7], (5, 6, 7), np.array([5.0, 6.0, 7.0])])
def test_set_grad_and_grad_property_convert_a_sequence_with_the_arrays_constructor(value):
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    fj.set_grad(x, value)
    assert values(x.grad) == [5, 6, 7]
    x.grad = value
    fj.accum_grad(x, value)
    assert values(x.grad) == [10, 12, 14]


def test_accum_grad_of_a_sequence_into_a_size_one_variable_sums_it():
    x = Float(1.0)
    fj.enable_grad(x)
    fj.accum_grad(x, [1, 2, 3])
    assert values(x.grad) == [6]


def test_set_grad_of_a_static_vector_from_a_list_sets_its_components():
    v = Array3f(1, 2, 3)
    fj.enable_grad(v)
    fj.set_grad(v, [4, 5, 6])
    assert [values(c) for c in v.grad] == [[4], [5], [6]]


@pytest.mark.parametrize("write", [fj.set_grad, fj.accum_grad])
def test_a_gradient_of_the_wrong_size_is_a_runtime_error_naming_both_sizes(write):
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    with pytest.raises(RuntimeError, match="gradient of size 2 into AD variable .* which has size 3") as info:
        write(x, Float(1, 2))
    assert isinstance(info.value, GradSizeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("make", [lambda: Float(1, 2), lambda: Array3f(1, 2, 3),
                                  lambda: [Float(1), {"k": Float64(2)}]])
def test_grad_without_preserve_type_has_the_detached_types(make):
    x = make()
    fj.enable_grad(x)
    g = fj.grad(x, False)
    for leaf, orig in zip(fj.tree.leaves(g), fj.tree.leaves(x)):
        assert type(leaf) is type(fj.detach(orig, preserve_type=False))
        assert not type(leaf)._is_ad
    assert type(fj.grad(x, preserve_type=True)) is type(x)


@pytest.mark.parametrize("call", [lambda x: fj.forward_to(x), lambda x: fj.backward_to(x),
                                  lambda x: fj.forward_from(x), lambda x: fj.backward_from(x),
                                  lambda x: fj.forward(x), lambda x: fj.backward(x)])
def test_traversal_of_a_variable_that_is_not_grad_enabled_says_it_does_not_depend_on_the_input(call):
    with pytest.raises(RuntimeError, match="argument does not depend on the input"):
        call(Float(1.0))
    with pytest.raises(RuntimeError, match="argument does not depend on the input"):
        call(llvm.Float(1.0))


def test_replace_grad_of_a_python_number_takes_the_derivatives_of_the_array():
    a = Float(1.0)
    fj.enable_grad(a)
    b = fj.replace_grad(4.0, a)
    assert type(b) is Float and values(b) == [4] and fj.grad_enabled(b)
    fj.backward(b * 3)
    assert values(a.grad) == [3]
    c = fj.replace_grad(a, 4.0)          # no derivatives to take over: detached
    assert type(c) is Float and values(c) == [1] and not fj.grad_enabled(c)


def test_replace_grad_converts_the_derivative_side_to_the_value_type():
    a, b = Float(1.0, 2.0), Float64(5.0, 6.0)
    fj.enable_grad(b)
    c = fj.replace_grad(a, b)
    assert type(c) is Float and values(c) == [1, 2] and fj.grad_enabled(c)
    fj.backward(c * 2)
    assert type(b.grad) is Float64 and values(b.grad) == [2, 2]
    d = fj.replace_grad(a, UInt32(7, 8))
    assert values(d) == [1, 2] and not fj.grad_enabled(d)


def test_replace_grad_errors_are_runtime_errors_as_in_drjit():
    with pytest.raises(RuntimeError, match="incompatible input sizes \\(3 and 4\\)") as info:
        fj.replace_grad(Float(1, 2, 3), Float(1, 2, 3, 4))
    assert isinstance(info.value, GradSizeError)
    with pytest.raises(RuntimeError, match="incompatible input types") as info:
        fj.replace_grad((1.0,), (UInt32(1),))
    assert isinstance(info.value, GradArgumentError) and isinstance(info.value, TypeError)
    with pytest.raises(RuntimeError, match="keys"):
        fj.replace_grad({"a": Float(5)}, {"b": Float(1)})


@pytest.mark.parametrize("a,b,lengths", [
    (lambda: llvm.ad.ArrayXf([1, 2, 3], [4, 5, 6]), lambda g: g, "2 and 1"),
    (lambda: llvm.ad.ArrayXf([1, 2, 3], [4, 5, 6]), lambda g: 4.0, "2 and 1"),
    (lambda: 4.0, lambda g: llvm.ad.ArrayXf([1, 2, 3], [4, 5, 6]), "1 and 2"),
    (lambda: llvm.ad.ArrayXf(), lambda g: g, "0 and 1"),
], ids=["ArrayXf-Float", "ArrayXf-number", "number-ArrayXf", "empty-Float"])
def test_replace_grad_does_not_broadcast_over_a_dynamic_vector(a, b, lengths):
    # Dr.Jit 1.5: beside a dynamic vector, a flat array or number is a dynamic vector of one
    # component, and lengths must match (frostjit broadcast it over the components)
    g = Float(10, 20, 30)
    fj.enable_grad(g)
    with pytest.raises(RuntimeError, match=f"incompatible input lengths \\({lengths}\\)") as info:
        fj.replace_grad(a(), b(g))
    assert isinstance(info.value, GradArgumentError)


def test_replace_grad_of_dynamic_vectors_of_one_component_and_static_vectors():
    g = Float(10, 20, 30)
    fj.enable_grad(g)
    one = fj.replace_grad(llvm.ad.ArrayXf(Float(1.0)), g)      # one component of width 1: broadcast in width
    assert type(one) is llvm.ad.ArrayXf and fj.shape(one) == (1, 3) and fj.grad_enabled(one)
    fj.backward(fj.sum(one[0]) * 2)
    assert values(g.grad) == [2, 2, 2]
    c = llvm.ad.ArrayXf([1, 2, 3], [4, 5, 6], [7, 8, 9])
    fj.enable_grad(c)
    mixed = fj.replace_grad(Array3f([1, 2, 3], [4, 5, 6], [7, 8, 9]), c)   # static with dynamic: dynamic
    assert type(mixed) is llvm.ad.ArrayXf and fj.grad_enabled(mixed)
    static = fj.replace_grad(Array3f([1, 2, 3], [4, 5, 6], [7, 8, 9]), g)  # a flat array broadcasts
    assert type(static) is Array3f and fj.shape(static) == (3, 3) and values(static.y) == [4, 5, 6]


def test_copying_a_suspended_variable_gives_a_detached_copy():
    a = Float(1.0)
    fj.enable_grad(a)
    with fj.suspend_grad():
        f = Float(a)
        with fj.resume_grad():
            assert fj.grad_enabled(a) and not fj.grad_enabled(f)
    g = Float(a)                  # outside the scope: the same variable
    assert fj.grad_enabled(g)


def test_forward_with_clear_edges_drops_the_walked_edges():
    a = Float(1.0)
    fj.enable_grad(a)
    b = a * a * 2
    fj.forward_from(a, flags=fj.ADFlag.ClearInterior)
    fj.forward_from(a, flags=fj.ADFlag.ClearEdges)     # walks the edges once more, then drops them
    assert values(b.grad) == [8]
    fj.forward_from(a, flags=fj.ADFlag.ClearEdges)     # nothing left to walk
    assert values(a.grad) == [1] and values(b.grad) == [8]
    fj.backward(b)                                      # b is no longer connected to a
    assert values(a.grad) == [1]


# (x, y, z) gradients after seeding x with 1, traversing, seeding 10 more, traversing again,
# for y = 4 x, z = y + x at x = 3; Dr.Jit 1.5's numbers, measured side by side
FORWARD_TWICE = {
    (0, 0, 0): (11, 48, 64), (0, 0, 2): (0, 44, 59), (0, 4, 0): (11, 0, 60), (0, 4, 2): (0, 0, 55),
    (1, 0, 0): (11, 4, 5), (1, 0, 2): (10, 4, 5), (1, 4, 0): (11, 0, 5), (1, 4, 2): (10, 0, 5),
}


@pytest.mark.parametrize("flags", sorted(FORWARD_TWICE))
def test_two_forward_traversals_under_every_combination_of_flags(flags):
    x = Float(3.0)
    fj.enable_grad(x)
    y = x * 4.0
    z = y + x
    for seed in (1.0, 10.0):
        fj.accum_grad(x, seed)
        fj.enqueue(fj.ADMode.Forward, x)
        fj.traverse(fj.ADMode.Forward, flags=sum(flags))
    assert (values(x.grad)[0], values(y.grad)[0], values(z.grad)[0]) == FORWARD_TWICE[flags]


def test_a_leaf_error_of_replace_grad_is_the_cause_as_in_drjit():
    # Dr.Jit: the PyTree error's __cause__ is the leaf's "... incompatible input types."
    with pytest.raises(RuntimeError) as info:
        fj.replace_grad((1.0,), (UInt32(1),))
    assert "incompatible input types." in str(info.value.__cause__)
    assert isinstance(info.value.__cause__, GradArgumentError)
    with pytest.raises(RuntimeError) as info:       # a structure mismatch has no leaf cause
        fj.replace_grad({"a": Float(5)}, {"b": Float(1)})
    assert info.value.__cause__ is None


def test_set_label_with_both_forms_names_incompatible_arguments_as_in_drjit():
    with pytest.raises(TypeError, match="incompatible function arguments"):
        fj.set_label(Float(1), "a", b=Float(2))
