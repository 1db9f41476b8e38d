"""Guards that re-traced every call although nothing changed (correct, but a trace per call):

* a walked ``functools.partial`` with keywords (a global or an argument of the frozen function):
  the guard on its keywords dict read the partial itself (``contents(partial)`` never equals
  the dict's picture), 20 recordings for 20 calls;
* a number read through ``vars(o)[...]`` / ``o.__dict__[...]`` where ``o`` is walked: once the
  number became a parameter, the guard held the recording's symbolic number and failed on every
  new float object ("changed from 3.0 to 3.0 (another object)").

Each case: frozen against plain over calls with the state changed (checking mode on), and the
number of recordings bounded by the distinct states."""
import functools

import pytest

import frostjit as fj

from freeze_helpers import ramp, same


class _Model:
    def __init__(self):
        self.k = 2.0

    def method(self, x, s, u=None):
        return x * self.k * s + (0.0 if u is None else u[0])


class _Plain:
    pass


VALUES = (2.0, 2.0, 3.0, 3.0, -0.0, 0.0, 3.0)


def _new(v):
    return float(repr(v))       # an equal number as another object


def _partial_global():
    m = _Model()
    p = functools.partial(m.method, s=2.0)

    def change(i):
        m.k = _new(VALUES[i % 7])
    return (lambda x: p(x)), change


def _partial_keywords_changed():
    m = _Model()
    p = functools.partial(m.method, s=2.0)

    def change(i):
        p.keywords["s"] = _new(VALUES[i % 7])
    return (lambda x: p(x)), change


def _partial_keyword_list():
    m = _Model()
    lst = [1.0]
    p = functools.partial(m.method, s=2.0, u=lst)

    def change(i):
        lst[0] = _new(VALUES[i % 7])
    return (lambda x: p(x)), change


def _vars_entry():
    o = _Plain()
    o.v = 2.0

    def change(i):
        o.v = _new(VALUES[i % 7])
    return (lambda x: x * vars(o)["v"]), change


def _dunder_dict_get():
    o = _Plain()
    o.v = 2.0

    def change(i):
        o.v = _new(VALUES[i % 7])
        if i % 2:
            o.w = 5.0
        else:
            o.__dict__.pop("w", None)
    return (lambda x: x * o.__dict__.get("v", 1.0) * o.__dict__.get("w", 1.0)), change


def _vars_comparison():
    o = _Plain()
    o.v = 2.0

    def change(i):
        o.v = _new(VALUES[i % 7])
    return (lambda x: x * (1.0 if vars(o)["v"] > 2.5 else 7.0)), change


@pytest.mark.parametrize("make", [_partial_global, _partial_keywords_changed, _partial_keyword_list,
                                  _vars_entry, _dunder_dict_get, _vars_comparison],
                         ids=lambda m: m.__name__.strip("_"))
def test_replays_when_nothing_changed(make):
    f, change = make()
    frozen = fj.freeze(f)
    for n in (1, 7, 3):
        for i in range(7):
            change(i)
            x = ramp(n, 1)
            assert same(frozen(x), f(x)), (n, i)
    # size 1 and wide, a value and a parameter (or the outcomes of the comparison, the two
    # signs of zero for a number in a container): far fewer than one per call
    assert frozen.n_recordings <= 8, frozen.n_recordings


@pytest.mark.no_freeze_check
def test_partial_with_keywords_replays_unchanged():
    m = _Model()
    p = functools.partial(m.method, s=2.0)
    frozen = fj.freeze(lambda x: p(x))
    for _ in range(5):
        frozen(ramp(7))
    assert frozen.n_recordings == 1
    p.keywords["s"] = 4.0
    assert same(frozen(ramp(7)), ramp(7) * 8.0)


@pytest.mark.no_freeze_check
def test_vars_of_a_walked_object_replays_a_parameter():
    o = _Plain()
    o.v = 2.0
    frozen = fj.freeze(lambda x: x * vars(o)["v"])
    for i in range(6):
        o.v = float(i)
        assert same(frozen(ramp(7)), ramp(7) * float(i))
    assert frozen.n_recordings == 2      # a value, then a parameter
