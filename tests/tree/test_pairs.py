"""frostjit.tree.pairs: two PyTrees of the same structure walked together (map2, traverse2)."""

import pytest
from hypothesis import given

import frostjit as fj
from frostjit import tree
from frostjit.llvm import Float, Array3f

from pytree_strategies import Box, FrozenBox, assert_same_structure, pytrees, random_arrays

@given(pytrees(random_arrays()))
def test_map2_of_a_tree_with_itself_pairs_each_leaf_with_itself(t):
    pairs = []
    out = tree.map2(t, t, lambda x, y: pairs.append((x, y)) or x)
    assert all(x is y for x, y in pairs)
    assert [id(a) for a in tree.leaves(out)] == [id(a) for a in tree.leaves(t)]
    assert_same_structure(out, t)


@pytest.mark.parametrize("a, b, message", [
    ((Float(1), [Float(1)]), (Float(1), [Float(1), Float(2)]),
     r"b does not match a at a\[1\]: expected a list of 1 entry, got a list of 2 entries"),
    ({"k": {"x": Float(1)}}, {"k": {"y": Float(1)}}, r'at a\["k"\]: the keys differ \(\[\'x\'\] and \[\'y\'\]\)'),
    ([Box(Float(1), 2)], [FrozenBox(Float(1), 2)], r"at a\[0\]: expected a Box, got a FrozenBox"),
    (Box(Float(1), (Float(2),)), Box(Float(1), Float(2)), r"at a\.b: expected a tuple of 1 entry, got a Float"),
    ((Float(1),), ((Float(1),),), r"at a\[0\]: expected a Float, got a tuple of 1 entry"),
    (Array3f(1, 2, 3), fj.llvm.Array2f(1, 2), r"at a: expected an Array3f, got an Array2f"),
])
def test_map2_names_the_path_where_the_structures_differ(a, b, message):
    with pytest.raises(TypeError, match=message):
        tree.map2(a, b, lambda x, y: x)


def test_map2_broadcasts_arrays_over_vectors_and_with_broadcast_over_any_subtree():
    v = Array3f(1, 2, 3)
    out = tree.map2(v, Float(10), lambda x, y: x + y)
    assert out.numpy().ravel().tolist() == [11, 12, 13]
    with pytest.raises(TypeError, match=r"expected a tuple of 2 entries, got a float \(1\.0\)"):
        tree.map2((Float(1), Float(2)), 1.0, lambda x, y: x + y)
    out = tree.map2((Float(1), Float(2)), 1.0, lambda x, y: x + y, broadcast=True)
    assert [o.numpy().tolist() for o in out] == [[2], [3]]


def test_map2_matches_tuples_with_lists_and_keeps_the_first_structure():
    out = tree.map2((Float(1), 2), [Float(3), 2], lambda x, y: y)
    assert type(out) is tuple and out[0].numpy().tolist() == [3]


def test_a_leaf_error_is_reraised_naming_the_path():
    def fn(x, y):
        raise tree.LeafError("not this one")
    with pytest.raises(TypeError, match=r'^f\(\): a\["k"\]\[0\]: not this one$'):
        tree.map2({"k": [Float(1)]}, {"k": [Float(1)]}, fn, who="f")


def test_traverse2_visits_the_pairs_map2_visits():
    a, b = (Float(1), {"k": 3}), (Float(2), {"k": 4})
    pairs = []
    tree.traverse2(a, b, lambda x, y: pairs.append((x, y)))
    assert pairs == [(a[0], b[0]), (3, 4)]
