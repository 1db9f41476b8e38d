"""Frozen functions walk their inputs and rebuild their outputs with the one PyTree definition
(frostjit.tree): frozen == plain at widths 1, 7, 1000, 100003 for every PyTree kind, inputs,
outputs and write-backs (checking mode and binder verification are on for tests/freeze)."""
import collections
import contextlib
import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import tree
from frostjit.freeze.layout import Walker
from frostjit.llvm import Float

from pytree_strategies import assert_leaves_equal, assert_same_structure, numpy_leaves, pytrees, random_arrays

WIDTHS = (1, 7, 1000, 100003)


def at_width(template, width: int, seed: int):
    """``template`` with every array replaced by random values of ``width`` elements."""
    rng = np.random.default_rng(seed)
    return tree.transform(template, lambda a: type(a)(rng.standard_normal(width).astype(np.float32)))


def scaled(t):
    return tree.transform(t, lambda a: a * 2 + 1)


def scale_in_place(o):
    """Write ``2 * a`` over every array child of every mutable container of ``o`` (the
    write-backs a frozen call must repeat)."""
    nt = tree.node_type(type(o))
    if nt.kind in (tree.Kind.ARRAY, tree.Kind.VALUE):
        return
    keys, values = nt.children(o)
    new = []
    for v in values:
        if tree.node_type(type(v)).kind is tree.Kind.ARRAY:
            new.append(v * 2)
        else:
            scale_in_place(v)
            new.append(v)
    if not isinstance(o, tuple):
        nt.assign(o, keys, new)


def run_at_widths(fn, template, seed: int, mutate: bool = False):
    """Call ``fn`` frozen and plain on ``template`` at every width; both agree (structure,
    leaves, and the inputs as the calls left them)."""
    ff = fj.freeze(fn, backend=fj.JitBackend.LLVM)      # (a tree may hold no array)
    for i, w in enumerate(WIDTHS):
        a, b = at_width(template, w, seed + i), at_width(template, w, seed + i)
        got, want = ff(a), fn(b)
        assert_same_structure(got, want)
        assert_leaves_equal(numpy_leaves(got), numpy_leaves(want))
        if mutate:
            assert_same_structure(a, b)
            assert_leaves_equal(numpy_leaves(a), numpy_leaves(b))
    return ff


def one_width_leaf():
    return random_arrays(widths=(1,))


@given(pytrees(one_width_leaf()), st.integers(0, 2**31))
def test_frozen_equals_plain_for_random_pytrees_at_every_width(template, seed):
    ff = run_at_widths(scaled, template, seed)
    assert ff.n_recordings <= 2          # size 1 and wide are different layouts


@given(pytrees(one_width_leaf()), st.integers(0, 2**31))
def test_frozen_write_backs_equal_plain_for_random_pytrees_at_every_width(template, seed):
    def fn(t):
        scale_in_place(t)
        return len(tree.leaves(t))
    ff = run_at_widths(fn, template, seed, mutate=True)
    assert ff.n_recordings <= 2


@given(pytrees(random_arrays(widths=(1, 7))))
def test_the_layout_walk_finds_the_arrays_fj_tree_finds(t):
    w = Walker(False)
    w.walk(t, None)
    assert [id(a) for a in w.f.leaves] == list(dict.fromkeys(id(a) for a in tree.leaves(t)))


# ------------------------------------------------------------------------------ the kinds
class OnlyAttrs:
    """The traversal protocol through ``__fj_traverse_attrs__`` alone."""
    __fj_traverse_attrs__ = ("p",)

    def __init__(self, p, hidden):
        self.p = p
        self.hidden = hidden        # not a child: not an input, not in the key


class OpaqueList(list):
    __fj_opaque__ = True


class ProtocolTuple(tuple):
    """A tuple subclass whose children are its attribute ``a`` (the protocol wins over the base)."""
    __fj_traverse_attrs__ = ("a",)


class ProtocolDict(dict):
    """A dict subclass whose children are what ``__fj_traverse__`` returns."""

    def __fj_traverse__(self):
        return {"a": self.a}

    def __fj_assign__(self, values):
        self.a = values["a"]


class NeedsArgs(collections.OrderedDict):
    """An OrderedDict subclass whose constructor needs an argument (``__reduce_ex__`` calls
    ``cls()``): a frozen call must not run it."""

    def __init__(self, tag, *args):
        super().__init__(*args)
        self.tag = tag


def protocol_tuple(items, a):
    t = ProtocolTuple(items)
    t.a = a
    return t


def protocol_dict(items, a):
    d = ProtocolDict(items)
    d.a = a
    return d


@pytest.mark.parametrize("w", WIDTHS)
def test_a_class_with_only_traverse_attrs_is_a_pytree(w):
    # its attributes outside __fj_traverse_attrs__ are neither inputs nor keyed (an object
    # walked by __dict__ would be keyed by identity: every new instance traced again)
    f = fj.freeze(lambda o: o.p * 3)
    for i in range(3):
        x = Float(np.arange(w, dtype=np.float32) + i)
        assert np.array_equal(f(OnlyAttrs(x, hidden=[i])).numpy(), (x * 3).numpy())
    assert f.n_recordings == 1


def test_an_attribute_outside_traverse_attrs_that_the_function_reads_is_guarded():
    f = fj.freeze(lambda o: o.p * o.hidden)
    x = Float(1, 2)
    o = OnlyAttrs(x, 2.0)
    assert np.array_equal(f(o).numpy(), [2, 4])
    o.hidden = 3.0
    assert np.array_equal(f(o).numpy(), [3, 6])


def test_an_opaque_list_subclass_is_a_python_value_for_freeze_as_for_fj_tree():
    # __fj_opaque__ wins over the list base: its arrays are not inputs (fj.tree.leaves finds
    # none), and the object is keyed by identity (it has no __hash__)
    x = Float(1, 2)
    box = OpaqueList([x])
    assert tree.leaves(box) == []
    w = Walker(False)
    w.walk((box,), None)
    assert w.f.leaves == [] and box not in w.f.containers
    f = fj.freeze(lambda b, y: y + b[0])
    assert np.array_equal(f(box, Float(1, 1)).numpy(), [2, 3])
    assert np.array_equal(f(OpaqueList([Float(5, 5)]), Float(1, 1)).numpy(), [6, 6])
    assert f.n_recordings == 2


@pytest.mark.parametrize("w", WIDTHS)
def test_protocol_objects_based_on_tuple_and_dict_are_walked_by_the_protocol(w):
    # the protocol wins over the tuple/dict base: the attribute is the input, the items are not
    def fn(t, d):
        return t.a + d.a, len(t), d["k"]
    f = fj.freeze(fn)
    for i in range(3):
        x = Float(np.arange(w, dtype=np.float32) + i)
        args = (protocol_tuple((1, 2), x), protocol_dict({"k": "v"}, x * 2))
        got, want = f(*args), fn(*args)
        assert np.array_equal(got[0].numpy(), want[0].numpy()) and got[1:] == want[1:]
    assert f.n_recordings == 1


@pytest.mark.parametrize("w", WIDTHS)
def test_protocol_objects_based_on_tuple_and_dict_are_rebuilt_as_outputs(w):
    def fn(x):
        return protocol_tuple((1, x), x + 1), protocol_dict({"k": x * 2}, x * 3)
    f = fj.freeze(fn)
    for i in range(2):
        x = Float(np.arange(w, dtype=np.float32) + i)
        (t, d), (rt, rd) = f(x), fn(x)
        assert type(t) is ProtocolTuple and type(d) is ProtocolDict
        assert t[0] == 1 and np.array_equal(t[1].numpy(), rt[1].numpy())
        assert np.array_equal(t.a.numpy(), rt.a.numpy())
        assert list(d) == ["k"] and np.array_equal(d["k"].numpy(), rd["k"].numpy())
        assert np.array_equal(d.a.numpy(), rd.a.numpy())
    assert f.n_recordings == 1


@pytest.mark.parametrize("w", WIDTHS)
def test_an_ordereddict_subclass_with_a_required_constructor_argument_is_rebuilt_as_an_output(w):
    def fn(x):
        return NeedsArgs("t", [("b", x + 1), ("a", x * 2)])
    f = fj.freeze(fn)
    for i in range(3):
        x = Float(np.arange(w, dtype=np.float32) + i)
        got, want = f(x), fn(x)
        assert type(got) is NeedsArgs and got.tag == "t" and list(got) == ["b", "a"]
        assert_leaves_equal(numpy_leaves(got), numpy_leaves(want))
    assert f.n_recordings == 1


@pytest.mark.parametrize("w", WIDTHS)
def test_a_defaultdict_output_keeps_its_default_factory(w):
    f = fj.freeze(lambda x: collections.defaultdict(list, {"a": x + 1}))
    for i in range(2):
        x = Float(np.arange(w, dtype=np.float32) + i)
        d = f(x)
        assert type(d) is collections.defaultdict and d.default_factory is list
        assert np.array_equal(d["a"].numpy(), (x + 1).numpy()) and d["new"] == []


class Pair:
    """Protocol without ``__fj_construct__`` (rebuilt from its instance state) and without
    ``__fj_assign__`` (written back attribute by attribute)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __fj_traverse__(self):
        return {"x": self.x, "y": self.y}


@pytest.mark.parametrize("w", WIDTHS)
def test_a_protocol_object_without_fj_construct_is_rebuilt_as_an_output(w):
    f = fj.freeze(lambda x: Pair(x + 1, 5))
    for i in range(2):
        x = Float(np.arange(w, dtype=np.float32) + i)
        p = f(x)
        assert type(p) is Pair and p.y == 5 and np.array_equal(p.x.numpy(), (x + 1).numpy())
    assert f.n_recordings == 1


@pytest.mark.parametrize("w", WIDTHS)
def test_a_protocol_object_without_fj_assign_is_written_back_by_attribute(w):
    def fn(p):
        p.x = p.x * 2
    f = fj.freeze(fn)
    for i in range(3):
        x = Float(np.arange(w, dtype=np.float32) + i)
        p = Pair(x, 1)
        f(p)
        assert np.array_equal(p.x.numpy(), (x * 2).numpy())
    assert f.n_recordings == 1


class Indirect:
    """``__fj_traverse__`` keys that are not attributes, and no ``__fj_assign__``."""

    def __init__(self, x):
        self.store = {"x": x}

    def __fj_traverse__(self):
        return {"value": self.store["x"]}


def test_a_protocol_child_that_no_attribute_holds_and_that_changes_runs_the_plain_function():
    # a replay could only setattr "value", which __fj_traverse__ does not read: no stale replay
    def fn(o):
        o.store["x"] = o.store["x"] + 1
    f = fj.freeze(fn)
    for i in range(3):
        o = Indirect(Float(i, i))
        with pytest.warns(fj.FreezeWarning) if i == 0 else contextlib.nullcontext():
            f(o)
        assert np.array_equal(o.store["x"].numpy(), [i + 1, i + 1])


@dataclasses.dataclass
class Fresh:
    """A protocol object whose getter hands out a fresh tuple on every call."""
    a: object
    b: object

    def __fj_traverse__(self):
        return {"t": (self.a, self.b)}

    @classmethod
    def __fj_construct__(cls, values):
        return cls(*values["t"])


def test_outputs_shared_through_fresh_protocol_children_stay_shared():
    # The describer counts references by id: a fresh tuple from the first getter, once freed,
    # can give its address to the second one, which must not be skipped as already seen.
    def fn(x):
        c = x + 3
        return Fresh(x + 1, x + 2), Fresh(c, x + 4), [c]
    f = fj.freeze(fn)
    for n in (2, 5, 3):
        out = f(Float(np.arange(n, dtype=np.float32)))
        assert out[1].a is out[2][0]
