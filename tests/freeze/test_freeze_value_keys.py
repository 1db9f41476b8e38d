"""Red team (r10): Python values whose ``==`` is coarser than "interchangeable" must not share
a recording.  Each pair below compares equal (and hashes equal) while the function tells the two
apart, so a replay keyed by ``==`` returned the first value's result for the second; the layout
key now holds what ``==`` leaves out (freeze/values.py: tuples element by element, the C state of
types such as ``range`` and ``datetime``, the attributes of a Python class's instance used as a
dict key or set element).  Frozen equals plain on every call, in any order (hypothesis)."""
import dataclasses
import datetime
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj

from freeze_helpers import ramp, same


class Key:
    """A dict key compared by name only; ``tag`` is read by the function."""

    def __init__(self, name, tag):
        self.name, self.tag = name, tag

    def __eq__(self, other):
        return isinstance(other, Key) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


@dataclasses.dataclass(frozen=True)
class FieldKey:
    name: str
    tag: float = dataclasses.field(compare=False)


class Always:
    def __init__(self, t):
        self.t = t

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 1


class Elementwise:
    """== returns an array (as a JIT array's does): it has no truth value."""

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v

    __hash__ = object.__hash__


_UTC = datetime.timezone.utc
_NOON = datetime.datetime(2020, 1, 1, 12, tzinfo=_UTC)

# (name, function, values that compare equal but are not interchangeable)
CASES = [
    ("range_start", lambda x, r: x + r.start, [range(0, 0), range(5, 5)]),
    ("range_step", lambda x, r: x + r.step, [range(0, 1, 1), range(0, 1, 7)]),
    ("datetime_zone", lambda x, d: x + d.hour, [_NOON, _NOON.astimezone(datetime.timezone(datetime.timedelta(hours=-5)))]),
    ("timezone_name", lambda x, z: x + len(z.tzname(None)), [_UTC, datetime.timezone(datetime.timedelta(0), "Zulu")]),
    ("dtype_metadata", lambda x, t: x + len(t.metadata or {}), [np.dtype(np.float32), np.dtype(np.float32, metadata={"a": 1})]),
    ("tuple_in_set", lambda x, s: x * math.copysign(1, next(iter(s))[0]), [frozenset({(0.0,)}), frozenset({(-0.0,)})]),
    ("tuple_dict_key_sign", lambda x, d: x * math.copysign(1, next(iter(d))[0]), [{(0.0, 1): 1}, {(-0.0, 1): 1}]),
    ("tuple_dict_key_type", lambda x, d: x + len(str(next(iter(d))[0])), [{(1,): 1}, {(1.0,): 1}]),
    ("user_dict_key", lambda x, d: x * next(iter(d)).tag, [{Key("a", 1.0): 1}, {Key("a", 2.0): 1}]),
    ("user_set_element", lambda x, s: x * next(iter(s)).tag, [frozenset({Key("a", 1.0)}), frozenset({Key("a", 3.0)})]),
    ("dataclass_compare_false_key", lambda x, d: x * next(iter(d)).tag, [{FieldKey("a", 1.0): 1}, {FieldKey("a", 2.0): 1}]),
    ("always_equal_in_tuple_key", lambda x, d: x + next(iter(d))[0].t, [{(Always(1.0),): 1}, {(Always(2.0),): 1}]),
]


@pytest.mark.parametrize("name,fn,values", CASES, ids=[c[0] for c in CASES])
def test_equal_values_that_differ(name, fn, values):
    frozen = fj.freeze(fn)
    for n in (1, 7):
        for v in values + values[::-1]:
            x = ramp(n, 1)
            assert same(frozen(x, v), fn(x, v)), (name, n, v)
    assert frozen.n_recordings == 2 * len(values)   # each value once per width kind (1, wide)


@given(st.lists(st.sampled_from(range(len(CASES))), min_size=1, max_size=4),
       st.lists(st.integers(0, 1), min_size=6, max_size=6))
def test_random_call_orders(picks, order):
    # a few frozen functions, each called with its values in a random order
    for c in picks:
        name, fn, values = CASES[c]
        frozen = fj.freeze(fn)
        for j in order:
            x = ramp(3, 1)
            assert same(frozen(x, values[j]), fn(x, values[j])), (name, order)


def test_hidden_state_with_coarse_equality():
    # the frozen function's own closure variables are in the key: a rebound range, a rebound
    # dict key of a user class
    r = range(0, 0)
    table = {Key("a", 1.0): 2.0}

    def fn(x):
        return x + r.start + next(iter(table)).tag
    frozen = fj.freeze(fn)
    for i in range(4):
        r = range(5 * (i % 2), 5 * (i % 2))
        table.clear()
        table[Key("a", float(i % 3))] = 2.0
        x = ramp(7)
        assert same(frozen(x), fn(x)), i


def test_equality_without_a_truth_value():
    # an input object whose == is element-wise: comparing two of them must not raise (the plain
    # call compares nothing); an equal-by-== object that is another object traces again
    def fn(x, o):
        return x + o.v
    frozen = fj.freeze(fn)
    for n in (7, 3):
        for i in range(3):
            x, o = ramp(n), Elementwise(ramp(n, i))
            assert same(frozen(x, o), fn(x, o))
