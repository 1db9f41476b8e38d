"""AD of PyTrees: every gradient function walks its arguments as frostjit.tree defines them,
returns the same structure, and agrees with the same calls made leaf by leaf."""
import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import tree
from frostjit.llvm import UInt32
from frostjit.llvm import Float as PlainFloat, Array3f as PlainArray3f
from frostjit.llvm.ad import Float, Array3f

from pytree_strategies import (Attrs, Box, FrozenBox, Pair, Struct, Traversable, assert_leaves_equal,
                               assert_same_structure, numpy_leaves, pytrees)


@st.composite
def ad_arrays(draw):
    n = draw(st.sampled_from([1, 7, 1000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    if draw(st.booleans()):
        return Float(rng.uniform(-2, 2, n).astype(np.float32))
    return Array3f(rng.uniform(-2, 2, (3, n)).astype(np.float32))


def loss_of(t):
    """sum over the arrays of t of sum(a * a * 3 + sin(a))."""
    total = Float(0.0)
    for a in tree.leaves(t):
        total = total + fj.sum(a * a * 3 + fj.sin(a))
    return total


@given(pytrees(ad_arrays()))
def test_backward_through_a_pytree_matches_per_leaf_derivatives(t):
    t = [t]     # (a list, so that enable_grad changes the arrays in it)
    fj.enable_grad(t)
    fj.backward(loss_of(t), fj.ADFlag.Default | fj.ADFlag.AllowNoGrad)
    g = fj.grad(t)
    # the same structure; Python numbers have a zero gradient
    assert_same_structure(g, tree.transform(t, lambda a: a, lambda v: type(v)(0) if isinstance(v, (int, float)) else v))
    want = [6 * a + np.cos(a) for a in numpy_leaves(t)]
    got = numpy_leaves(g)
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


@given(pytrees(ad_arrays()))
def test_enable_grad_then_disable_grad_reach_every_array_of_a_pytree(t):
    t = [t]     # (a list, so that enable_grad changes the arrays in it)
    fj.enable_grad(t)
    assert all(fj.grad_enabled(a) for a in tree.leaves(t))
    assert fj.grad_enabled(t) == bool(tree.leaves(t))
    fj.disable_grad(t)
    assert not any(fj.grad_enabled(a) for a in tree.leaves(t))


@given(pytrees(ad_arrays()))
def test_detach_of_a_pytree_detaches_every_array(t):
    t = [t]     # (a list, so that enable_grad changes the arrays in it)
    fj.enable_grad(t)
    d = fj.detach(t, preserve_type=False)
    assert_same_structure(d, tree.transform(t, lambda a: PlainFloat(a.numpy())))
    assert not any(fj.grad_enabled(a) or a._is_ad for a in tree.leaves(d))
    assert_leaves_equal(numpy_leaves(d), numpy_leaves(t))


@pytest.mark.parametrize("make", [
    lambda x: Traversable(x, None), lambda x: Attrs([x], 3), lambda x: Struct(x, x, required=1),
    lambda x: Pair(x, 1), lambda x: collections.OrderedDict(k=x), lambda x: FrozenBox(x, "s")])
def test_ad_sees_objects_using_the_traversal_protocol(make):
    """Regression: enable_grad/grad of an object using __fj_traverse__ did nothing (the AD walker
    only knew lists, tuples, dicts, dataclasses and DRJIT_STRUCT)."""
    x = Float(1, 2, 3)
    obj = make(x)
    fj.enable_grad(obj)
    assert fj.grad_enabled(x)
    fj.backward(fj.sum(x * x))
    g = fj.grad(obj)
    assert type(g) is type(obj)
    assert tree.leaves(g)[0].numpy().tolist() == [2, 4, 6]
    fj.clear_grad(obj)
    assert fj.grad(x).numpy().tolist() == [0, 0, 0]


def test_grad_of_python_numbers_in_a_pytree_is_zero_of_their_type():
    """Regression: grad({"n": 5}) kept 5 (Dr.Jit: 0); strings and None are kept."""
    g = fj.grad({"x": Float(1, 2), "n": 5, "f": 2.5, "s": "label", "none": None})
    assert g["n"] == 0 and type(g["n"]) is int and g["f"] == 0.0 and g["s"] == "label" and g["none"] is None


def test_detach_without_preserving_types_gives_plain_static_vectors_inside_pytrees():
    """Regression: detach({"v": Array3f}, preserve_type=False) built an AD Array3f of plain Floats."""
    d = fj.detach({"v": Array3f(1, 2, 3), "l": [Float(1)]}, preserve_type=False)
    assert type(d["v"]) is PlainArray3f and type(d["l"][0]) is PlainFloat


def test_replace_grad_of_pytrees_works_leaf_by_leaf():
    """Regression: replace_grad of two tuples raised TypeError (Dr.Jit maps them pairwise)."""
    a, b = Float(1, 2), Float(3, 4)
    fj.enable_grad(b)
    out = fj.replace_grad((a, {"k": a}, 3), (b * 2, {"k": b * 5}, 3))
    assert out[0].numpy().tolist() == [1, 2] and out[2] == 3
    fj.backward(fj.sum(out[0]) + fj.sum(out[1]["k"]))
    assert fj.grad(b).numpy().tolist() == [7, 7]


def test_replace_grad_of_pytrees_of_different_structure_names_the_path():
    with pytest.raises(TypeError, match=r"replace_grad\(\): b does not match a at a\[1\]: expected a list of 1 entry"):
        fj.replace_grad((Float(1), [Float(1)]), (Float(1), [Float(1), Float(2)]))


def test_set_grad_of_a_pytree_from_a_pytree_matches_per_leaf():
    x, y = Float(1, 2), Array3f(1, 2, 3)
    t = Box(x, {"y": y})
    fj.enable_grad(t)
    fj.set_grad(t, Box(Float(5, 6), {"y": Array3f(7, 8, 9)}))
    assert fj.grad(x).numpy().tolist() == [5, 6] and fj.grad(y).numpy().ravel().tolist() == [7, 8, 9]
    fj.accum_grad(t, 1.0)
    assert fj.grad(x).numpy().tolist() == [6, 7]


def test_set_grad_of_pytrees_of_different_structure_names_the_path():
    """Regression: a missing key raised a bare KeyError, a shorter list a ValueError."""
    t = {"a": [Float(1), Float(2)]}
    fj.enable_grad(t)
    with pytest.raises(TypeError, match=r'set_grad\(\): src does not match dst at dst\["a"\]: expected a list of 2'):
        fj.set_grad(t, {"a": [Float(1)]})
    with pytest.raises(TypeError, match=r"the keys differ \(\['a'\] and \['b'\]\)"):
        fj.set_grad(t, {"b": [Float(1), Float(1)]})


def test_set_grad_of_a_static_vector_into_a_1d_array_names_the_path():
    x = Float(1)
    fj.enable_grad(x)
    with pytest.raises(TypeError, match=r"set_grad\(\): dst\[0\]: cannot assign a Array3f to a Float"):
        fj.set_grad([x], [Array3f(1, 2, 3)])


def test_backward_to_and_forward_to_return_the_structure_of_their_arguments():
    a, b = Float(1, 2, 3), Float(4, 5)
    fj.enable_grad(a, b)
    ya, yb = a * 2, b * 3
    fj.set_grad((ya, yb), (Float(1), Float(1)))
    g = fj.backward_to({"a": a, "b": [b]})
    assert type(g) is dict and g["a"].numpy().tolist() == [2, 2, 2] and g["b"][0].numpy().tolist() == [3, 3]


def test_suspend_grad_with_a_pytree_suspends_its_arrays():
    x, y = Float(1, 2), Float(3)
    fj.enable_grad(x, y)
    with fj.suspend_grad(Traversable(x, None)):
        assert not fj.grad_enabled(x) and fj.grad_enabled(y)


def test_gather_and_scatter_of_pytrees_are_differentiable():
    src = {"a": Float(1, 2, 3), "b": Array3f([1, 2, 3], [4, 5, 6], [7, 8, 9])}
    fj.enable_grad(src)
    got = fj.gather(dict, src, UInt32(2, 2, 0))
    fj.backward(fj.sum(got["a"]) + fj.sum(got["b"].y))
    assert fj.grad(src)["a"].numpy().tolist() == [1, 0, 2]
    assert fj.grad(src)["b"].numpy().tolist() == [[0, 0, 0], [1, 0, 2], [0, 0, 0]]
