"""Outputs are rebuilt as the plain call left them, without running user constructors, at every
width: dataclasses (``__post_init__``), list/dict subclasses, objects; gradients of outputs."""
import collections
import dataclasses

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float

from freeze_helpers import ramp, same

WIDTHS = (1, 7, 1000, 100003, 7)


@dataclasses.dataclass
class Doubled:
    a: Float
    n: int = 0

    def __post_init__(self):
        self.a = self.a * 2         # transforms a field: must run once, in the function
        self.twice = self.a + 1     # not a field
        CONSTRUCTED.append(self)    # (write-only: a read of a counter would be guarded)


CONSTRUCTED = []


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlots:
    a: Float
    b: int

    def __post_init__(self):
        object.__setattr__(self, "a", self.a * 3)


Pair = collections.namedtuple("Pair", "u v")


class NoInit:
    def __init__(self, *args):
        raise RuntimeError("constructor called")


class Attrs(dict):
    pass


class Items(list):
    def __init__(self, *args):
        raise RuntimeError("constructor called")


def check(fn, compare, widths=WIDTHS):
    fz = fj.freeze(fn)
    for n in widths:
        compare(fz(ramp(n)), fn(ramp(n)))
    return fz


@pytest.mark.no_freeze_check     # (counts constructions: the checking call would add its own)
def test_dataclass_post_init_runs_once():
    def compare(got, ref):
        assert type(got) is Doubled and same(got.a, ref.a) and same(got.twice, ref.twice) and got.n == ref.n
    before = len(CONSTRUCTED)
    fz = check(lambda x: Doubled(x + 1, 5), compare)
    assert fz.n_recordings == 2 and len(CONSTRUCTED) - before == len(WIDTHS) + fz.n_recordings


def test_frozen_slots_dataclass():
    def compare(got, ref):
        assert type(got) is FrozenSlots and same(got.a, ref.a) and got.b == ref.b
    check(lambda x: FrozenSlots(x, 4), compare)


def test_object_whose_constructor_raises():
    def fn(x):
        o = NoInit.__new__(NoInit)
        o.y = x * 2
        return o

    def compare(got, ref):
        assert type(got) is NoInit and same(got.y, ref.y)
    check(fn, compare)


@pytest.mark.parametrize("make", [
    lambda x: collections.defaultdict(list, {"a": x + 1}),
    lambda x: collections.OrderedDict([("b", x), ("a", x * 2)]),
    lambda x: collections.Counter({"a": 3}),
    lambda x: Pair(x, x + 1),
])
def test_library_containers(make):
    def compare(got, ref):
        assert type(got) is type(ref)
        if isinstance(ref, dict):
            assert list(got) == list(ref) and all(same(got[k], ref[k]) if hasattr(ref[k], "numpy") else
                                                  got[k] == ref[k] for k in ref)
            assert getattr(got, "default_factory", None) is getattr(ref, "default_factory", None)
        else:
            assert all(same(a, b) for a, b in zip(got, ref))
    check(make, compare)


def test_defaultdict_output_keeps_its_factory():
    fz = fj.freeze(lambda x: collections.defaultdict(list, {"a": x + 1}))
    for n in (3, 4):
        d = fz(ramp(n))
        d["new"].append(1)
        assert d["new"] == [1] and same(d["a"], ramp(n) + 1)


def test_user_subclasses_of_dict_and_list_with_attributes():
    def fn(x):
        d = Attrs(a=x)
        d.meta = x * 3
        items = list.__new__(Items)
        list.extend(items, [x, x + 1])
        items.tag = "t"
        return d, items

    def compare(got, ref):
        (gd, gl), (rd, rl) = got, ref
        assert type(gd) is Attrs and same(gd["a"], rd["a"]) and same(gd.meta, rd.meta)
        assert type(gl) is Items and len(gl) == 2 and same(gl[1], rl[1]) and gl.tag == "t"
    check(fn, compare)


def test_shared_objects_stay_shared():
    def fn(x):
        d = Doubled(x)
        return d, [d, d.a]

    def compare(got, ref):
        d, (d2, a) = got
        assert d is d2 and a is d.a and same(a, ref[0].a)
    check(fn, compare)


# --- item 14: gradients of outputs made grad-enabled inside --------------------------------
from frostjit.llvm.ad import Float as FloatAD  # noqa: E402


def test_output_made_grad_enabled_inside_carries_its_gradient():
    def fn(x):
        inter = 2 * x + 1
        fj.enable_grad(inter)
        fj.backward(fj.sum(fj.square(inter)))
        return inter
    fz = fj.freeze(fn)
    for n in WIDTHS:
        x = FloatAD(np.arange(n, dtype=np.float32))
        ref, got = fn(FloatAD(np.arange(n, dtype=np.float32))), fz(x)
        assert fj.grad_enabled(got) and same(fj.grad(got), fj.grad(ref)) and same(got, ref)
    assert same(fj.grad(fz(FloatAD(0, 1, 2))), FloatAD(2, 6, 10))


def test_output_gradient_set_inside():
    def fn(x):
        y = x * 1
        fj.enable_grad(y)
        fj.set_grad(y, x * 4)
        return y, [y]
    fz = fj.freeze(fn)
    for n in WIDTHS:
        got, ref = fz(FloatAD(np.arange(n, dtype=np.float32))), fn(FloatAD(np.arange(n, dtype=np.float32)))
        assert same(fj.grad(got[0]), fj.grad(ref[0])) and got[1][0] is got[0]
