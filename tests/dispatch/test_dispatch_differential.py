"""Differential test: random class hierarchies and method tables against a brute-force resolver."""

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from frostjit.dispatch import AmbiguousLookupError, Dispatcher, NotFoundLookupError, Signature

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")


@st.composite
def hierarchies(draw):
    n = draw(st.integers(2, 6))
    classes = []
    for i in range(n):
        bases = draw(st.lists(st.sampled_from(range(i)), unique=True, max_size=2)) if i else []
        base_classes = tuple(classes[b] for b in bases) or (object,)
        try:
            classes.append(type(f"K{i}", base_classes, {}))
        except TypeError:  # inconsistent MRO
            classes.append(type(f"K{i}", (object,), {}))
    return classes


def brute_force(table, arg_types):
    """Most specific matching rows (pointwise issubclass), then precedence; else ambiguity."""
    matches = [r for r in table if all(issubclass(a, p) for a, p in zip(arg_types, r[0]))]
    if not matches:
        return NotFoundLookupError

    def lt(a, b):
        le_ab = all(issubclass(x, y) for x, y in zip(a[0], b[0]))
        le_ba = all(issubclass(y, x) for x, y in zip(a[0], b[0]))
        return le_ab and not le_ba

    minimal = [r for r in matches if not any(lt(o, r) for o in matches if o is not r)]
    top = max(r[1] for r in minimal)
    winners = [r for r in minimal if r[1] == top]
    return winners[0][2] if len(winners) == 1 else AmbiguousLookupError


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_resolution_matches_brute_force(data):
    classes = data.draw(hierarchies())
    arity = data.draw(st.integers(1, 3))
    keywords = data.draw(st.booleans())  # the **kw call path, or the fixed-parameter one
    sigs = data.draw(st.lists(st.tuples(*[st.sampled_from(classes)] * arity), unique=True,
                              min_size=1, max_size=6))
    table = [(s, data.draw(st.integers(0, 1)), i) for i, s in enumerate(sigs)]
    d = Dispatcher()
    f = None
    for types, prec, label in table:
        if keywords:
            def impl(*args, _label=label):
                return _label
        else:
            impl = (lambda lab: lambda *args: lab)(label)

        impl.__name__ = impl.__qualname__ = "f"
        f = d.multi(Signature(*types, precedence=prec))(impl)
    # Rows with equivalent signatures replace each other; keep the last (as dispatch does).
    dedup = {}
    for row in table:
        dedup[row[0]] = row
    table = list(dedup.values())
    for arg_types in itertools.product(classes, repeat=arity):
        expected = brute_force(table, arg_types)
        args = tuple(T() for T in arg_types)
        for _ in range(2):  # miss, then cache hit
            if isinstance(expected, type):
                try:
                    f(*args)
                except expected:
                    pass
                else:  # pragma: no cover
                    raise AssertionError(f"{arg_types}: expected {expected.__name__}")
            else:
                assert f(*args) == expected, arg_types
