"""``apply``'s same-type door (frostjit/array/flat.py ``_apply_same_type``) against its general
path: for operands of one 1-D class and Python numbers, the door must build the node the
general path builds (same op, type, class, operand values) or step aside, including Python ints
at and past the bounds of integer types (the door takes an int only where the type holds it),
Bool, float types beside huge ints, and operands of different sizes (a size-1 array broadcasts,
anything else raises as the general path does)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
from frostjit.array import flat
from frostjit.errors import IncompatibleSizesError


def _general(op, *operands):
    """``apply`` with the door closed for this call (its rules cache emptied and refusing)."""
    key = (op, type(operands[0]))
    saved = flat._same_type_rules.get(key, False)
    flat._same_type_rules[key] = None
    try:
        return flat.apply(op, *operands)
    finally:
        if saved is False:
            del flat._same_type_rules[key]
        else:
            flat._same_type_rules[key] = saved


def _outcome(fn):
    """(class, dtype, bytes of the values) of ``fn()`` evaluated (NaN equal to NaN), or the
    exception's class."""
    try:
        r = fn()
    except (TypeError, ValueError, OverflowError, IncompatibleSizesError) as e:
        return type(e)
    fj.eval(r)
    v = np.asarray(r.numpy())
    return type(r), v.dtype.str, v.tobytes()


BOUNDS = {T.Int: 32, T.UInt: 32, T.Int64: 64, T.UInt64: 64}


def _edge_ints(bits):
    """Python ints at and just past the edges of a ``bits``-bit type, signed or unsigned."""
    return st.sampled_from([0, 1, -1, 2, 7, -(1 << (bits - 1)), -(1 << (bits - 1)) - 1, (1 << (bits - 1)) - 1,
                            1 << (bits - 1), (1 << bits) - 1, 1 << bits, 10 ** 30, -(10 ** 30)])


@settings(max_examples=60, deadline=None)
@given(cls=st.sampled_from(sorted(BOUNDS, key=lambda c: c.__name__)), data=st.data(),
       op=st.sampled_from(["add", "sub", "mul", "min", "max", "and", "or", "xor", "fma"]),
       n=st.sampled_from([1, 3, 40]), number_first=st.booleans())
def test_int_operands_at_type_bounds_match_the_general_path(cls, data, op, n, number_first):
    bits = BOUNDS[cls]
    k = data.draw(_edge_ints(bits))
    rng = np.random.default_rng(n)
    x = cls(rng.integers(0, 100, n).astype(np.int64).tolist())
    operands = ((k, x) if number_first else (x, k)) if op != "fma" else (x, k, x)
    assert _outcome(lambda: flat.apply(op, *operands)) == _outcome(lambda: _general(op, *operands))


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(["add", "mul", "min", "max", "fma", "floor", "sub"]),
       k=st.sampled_from([0, 1, -3, 2 ** 24 + 1, 2 ** 70, -(2 ** 70), 0.5, -0.0, 1e300]),
       n=st.sampled_from([1, 5, 33]), cls=st.sampled_from([T.Float, T.Float64, T.Float16]))
def test_float_types_take_any_python_number_as_the_general_path(op, k, n, cls):
    x = cls(np.linspace(-3, 3, n).tolist())
    operands = (x,) if op == "floor" else (x, k, x) if op == "fma" else (x, k)
    assert _outcome(lambda: flat.apply(op, *operands)) == _outcome(lambda: _general(op, *operands))


@pytest.mark.parametrize("op", ["and", "or", "xor", "eq", "neq"])
@pytest.mark.parametrize("k", [0, 1, 2, True, False])
def test_bool_operands_leave_numbers_to_the_general_path(op, k):
    m = T.Bool([True, False, True])
    assert _outcome(lambda: flat.apply(op, m, k)) == _outcome(lambda: _general(op, m, k))


@pytest.mark.parametrize("sizes", [(1, 4), (4, 1), (4, 4), (3, 4), (0, 4), (4, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("op", ["add", "max", "fma"])
def test_operand_sizes_broadcast_or_raise_as_the_general_path(sizes, op):
    a, b = (T.Float(np.arange(s, dtype=np.float32).tolist()) for s in sizes)
    operands = (a, b, a) if op == "fma" else (a, b)
    assert _outcome(lambda: flat.apply(op, *operands)) == _outcome(lambda: _general(op, *operands))
