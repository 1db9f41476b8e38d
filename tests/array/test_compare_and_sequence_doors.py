"""Two shortcuts of the per-op cost against the paths they skip (session r14, lane opcost).

* ``apply``'s same-type door (frostjit/array/flat.py ``_apply_same_type``) also takes the
  comparisons (``eq``, ``lt``, ...: a mask of the operands' type).  Against the general path:
  the same class, mask values and exceptions, for operands of one 1-D class with other arrays of
  several sizes (0, 1, ragged) and Python numbers at the bounds of integer types; and static
  arrays compared component by component (where the door serves every component) equal to the
  same with every door closed.
* Building a float array from a short sequence skips ``np.errstate`` when every item lies in
  the type's finite range (``_data_from_sequence``).  Against the ``np.errstate`` path: the same
  bytes, the same exception, the same warnings, for items at and past the range (NaN first or
  not, infinities, huge ints, NumPy scalars).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as TA
from frostjit.array import direct as flat_direct, flat
from test_apply_same_type_door import _general, _outcome

COMPARE_OPS = ["eq", "neq", "lt", "le", "gt", "ge"]
CLASSES = [T.Float, T.Float64, T.Float16, T.Int, T.UInt, T.Int64, T.UInt64, T.Int8, T.Bool, TA.Float]
NUMBERS = [0, 1, -1, 7, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 63, -(2 ** 63) - 1, 2 ** 64,
           0.5, -0.0, float("nan"), float("inf"), True, False]


def _array(cls, n, rng):
    if cls is T.Bool:
        return cls(rng.integers(0, 2, n).astype(bool).tolist())
    if cls in (T.Float, T.Float64, T.Float16, TA.Float):
        # (repeated values: equal lanes make eq/le/ge differ from neq/lt/gt)
        return cls(rng.integers(-2, 3, n).astype(np.float64).tolist())
    return cls(rng.integers(0, 4, n).astype(np.int64).tolist())


@pytest.mark.parametrize("op", COMPARE_OPS)
@settings(max_examples=15, deadline=None)
@given(cls=st.sampled_from(CLASSES), data=st.data(),
       sizes=st.sampled_from([(3, 3), (1, 3), (3, 1), (0, 0), (0, 3), (3, 0), (2, 3), (1, 1)]),
       seed=st.integers(0, 3))
def test_comparison_door_matches_the_general_path(cls, op, data, sizes, seed):
    rng = np.random.default_rng(seed)
    x = _array(cls, sizes[0], rng)
    other = data.draw(st.one_of(st.just("array"), st.sampled_from(NUMBERS)))     # (half of them arrays)
    y = _array(cls, sizes[1], rng) if other == "array" else other
    number_first = data.draw(st.booleans()) if other != "array" else False
    operands = (y, x) if number_first else (x, y)
    if cls is TA.Float:
        fj.enable_grad(x)
    fast = _outcome(lambda: flat.apply(op, *operands))
    assert fast == _outcome(lambda: _general(op, *operands))


def _static(vec, w, rng):
    """A static array of class ``vec`` whose 1-D arrays have ``w`` lanes (a matrix: rows of them)."""
    elem = vec._elem
    if issubclass(elem, flat.ArrayBase):
        return vec(*[_array(elem, w, rng) for _ in range(vec._n)])
    return vec(*[_static(elem, w, rng) for _ in range(vec._n)])


@settings(max_examples=30, deadline=None)
@given(vec=st.sampled_from([T.Array3f, T.Array2i, T.Array4u, T.Matrix2f, T.Array3f64, TA.Array3f]),
       op=st.sampled_from(COMPARE_OPS), widths=st.sampled_from([(4, 4), (1, 4), (4, 1), (0, 0), (2, 3)]),
       seed=st.integers(0, 3), number=st.sampled_from([None, 1, 2.5, -1]))
def test_static_arrays_compare_as_with_the_doors_closed(vec, op, widths, seed, number):
    rng = np.random.default_rng(seed)
    a = _static(vec, widths[0], rng)
    b = _static(vec, widths[1], rng) if number is None else number

    def outcome():
        try:
            m = flat.apply(op, a, b)        # (a static array: component by component)
            fj.eval(m)
            return type(m).__name__, np.asarray(m.numpy()).tobytes()
        except (TypeError, ValueError) as e:
            return type(e)
    fast = outcome()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(flat, "_apply_same_type", lambda rule, cls, operands: None)     # every door closed
        assert fast == outcome()


def _built(cls, items):
    """(dtype, bytes) of ``cls(items)``, or the exception's class; and the warnings' messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            a = cls(items)
            fj.eval(a)
            v = np.asarray(a.numpy())
            r = (v.dtype.str, v.tobytes())
        except (TypeError, ValueError, OverflowError) as e:
            r = type(e)
    # (not the DeprecationWarnings of modules a first call may import)
    return r, sorted(str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning))


F32_MAX = float(np.finfo(np.float32).max)
ITEMS = [0.0, -0.0, 1.5, -2.25, 1e-45, F32_MAX, -F32_MAX, float(np.nextafter(F32_MAX, np.inf)), 3.5e38, -3.5e38, 1e40, -1e40, 1e308, -1e308, float("inf"), float("-inf"), float("nan"), 3, -7, 2 ** 70,
         2 ** 1100, True, False, np.float32(2.5), np.float64(-1e39), np.int64(-5), np.bool_(True),
         np.longdouble(2.0)]


@settings(max_examples=120, deadline=None)
@given(cls=st.sampled_from([T.Float, T.Float64, T.Float16, T.Bool, TA.Float]),
       items=st.lists(st.sampled_from(ITEMS), min_size=0, max_size=20))
def test_short_float_sequences_build_as_through_errstate(cls, items):
    fast = _built(cls, items)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(flat, "_SHORT", 0)       # (every sequence through np.errstate)
        assert fast == _built(cls, items)


def _fma_operand(kind, widths, rng):
    """An operand of fma: a static array class (component k of ``widths[k]`` lanes), a 1-D class
    (``widths[0]`` lanes), or a Python number as is."""
    if not isinstance(kind, type):
        return kind
    if issubclass(kind, flat.ArrayBase):
        return kind(rng.normal(size=widths[0]).tolist())
    return kind(*[kind._elem(rng.normal(size=w).tolist()) for w in widths[:kind._n]])


FMA_KINDS = [T.Array3f, T.Float, T.Array3f64, T.Float64, T.Array3i, TA.Array3f, TA.Float, 2.5, -0.0, 3, T.Matrix3f]


def _key(node, seen):
    """The graph below ``node`` as nested tuples (op, type, size, literal value, operands); data
    nodes by identity (no evaluation: no kernel compiled per example)."""
    if node.op == "data":
        return ("data", id(node))
    if node.op == "literal":
        return ("literal", node.vt.name, node.size, repr(node.value))
    k = seen.get(id(node))
    if k is None:
        k = seen[id(node)] = (node.op, node.vt.name, node.size, tuple(_key(a, seen) for a in node.args))
    return k


@settings(max_examples=40, deadline=None)
@given(kinds=st.tuples(*[st.sampled_from(FMA_KINDS)] * 3), seed=st.integers(0, 3),
       widths=st.sampled_from([(4, 4, 4), (1, 4, 4), (4, 1, 1), (1, 1, 1), (0, 0, 0), (0, 4, 4), (2, 3, 3)]))
def test_static_array_fma_matches_componentwise(kinds, seed, widths):
    """fma on static arrays (frostjit/array/direct.py ``fma``) against the component-by-component
    path it skips: the same class and graph of nodes per component, or the same exception."""
    rng = np.random.default_rng(seed)
    operands = [k if not isinstance(k, type) else k(rng.normal(size=widths[0]).tolist())
                if issubclass(k, flat.ArrayBase) else k(*[_static(k._elem, widths[i], rng)
                for i in range(k._n)]) if k is T.Matrix3f else
                k(*[k._elem(rng.normal(size=w).tolist()) for w in widths]) for k in kinds]

    def outcome():
        try:
            r = fj.fma(*operands)
        except (TypeError, ValueError) as e:
            return type(e)
        comps = [r] if isinstance(r, (flat.ArrayBase, float, int)) else \
            [c for row in r for c in ([row] if isinstance(row, flat.ArrayBase) else row)]
        return type(r).__name__, [c if isinstance(c, (float, int)) else _key(c._node, {}) for c in comps]
    fast = outcome()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(flat_direct, "fma", lambda a, b, c: None)
        assert fast == outcome()
