"""The LLVM backend against the NumPy reference backend, kernel by kernel.

Hypothesis writes random kernel specs over every type (arithmetic, comparisons, bit operations,
shifts, casts and reinterpretations, selects, gathers, scatters and scatter reductions, the
lane counter, literals, size-1 inputs), runs each on both backends with the same inputs, and
compares every output and scatter target: bit for bit (any NaN equals any NaN), except

* float ``scatter_add``/``scatter_reduce(Mul)`` targets, whose sums the backends may add in
  different orders (compared to a relative 1e-4, or 8 ULP of Float16), and float ``scatter_reduce(Min/Max)``
  targets, where a tie of -0 and +0 may keep either zero (compared with -0 == +0);
* transcendental functions, compared within ``ULP_BOUND`` units in the last place on the
  ranges of docs/math_accuracy.md (the LLVM backend's polynomials are within the bounds listed
  there, the reference computes in float64 and rounds once).

Float-to-integer conversions are only generated for values the target type holds (out of range
the result is undefined, as in Dr.Jit).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from frostjit.backend import get_backend
from frostjit.backend.kernel import IN, IN_SCALAR, OUT, GATHER_SRC, SCATTER_DST, Instr, KernelSpec
from frostjit.backend.reference.backend import listing
from frostjit.trace.dtypes import Bool, Int8, UInt8, Int32, UInt32, Int64, UInt64, Float16, Float32, Float64, ALL_TYPES

pytestmark = pytest.mark.llvm_only("runs the LLVM and the reference backend itself (once is enough)")

LLVM = get_backend("llvm")
REF = get_backend("reference")

FLOATS = (Float16, Float32, Float64)
INTS = (Int8, UInt8, Int32, UInt32, Int64, UInt64)
INDEX_TYPES = (Int32, UInt32, Int64, UInt64)        # (8-bit indices are widened before kernels see them)
NUMERIC = INTS + FLOATS
ULP_BOUND = 4       # the largest bound of docs/math_accuracy.md (2.93 ULP) plus the reference's rounding

SIZES = (1, 7, 100, 1000)


def random_values(vt, n, rng):
    """``n`` values of ``vt`` with the edge cases mixed in (zeros, extremes, NaN, inf, -0)."""
    dt = vt.np_dtype
    if vt is Bool:
        return rng.random(n) < 0.5
    if vt.is_float:
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dt)
        with np.errstate(over="ignore"):       # (3e38 is inf in Float16)
            special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.5, -2.5, 1e-40, 3e38]).astype(dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        small = rng.integers(-40 if vt.is_signed else 0, 40, n).astype(dt)
        a = np.where(rng.random(n) < 0.5, small, a)
        special = np.array([0, 1, info.max, info.min, info.max - 1, 2, 3, 31, 32, 33, 63, 64], dtype=np.int64
                           if vt.is_signed else np.uint64).astype(dt)
    mask = rng.random(n) < 0.15
    a[mask] = rng.choice(special, int(mask.sum()))
    return a


class Program:
    """A kernel spec being generated: typed values and the parameters they came from."""

    def __init__(self, draw):
        self.draw = draw
        self.instrs = []
        self.params = []
        self.values = {vt: [] for vt in ALL_TYPES}     # vt -> instruction indices of that type
        self.inputs = []           # (param index, vt, scalar?)
        self.gathers = []          # (param index, vt)
        self.scatters = []         # (param index, vt, reduction)

    def emit(self, op, vt, args=(), value=None):
        self.instrs.append(Instr(op, vt, tuple(args), value))
        k = len(self.instrs) - 1
        if op not in ("store", "scatter"):
            self.values[vt].append(k)
        return k

    def param(self, kind, vt):
        self.params.append((kind, vt))
        return len(self.params) - 1

    def pick(self, vt):
        """A value of type ``vt``: an existing one, or a new input or literal."""
        vals = self.values[vt]
        if vals and self.draw(st.integers(0, 4)) > 0:
            return vals[self.draw(st.integers(0, len(vals) - 1))]
        if self.draw(st.booleans()):
            scalar = self.draw(st.integers(0, 4)) == 0
            p = self.param(IN_SCALAR if scalar else IN, vt)
            self.inputs.append((p, vt, scalar))
            return self.emit("load", vt, (), p)
        return self.emit("literal", vt, (), self.literal(vt))

    def literal(self, vt):
        if vt is Bool:
            return self.draw(st.booleans())
        if vt.is_float:
            v = self.draw(st.sampled_from([0.0, -0.0, 1.0, -1.5, 0.5, 3.0, 1e10, float("inf"), float("nan")]))
            with np.errstate(over="ignore"):
                return float(np.asarray(v, vt.np_dtype))
        info = np.iinfo(vt.np_dtype)
        return self.draw(st.sampled_from([0, 1, 2, 7, 31, 32, int(info.max), int(info.min)]))

    def safe_for_cast(self, x, src, dst):
        """``x`` (float ``src``) clamped into what integer type ``dst`` holds, NaN made 0."""
        info, finite = np.iinfo(dst.np_dtype), np.finfo(src.np_dtype)
        # (literals are values of their type: a Float16 clamps to its own range when that is narrower)
        lo = max(float(info.min), float(finite.min))
        hi = min(float(np.nextafter(np.asarray(float(info.max), src.np_dtype), src.np_dtype.type(0))), float(finite.max))
        isnan = self.emit("isnan", Bool, (x,))
        zero = self.emit("literal", src, (), 0.0)
        x = self.emit("select", src, (isnan, zero, x))
        x = self.emit("max", src, (x, self.emit("literal", src, (), lo)))
        return self.emit("min", src, (x, self.emit("literal", src, (), hi)))

    def random_instruction(self):
        draw = self.draw
        kind = draw(st.sampled_from(["binary", "binary", "unary", "compare", "select", "fma", "cast", "bitcast",
                                     "shift", "bits", "divide", "counter", "gather", "scatter"]))
        if kind == "binary":
            vt = draw(st.sampled_from(NUMERIC))
            op = draw(st.sampled_from(["add", "sub", "mul", "min", "max"] + (["truediv", "copysign"] if vt.is_float
                                                                            else ["pow_int"])))
            self.emit(op, vt, (self.pick(vt), self.pick(vt)))
        elif kind == "divide":
            vt = draw(st.sampled_from(NUMERIC))
            self.emit(draw(st.sampled_from(["floordiv", "mod"])), vt, (self.pick(vt), self.pick(vt)))
        elif kind == "unary":
            vt = draw(st.sampled_from(ALL_TYPES))
            if vt is Bool:
                ops = ["not"]
            elif vt.is_float:
                ops = ["neg", "abs", "sqrt", "rsqrt", "rcp", "floor", "ceil", "trunc", "round", "isnan", "isinf",
                       "isfinite"]
            else:
                ops = ["neg", "abs", "not"]
            op = draw(st.sampled_from(ops))
            self.emit(op, Bool if op.startswith("is") else vt, (self.pick(vt),))
        elif kind == "compare":
            vt = draw(st.sampled_from(ALL_TYPES))
            self.emit(draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"])), Bool, (self.pick(vt), self.pick(vt)))
        elif kind == "select":
            vt = draw(st.sampled_from(ALL_TYPES))
            self.emit("select", vt, (self.pick(Bool), self.pick(vt), self.pick(vt)))
        elif kind == "fma":
            vt = draw(st.sampled_from(NUMERIC))
            self.emit("fma", vt, (self.pick(vt), self.pick(vt), self.pick(vt)))
        elif kind == "cast":
            src, dst = draw(st.sampled_from(ALL_TYPES)), draw(st.sampled_from(ALL_TYPES))
            x = self.pick(src)
            if src.is_float and dst.is_integral:
                x = self.safe_for_cast(x, src, dst)
            self.emit("cast", dst, (x,), dst)
        elif kind == "bitcast":
            src = draw(st.sampled_from(NUMERIC))
            dst = draw(st.sampled_from([t for t in NUMERIC if t.itemsize == src.itemsize]))
            self.emit("bitcast", dst, (self.pick(src),), dst)
        elif kind == "shift":
            vt = draw(st.sampled_from(INTS))
            self.emit(draw(st.sampled_from(["shl", "shr"])), vt, (self.pick(vt), self.pick(vt)))
        elif kind == "bits":
            vt = draw(st.sampled_from(ALL_TYPES))
            op = draw(st.sampled_from(["and", "or", "xor"]))
            mask = vt is not Bool and op != "xor" and draw(st.booleans())
            self.emit(op, vt, (self.pick(vt), self.pick(Bool if mask else vt)))
        elif kind == "counter":
            self.emit("counter", draw(st.sampled_from([UInt32, Int64])))
        elif kind == "gather":
            vt = draw(st.sampled_from(ALL_TYPES))
            p = self.param(GATHER_SRC, vt)
            self.gathers.append((p, vt))
            self.emit("gather", vt, (self.index(), self.pick(Bool)), p)
        elif kind == "scatter":
            vt = draw(st.sampled_from(ALL_TYPES))
            red = None if vt is Bool else draw(st.sampled_from([None, "add", "mul", "min", "max"]))
            p = self.param(SCATTER_DST, vt)
            self.scatters.append((p, vt, red))
            self.emit("scatter", vt, (self.pick(vt), self.index(), self.pick(Bool)), (p, red))

    def index(self):
        """An index: mostly small (in bounds of a 16-element source), sometimes anything."""
        vt = self.draw(st.sampled_from(INDEX_TYPES))
        if self.draw(st.integers(0, 3)) == 0:
            return self.pick(vt)
        mod = self.emit("literal", vt, (), self.draw(st.sampled_from([1, 5, 16, 17])))
        return self.emit("mod", vt, (self.pick(vt), mod))


@st.composite
def programs(draw):
    prog = Program(draw)
    for _ in range(draw(st.integers(1, 25))):
        prog.random_instruction()
    outs = []
    candidates = [k for vt in ALL_TYPES for k in prog.values[vt]]
    for k in draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=4, unique=True)):
        vt = prog.instrs[k].vt
        p = prog.param(OUT, vt)
        prog.instrs.append(Instr("store", vt, (k,), p))
        outs.append((p, vt))
    return Case(KernelSpec(prog.instrs, prog.params, bool(prog.scatters)), prog, outs)


class Case:
    """A generated kernel (shown as its listing when hypothesis reports a failure)."""

    def __init__(self, spec, prog, outs):
        self.spec, self.prog, self.outs = spec, prog, outs

    def __repr__(self):
        return "\n" + listing(self.spec)


def run_on(backend, spec, size, arrays):
    """Launch ``spec`` on ``backend`` with the NumPy ``arrays`` by parameter; the buffers after it."""
    buffers = []
    for (kind, vt), a in zip(spec.params, arrays):
        buffers.append(backend.alloc(vt, size) if kind == OUT else backend.from_numpy(a))
    kernel, _ = backend.compile(spec)
    backend.launch(kernel, size, spec, buffers)
    return [backend.to_numpy(b, len(a) if a is not None else size) for b, a in zip(buffers, arrays)]


def same_bits(a, b):
    if a.dtype.kind == "f":
        nan = np.isnan(a) & np.isnan(b)
        return np.array_equal(a.view(f"u{a.dtype.itemsize}")[~nan], b.view(f"u{b.dtype.itemsize}")[~nan]) \
            and np.array_equal(np.isnan(a), np.isnan(b))
    return np.array_equal(a, b)


@given(programs(), st.sampled_from(SIZES), st.integers(0, 2**32 - 1))
@settings(max_examples=60)
def test_random_kernels_agree_bit_for_bit(case, size, seed):
    spec, prog, outs = case.spec, case.prog, case.outs
    rng = np.random.default_rng(seed)
    arrays = [None] * len(spec.params)
    for p, vt, scalar in prog.inputs:
        arrays[p] = random_values(vt, 1 if scalar else size, rng)
    for p, vt in prog.gathers:
        arrays[p] = random_values(vt, 16, rng)
    for p, vt, red in prog.scatters:
        arrays[p] = random_values(vt, 16, rng)
    ref = run_on(REF, spec, size, arrays)
    got = run_on(LLVM, spec, size, arrays)
    for p, vt in outs:
        assert same_bits(got[p], ref[p]), (p, vt, got[p], ref[p], arrays)
    for p, vt, red in prog.scatters:
        if vt.is_float and red in ("add", "mul"):       # summation order differs (Float16: by its own ULPs)
            rtol = max(1e-4, 8 * float(np.finfo(vt.np_dtype).eps))
            assert np.allclose(got[p], ref[p], rtol=rtol, atol=0, equal_nan=True), (p, vt, red)
        elif vt.is_float and red in ("min", "max"):     # a tie of -0 and +0 may keep either
            assert same_bits(got[p] + 0.0, ref[p] + 0.0), (p, vt, red, got[p], ref[p], arrays)
        else:
            assert same_bits(got[p], ref[p]), (p, vt, red, got[p], ref[p], arrays)


def ulp_distance(a, b):
    """Units in the last place between two float arrays (0 where both are NaN or equal)."""
    bits = a.dtype.itemsize * 8
    it = np.int64 if bits == 64 else np.int32

    def ordered(x):
        i = x.view(it).astype(np.int64)
        return np.where(i < 0, np.int64(-(2 ** (bits - 1))) - i, i)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.abs(ordered(a).astype(object) - ordered(b).astype(object)).astype(np.float64)
    return np.where(same, 0.0, d)


def _uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _log_uniform(lo_exp, hi_exp, signed=True):
    def f(rng, n):
        v = 2.0 ** rng.uniform(lo_exp, hi_exp, n)
        return v * np.where(rng.random(n) < 0.5, -1, 1) if signed else v
    return f


# name -> (arity, sampler) on the ranges of docs/math_accuracy.md (float32 limits)
TRANSCENDENTAL = {
    "sin": (1, _uniform(-1e4, 1e4)), "cos": (1, _uniform(-1e4, 1e4)), "tan": (1, _uniform(-1e4, 1e4)),
    "asin": (1, _uniform(-1, 1)), "acos": (1, _uniform(-1, 1)), "atan": (1, _log_uniform(-30, 30)),
    "atan2": (2, _uniform(-10, 10)), "exp": (1, _uniform(-103.9, 88.7)), "exp2": (1, _uniform(-149.9, 127.9)),
    "log": (1, _log_uniform(-149, 128, False)), "log2": (1, _log_uniform(-149, 128, False)),
    "sinh": (1, _uniform(-89.4, 89.4)), "cosh": (1, _uniform(-89.4, 89.4)), "tanh": (1, _log_uniform(-30, 30)),
    "erf": (1, _log_uniform(-30, 3.3)), "cbrt": (1, _log_uniform(-140, 120)),
}


@pytest.mark.parametrize("vt", (Float32, Float64), ids=lambda t: t.name)
@pytest.mark.parametrize("op", sorted(TRANSCENDENTAL) + ["pow"])
def test_transcendental_kernels_agree_within_the_documented_ulp_bound(op, vt):
    rng = np.random.default_rng(7)
    n = 20000
    if op == "pow":
        arrays = [(2.0 ** rng.uniform(-20, 20, n)).astype(vt.np_dtype), rng.uniform(-30, 30, n).astype(vt.np_dtype)]
    else:
        arity, sample = TRANSCENDENTAL[op]
        arrays = [sample(rng, n).astype(vt.np_dtype) for _ in range(arity)]
    instrs = [Instr("load", vt, (), k) for k in range(len(arrays))]
    instrs += [Instr(op, vt, tuple(range(len(arrays)))), Instr("store", vt, (len(arrays),), len(arrays))]
    spec = KernelSpec(instrs, [(IN, vt)] * len(arrays) + [(OUT, vt)])
    arrays.append(None)
    ref = run_on(REF, spec, n, arrays)[-1]
    got = run_on(LLVM, spec, n, arrays)[-1]
    finite = np.isfinite(ref) & (np.abs(ref) < np.finfo(vt.np_dtype).max / 2)
    d = ulp_distance(got[finite], ref[finite])
    assert d.max(initial=0) <= ULP_BOUND, (op, vt, d.max(), arrays[0][finite][np.argmax(d)])
    assert np.array_equal(np.isnan(got), np.isnan(ref)), op
