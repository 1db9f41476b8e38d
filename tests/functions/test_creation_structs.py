"""fj.zeros/ones/full/empty of PyTree struct types (DRJIT_STRUCT classes, dataclasses), as Dr.Jit 1.5."""
from __future__ import annotations      # dataclass annotations are strings: they must be resolved

import dataclasses

import pytest

import frostjit as fj
from frostjit.llvm import Array3f, Float, UInt32


class Ray:
    DRJIT_STRUCT = {"o": Array3f, "t": Float}

    def __init__(self):
        self.note = "made by __init__"     # Dr.Jit default-constructs the struct, then sets its fields


class Hit:
    DRJIT_STRUCT = {"ray": Ray, "prim": UInt32}


@dataclasses.dataclass
class Sample:
    value: Float
    index: UInt32


def test_zeros_of_a_drjit_struct_default_constructs_it_and_fills_its_fields():
    r = fj.zeros(Ray, 3)
    assert isinstance(r, Ray) and r.note == "made by __init__"
    assert r.t.numpy().tolist() == [0, 0, 0]
    assert r.o.numpy().tolist() == [[0, 0, 0]] * 3


@pytest.mark.parametrize("make,value", [(fj.zeros, 0), (fj.ones, 1), (lambda t, n: fj.full(t, 7, n), 7)])
def test_creation_functions_fill_nested_structs(make, value):
    h = make(Hit, 2)
    assert h.prim.numpy().tolist() == [value] * 2
    assert h.ray.t.numpy().tolist() == [value] * 2 and isinstance(h.ray, Ray)


def test_empty_of_a_struct_has_fields_of_the_requested_width():
    r = fj.empty(Ray, 4)
    assert fj.width(r.t) == 4 and fj.width(r.o) == 4


def test_zeros_of_a_dataclass_with_string_annotations():
    s = fj.zeros(Sample, 2)
    assert isinstance(s, Sample) and isinstance(s.value, Float) and isinstance(s.index, UInt32)
    assert s.value.numpy().tolist() == [0, 0] and s.index.numpy().tolist() == [0, 0]


def test_struct_whose_constructor_needs_arguments_raises_type_error():
    class NeedsArg:
        DRJIT_STRUCT = {"a": Float}

        def __init__(self, q):
            self.q = q
    with pytest.raises(TypeError, match="NeedsArg must be constructible without arguments"):
        fj.zeros(NeedsArg)


class _Labelled:
    DRJIT_STRUCT = {"name": str, "count": int, "items": list, "x": Float}

    def __init__(self):
        self.name, self.count, self.items, self.x = "init", 7, [1], Float(9)


@dataclasses.dataclass
class _LabelledPoint:
    name: str
    x: Float


@pytest.mark.parametrize("make", [fj.zeros, fj.empty, lambda t, n: fj.full(t, 0, n)])
def test_zeros_and_empty_default_construct_plain_python_fields(make):
    s = make(_Labelled, 4)
    assert (s.name, s.count, s.items) == ("", 0, [])
    assert fj.width(s.x) == 4
    p = make(_LabelledPoint, 3)
    assert p.name == "" and fj.width(p.x) == 3


@pytest.mark.parametrize("make", [fj.ones, lambda t, n: fj.full(t, 2.5, n)])
def test_other_fills_refuse_plain_python_fields_naming_them(make):
    with pytest.raises(TypeError, match=r"_Labelled\.name.*plain Python type str"):
        make(_Labelled, 2)
    with pytest.raises(TypeError, match=r"_LabelledPoint\.name"):
        make(_LabelledPoint, 2)
