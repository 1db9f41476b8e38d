"""Random expression programs, run by frostjit and by NumPy, must agree bit for bit.

Programs are drawn as straight-line code over a register file: each step
applies one operation to earlier registers.  Inputs have sizes that are 0, 1
(broadcast) or not multiples of the SIMD width, and every integer/float type.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from ieee_reference import ieee_maximum, ieee_minimum

import frostjit as fj
from frostjit import llvm
from frostjit.array.flat import apply

TYPES = {
    "Int32": (llvm.Int32, np.int32), "UInt32": (llvm.UInt32, np.uint32), "Int64": (llvm.Int64, np.int64),
    "UInt64": (llvm.UInt64, np.uint64), "Float32": (llvm.Float32, np.float32), "Float64": (llvm.Float64, np.float64),
}
SIZES = [0, 1, 2, 7, 16, 17, 33, 100, 1000]

def c_floordiv(a, b):
    """Dr.Jit's (C's) integer quotient: toward zero; x // 0 == 0."""
    d = np.where(b == 0, 1, b).astype(b.dtype)
    return np.where(b == 0, 0, (a - np.fmod(a, d)) // d).astype(a.dtype)


def c_mod(a, b):
    """Dr.Jit's (C's) integer remainder: the dividend's sign; x % 0 == 0."""
    d = np.where(b == 0, 1, b).astype(b.dtype)
    return np.where(b == 0, 0, np.fmod(a, d)).astype(a.dtype)


INT_BINARY = {
    "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply), "floordiv": (lambda a, b: a // b, c_floordiv),
    "mod": (lambda a, b: a % b, c_mod), "min": (fj.minimum, np.minimum), "max": (fj.maximum, np.maximum),
    "and": (lambda a, b: a & b, np.bitwise_and), "or": (lambda a, b: a | b, np.bitwise_or),
    "xor": (lambda a, b: a ^ b, np.bitwise_xor),
}
SHIFTS = {"shl": (lambda a, b: a << b, np.left_shift), "shr": (lambda a, b: a >> b, np.right_shift)}
FLOAT_BINARY = {
    "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply), "truediv": (lambda a, b: a / b, np.true_divide),
    "min": (fj.minimum, ieee_minimum), "max": (fj.maximum, ieee_maximum),
    # (the op table's float floordiv/mod, through apply: the // and % operators refuse floats as
    # Dr.Jit's do)
    "floordiv": (lambda a, b: apply("floordiv", a, b), np.floor_divide),
    "mod": (lambda a, b: apply("mod", a, b), np.remainder),
    "copysign": (fj.copysign, np.copysign),
}
UNARY = {
    "neg": (lambda a: -a, np.negative), "abs": (fj.abs, np.abs),
}
FLOAT_UNARY = {
    "sqrt": (fj.sqrt, np.sqrt), "floor": (fj.floor, np.floor), "ceil": (fj.ceil, np.ceil),
    "trunc": (fj.trunc, np.trunc), "round": (fj.round, np.rint), "square": (fj.square, np.square),
}
COMPARE = {
    "lt": (lambda a, b: a < b, np.less), "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater), "ge": (lambda a, b: a >= b, np.greater_equal),
    "eq": (lambda a, b: a == b, np.equal), "ne": (lambda a, b: a != b, np.not_equal),
}


def values(dtype, size):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is not None:
        edge = [0, 1, -1, 2, 3, 7, 31, 32, 33, 63, 64, info.min, info.max, info.min + 1, -7]
        edge = [v for v in edge if info.min <= v <= info.max]
        elem = st.one_of(st.sampled_from(edge), st.integers(info.min, info.max), st.integers(-40, 40).filter(
            lambda v: info.min <= v <= info.max))
    else:
        width = 32 if dtype == np.float32 else 64
        elem = st.one_of(st.floats(width=width, allow_nan=True, allow_infinity=True),
                         st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0]),
                         st.floats(-100, 100, width=width))
    return st.lists(elem, min_size=size, max_size=size).map(lambda v: np.array(v, dtype=dtype))


@st.composite
def programs(draw):
    tname = draw(st.sampled_from(list(TYPES)))
    T, dtype = TYPES[tname]
    size = draw(st.sampled_from(SIZES))
    n_inputs = draw(st.integers(1, 3))
    # (size-1 inputs broadcast against wide ones; not against empty ones: Dr.Jit 1.5's rule, an
    # empty array beside a non-empty one raises, tests/array/test_sweep_r11_suite.py)
    inputs = [draw(values(dtype, draw(st.sampled_from([size, 1])) if k and size else size))
              for k in range(n_inputs)]
    is_float = np.dtype(dtype).kind == "f"
    binary = dict(FLOAT_BINARY if is_float else INT_BINARY)
    if not is_float:
        binary.update(SHIFTS)
    unary = dict(UNARY)
    if is_float:
        unary.update(FLOAT_UNARY)
    steps = []
    n_regs = n_inputs
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["binary", "unary", "select", "scalar"]))
        if kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(binary))), draw(st.integers(0, n_regs - 1)),
                          draw(st.integers(0, n_regs - 1))))
        elif kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(unary))), draw(st.integers(0, n_regs - 1))))
        elif kind == "select":
            steps.append(("select", draw(st.sampled_from(sorted(COMPARE))), draw(st.integers(0, n_regs - 1)),
                          draw(st.integers(0, n_regs - 1)), draw(st.integers(0, n_regs - 1))))
        else:
            c = draw(st.integers(-5, 5)) if not is_float else draw(st.sampled_from([0.5, -3.0, 2.0, 1e-3]))
            if not is_float and np.dtype(dtype).kind == "u":
                c = abs(c)
            steps.append(("scalar", draw(st.sampled_from(["add", "mul", "sub"])), draw(st.integers(0, n_regs - 1)), c))
        n_regs += 1
    return tname, inputs, steps, binary, unary


def run_program(tname, inputs, steps, binary, unary, use_fj):
    T, dtype = TYPES[tname]
    regs = [T(a) if use_fj else a.copy() for a in inputs]
    k = 1 if use_fj else 0
    for step in steps:
        kind = step[0]
        if kind == "binary":
            f = binary[step[1]][0 if use_fj else 1]
            regs.append(f(regs[step[2]], regs[step[3]]))
        elif kind == "unary":
            f = unary[step[1]][0 if use_fj else 1]
            regs.append(f(regs[step[2]]))
        elif kind == "select":
            c = COMPARE[step[1]][0 if use_fj else 1](regs[step[2]], regs[step[3]])
            regs.append(fj.select(c, regs[step[3]], regs[step[4]]) if use_fj else np.where(c, regs[step[3]], regs[step[4]]))
        else:
            a, c = regs[step[2]], step[3]
            if use_fj:
                regs.append({"add": lambda: a + c, "mul": lambda: a * c, "sub": lambda: a - c}[step[1]]())
            else:
                cc = np.array(c).astype(dtype)
                regs.append({"add": np.add, "mul": np.multiply, "sub": np.subtract}[step[1]](a, cc).astype(dtype))
    del k
    return regs


@given(programs())
def test_random_programs_match_numpy(prog):
    tname, inputs, steps, binary, unary = prog
    with np.errstate(all="ignore"):
        ref = run_program(tname, inputs, steps, binary, unary, use_fj=False)
    out = run_program(tname, inputs, steps, binary, unary, use_fj=True)
    fj.eval(*out)
    for k, (r, o) in enumerate(zip(ref, out)):
        got = o.numpy()
        expect = np.broadcast_to(np.asarray(r), got.shape) if np.asarray(r).ndim else np.full(got.shape, r)
        assert got.dtype == expect.dtype, f"register {k}: dtype {got.dtype} != {expect.dtype}"
        np.testing.assert_array_equal(got, expect, err_msg=f"register {k} of program {steps}")


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 1000, 100_003])
def test_fma_matches_exact_rounding(size):
    rng = np.random.default_rng(size)
    a, b, c = (rng.standard_normal(size).astype(np.float32) for _ in range(3))
    out = fj.fma(llvm.Float(a), llvm.Float(b), llvm.Float(c)).numpy()
    # float32 products are exact in float64, so one rounding of a*b+c in float64 then float32 is the
    # fused result except in (vanishingly rare) double-rounding cases.
    ref = (a.astype(np.float64) * b + c).astype(np.float32)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("tname", ["Int32", "UInt32", "Int64", "UInt64"])
def test_integer_power_matches_numpy(tname):
    T, dtype = TYPES[tname]
    rng = np.random.default_rng(1)
    a = rng.integers(-9 if np.dtype(dtype).kind == "i" else 0, 9, 257).astype(dtype)
    b = rng.integers(0, 20, 257).astype(dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((T(a) ** T(b)).numpy(), a ** b)


@pytest.mark.parametrize("src,dst", [("Float32", "Int32"), ("Float64", "Int64"), ("Int32", "Float32"),
                                     ("UInt32", "Float64"), ("Int64", "Int32"), ("Int32", "UInt64"),
                                     ("Float64", "Float32"), ("Float32", "Float64"), ("UInt32", "Int64")])
def test_casts_match_numpy(src, dst):
    S, sd = TYPES[src]
    D, dd = TYPES[dst]
    rng = np.random.default_rng(0)
    if np.dtype(sd).kind == "f":
        a = (rng.standard_normal(1001) * 1e4).astype(sd)
    else:
        info = np.iinfo(sd)
        a = rng.integers(max(info.min, -2**40), min(info.max, 2**40), 1001).astype(sd)
    np.testing.assert_array_equal(D(S(a)).numpy(), a.astype(dd))


@pytest.mark.parametrize("exponent", [2, 1, 0.5, -1, 0, 2.0])
@pytest.mark.parametrize("tname", ["Float32", "Float64"])
def test_literal_powers_numpy_computes_exactly_are_exact(exponent, tname):
    T, dtype = TYPES[tname]
    a = np.random.default_rng(3).standard_normal(333).astype(dtype) * 10
    a[:4] = [0.0, -0.0, np.inf, np.nan]
    with np.errstate(all="ignore"):
        ref = a ** (dtype(exponent) if isinstance(exponent, float) else exponent)
    np.testing.assert_array_equal((T(a) ** exponent).numpy(), ref)


@pytest.mark.parametrize("T, dtype", [(llvm.Float16, np.float16), (llvm.Float32, np.float32),
                                      (llvm.Float64, np.float64)])
@pytest.mark.parametrize("width", [1, 17, 1000])
def test_min_max_of_signed_zeros_and_nans_follow_ieee_minimum_maximum(T, dtype, width):
    """``minimum(-0, +0) == -0`` and ``maximum(-0, +0) == +0`` in either operand order, NaN if
    either operand is NaN: Dr.Jit 1.5's compiled ``dr.minimum``/``dr.maximum`` (checked side by
    side), on evaluated arrays of every width and on literal operands alike."""
    pairs = np.array([(-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0), (np.nan, 1.0), (1.0, np.nan),
                      (-0.0, np.nan), (2.0, -3.0)], dtype=dtype)
    rows = np.resize(np.arange(len(pairs)), width)
    a, b = pairs[rows, 0], pairs[rows, 1]
    for f, ref in ((fj.minimum, ieee_minimum), (fj.maximum, ieee_maximum)):
        for x, y in ((a, b), (b, a)):
            got = f(T(x), T(y)).numpy()
            expect = ref(x, y)
            np.testing.assert_array_equal(got, expect)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(expect))
            for k in range(min(width, len(pairs))):      # literal operands (folded at trace time)
                lit = f(T(x[k]), T(y[k])).numpy()
                np.testing.assert_array_equal(lit, expect[k:k + 1])
                np.testing.assert_array_equal(np.signbit(lit), np.signbit(expect[k:k + 1]))
