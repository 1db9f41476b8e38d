"""frostjit.tree: one definition of a PyTree (kinds, walking, rebuilding, two trees at once)."""
import collections
import dataclasses
import logging

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import tree
from frostjit.tree import Kind
from frostjit.llvm import Float, UInt32, Array3f
from frostjit.llvm import ad as fjad

from pytree_strategies import (Attrs, Box, FrozenBox, Pair, Struct, Traversable, assert_leaves_equal,
                               assert_same_structure, numpy_leaves, pytrees)

WIDTHS = st.sampled_from([1, 7, 1000, 100003])


@st.composite
def arrays(draw):
    n = draw(WIDTHS)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        return Float(rng.standard_normal(n).astype(np.float32))
    return Array3f(rng.standard_normal((3, n)).astype(np.float32))


# ---------------------------------------------------------------------------- kinds
@pytest.mark.parametrize("obj, kind", [
    (Float(1), Kind.ARRAY), (Array3f(1, 2, 3), Kind.VECTOR), ((1,), Kind.SEQUENCE), ([1], Kind.SEQUENCE),
    (Pair(1, 2), Kind.SEQUENCE), ({}, Kind.MAPPING), (collections.OrderedDict(), Kind.MAPPING),
    (collections.defaultdict(int), Kind.MAPPING), (collections.Counter(), Kind.MAPPING),
    (Box(1, 2), Kind.DATACLASS), (FrozenBox(1, 2), Kind.DATACLASS), (Struct(1, 2, required=1), Kind.STRUCT),
    (Traversable(1, 2), Kind.PROTOCOL), (Attrs(1, 2), Kind.PROTOCOL), (None, Kind.VALUE), (3, Kind.VALUE),
    ("s", Kind.VALUE), (np.zeros(3), Kind.VALUE), (object(), Kind.VALUE), (Box, Kind.VALUE),
])
def test_node_type_classifies_each_kind(obj, kind):
    assert tree.node_type(type(obj)).kind is kind


def test_traversal_protocol_wins_over_an_inherited_container_base():
    class Params(dict):
        def __fj_traverse__(self):
            return {"only": self["w"]}
    p = Params(w=Float(1), skipped=Float(2))
    assert tree.node_type(Params).kind is Kind.PROTOCOL
    assert tree.leaves(p) == [p["w"]]


def test_drjit_struct_wins_over_dataclass_fields():
    @dataclasses.dataclass
    class Both:
        a: object
        b: object
        DRJIT_STRUCT = {"b": object}
    x = Both(Float(1), Float(2))
    assert tree.leaves(x) == [x.b]


def test_opaque_classes_are_python_values():
    class Handle:
        __fj_opaque__ = True
        DRJIT_STRUCT = {"a": object}

        def __init__(self):
            self.a = Float(1)
    assert tree.node_type(Handle).kind is Kind.VALUE and tree.leaves(Handle()) == []


# ---------------------------------------------------------------------------- walking
@given(pytrees(arrays()))
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


def test_traverse_calls_value_fn_for_python_values():
    seen = []
    tree.traverse({"a": Float(1), "b": [3, None]}, lambda a: seen.append("array"), seen.append)
    assert seen == ["array", 3, None]


# ---------------------------------------------------------------------------- rebuilding
@given(pytrees(arrays()))
def test_flatten_then_unflatten_rebuilds_the_same_tree(t):
    leaves, treedef = tree.flatten(t)
    back = tree.unflatten(treedef, leaves)
    assert_same_structure(back, t)
    assert [id(a) for a in tree.leaves(back)] == [id(a) for a in leaves]
    assert treedef.num_leaves == len(leaves)


@given(pytrees(arrays()))
def test_transform_maps_every_array_like_numpy(t):
    out = tree.transform(t, lambda a: a * 2 + 1)
    assert_same_structure(out, t)
    assert_leaves_equal(numpy_leaves(out), [a * np.float32(2) + np.float32(1) for a in numpy_leaves(t)])


@given(pytrees(arrays()))
def test_transform_leaves_the_input_unchanged(t):
    before = [id(a) for a in tree.leaves(t)]
    tree.transform(t, lambda a: a + 1)
    assert [id(a) for a in tree.leaves(t)] == before


def test_transform_keeps_python_values_or_maps_them_with_value_fn():
    t = {"n": 3, "s": "x", "a": Float(1)}
    assert tree.transform(t, lambda a: a)["n"] == 3
    out = tree.transform(t, lambda a: a, lambda v: (v, "seen"))
    assert out["n"] == (3, "seen") and out["s"] == ("x", "seen")


def test_rebuilding_runs_no_user_constructor():
    calls = []

    @dataclasses.dataclass
    class WithPostInit:
        a: object

        def __post_init__(self):
            calls.append("post_init")
            self.derived = "kept"

    class OD(collections.OrderedDict):
        def __init__(self, required):
            calls.append("OD.__init__")
            super().__init__()

    class NT(Pair):
        def __new__(cls, *args):
            calls.append("NT.__new__")
            return super().__new__(cls, *args)

    d = OD(1)
    d["k"] = Float(1)
    objs = [WithPostInit(Float(1)), Struct(Float(1), Float(2), required=True), d, NT(Float(1), Float(2))]
    calls.clear()
    out = tree.transform(objs, lambda a: a + 1)
    assert calls == []
    assert [type(o) for o in out] == [type(o) for o in objs]
    assert out[0].derived == "kept" and out[2]["k"].numpy().tolist() == [2]


def test_rebuilt_containers_keep_their_extra_state():
    dd = collections.defaultdict(list, a=Float(1))

    class Tagged(list):
        pass
    tagged = Tagged([Float(1)])
    tagged.tag = "t"
    od = collections.OrderedDict(a=Float(1), b=Float(2))
    od.move_to_end("a")
    out = tree.transform((dd, tagged, od), lambda a: a * 3)
    assert out[0].default_factory is list and out[0]["missing"] == []
    assert type(out[1]) is Tagged and out[1].tag == "t"
    assert list(out[2]) == ["b", "a"]


def test_frozen_dataclass_is_rebuilt_with_new_fields():
    f = FrozenBox(Float(1), 5)
    out = tree.transform(f, lambda a: a + 1)
    assert type(out) is FrozenBox and out.a.numpy().tolist() == [2] and out.b == 5
    assert f.a.numpy().tolist() == [1]


def test_protocol_objects_are_rebuilt_with_construct_or_assign():
    class Built(Traversable):
        made = []

        @classmethod
        def __fj_construct__(cls, values):
            cls.made.append(sorted(values))
            return cls(values["x"], values["y"])
    out = tree.transform(Built(Float(1), 2), lambda a: a + 1)
    assert Built.made == [["x", "y"]] and out.x.numpy().tolist() == [2]
    t = Traversable(Float(1), 2)
    out = tree.transform(t, lambda a: a + 1)
    assert out is not t and out.x.numpy().tolist() == [2] and t.x.numpy().tolist() == [1]
    a = Attrs(Float(1), Float(2))
    out = tree.transform(a, lambda x: x * 2)
    assert out.label == "not walked" and out.q.numpy().tolist() == [4]


def test_static_vectors_are_rebuilt_with_the_type_of_their_new_components():
    v = fjad.Array3f(1, 2, 3)
    out = tree.transform({"v": v}, lambda a: Float(a))
    assert type(out["v"]) is Array3f


def test_a_vector_of_mixed_component_types_raises_naming_the_path():
    v = Array3f(1, 2, 3)
    with pytest.raises(TypeError, match=r"transform\(\): tree\[1\]\.a: cannot make a static vector"):
        tree.transform((0, Box(v, 0)), lambda a: UInt32(1) if a is v.x else a)


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


@pytest.mark.parametrize("make, read", [
    (lambda: [Float(1), Float(2)], lambda o: o),
    (lambda: {"a": Float(1), "b": Float(2)}, lambda o: list(o.values())),
    (lambda: Box(Float(1), Float(2)), lambda o: [o.a, o.b]),
    (lambda: FrozenBox(Float(1), Float(2)), lambda o: [o.a, o.b]),
    (lambda: Struct(Float(1), Float(2), required=1), lambda o: [o.a, o.b]),
    (lambda: Traversable(Float(1), Float(2)), lambda o: [o.x, o.y]),
    (lambda: Attrs(Float(1), Float(2)), lambda o: [o.p, o.q]),
    (lambda: Array3f(1, 2, 3), lambda o: list(o)[:2]),
])
def test_assign_writes_children_in_place(make, read):
    o = make()
    nt = tree.node_type(type(o))
    keys, values = nt.children(o)
    new = [Float(10 + i) for i in range(len(values))]
    nt.assign(o, keys, new)
    assert read(o)[:2] == new[:2]


def test_assign_into_a_tuple_raises():
    nt = tree.node_type(tuple)
    with pytest.raises(TypeError, match="immutable"):
        nt.assign((1,), None, [2])


# ---------------------------------------------------------------------------- two trees
@given(pytrees(arrays()))
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
    (Box(Float(1), (Float(2),)), Box(Float(1), Float(2)), r"at a\.b: expected a tuple of 1 entry, got a Float32"),
    ((Float(1),), ((Float(1),),), r"at a\[0\]: expected a Float32, got a tuple of 1 entry"),
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
