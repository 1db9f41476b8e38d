"""``fj.reshape`` of PyTrees (DRJIT_STRUCT objects, dataclasses, tuples, dicts) and ``fj.shape``
of struct objects, as Dr.Jit 1.5 answers them (checked side by side): the stream-compaction
queue ``state = fj.reshape(queue, shape=size, shrink=True)`` of Dr.Jit's documentation."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Array3f, Float, TensorXf, UInt32


class Ray:
    DRJIT_STRUCT = {"t": Float, "depth": UInt32}

    def __init__(self, t=None, depth=None):
        self.t = t
        self.depth = depth


class Shape3:
    DRJIT_STRUCT = {"a": Float, "p": Array3f}

    def __init__(self, a=None, p=None):
        self.a = a
        self.p = p


@dataclass
class Item:
    x: Float
    n: UInt32


def rows(x):
    return np.asarray(x.numpy()).tolist()


def test_reshape_of_a_struct_threads_through_its_fields():
    r = Ray(Float(1, 2, 3, 4, 5, 6), UInt32(1, 2, 3, 4, 5, 6))
    for out in (fj.reshape(Ray, r, 3, shrink=True), fj.reshape(r, 3, shrink=True)):
        assert type(out) is Ray and type(out.t) is Float and type(out.depth) is UInt32
        assert rows(out.t) == [1, 2, 3] and rows(out.depth) == [1, 2, 3]
    same = fj.reshape(Ray, r, -1)
    assert type(same.t) is Float and rows(same.t) == [1, 2, 3, 4, 5, 6]
    assert rows(r.t) == [1, 2, 3, 4, 5, 6]          # the input is left as it was
    with pytest.raises(ValueError, match="mismatched array sizes"):
        fj.reshape(Ray, r, 3)                        # Dr.Jit: mismatched array sizes (input: 6, target: 3)


def test_reshape_of_a_struct_with_a_static_array_field():
    s = Shape3(Float(1, 2), Array3f([1, 2], [3, 4], [5, 6]))
    out = fj.reshape(s, 1, shrink=True)
    assert rows(out.a) == [1] and rows(out.p) == [[1], [3], [5]]
    with pytest.raises(ValueError):
        fj.reshape(Shape3, s, 2)                     # Dr.Jit: mismatched array sizes (input: 6, target: 2)


def test_reshape_of_a_dataclass_and_of_containers():
    d = fj.reshape(Item, Item(Float(1, 2, 3, 4), UInt32(5, 6, 7, 8)), 2, shrink=True)
    assert isinstance(d, Item) and rows(d.x) == [1, 2] and rows(d.n) == [5, 6]
    t = fj.reshape((Float(1, 2, 3, 4), UInt32(1, 2, 3, 4)), 2, shrink=True)
    assert [type(a) for a in t] == [Float, UInt32] and [rows(a) for a in t] == [[1, 2], [1, 2]]
    lst = fj.reshape([Float(1, 2, 3, 4), 5], 4)
    assert type(lst[0]) is Float and lst[1] == 5      # Python values stay (Dr.Jit)
    assert fj.reshape({"a": TensorXf(Float(1, 2, 3, 4), shape=(4,))}, (2, 2))["a"].shape == (2, 2)


def test_reshape_to_another_struct_type_is_an_error():
    with pytest.raises(TypeError, match="'dtype' must be"):
        fj.reshape(Ray, Item(Float(1), UInt32(1)), 1)


def test_queue_of_structs_compacted_and_shrunk():
    n = 10
    state = Ray(fj.arange(Float, n), fj.arange(UInt32, n))
    counter = UInt32(0)
    queue = fj.zeros(Ray, n)
    keep = state.depth % 3 == 0
    slot = fj.scatter_inc(counter, UInt32(0), keep)
    fj.scatter(queue, state, slot, keep)
    size = int(counter.numpy()[0])
    nxt = fj.reshape(queue, shape=size, shrink=True)
    assert size == 4 and sorted(rows(nxt.depth)) == [0, 3, 6, 9] and sorted(rows(nxt.t)) == [0, 3, 6, 9]


def test_shape_of_a_struct_or_dataclass_is_empty():
    assert fj.shape(Ray(Float(1, 2), UInt32(1, 2))) == ()
    assert fj.shape(Item(Float(1, 2), UInt32(1, 2))) == ()
    assert fj.shape(object()) == ()
    with pytest.raises(TypeError):
        fj.shape({"a": Float(1, 2)})                 # Dr.Jit: dict is not a sequence
    with pytest.raises(TypeError):
        fj.shape(None)


def test_full_ones_zeros_of_a_struct_fill_every_field():
    r = fj.full(Ray, 2, 3)
    assert rows(r.t) == [2, 2, 2] and rows(r.depth) == [2, 2, 2] and type(r.depth) is UInt32
    o = fj.ones(Shape3, 2)
    assert rows(o.a) == [1, 1] and rows(o.p) == [[1, 1]] * 3
    z = fj.zeros(Item)
    assert rows(z.x) == [0] and rows(z.n) == [0]
