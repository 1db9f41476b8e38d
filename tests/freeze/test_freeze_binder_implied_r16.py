"""Binders' distinct-container checks that the distinct-nodes check implies (r16, lane optstep:
binder._Gen.distinct_containers).  Containers of one type that each hold a data-node leaf are no
longer compared pairwise with ``is``: one object at two places of the key would put its leaf's
node twice in the binder's node list.  The pairwise test stays for containers holding no data
node (literal arrays, Python values, nothing), for any key that reaches an object or a node twice,
and below parts read by user code.

Each call is compared with the plain function, whose result counts the distinct containers, and
conftest's VERIFY_BINDERS walks every binder hit in full: a binder accepting an aliased layout
that the walk keys differently fails both ways.
"""
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.freeze import binder
from frostjit.llvm import Float

from freeze_helpers import ramp, same

# the contents of a container: a data array, a literal array, a Python value, None, or nothing
X = ramp(2, 7)      # (a data array in every call: the backend is known)
_KINDS = ("data", "literal", "value", "none", "empty", "nested")


def _make(kind, k, ctype):
    if kind == "data":
        items = [ramp(3, k)]
    elif kind == "literal":
        items = [Float(2.0)]
    elif kind == "value":
        items = [1.5]
    elif kind == "none":
        items = [None]
    elif kind == "empty":
        items = []
    else:   # a data array one level deeper (a tuple inside)
        items = [(ramp(3, k + 10),)]
    if ctype is dict:
        return {f"k{i}": x for i, x in enumerate(items)}
    return ctype(items)


def _leaves(c):
    vals = c.values() if type(c) is dict else c
    out = []
    for x in vals:
        if isinstance(x, tuple):
            out += _leaves(x)
        elif isinstance(x, Float):
            out.append(x)
    return out


def _fn(x, *cs):
    # the result depends on which containers are one object (a stale replay shows)
    total = fj.sum(x)
    for c in cs:
        for a in _leaves(c):
            total = total + fj.sum(a)
    distinct = sum(all(c is not d for d in cs[:i]) for i, c in enumerate(cs))
    return total + distinct


@settings(max_examples=25, deadline=None)
@given(kinds=st.lists(st.sampled_from(_KINDS), min_size=2, max_size=5),
       ctype=st.sampled_from([tuple, list, dict]),
       pair=st.tuples(st.integers(0, 4), st.integers(0, 4)))
def test_aliased_containers_are_refused_as_the_walk_refuses_them(kinds, ctype, pair):
    i, j = sorted(p % len(kinds) for p in pair)
    ff = fj.freeze(_fn, warn_after=1000)

    def fresh():
        return [_make(k, n, ctype) for n, k in enumerate(kinds)]

    def aliased():
        cs = fresh()
        if i != j:
            cs[j] = cs[i]       # one object at two places (same type, maybe other contents)
        return cs
    for make in (fresh, fresh, fresh, aliased, fresh, aliased, aliased, fresh):
        cs = make()
        assert same(ff(X, *cs), _fn(X, *cs))


@pytest.mark.parametrize("kind", ["literal", "value", "none", "empty"])
def test_containers_without_a_data_node_are_still_compared(kind):
    # the binder keeps `is` tests for them (their aliasing is no node twice)
    ff = fj.freeze(_fn, warn_after=1000)
    for _ in range(3):
        cs = [_make(kind, 0, list), _make(kind, 1, list), _make("data", 2, list)]
        ff(X, *cs)
    src = ff._bound[0].source
    assert " is v" in src
    shared = _make(kind, 0, list)
    cs = [shared, shared, _make("data", 2, list)]
    assert same(ff(X, *cs), _fn(X, *cs))


def test_containers_with_data_nodes_are_not_compared_pairwise():
    ff = fj.freeze(_fn, warn_after=1000)
    for k in range(3):
        ff(X, *[_make("data", n + k, tuple) for n in range(4)])
    src = ff._bound[0].source
    assert " is v" not in src
    t = _make("data", 0, tuple)
    cs = [t, _make("data", 1, tuple), t, _make("data", 3, tuple)]
    n = ff.n_recordings
    assert same(ff(X, *cs), _fn(X, *cs))
    assert ff.n_recordings == n + 1      # (another layout: its own recording)


def test_a_key_with_aliasing_keeps_every_pairwise_test(monkeypatch):
    # a key that reaches an array twice: the argument does not hold, every pair is compared
    a = ramp(3)
    ff = fj.freeze(_fn, warn_after=1000)
    for _ in range(3):
        ff(X, (a,), (ramp(3, 1),), (a,))
    assert ff._bound[0].source.count(" is v") >= 2


def test_sabotaged_implication_is_caught(monkeypatch):
    # with every pair dropped (the implication assumed for all containers), the literal-only
    # containers' aliasing goes unseen: the replay differs from the plain call
    orig = binder._Gen.distinct_containers

    def drop_all(self):
        self.holds = set(self.cont_vars)
        self.aliased = False
        orig(self)
    monkeypatch.setattr(binder._Gen, "distinct_containers", drop_all)
    ff = fj.freeze(_fn, warn_after=1000)
    with pytest.raises(Exception):      # noqa: B017  (VERIFY_BINDERS or checking mode: either)
        for _ in range(3):
            ff(X, [Float(2.0)], [Float(2.0)], [ramp(3)])
        shared = [Float(2.0)]
        cs = [shared, shared, [ramp(3)]]
        assert same(ff(X, *cs), _fn(X, *cs))
