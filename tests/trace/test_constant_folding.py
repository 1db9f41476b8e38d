"""Literal folding (frostjit/trace/folding.py, Dr.Jit's constant propagation): an operation on
literal operands is a literal, whose value is bit for bit what a kernel computes.

The differential tests fold every exact lane-wise op of the op table, on every type its rule
allows, on values drawn by hypothesis (edge values, NaN, infinities, the integer limits, shift
counts around the width), and compare each folded literal with the same op evaluated by a kernel
on opaque (evaluated) operands.  The state tests follow Dr.Jit 1.5, checked with the installed
``drjit`` in its own process: ``Int(4) + Int(5)`` is ``VarState.Literal``, ``zeros(Float, 5) + 1``
too, ``select`` on a literal condition is the chosen operand, ``eval`` leaves a literal a literal
(``make_opaque`` evaluates it), and ``JitFlag.ConstantPropagation`` cleared folds nothing.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import frostjit as fj
from frostjit.array import registry
from frostjit.llvm import Bool, Float, Float64, Int, Int64, UInt, UInt64
from frostjit.trace import folding, ops
from frostjit.trace.dtypes import Bool as BoolT, VarType
from frostjit.trace.optable import OPS, TRANSCENDENTAL
from frostjit.trace.state import JitBackend

Literal, Evaluated, Unevaluated = fj.VarState.Literal, fj.VarState.Evaluated, fj.VarState.Unevaluated


def _cls(vt: VarType):
    return registry.flat_type(JitBackend.LLVM, vt, False)


def _operand_types(name: str, vt: VarType) -> list:
    if name == "select":
        return [BoolT, vt, vt]
    return [vt] * OPS[name].arity


def _result_type(name: str, vt: VarType) -> VarType:
    return BoolT if OPS[name].bool_result else vt


# (op, operand type) for every folded op; ``and``/``or`` with a Bool mask as second operand too.
CASES = [(n, vt, _operand_types(n, vt)) for n in sorted(folding.FOLDABLE) for vt in OPS[n].operand_types()]
CASES += [(n, vt, [vt, BoolT]) for n in ("and", "or") for vt in OPS[n].operand_types() if vt is not BoolT]


def _id(case) -> str:
    name, vt, types = case
    return f"{name}-{vt.name}" + ("-mask" if types[-1] is BoolT and vt is not BoolT and name != "select" else "")


def _elements(vt: VarType):
    """Values of type ``vt`` (as Python numbers), edge values likely."""
    if vt is BoolT:
        return st.booleans()
    if vt.is_float:
        return st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan, 2.5, -2.5]),
                         st.floats(width=vt.bits))
    lo, hi = ops.int_range(vt)
    return st.one_of(st.sampled_from(sorted({lo, hi, 0, 1, lo + 1, hi - 1} | ({-1} if lo < 0 else set()))),
                     st.integers(0, vt.bits + 1),         # shift counts, bit counts around the width
                     st.integers(lo, hi))


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Lane-wise bit equality (any NaN matches any NaN)."""
    if got.dtype.kind == "f":
        u = f"u{got.itemsize}"
        return (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))
    return got == want


# Hundreds of (op, type) cases: a tenth of the profile's examples each (4 in CI); every example
# checks a batch of lanes.  On the reference backend one example per case: its kernels compute each
# op with the op table's NumPy reference (backend/reference/lowering.py), the very function folding
# uses (folding.FOLDABLE), so more examples compare it with itself; the one left checks that a
# folded literal and the interpreter agree on each (op, type) there.
_few = settings(max_examples=1 if os.environ.get("FROSTJIT_BACKEND") == "reference"
                else max(4, settings.default.max_examples // 10), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("case", CASES, ids=_id)
@_few
@given(data=st.data())
def test_folded_literal_equals_the_kernel_result(case, data):
    name, vt, types = case
    out_vt = _result_type(name, vt)
    lanes = data.draw(st.lists(st.tuples(*[_elements(t) for t in types]), min_size=1, max_size=12), label="lanes")
    # The kernel: the same op over opaque operands (loads, not literals the compiler could fold).
    columns = []
    for k, t in enumerate(types):
        column = _cls(t)(np.array([ops.normalize_literal(t, lane[k]) for lane in lanes], dtype=t.np_dtype))
        fj.make_opaque(column)
        columns.append(column._node)
    in_kernel = _cls(out_vt)._from_node(ops.make(name, out_vt, tuple(columns))).numpy()
    for j, lane in enumerate(lanes):
        node = ops.make(name, out_vt, tuple(ops.literal(t, v) for t, v in zip(types, lane)))
        assert node.op == "literal", f"{name}{lane} on {vt.name} did not fold"
        assert node.vt is out_vt and node.size == 1
        folded = np.array([node.value], dtype=out_vt.np_dtype)
        assert _same(folded, in_kernel[j:j + 1])[0], \
            f"{name}{lane} on {vt.name}: folded {folded[0]!r}, kernel {in_kernel[j]!r}"


def _edge_values(vt: VarType) -> list:
    if vt is BoolT:
        return [False, True]
    if vt.is_float:
        values = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0, 7.0, 1e-45, 1e-300, 5e-324, 3.4e38, 1e308,
                  math.inf, -math.inf, math.nan, 0.1, -1e-7]
        return [ops.normalize_literal(vt, v) for v in values]
    lo, hi = ops.int_range(vt)
    return sorted({lo, hi, lo + 1, hi - 1, 0, 1, 2, 3, 7, vt.bits - 1, vt.bits, vt.bits + 1, hi // 3, lo // 5})


@pytest.mark.parametrize("key", list(folding._PYTHON_BINARY) + list(folding._PYTHON_UNARY),
                         ids=lambda k: "-".join(getattr(p, "name", p) for p in k))
def test_python_number_fast_path_equals_the_reference(key):
    """Folding computes its common cases on Python numbers (no NumPy): the same bits and the
    same Python type as the op's reference, on every pair of edge values."""
    name, *types = key
    f = (folding._PYTHON_BINARY if len(types) == 2 else folding._PYTHON_UNARY)[key]
    out_vt = _result_type(name, types[0])
    grids = [_edge_values(t) for t in types]
    pairs = [(x, y) for x in grids[0] for y in grids[1]] if len(types) == 2 else [(x,) for x in grids[0]]
    for args in pairs:
        got = f(*args)
        if got is folding._NO:
            continue
        want = OPS[name].numpy(out_vt, *[np.array([v], dtype=t.np_dtype) for t, v in zip(types, args)])[0].item()
        assert type(got) is type(want), (name, args, got, want)
        assert _same(np.array([got], out_vt.np_dtype), np.array([want], out_vt.np_dtype))[0], (name, args, got, want)


def test_every_exact_lanewise_op_folds_and_no_transcendental_one():
    lanewise = {n for n, e in OPS.items() if e.lanewise}
    assert set(folding.FOLDABLE) == lanewise - TRANSCENDENTAL - {"cast", "bitcast"}
    assert "pow" not in folding.FOLDABLE and "pow_int" in folding.FOLDABLE


# -- VarState, as Dr.Jit 1.5 ------------------------------------------------------------------

def test_integer_sum_of_literals_is_a_literal():
    x = Int(4) + Int(5)
    assert x.state == Literal and x[0] == 9


def test_literal_arithmetic_wraps_around_as_a_kernel():
    assert (Int(2**31 - 1) + 1).state == Literal
    assert (Int(2**31 - 1) + 1)[0] == -(2**31)
    assert (-UInt(7))[0] == 2**32 - 7 and (-UInt64(7))[0] == 2**64 - 7
    assert (Int(-7) // Int(2))[0] == -3 and (Int(-7) % Int(2))[0] == -1       # C's rounding
    assert (Int(7) // Int(0))[0] == 0


def test_zeros_plus_one_stays_a_literal_of_the_same_size():
    x = fj.zeros(Float, 5) + 1
    assert x.state == Literal and fj.width(x) == 5 and x.numpy().tolist() == [1.0] * 5


def test_float_operations_on_literals_fold_with_ieee_rounding():
    assert (Float(1) / Float(3))[0] == np.float32(1) / np.float32(3)
    x = fj.fma(Float64(0.1), Float64(10), Float64(-1))
    assert x.state == Literal and x[0] == 5.551115123125783e-17     # one rounding (Dr.Jit: the same)
    assert (Float(1e30) * Float(1e30))[0] == math.inf
    assert fj.sqrt(Float(2)).state == Literal and fj.sqrt(Float(2))[0] == float(np.sqrt(np.float32(2)))


def test_comparisons_and_float_tests_of_literals_are_bool_literals():
    for x in (Float(2.5) < Float(3.0), Int64(-7) >= 0, fj.isnan(Float(math.nan)), ~Bool(True),
              Bool(True) & Bool(False)):
        assert x.state == Literal and type(x) is Bool


def test_select_on_a_literal_condition_is_the_chosen_operand():
    x = fj.arange(Float, 3)
    assert fj.select(Bool(True), x, Float(2))._node is x._node
    y = fj.select(Bool(False), x, Float(2))
    assert y.state == Literal and y.numpy().tolist() == [2.0, 2.0, 2.0]      # broadcast to the width
    z = fj.select(Bool(True), Float(1), Float(2))
    assert z.state == Literal and z[0] == 1.0


def test_select_on_a_literal_condition_keeps_a_wider_operand_s_size():
    x = fj.arange(Float, 4)
    y = fj.select(Bool(True), fj.sqrt(Float(2)) * x[0:1], x)        # chosen: one pending lane, other: 4
    assert fj.width(y) == 4 and y.numpy().tolist() == [0.0] * 4


def test_select_on_a_wide_literal_condition_folds():
    c = fj.full(Bool, True, 3)
    y = fj.select(c, Float(1), Float(2))
    assert y.state == Literal and fj.width(y) == 3 and y.numpy().tolist() == [1.0] * 3


def test_eval_leaves_a_folded_literal_a_literal_and_make_opaque_evaluates_it():
    x = Int(4) + Int(5)
    fj.eval(x)
    assert x.state == Literal
    fj.make_opaque(x)
    assert x.state == Evaluated and x[0] == 9


def test_an_operation_with_an_evaluated_operand_does_not_fold():
    y = Int(4)
    fj.make_opaque(y)
    assert (y + Int(5)).state == Unevaluated


def test_transcendental_functions_of_literals_are_computed_by_the_kernel():
    # A deliberate difference from Dr.Jit (docs/engine.md): the kernel's polynomial, not NumPy's.
    y = fj.sin(Float(0.5))
    assert y.state == Unevaluated
    assert abs(y[0] - math.sin(0.5)) < 1e-6
    assert (Float(2) ** Float(0.5)).state == Unevaluated


@pytest.mark.parametrize("mode", [None, "symbolic", "evaluated"])
def test_if_stmt_on_a_literal_condition_and_literal_state_is_a_literal(mode):
    # Dr.Jit 1.5: the same states in all three modes (checked side by side)
    def true_fn(c, x):
        return (x + 1,)

    def false_fn(c, x):
        return (x + 2,)
    y, = fj.if_stmt(args=(Bool(True), Float(3)), cond=Bool(True), true_fn=true_fn, false_fn=false_fn, mode=mode)
    assert y.state == Literal and y[0] == 4.0
    c = fj.arange(Int, 3) > 0
    y, = fj.if_stmt(args=(c, Float(3)), cond=c, true_fn=true_fn, false_fn=false_fn, mode=mode)
    assert y.state == Unevaluated and y.numpy().tolist() == [5.0, 4.0, 4.0]


def test_local_read_at_a_literal_index_of_a_literal_local_is_a_literal():
    local = fj.alloc_local(Float, 3, value=Float(0))
    assert local[0].state == Literal and local[fj.llvm.UInt32(1)].state == Literal      # (Dr.Jit 1.5: both)


def test_constant_propagation_cleared_folds_nothing():
    with fj.scoped_set_flag(fj.JitFlag.ConstantPropagation, False):
        assert (Int(4) + Int(5)).state == Unevaluated
        assert fj.select(Bool(True), Float(1), Float(2)).state == Unevaluated
        assert fj.fma(Float(1), Float(2), Float(3)).state == Unevaluated
        assert Int(Float(3.5)).state == Unevaluated and fj.reinterpret_array(UInt, Float(1)).state == Unevaluated
        x = Int(4) + Int(5)
    assert x[0] == 9 and (Int(4) + Int(5)).state == Literal and Int(Float(3.5)).state == Literal


def test_reinterpreting_a_literal_folds():
    x = fj.reinterpret_array(UInt, Float(2.5))
    assert x.state == Literal and x[0] == 0x40200000


def test_gradients_through_folded_literals():
    x = fj.llvm.ad.Float(3.0)
    fj.enable_grad(x)
    y = x * x + Float(1) * Float(2)
    fj.backward(y)
    assert y[0] == 11.0 and fj.grad(x)[0] == 6.0


# -- frozen functions ---------------------------------------------------------------------------

def test_frozen_function_with_a_literal_input_replays_each_value():
    f = fj.freeze(lambda x: x * Float(2) + 1)
    for v in (3.0, 4.0, 5.0, 4.0):
        y = f(Float(v))
        assert y[0] == 2 * v + 1


def test_frozen_function_folding_a_literal_of_the_input_width():
    f = fj.freeze(lambda x: x + (fj.zeros(Float, fj.width(x)) + 1) * 2)
    for n in (3, 5, 8):
        x = fj.arange(Float, n)
        assert f(x).numpy().tolist() == [i + 2.0 for i in range(n)]
    assert f.n_recordings <= 2


def test_frozen_function_returning_a_folded_literal_of_the_input_width():
    def g(x):
        return fj.full(Float, 2.0, fj.width(x)) * 3
    f = fj.freeze(g)
    for n in (2, 6, 9):
        y = f(fj.arange(Float, n))
        assert fj.width(y) == n and y.numpy().tolist() == [6.0] * n
