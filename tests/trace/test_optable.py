"""Tests generated from the op table: every lane-wise op, on every type its rule allows, on the
LLVM backend, against the op's NumPy reference (the spec, frostjit.trace.numpy_semantics).

Inputs are drawn by hypothesis (edge values 0, -0, +-inf, NaN, the smallest and largest
integers, subnormals, mixed with arbitrary values) at widths that are not multiples of the
SIMD width, with operands of size 1 (broadcast) and literal operands (folded into the
kernel as constants); two wide widths (1000, 100003) run on random data with edge values
sprinkled in.  Exact ops must match bit for bit (any NaN matches any NaN); transcendental
functions must hold their documented bound in ULP on their documented domain and give the
reference's special values.
"""
from __future__ import annotations

import math
import os
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import frostjit as fj
from frostjit.array import registry
from frostjit.backend.llvm.codegen import LOWERINGS
from frostjit.backend.llvm.vmath import math_function
from frostjit.backend.llvm.vmath.accuracy import ulp_error
from frostjit.trace import ops
from frostjit.backend.llvm.codegen import scalar_type
from frostjit.trace.dtypes import ALL_TYPES, FLOAT_TYPES, Bool, Float32, Float64, VarType
from frostjit.trace.optable import (OPS, SPECIAL, ZERO, LogUniform, OpKind, TRANSCENDENTAL, TypeRule, Uniform,
                                    node_op)
from frostjit.trace.state import JitBackend

LANEWISE = sorted(n for n, e in OPS.items() if e.lanewise)
# Ops that appear in kernels (data nodes become loads; reductions run outside kernels).
KERNEL_OPS = sorted(n for n, e in OPS.items() if e.kind in (OpKind.ELEMENTWISE, OpKind.COMPARISON, OpKind.CAST,
                                                              OpKind.MEMORY)) + ["literal", "counter"]
EXACT = [n for n in LANEWISE if n not in TRANSCENDENTAL and n not in ("cast", "bitcast")]
SMALL_WIDTHS = [1, 7, 33]
WIDE = [1000, 100_003]


def _cases(names):
    """(op, operand type) for every op and every type its rule allows."""
    return [(n, vt) for n in names for vt in OPS[n].operand_types()]


def _id(case):
    return f"{case[0]}-{case[1].name}" if isinstance(case, tuple) else str(case)


# -- the table is complete ------------------------------------------------------------------

@pytest.mark.parametrize("name", KERNEL_OPS)
def test_every_kernel_op_has_an_llvm_lowering(name):
    assert name in LOWERINGS, f"the LLVM backend has no lowering for op {name!r}"


def test_every_llvm_lowering_is_an_op_of_the_table():
    assert set(LOWERINGS) - set(OPS) == set()


@pytest.mark.parametrize("name", LANEWISE)
def test_every_lanewise_op_has_a_reference_and_a_well_formed_derivative(name):
    e = OPS[name]
    assert callable(e.numpy), name
    assert e.operand_types(), name
    if isinstance(e.deriv, tuple):
        assert len(e.deriv) == e.arity
        assert all(p is None or callable(p) for p in e.deriv)
    else:
        assert e.deriv in (None, ZERO, SPECIAL)


@pytest.mark.parametrize("name", sorted(TRANSCENDENTAL))
def test_every_transcendental_op_has_a_documented_bound_and_vmath_functions_have_its_arity(name):
    if getattr(LOWERINGS.get(name), "vmath", False):
        assert math_function(name, "float", 16).arity == OPS[name].arity
    for vt in FLOAT_TYPES:
        acc = OPS[name].accuracy.of(vt)
        assert acc.ulp > 0 and len(acc.domain) == OPS[name].arity and acc.text


def test_node_op_maps_integer_powers_to_their_variant():
    assert node_op("pow", fj.llvm.Float._vt) == "pow"
    assert node_op("pow", fj.llvm.Int._vt) == "pow_int"


# -- value strategies -----------------------------------------------------------------------

def _edges(vt: VarType) -> list:
    if vt is Bool:
        return [False, True]
    if vt.is_float:
        f = np.finfo(vt.np_dtype)
        return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, math.inf, -math.inf, math.nan, float(f.max), -float(f.max),
                float(f.tiny), float(f.smallest_subnormal), -float(f.smallest_subnormal), 2.0 ** 31, -2.0 ** 63,
                2.0 ** 64, 1e10]
    lo, hi = ops.int_range(vt)
    return [v for v in (0, 1, -1, 2, 3, 7, 31, 32, 33, 63, 64, lo, hi, lo + 1, hi - 1, -7) if lo <= v <= hi]


def _elements(vt: VarType):
    if vt is Bool:
        return st.booleans()
    edges = st.sampled_from(_edges(vt))
    if vt.is_float:
        width = vt.bits
        return st.one_of(edges, st.floats(width=width), st.floats(-100, 100, width=width))
    lo, hi = ops.int_range(vt)
    return st.one_of(edges, st.integers(lo, hi), st.integers(max(lo, -40), 40))


def _domain_elements(part, vt: VarType):
    if isinstance(part, Uniform):
        return st.floats(part.lo, part.hi).map(lambda v: float(np.asarray(v).astype(vt.np_dtype)))
    def magnitude(u):
        with np.errstate(over="ignore"):        # 2**128 rounds to +inf in float32, as in accuracy.sample
            return float(np.exp2(u).astype(vt.np_dtype))
    mags = st.floats(part.lo_exp, part.hi_exp, exclude_max=True).map(magnitude)
    return st.tuples(mags, st.booleans()).map(lambda p: -p[0] if part.signed and p[1] else p[0])


def _array(vt: VarType, values) -> np.ndarray:
    if not vt.is_float:
        return np.array(values, dtype=vt.np_dtype)
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64).astype(vt.np_dtype)


@st.composite
def _operand(draw, vt: VarType, width: int, elements=None):
    """(values as an array, form): form is "wide", "broadcast" (size 1) or "literal"."""
    form = draw(st.sampled_from(["wide", "wide", "broadcast", "literal"])) if width > 1 else \
        draw(st.sampled_from(["wide", "literal"]))
    n = width if form == "wide" else 1
    values = draw(st.lists(elements if elements is not None else _elements(vt), min_size=n, max_size=n))
    return _array(vt, values), form


# -- running one op on the LLVM backend -----------------------------------------------------

def _cls(vt: VarType):
    return registry.flat_type(JitBackend.LLVM, vt, False)


def _node(vt: VarType, a: np.ndarray, form: str):
    if form == "literal":
        return ops.literal(vt, a[0].item())
    return _cls(vt)(a)._node


def _run(name: str, out_vt: VarType, operands, value=None) -> np.ndarray:
    """Evaluate op ``name`` on ``operands`` [(vt, array, form)] with the LLVM backend."""
    nodes = tuple(_node(vt, a, form) for vt, a, form in operands)
    if all(form == "literal" for _, _, form in operands) and nodes:
        # A kernel needs one non-literal input to have a width: make the first one data.
        vt, a, _ = operands[0]
        nodes = (_cls(vt)(a)._node,) + nodes[1:]
    out = _cls(out_vt)._from_node(ops.make(name, out_vt, nodes, value=value))
    return out.numpy()


def _result_type(name: str, vt: VarType) -> VarType:
    return Bool if OPS[name].bool_result else vt


def _assert_same(name, got, want, args, unspecified=None):
    """Bit-exact equality (any NaN matches any NaN; lanes in ``unspecified`` are skipped)."""
    want = np.broadcast_to(want, got.shape)
    if got.dtype.kind == "f":
        same = (got.view(f"u{got.itemsize}") == want.view(f"u{got.itemsize}")) | (np.isnan(got) & np.isnan(want))
    else:
        same = got == want
    if unspecified is not None:
        same |= np.broadcast_to(unspecified, got.shape)
    if not same.all():
        k = int(np.flatnonzero(~same)[0])
        shown = [np.broadcast_to(a, got.shape)[k] for a in args]
        raise AssertionError(f"{name}{tuple(shown)}: LLVM {got[k]!r}, reference {want[k]!r} (lane {k} of {got.shape[0]})")


def _check_exact(name, vt, operands, value=None, out_vt=None):
    e = OPS[name]
    out_vt = out_vt or _result_type(name, vt)
    got = _run(name, out_vt, operands, value)
    args = [a for _, a, _ in operands]
    want = e.numpy(out_vt, *args)
    if name == "truediv" and operands[1][2] == "literal" and out_vt in (Float32, Float64):
        # Dr.Jit's rule at the door (trace/ops.py): a float division by a literal multiplies by
        # the literal's reciprocal, rounded once to the type
        with np.errstate(all="ignore"):
            recip = (1.0 / args[1].astype(np.float64)).astype(out_vt.np_dtype)
            want = (args[0] * recip).astype(out_vt.np_dtype)
    unspecified = e.unspecified(out_vt, *args) if e.unspecified is not None else None
    assert want.dtype == out_vt.np_dtype, f"{name}: the reference returned {want.dtype}"
    _assert_same(name, got, want, args, unspecified)


# -- exact ops: bit for bit -----------------------------------------------------------------

_EXACT_CASES = _cases(EXACT)
# Hundreds of (op, type) cases: a fifth of the profile's examples each (6 in CI, 80 under "stress").
# On the reference backend one example per case: its kernels compute each op with the op table's
# NumPy reference itself (backend/reference/lowering.py), so more examples compare the spec with
# itself; the one left checks the interpreter's operand handling (literal, broadcast, wide) per
# (op, type).  (test_constant_folding: 19.2 -> 10.4 CPU s on that backend).
_few = settings(max_examples=1 if os.environ.get("FROSTJIT_BACKEND") == "reference"
                else max(6, settings.default.max_examples // 5), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _operand_types_of(name: str, vt: VarType) -> list:
    if name == "select":
        return [Bool, vt, vt]
    return [vt] * OPS[name].arity


@pytest.mark.parametrize("case", _EXACT_CASES, ids=_id)
@_few
@given(data=st.data())
def test_exact_op_matches_its_numpy_reference(case, data):
    name, vt = case
    width = data.draw(st.sampled_from(SMALL_WIDTHS), label="width")
    operands = []
    for ovt in _operand_types_of(name, vt):
        a, form = data.draw(_operand(ovt, width), label=f"{ovt.name} operand")
        operands.append((ovt, a, form))
    _check_exact(name, vt, operands)


@pytest.mark.parametrize("case", _cases([n for n in LANEWISE if n not in ("cast", "bitcast")]), ids=_id)
def test_every_reference_takes_zero_dimensional_operands(case):
    """A kernel's literal or size-1 operand reaches the reference (the NumPy reference backend)
    as a 0-d array: ``erf`` returned a Python float for one (AttributeError on ``astype``)."""
    name, vt = case
    out_vt = _result_type(name, vt)
    for k, value in enumerate(_edges(vt)[:6]):
        scalars = [_array(ovt, [_edges(ovt)[(k + j) % len(_edges(ovt))]]) for j, ovt in
                   enumerate(_operand_types_of(name, vt))]
        want = OPS[name].numpy(out_vt, *scalars)
        got = OPS[name].numpy(out_vt, *[a.reshape(()) for a in scalars])
        assert isinstance(got, np.ndarray) and got.dtype == out_vt.np_dtype, (name, vt, type(got))
        _assert_same(name, np.atleast_1d(got), want, scalars)


_MASKABLE = [(n, vt) for n in ("and", "or") for vt in ALL_TYPES if vt is not Bool]


@pytest.mark.parametrize("case", _MASKABLE, ids=_id)
@_few
@given(data=st.data())
def test_bitwise_op_with_a_mask_matches_its_numpy_reference(case, data):
    name, vt = case
    width = data.draw(st.sampled_from(SMALL_WIDTHS), label="width")
    a, fa = data.draw(_operand(vt, width), label="value")
    m, fm = data.draw(_operand(Bool, width), label="mask")
    _check_exact(name, vt, [(vt, a, fa), (Bool, m, fm)], out_vt=vt)


_CASTS = [(src, dst) for src in ALL_TYPES for dst in ALL_TYPES if src is not dst]
_BITCASTS = [(src, dst) for src, dst in _CASTS if src.itemsize == dst.itemsize and Bool not in (src, dst)]


@pytest.mark.parametrize("src,dst", _CASTS, ids=lambda t: t.name)
@_few
@given(data=st.data())
def test_cast_matches_its_numpy_reference(src, dst, data):
    width = data.draw(st.sampled_from(SMALL_WIDTHS), label="width")
    a, form = data.draw(_operand(src, width), label="operand")
    _check_exact("cast", src, [(src, a, form)], value=dst, out_vt=dst)


@pytest.mark.parametrize("src,dst", _BITCASTS, ids=lambda t: t.name)
@_few
@given(data=st.data())
def test_bitcast_matches_its_numpy_reference(src, dst, data):
    width = data.draw(st.sampled_from(SMALL_WIDTHS), label="width")
    a, form = data.draw(_operand(src, width), label="operand")
    _check_exact("bitcast", src, [(src, a, form)], value=dst, out_vt=dst)


def _wide_values(vt: VarType, n: int, rng) -> np.ndarray:
    if vt is Bool:
        return rng.integers(0, 2, n).astype(bool)
    if vt.is_float:
        with np.errstate(over="ignore"):        # beyond Float16's range: +-inf
            a = (rng.standard_normal(n) * rng.choice([1.0, 1e3, 1e-3, 1e30], n)).astype(vt.np_dtype)
    else:
        lo, hi = ops.int_range(vt)
        a = rng.integers(lo, hi, n, dtype=np.int64 if vt.is_signed or vt.bits < 64 else np.uint64,
                         endpoint=True).astype(vt.np_dtype)
        a[: n // 4] = rng.integers(-40 if vt.is_signed else 0, 41, n // 4).astype(vt.np_dtype)
    edges = _array(vt, _edges(vt))
    a[rng.integers(0, n, len(edges) * 4)] = np.tile(edges, 4)
    return a


@pytest.mark.parametrize("width", WIDE)
@pytest.mark.parametrize("case", _EXACT_CASES, ids=_id)
def test_exact_op_matches_its_numpy_reference_on_wide_arrays(case, width):
    name, vt = case
    rng = np.random.default_rng(zlib.crc32(f"{name} {vt.name} {width}".encode()))
    operands = [(ovt, _wide_values(ovt, width, rng), "wide") for ovt in _operand_types_of(name, vt)]
    _check_exact(name, vt, operands)


# -- transcendental functions: within the documented bound -------------------------------------

_MATH_CASES = _cases(sorted(TRANSCENDENTAL))


def _check_accuracy(name, vt, operands):
    e = OPS[name]
    got = _run(name, vt, operands)
    args = [a for _, a, _ in operands]
    with np.errstate(all="ignore"):
        ref = e.numpy(Float64, *(a.astype(np.float64) for a in args))      # before rounding to vt
    scalar = scalar_type(vt)
    bound = e.accuracy.of(vt).ulp + (1 if vt is Float64 else 0)    # NumPy's float64 result is rounded too
    err = ulp_error(got, np.broadcast_to(ref, got.shape).astype(np.float64), scalar)
    k = int(np.argmax(err))
    assert err[k] <= bound, (f"{name}{tuple(np.broadcast_to(a, got.shape)[k] for a in args)}: {err[k]:.2f} ULP "
                             f"(bound {bound}), LLVM {got[k]!r}, reference {ref.flat[k] if ref.size > 1 else ref}")


@pytest.mark.parametrize("case", _MATH_CASES, ids=_id)
@_few
@given(data=st.data())
def test_transcendental_op_holds_its_bound_on_its_domain(case, data):
    name, vt = case
    width = data.draw(st.sampled_from(SMALL_WIDTHS), label="width")
    operands = []
    for parts in OPS[name].accuracy.of(vt).domain:
        elements = st.one_of(*[_domain_elements(p, vt) for p in parts])
        a, form = data.draw(_operand(vt, width, elements), label="operand")
        operands.append((vt, a, form))
    _check_accuracy(name, vt, operands)


_SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5, 2.0, -3.0]


@pytest.mark.parametrize("case", _MATH_CASES, ids=_id)
def test_transcendental_op_gives_the_special_values_of_its_reference(case):
    """Every combination of special operands: NaN where the reference is NaN, the same
    infinities and signed zeros, finite values within the bound."""
    name, vt = case
    arity = OPS[name].arity
    grid = np.array(np.meshgrid(*[_SPECIAL] * arity)).reshape(arity, -1)
    operands = [(vt, _array(vt, row), "wide") for row in grid]
    got = _run(name, vt, operands)
    args = [a for _, a, _ in operands]
    with np.errstate(all="ignore"):
        ref = OPS[name].numpy(vt, *args)
    exact = ~np.isfinite(ref) | (ref == 0) | ~np.isfinite(got) | (got == 0)
    _assert_same(name, np.where(exact, got, 0).astype(got.dtype), np.where(exact, ref, 0).astype(ref.dtype), args)
    scalar = scalar_type(vt)
    assert ulp_error(got[~exact], ref[~exact].astype(np.float64), scalar).max(initial=0) <= \
        OPS[name].accuracy.of(vt).ulp + 1


# -- Python numbers (fj.sin(0.5)): the same special values, double precision ------------------

_PY_OPS = sorted(n for n, e in OPS.items() if e.py is not None and e.types in (TypeRule.FLOAT, TypeRule.ROUNDING)
                 or n in ("min", "max", "fma", "pow"))


@pytest.mark.parametrize("name", _PY_OPS)
def test_python_number_implementation_gives_the_reference_values(name):
    e = OPS[name]
    grid = np.array(np.meshgrid(*[_SPECIAL + [1e300, -7.25, 1e-310]] * e.arity)).reshape(e.arity, -1)
    with np.errstate(all="ignore"):
        ref = e.numpy(Float64, *grid)
    for k in range(grid.shape[1]):
        args = [float(a) for a in grid[:, k]]
        got = e.py(*args)
        assert isinstance(got, float), f"{name}{tuple(args)} returned {type(got).__name__}"
        want = float(ref[k])
        if math.isnan(want):
            assert math.isnan(got), f"{name}{tuple(args)} = {got!r}, expected NaN"
        elif want == 0 or math.isinf(want) or name not in TRANSCENDENTAL:
            assert got == want and math.copysign(1, got) == math.copysign(1, want), \
                f"{name}{tuple(args)} = {got!r}, expected {want!r}"
        else:
            assert ulp_error(np.array([got]), np.array([want]), "double")[0] <= 1, (name, args, got, want)


# -- LogUniform domains are drawn as documented --------------------------------------------------

def test_domain_parts_describe_the_documented_ranges():
    acc = OPS["log"].accuracy.of(Float32)
    assert acc.domain == ((LogUniform(-149, 128), Uniform(0.5, 2.0)),)
    assert "2^-149..2^128" in acc.text


# -- memory operations: the references the NumPy reference backend uses ---------------------

_GATHER_TYPES = [vt for vt in ALL_TYPES]
_INDEX_TYPES = [vt for vt in ALL_TYPES if vt.is_integral]


@pytest.mark.parametrize("ivt", _INDEX_TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("vt", _GATHER_TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("width", [1, 7, 1000])
def test_gather_matches_its_numpy_reference(vt, ivt, width):
    """Out-of-bounds (and negative Int32/Int64) indices and inactive lanes read 0."""
    rng = np.random.default_rng(zlib.crc32(f"gather {vt.name} {ivt.name} {width}".encode()))
    src = _wide_values(vt, 37, rng) if vt is not Bool else rng.integers(0, 2, 37).astype(bool)
    lo = -50 if ivt.is_signed else 0
    index = rng.integers(lo, 60, width).astype(ivt.np_dtype)
    active = rng.integers(0, 4, width) > 0
    got = fj.gather(_cls(vt), _cls(vt)(src), _cls(ivt)(index), _cls(Bool)(active)).numpy()
    _assert_same("gather", got, OPS["gather"].numpy(vt, src, index, active), [index, active])


@pytest.mark.parametrize("reduce_op", [None, "add", "min", "max", "mul"])
@pytest.mark.parametrize("vt", [vt for vt in ALL_TYPES if vt is not Bool], ids=lambda t: t.name)
def test_scatter_matches_its_numpy_reference(vt, reduce_op):
    """Distinct indices for plain scatters (which duplicate wins is unspecified); duplicates,
    out-of-bounds and inactive lanes for the reductions (float sums: in an unspecified
    order, so the values are small integers here)."""
    rng = np.random.default_rng(zlib.crc32(f"scatter {vt.name} {reduce_op}".encode()))
    n, width = 50, 300
    target = rng.integers(0, 9, n).astype(vt.np_dtype)
    value = rng.integers(1, 5, width).astype(vt.np_dtype)
    if reduce_op is None:
        index = rng.permutation(n + 20)[:width % (n + 20)].astype(np.int64)
        value = value[: index.shape[0]]
    else:
        index = rng.integers(-5, n + 5, width)
    index = index.astype(np.int32)
    active = rng.integers(0, 4, index.shape[0]) > 0
    t = _cls(vt)(target)
    I32 = fj.llvm.Int32
    if reduce_op is None:
        fj.scatter(t, _cls(vt)(value), I32(index), _cls(Bool)(active))
    else:
        fj.scatter_reduce(getattr(fj.ReduceOp, reduce_op.capitalize()), t, _cls(vt)(value), I32(index),
                          _cls(Bool)(active))
    want = OPS["scatter"].numpy(target, value, index, active, reduce_op)
    _assert_same("scatter", t.numpy(), want, [target])


def test_counter_matches_its_numpy_reference():
    for vt in (fj.llvm.UInt32._vt, fj.llvm.Int64._vt):
        got = fj.arange(_cls(vt), 1003).numpy()
        np.testing.assert_array_equal(got, OPS["counter"].numpy(vt, 1003))


@pytest.mark.parametrize("x", [7.599060965728662e-29, 6.02059637148553, -6.07924877258293e-28, 27.0, 1e-310])
def test_the_cbrt_reference_is_the_nearest_cube_root_where_libm_is_two_steps_off(x):
    # The op table's Python cbrt (the reference and literal folding) walked only one step from
    # libm's result; glibc is two steps above the nearest here (found by the bound test above).
    from fractions import Fraction
    from frostjit.trace.optable import OPS
    py = OPS["cbrt"].py
    y = py(x)
    miss = [abs(Fraction(c) ** 3 - Fraction(x)) for c in (math.nextafter(y, -math.inf), y, math.nextafter(y, math.inf))]
    assert miss[1] <= min(miss[0], miss[2])
    if os.environ.get("FROSTJIT_BACKEND", "llvm") == "llvm":
        from frostjit.llvm import Float64
        assert fj.cbrt(Float64([x, x])).numpy()[0] == y     # the kernel's cbrt gives it too
