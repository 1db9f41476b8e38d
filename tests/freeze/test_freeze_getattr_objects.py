"""Objects whose class defines ``__getattr__`` that raises something other than AttributeError
(a lookup in a dict: ``KeyError``), as inputs, keys and outputs of a frozen function.  Freeze read
their ``__dict__`` and unset slots through ``getattr``, which ran the user's ``__getattr__``: the
frozen call raised ``KeyError('__dict__')`` where the plain call works (session r11, the binder,
the value key, output rebuilding and checking mode)."""
import pytest

import frostjit as fj

from freeze_helpers import ramp, same


class _Slotted:
    __slots__ = ("d", "unset")

    def __init__(self):
        self.d = {"k": 2.0}

    def __getattr__(self, name):
        return self.d[name]


class _Hashable(_Slotted):
    __slots__ = ()

    def __eq__(self, o):
        return type(o) is type(self) and o.d == self.d

    def __hash__(self):
        return 1


class _WithDict:
    def __init__(self):
        self.v = 2.0

    def __getattr__(self, name):
        raise KeyError(name)


@pytest.mark.parametrize("make", [_Slotted, _Hashable])
def test_slotted_input_with_getattr(make):
    o = make()
    frozen = fj.freeze(lambda x, o: x * o.k)
    for n in (1, 7, 3):
        for i in range(3):
            o.d["k"] = float(i)
            assert same(frozen(ramp(n), o), ramp(n) * float(i))
    frozen_in_tuple = fj.freeze(lambda x, t: x * t[0].k)
    for i in range(3):
        o.d["k"] = float(i + 1)
        assert same(frozen_in_tuple(ramp(7), (o,)), ramp(7) * float(i + 1))


def test_input_with_a_dict_and_getattr():
    o = _WithDict()
    frozen = fj.freeze(lambda x, o: x * o.v)
    for i in range(4):
        o.v = float(i % 3)
        assert same(frozen(ramp(7), o), ramp(7) * float(i % 3))


def test_output_objects_with_getattr():
    def make(x):
        s = _Slotted()
        s.d = {"y": x * 2}
        w = _WithDict()
        w.v = x + 1
        return s, w
    frozen = fj.freeze(make)
    for n in (1, 7, 7, 3):
        s, w = frozen(ramp(n))
        assert type(s) is _Slotted and same(s.y, ramp(n) * 2) and same(w.v, ramp(n) + 1)
