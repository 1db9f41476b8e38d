"""Hypothesis strategies for random nested PyTrees (every kind frostjit.tree knows), and helpers
to compare them.  Used by tests/tree/, tests/functions/test_pytrees.py and
tests/ad/test_ad_pytrees.py (pytest puts this folder, the one of conftest.py, on sys.path).
"""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
from hypothesis import strategies as st

from frostjit import tree
from frostjit.llvm import Float, Array3f

Pair = collections.namedtuple("Pair", "first second")


@dataclasses.dataclass
class Box:
    """A dataclass of two children."""
    a: object
    b: object


@dataclasses.dataclass(frozen=True)
class FrozenBox:
    """A frozen dataclass of two children."""
    a: object
    b: object


class Struct:
    """A ``DRJIT_STRUCT`` class whose constructor needs arguments (a rebuild must not call it)."""
    DRJIT_STRUCT = {"a": object, "b": object}

    def __init__(self, a, b, *, required):
        self.a, self.b = a, b


class Traversable:
    """The traversal protocol with ``__fj_traverse__`` / ``__fj_assign__``."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __fj_traverse__(self) -> dict:
        return {"x": self.x, "y": self.y}

    def __fj_assign__(self, values: dict) -> None:
        self.x, self.y = values["x"], values["y"]


class Attrs:
    """The traversal protocol with ``__fj_traverse_attrs__`` only (``label`` is not walked)."""
    __fj_traverse_attrs__ = ("p", "q")

    def __init__(self, p, q):
        self.p, self.q, self.label = p, q, "not walked"


def _two(kind, a, b):
    if kind == "tuple":
        return (a, b)
    if kind == "list":
        return [a, b]
    if kind == "dict":
        return {"a": a, "b": b}
    if kind == "namedtuple":
        return Pair(a, b)
    if kind == "ordereddict":
        return collections.OrderedDict([("b", b), ("a", a)])
    if kind == "defaultdict":
        d = collections.defaultdict(list)
        d["a"], d[3] = a, b
        return d
    if kind == "dataclass":
        return Box(a, b)
    if kind == "frozen":
        return FrozenBox(a, b)
    if kind == "struct":
        return Struct(a, b, required=True)
    if kind == "protocol":
        return Traversable(a, b)
    if kind == "attrs":
        return Attrs(a, b)
    raise AssertionError(kind)


CONTAINERS = ["tuple", "list", "dict", "namedtuple", "ordereddict", "defaultdict", "dataclass", "frozen",
              "struct", "protocol", "attrs"]
PY_VALUES = st.sampled_from([None, 0, 3, -2.5, "label", True])


@st.composite
def random_arrays(draw, widths=(1, 7, 1000, 100003)):
    """A ``Float`` or an ``Array3f`` of random values, of one of ``widths`` elements."""
    n = draw(st.sampled_from(widths))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    if draw(st.booleans()):
        return Float(rng.standard_normal(n).astype(np.float32))
    return Array3f(rng.standard_normal((3, n)).astype(np.float32))


def pytrees(array_leaf, max_leaves: int = 8, values: bool = True):
    """Random nested PyTrees: ``array_leaf`` draws a JIT array (or static vector); containers
    are every kind of :mod:`frostjit.tree`, nested; Python values appear when ``values``."""
    base = array_leaf if not values else st.one_of(array_leaf, array_leaf, PY_VALUES)

    def extend(children):
        return st.one_of(
            st.tuples(st.sampled_from(CONTAINERS), children, children).map(lambda t: _two(*t)),
            st.lists(children, max_size=3).map(tuple),
            st.lists(children, max_size=3),
        )
    return st.recursive(base, extend, max_leaves=max_leaves)


def numpy_leaves(t) -> list:
    """The values of the arrays of ``t`` as NumPy arrays, in order."""
    return [a.numpy() for a in tree.leaves(t)]


def assert_same_structure(a, b) -> None:
    """``a`` and ``b`` have the same containers (types, keys) and Python values."""
    assert tree.flatten(a)[1] == tree.flatten(b)[1]


def assert_leaves_equal(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
