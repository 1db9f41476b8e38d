"""frostjit.tree.walk: traverse, leaves, transform, flatten / unflatten of one PyTree."""
import logging

import numpy as np
import pytest
from hypothesis import given

from frostjit import tree
from frostjit.llvm import Float, Array3f

from pytree_strategies import Box, assert_leaves_equal, assert_same_structure, numpy_leaves, pytrees, random_arrays

@given(pytrees(random_arrays()))
def test_leaves_are_the_leaves_of_flatten_in_order(t):
    leaves, _ = tree.flatten(t)
    assert [id(a) for a in tree.leaves(t)] == [id(a) for a in leaves]


def test_leaves_visit_vector_components_and_skip_python_values():
    v = Array3f(1, 2, 3)
    t = {"b": (2, v), "a": [Float(1), None, "s"]}
    assert tree.leaves(t) == [v.x, v.y, v.z, t["a"][0]]


def test_a_shared_subtree_counts_at_each_place():
    x = Float(1)
    shared = [x]
    assert tree.leaves((shared, shared)) == [x, x]


def test_traverse_skips_a_reference_cycle(caplog):
    x = Float(1)
    cyclic = [x]
    cyclic.append(cyclic)
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        assert tree.leaves(cyclic) == [x]
    assert "reference cycle" in caplog.text


@pytest.mark.parametrize("walk", [
    lambda t: tree.transform(t, lambda a: a), lambda t: tree.flatten(t),
    lambda t: tree.map2(t, t, lambda x, y: x)])
def test_rebuilding_walks_raise_on_a_reference_cycle_naming_the_path(walk):
    box = Box(Float(1), None)
    box.b = {"back": box}
    with pytest.raises(ValueError, match=r'\.b\["back"\] refers back to a Box'):
        walk(box)


class _FreshChildren:
    """A protocol object whose getter makes new containers on every call."""

    def __init__(self, a, inner=None):
        self.a, self.inner = a, inner

    def __fj_traverse__(self):
        return {"t": [self.a], "inner": (self.inner,)}


def test_children_a_protocol_getter_makes_afresh_are_all_visited():
    # fresh lists and tuples are freed after their visit and their addresses reused: the cycle
    # check must not take a new one for a container already on the path
    xs = [Float(i) for i in range(40)]
    t = None
    for x in xs:
        t = _FreshChildren(x, t)
    assert [a.numpy().tolist() for a in tree.leaves([t, t])] == \
        [[float(i)] for i in reversed(range(40))] * 2
    out = tree.transform(t, lambda a: a + 1)      # (no __fj_assign__: children set by name)
    assert out.t[0].numpy().tolist() == [40.0] and out.inner[0].t[0].numpy().tolist() == [39.0]


def test_traverse_calls_value_fn_for_python_values():
    seen = []
    tree.traverse({"a": Float(1), "b": [3, None]}, lambda a: seen.append("array"), seen.append)
    assert seen == ["array", 3, None]


@given(pytrees(random_arrays()))
def test_flatten_then_unflatten_rebuilds_the_same_tree(t):
    leaves, treedef = tree.flatten(t)
    back = tree.unflatten(treedef, leaves)
    assert_same_structure(back, t)
    assert [id(a) for a in tree.leaves(back)] == [id(a) for a in leaves]
    assert treedef.num_leaves == len(leaves)


@given(pytrees(random_arrays()))
def test_transform_maps_every_array_like_numpy(t):
    out = tree.transform(t, lambda a: a * 2 + 1)
    assert_same_structure(out, t)
    assert_leaves_equal(numpy_leaves(out), [a * np.float32(2) + np.float32(1) for a in numpy_leaves(t)])


@given(pytrees(random_arrays()))
def test_transform_leaves_the_input_unchanged(t):
    before = [id(a) for a in tree.leaves(t)]
    tree.transform(t, lambda a: a + 1)
    assert [id(a) for a in tree.leaves(t)] == before


def test_transform_keeps_python_values_or_maps_them_with_value_fn():
    t = {"n": 3, "s": "x", "a": Float(1)}
    assert tree.transform(t, lambda a: a)["n"] == 3
    out = tree.transform(t, lambda a: a, lambda v: (v, "seen"))
    assert out["n"] == (3, "seen") and out["s"] == ("x", "seen")


def test_unflatten_checks_the_number_of_leaves():
    _, treedef = tree.flatten((Float(1), Float(2)))
    with pytest.raises(ValueError, match="takes 2 leaves, got 1"):
        tree.unflatten(treedef, [Float(1)])


def test_tree_definitions_compare_structure_and_python_values():
    a = tree.flatten({"k": (Float(1), 3)})[1]
    assert a == tree.flatten({"k": (Float(7, 8), 3)})[1]
    assert hash(a) == hash(tree.flatten({"k": (Float(7, 8), 3)})[1])
    assert a != tree.flatten({"k": (Float(1), 4)})[1]
    assert a != tree.flatten({"k": [Float(1), 3]})[1]
    assert a != tree.flatten({"j": (Float(1), 3)})[1]


def test_walks_leave_no_reference_cycle_for_the_garbage_collector():
    # A recursive closure holds itself through its cell: each call used to leave a cycle (the
    # closure, its path, its lists) that only the cyclic GC freed.
    import gc
    t = {"a": [Float(1, 2), (3, Array3f(1, 2, 3))], "b": Box(Float(4), 5)}
    gc.collect()
    gc.disable()
    try:
        leaves, treedef = tree.flatten(t)
        tree.unflatten(treedef, leaves)
        tree.transform(t, lambda a: a + 1)
        tree.map2(t, t, lambda x, y: x)
        assert gc.collect() == 0
    finally:
        gc.enable()
