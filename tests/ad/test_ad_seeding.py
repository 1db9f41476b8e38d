"""Which gradient a traversal starts from (Dr.Jit 1.5's rules, measured side by side).

``backward(x)`` / ``forward(x)``: ``set_grad(x, 1)`` then propagate.  ``backward_from(x)`` /
``forward_from(x)``: propagate the gradient already assigned to ``x``; seed 1 only if none is.
``set_grad`` clears every array of its target, then adds: a variable appearing k times in a static
vector receives k contributions.  A literal +0 is "no gradient" (-0.0 is one); an evaluated zero array is one.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import Float, Array3f


def leaf(*values):
    x = Float(*(values or (1.0, 2.0)))
    fj.enable_grad(x)
    return x


def opaque(*values):
    g = Float(*values)
    fj.make_opaque(g)
    return g


@pytest.mark.parametrize("seed, expected", [
    (None, [2, 2]), (1000.0, [2000, 2000]), (0.0, [2, 2]),
    (lambda: Float(3.0, 4.0), [6, 8]), (lambda: opaque(0.0, 0.0), [0, 0]), (lambda: opaque(0.0, 5.0), [0, 10]),
])
@pytest.mark.parametrize("mode", ["backward_from", "forward_from"])
def test_from_functions_propagate_an_assigned_gradient(seed, expected, mode):
    # issue 8 item 20
    a = leaf()
    b = a * 2
    start = b if mode == "backward_from" else a
    if seed is not None:
        fj.set_grad(start, seed() if callable(seed) else seed)
    if mode == "backward_from":
        fj.backward_from(b)
        assert fj.grad(a).numpy().tolist() == expected
    else:
        y = b * 1
        fj.forward_from(a)
        assert fj.grad(y).numpy().tolist() == expected


@pytest.mark.parametrize("mode", ["backward", "forward"])
def test_backward_and_forward_replace_an_assigned_gradient(mode):
    a = leaf()
    b = a * 2
    if mode == "backward":
        fj.set_grad(b, 1000.0)
        fj.backward(b)
        assert fj.grad(a).numpy().tolist() == [2, 2]
    else:
        fj.set_grad(a, 1000.0)
        fj.forward(a)
        assert fj.grad(b).numpy().tolist() == [2, 2]


def test_accum_grad_then_backward_from_uses_it():
    a = leaf(1.0)
    b = a * 2
    fj.accum_grad(b, 5.0)
    fj.accum_grad(b, 5.0)
    fj.backward_from(b)
    assert fj.grad(a).numpy().tolist() == [20]


def test_set_grad_on_static_vector_counts_repeated_components():
    a = leaf(1.0)
    fj.set_grad(a, 7.0)
    v = Array3f(a, a, a)
    fj.set_grad(v, 1.0)
    assert fj.grad(a).numpy().tolist() == [3]


@pytest.mark.parametrize("build, grads, func, expected", [
    (lambda a: Array3f(a * 1, a * 2, a * 3), (10, 20, 30), "backward_from", 140),
    (lambda a: Array3f(a * 1, a * 2, a * 3), (10, 20, 30), "backward", 6),
    (lambda a: Array3f(a * 1, a * 2, a * 3), None, "backward_from", 6),
    (lambda a: Array3f(a, a, a), None, "backward_from", 3),
    (lambda a: Array3f(a, a, a), None, "backward", 3),
])
def test_backward_of_static_vector(build, grads, func, expected):
    a = leaf(1.0)
    v = build(a)
    if grads is not None:
        fj.set_grad(v, Array3f(*grads))
    getattr(fj, func)(v)
    assert fj.grad(a).numpy().tolist() == [expected]


def test_backward_from_static_vector_with_one_component_gradient_seeds_nothing_else():
    a = leaf(1.0)
    v = Array3f(a * 1, a * 2, a * 3)
    fj.set_grad(v.y, 20.0)
    fj.backward_from(v)
    assert fj.grad(a).numpy().tolist() == [40]


def test_backward_of_vector_overwrites_gradients_of_its_components():
    a = leaf(1.0)
    fj.set_grad(a, 7.0)
    fj.backward(Array3f(a, a * 2, a))
    assert fj.grad(a).numpy().tolist() == [4]
    a = leaf(1.0)
    fj.set_grad(a, 7.0)
    fj.backward(Array3f(a * 1, a * 2, a * 3))
    assert fj.grad(a).numpy().tolist() == [13]        # a is not a component: its gradient stays


def test_forward_of_static_vector_reaches_the_results():
    a, b = leaf(1.0), leaf(1.0)
    y = a * 2 + b * 3
    fj.forward(Array3f(a, b, a))
    assert fj.grad(y).numpy().tolist() == [7]
    a, b = leaf(1.0), leaf(1.0)
    y = a * 2 + b * 3
    fj.set_grad(b, 10.0)
    fj.forward_from(Array3f(a, b, a))
    assert fj.grad(y).numpy().tolist() == [30]
    assert fj.grad(a).numpy().tolist() == [0] and fj.grad(b).numpy().tolist() == [0]


def test_forward_clears_only_inputs_it_propagated_from():
    a = leaf(1.0)
    fj.set_grad(a, 7.0)
    fj.forward_from(a)                           # nothing depends on a: it keeps its gradient
    assert fj.grad(a).numpy().tolist() == [7]
    a = leaf(1.0)
    y = a * 2
    fj.set_grad(a, 7.0)
    fj.forward_from(a)
    assert fj.grad(a).numpy().tolist() == [0] and fj.grad(y).numpy().tolist() == [14]
    a = leaf(1.0)
    y = a * 2
    fj.set_grad(a, 7.0)
    fj.forward_from(a, flags=fj.ADFlag.ClearInterior)
    assert fj.grad(a).numpy().tolist() == [7] and fj.grad(y).numpy().tolist() == [14]


def test_forward_accumulates_into_a_result_that_has_a_gradient():
    a = leaf(1.0)
    b = a * 2
    fj.set_grad(b, 5.0)
    fj.forward(a)
    assert fj.grad(b).numpy().tolist() == [7]


def test_backward_of_one_array_that_is_suspended_is_not_seeded():
    # (the one-array path of backward's seeding must honour the scopes like set_grad does)
    a = leaf()
    b = a * 2
    with fj.suspend_grad(b):
        with pytest.raises(RuntimeError, match="does not depend on the input variable"):
            fj.backward(b)
        fj.backward(b, fj.ADFlag.Default | fj.ADFlag.AllowNoGrad)
    assert fj.grad(a).numpy().tolist() == [0, 0]
    fj.backward(b)
    assert fj.grad(a).numpy().tolist() == [2, 2]


def _bits(a):
    return np.asarray(a.numpy(), dtype=np.float32).view(np.uint32).tolist()


NEG0 = 0x80000000


@pytest.mark.parametrize("how", ["set_grad", "set_grad array", "accum_grad"])
def test_a_negative_zero_is_a_gradient_only_positive_zero_is_none(how):
    # Dr.Jit 1.5 side by side: only a literal +0 means "no gradient" (its bits are tested); -0.0
    # is assigned (grad reads -0) and backward_from propagates it (d(2a) -> -0), where +0 seeds 1
    for value, expected in ((-0.0, [NEG0, NEG0]), (0.0, _bits(Float(2.0, 2.0)))):
        a = leaf()
        b = a * 2
        seed = Float(value) if how == "set_grad array" else value
        (fj.accum_grad if how == "accum_grad" else fj.set_grad)(b, seed)
        if np.signbit(value):
            assert _bits(fj.grad(b)) == [NEG0, NEG0]
        fj.backward_from(b)
        assert _bits(fj.grad(a)) == expected, (how, value)
