"""frostjit.tree.kinds: what each object is in a PyTree, and how nodes are rebuilt and written."""
import collections
import dataclasses

import numpy as np
import pytest

from frostjit import tree
from frostjit.tree import kinds
from frostjit.tree import Kind
from frostjit.llvm import Float, UInt32, Array3f
from frostjit.llvm import ad as fjad

from pytree_strategies import Attrs, Box, FrozenBox, Pair, Struct, Traversable

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


class _ProtocolTuple(tuple):
    __fj_traverse_attrs__ = ("a",)


class _ProtocolDict(collections.OrderedDict):
    __fj_traverse_attrs__ = ("a",)

    def __init__(self, required, *args):
        super().__init__(*args)


@pytest.mark.parametrize("make", [lambda: _ProtocolTuple((1, "two")),
                                  lambda: _ProtocolDict("req", [("k", 1), ("j", "two")])])
def test_protocol_objects_with_a_container_base_keep_their_items_when_rebuilt(make):
    # the protocol's children are the attributes; the items are state the rebuild keeps
    o = make()
    o.a = Float(1)
    out = tree.transform(o, lambda x: x + 1)
    assert type(out) is type(o) and out is not o and out.a.numpy().tolist() == [2]
    assert (list(out.items()) if isinstance(o, dict) else list(out)) == \
        (list(o.items()) if isinstance(o, dict) else list(o))


def test_make_container_runs_no_constructor():
    class Tagged(collections.OrderedDict):
        def __init__(self, tag):
            raise AssertionError("constructor called")
    d = kinds.make_container(Tagged, ("b", "a"), [1, 2])
    assert type(d) is Tagged and list(d.items()) == [("b", 1), ("a", 2)]
    assert kinds.make_container(Pair, None, [1, 2]) == Pair(1, 2)


def test_static_vectors_are_rebuilt_with_the_type_of_their_new_components():
    v = fjad.Array3f(1, 2, 3)
    out = tree.transform({"v": v}, lambda a: Float(a))
    assert type(out["v"]) is Array3f


def test_a_vector_of_mixed_component_types_raises_naming_the_path():
    v = Array3f(1, 2, 3)
    with pytest.raises(TypeError, match=r"transform\(\): tree\[1\]\.a: cannot make a static vector"):
        tree.transform((0, Box(v, 0)), lambda a: UInt32(1) if a is v.x else a)


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
