"""The scalar backend's Python-number fast path (frostjit/array/eager_python.py) is bit-identical
to its NumPy path: every lane-wise op of the op table, every element type, columns of 1-4
components and Python-number operands, over random values with NaN, infinities, -0.0,
subnormals, the types' extremes and overflowing results."""
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.scalar as s
from frostjit.array import eager, eager_python
from frostjit.trace import dtypes as dt
from frostjit.trace import numpy_semantics as ns
from frostjit.trace.optable import OPS

pytestmark = pytest.mark.backend_independent("the scalar arrays' Python-number path against their NumPy path")

LANEWISE = sorted(name for name, e in OPS.items() if e.lanewise)
FLOAT_EXTREMES = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 1.0, -1.0, 0.5, 3.0, 65504.0, 1e-45,
                  3.4028234663852886e38, -3.4028234663852886e38, 1.1754943508222875e-38, 1e308, 5e-324]


def _values(vt):
    if vt is dt.Bool:
        return st.booleans()
    if vt.is_float:
        width = {2: 16, 4: 32, 8: 64}[vt.itemsize]
        extremes = [v for v in FLOAT_EXTREMES if _representable(v, width)]
        return st.one_of(st.sampled_from(extremes), st.floats(width=width), st.floats(-8, 8, width=width))
    lo = -(1 << (vt.bits - 1)) if vt.is_signed else 0
    hi = (1 << (vt.bits - 1)) - 1 if vt.is_signed else (1 << vt.bits) - 1
    return st.one_of(st.sampled_from([lo, hi, 0, 1, -1 if vt.is_signed else 2, 31, 32, 63, 64]),
                     st.integers(lo, hi), st.integers(-5 if vt.is_signed else 0, 40))


def _representable(v, width):
    if math.isnan(v) or math.isinf(v):
        return True
    t = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    with np.errstate(all="ignore"):
        return float(t(v)) == v


def _bits(v):
    """A result as comparable bits (NaN sign and payload included)."""
    if isinstance(v, float):
        return ("f", struct.pack("<d", v))
    return (type(v).__name__, v)


def _run(op, operands, numpy_path):
    with pytest.MonkeyPatch.context() as m:
        if numpy_path:
            m.setattr(eager_python, "MAX_COMPONENTS", -1)
        try:
            values, vt = eager.compute(op, operands, "test")
        except Exception as e:      # both paths must raise alike
            return ("raise", type(e).__name__)
    return vt, [_bits(v) for v in values]


@st.composite
def cases(draw):
    op = draw(st.one_of(st.sampled_from(sorted(eager_python.OPS)), st.sampled_from(LANEWISE)))
    vt = draw(st.sampled_from(dt.ALL_TYPES))
    n = draw(st.integers(1, 4))
    arity = OPS[op].arity
    operands = []
    for k in range(arity):
        t = dt.Bool if op == "select" and k == 0 else vt
        if k > 0 and draw(st.integers(0, 3)) == 0 and not (op == "select" and k == 0):
            # a Python number operand (the JIT's literal rules: ints wrap, floats round)
            operands.append(draw(st.one_of(_values(t), st.integers(-3, 70), st.floats(-4, 4),
                                           st.sampled_from([0.0, -0.0, math.inf, math.nan]))))
        else:
            if op in ("shl", "shr") and k == 1 and draw(st.booleans()):
                t = t if t.is_integral else vt
                vals = draw(st.lists(st.integers(0, 70), min_size=n, max_size=n))
                vals = [v & ((1 << t.bits) - 1) if t.is_integral else v for v in vals]
            else:
                vals = draw(st.lists(_values(t), min_size=n, max_size=n))
            operands.append(eager.Column(list(vals) if t is not dt.Bool else [bool(v) for v in vals], t))
    return op, operands


@settings(max_examples=1500, deadline=None)
@given(case=cases())
def test_python_path_is_bit_identical_to_the_numpy_path(case):
    op, operands = case
    fast = _run(op, operands, False)
    slow = _run(op, operands, True)
    assert fast == slow, (op, [(o.vt, o.values) if isinstance(o, eager.Column) else o for o in operands])


@pytest.mark.parametrize("op", sorted(eager_python.OPS))
def test_every_fast_op_is_an_op_table_op(op):
    assert op in OPS and OPS[op].lanewise


def test_the_fast_path_runs_for_common_scalar_arithmetic(monkeypatch):
    calls = []
    real = eager_python.compute

    def spy(*args):
        out = real(*args)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(eager_python, "compute", spy)
    a, b = s.Array3f(1, 2, 3), s.Array3f(4, 5, 6)
    assert list(a + b) == [5, 7, 9] and (a * 2.5)[2] == 7.5
    u = s.Array2u(0xFFFFFFFF, 7)
    assert list(u + 1) == [0, 8] and (u << 4)[0] == 0xFFFFFFF0
    assert s.PCG32().next_float32() == 0.10837864875793457
    assert calls and all(calls[:4])


def test_float32_results_round_once_and_overflow_to_infinity():
    big = s.Array1f(3.4028234663852886e38)
    assert (big * 2)[0] == math.inf and (-big * 2)[0] == -math.inf
    assert (big + 1e31)[0] == 3.4028234663852886e38        # rounds back down to FLT_MAX
    third = (s.Array1f(1) / 3)[0]
    assert third == float(np.float32(1) / np.float32(3))
    assert fj.dot(s.Array3f(1, 2, 3), s.Array3f(4, 5, 6)) == 32.0


ARRAY_TYPES = [(s.Array3f, dt.Float32), (s.Array2f64, dt.Float64), (s.Array4u, dt.UInt32), (s.Array3i, dt.Int32),
               (s.Array2u64, dt.UInt64), (s.Array3i64, dt.Int64), (s.Array3b, dt.Bool), (s.Array2f16, dt.Float16),
               (s.ArrayXf, dt.Float32), (s.ArrayXu, dt.UInt32)]
PUBLIC_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "truediv": lambda a, b: a / b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b, "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b, "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: fj.eq(a, b), "min": fj.minimum, "max": fj.maximum,
    "neg": lambda a, b: -a, "abs": lambda a, b: abs(a), "not": lambda a, b: ~a, "sqrt": lambda a, b: fj.sqrt(a),
    "select": lambda a, b: fj.select(a > b, a, b), "fma": lambda a, b: fj.fma(a, b, a),
}


def _public(fn, a, b):
    try:
        r = fn(a, b)
    except Exception as e:
        return ("raise", type(e).__name__)
    comps = list(r) if hasattr(r, "__len__") else [r]
    return type(r).__name__, [_bits(v) for v in comps]


@settings(max_examples=600, deadline=None)
@given(data=st.data(), op=st.sampled_from(sorted(PUBLIC_OPS)), kind=st.sampled_from(ARRAY_TYPES))
def test_scalar_arrays_fast_lane_equals_the_numpy_path(data, op, kind):
    cls, vt = kind
    n = cls._n if cls._n is not None else data.draw(st.integers(1, 5))
    a = cls(*data.draw(st.lists(_values(vt), min_size=n, max_size=n)))
    if data.draw(st.booleans()):
        b = cls(*data.draw(st.lists(_values(vt), min_size=n, max_size=n)))
    else:
        b = data.draw(st.one_of(st.integers(-3, 40), st.floats(-4, 4), st.sampled_from([0, 1, 2.5, -0.0, math.nan])))
    fn = PUBLIC_OPS[op]
    fast = _public(fn, a, b)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(eager_python, "MAX_COMPONENTS", -1)
        slow = _public(fn, a, b)
    if op in NAN_OPERANDS_RACE:
        fast, slow = _nan_signs_ignored(fast), _nan_signs_ignored(slow)
    assert fast == slow, (op, a, b)


# Which NaN an arithmetic operation on two NaNs returns is not specified (IEEE 754 6.2.3): the
# C compiler may swap a commutative operation's operands (Python's float(-nan) + float(nan) is
# +nan here, NumPy's float32 sum of the same -nan), so these results compare with every NaN
# counted as one value.
NAN_OPERANDS_RACE = {"add", "sub", "mul", "truediv", "fma", "floordiv", "mod"}
_CANONICAL_NAN = ("f", struct.pack("<d", math.nan))


def _nan_signs_ignored(result):
    kind, comps = result
    if kind == "raise":
        return result
    return kind, [_CANONICAL_NAN if c[0] == "f" and math.isnan(struct.unpack("<d", c[1])[0]) else c
                  for c in comps]


def _numpy_cast(src, vt, values):
    try:
        return [_bits(v) for v in ns.cast(vt, np.array(values, dtype=src.np_dtype)).tolist()]
    except Exception as e:
        return ("raise", type(e).__name__)


@settings(max_examples=800, deadline=None)
@given(data=st.data(), src=st.sampled_from(dt.ALL_TYPES), vt=st.sampled_from(dt.ALL_TYPES))
def test_python_casts_equal_the_numpy_rule(data, src, vt):
    values = data.draw(st.lists(_values(src), min_size=1, max_size=4))
    if src is dt.Bool:
        values = [bool(v) for v in values]
    out = eager_python.cast(src, vt, values)
    if out is not None:
        assert [_bits(v) for v in out] == _numpy_cast(src, vt, values), (src, vt, values)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), pair=st.sampled_from([(dt.UInt32, dt.Float32), (dt.Float32, dt.UInt32), (dt.Int32, dt.Float32),
                                             (dt.Float32, dt.Int32), (dt.UInt64, dt.Float64), (dt.Float64, dt.Int64),
                                             (dt.Int64, dt.UInt64), (dt.UInt32, dt.Int32)]))
def test_python_bitcasts_equal_numpy_views(data, pair):
    src, vt = pair
    values = data.draw(st.lists(_values(src), min_size=1, max_size=4))
    out = eager_python.bitcast(src, vt, values)
    want = np.array(values, dtype=src.np_dtype).view(vt.np_dtype).tolist()
    assert [_bits(v) for v in out] == [_bits(v) for v in want]


def test_scalar_conversions_and_reinterpret_use_the_python_path():
    assert list(s.Array3i(s.Array3f(1.7, -2.5, 3.0))) == [1, -2, 3]
    assert list(s.Array3f(s.Array3u(1, 2, 2 ** 32 - 1))) == [1.0, 2.0, 4294967296.0]
    assert list(s.Array2u(s.Array2i(-1, 5))) == [2 ** 32 - 1, 5]
    assert list(fj.reinterpret_array(s.Array2f, s.Array2u(0x3F800000, 0x80000000))) == [1.0, -0.0]
    assert math.copysign(1, fj.reinterpret_array(s.Array2f, s.Array2u(0x3F800000, 0x80000000))[1]) == -1
