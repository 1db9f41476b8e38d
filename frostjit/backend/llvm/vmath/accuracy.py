"""Compile vmath functions into a test kernel and measure their error in ULP.

Used by ``tests/backend/test_vmath.py`` and, as a script, to produce the table of
``docs/math_accuracy.md``::

    python -m frostjit.backend.llvm.vmath.accuracy          # needs mpmath for the float64 rows
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from ....trace.dtypes import Float32, Float64
from ....trace.optable import OPS, Uniform
from . import SUPPORTED, accuracy_of, math_function

_NP = {"float": np.float32, "double": np.float64}


def _wrapper(name: str, scalar: str, width: int) -> str:
    """``void k_<name>(ptr in0, ptr in1, ptr out0, ptr out1, i64 n)`` looping in steps of width."""
    fn = math_function(name, scalar, width)
    ty = scalar if width == 1 else f"<{width} x {scalar}>"
    lines = [f"define void @k_{name}(ptr %in0, ptr %in1, ptr %out0, ptr %out1, i64 %n) {{",
             "entry:", "  br label %loop", "loop:",
             "  %i = phi i64 [ 0, %entry ], [ %inext, %body ]",
             "  %done = icmp uge i64 %i, %n", "  br i1 %done, label %exit, label %body", "body:",
             f"  %p0 = getelementptr {scalar}, ptr %in0, i64 %i",
             f"  %a0 = load {ty}, ptr %p0, align 1"]
    args = [f"{ty} %a0"]
    if fn.arity == 2:
        lines += [f"  %p1 = getelementptr {scalar}, ptr %in1, i64 %i", f"  %a1 = load {ty}, ptr %p1, align 1"]
        args.append(f"{ty} %a1")
    if fn.results == 1:
        lines += [f"  %r0 = call {ty} @{fn.symbol}({', '.join(args)})",
                  f"  %q0 = getelementptr {scalar}, ptr %out0, i64 %i", f"  store {ty} %r0, ptr %q0, align 1"]
    else:
        st = f"{{ {ty}, {ty} }}"
        lines += [f"  %rr = call {st} @{fn.symbol}({', '.join(args)})",
                  f"  %r0 = extractvalue {st} %rr, 0", f"  %r1 = extractvalue {st} %rr, 1",
                  f"  %q0 = getelementptr {scalar}, ptr %out0, i64 %i", f"  store {ty} %r0, ptr %q0, align 1",
                  f"  %q1 = getelementptr {scalar}, ptr %out1, i64 %i", f"  store {ty} %r1, ptr %q1, align 1"]
    lines += [f"  %inext = add i64 %i, {width}", "  br label %loop", "exit:", "  ret void", "}", ""]
    return "\n".join(lines)


class Kernels:
    """All requested functions of one (scalar, width), compiled into one module.

    ``kernels(name, x[, y])`` returns a numpy array (or a pair for sincos).
    """

    def __init__(self, names, scalar: str, width: int):
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.scalar, self.width = scalar, width
        definitions, declarations, wrappers = {}, set(), []
        for name in names:
            fn = math_function(name, scalar, width)
            definitions.update(fn.definitions)
            declarations |= fn.declarations
            wrappers.append(_wrapper(name, scalar, width))
        self.ir = "\n".join(sorted(declarations) + list(definitions.values()) + wrappers)
        mod = llvm.parse_assembly(self.ir)
        mod.verify()
        target = llvm.Target.from_default_triple()
        self._tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                                features=llvm.get_host_cpu_features().flatten(), opt=3)
        pb = llvm.create_pass_builder(self._tm, llvm.create_pipeline_tuning_options(speed_level=2))
        pb.getModulePassManager().run(mod, pb)
        self._engine = llvm.create_mcjit_compiler(mod, self._tm)
        self._engine.finalize_object()
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int64)
        self._fns = {n: proto(self._engine.get_function_address(f"k_{n}")) for n in names}

    def __call__(self, name, x, y=None):
        dt = _NP[self.scalar]
        x = np.ascontiguousarray(x, dtype=dt)
        n = len(x)
        pad = (-n) % self.width
        xp = np.concatenate([x, np.zeros(pad, dt)])
        yp = xp if y is None else np.concatenate([np.ascontiguousarray(y, dtype=dt), np.zeros(pad, dt)])
        o0, o1 = np.empty_like(xp), np.empty_like(xp)
        self._fns[name](xp.ctypes.data, yp.ctypes.data, o0.ctypes.data, o1.ctypes.data, len(xp))
        if name == "sincos":
            return o0[:n], o1[:n]
        return o0[:n]


_NARROW = {"half": np.float16, "float": np.float32}
_FORMAT = {"half": (10, -14), "float": (23, -126), "double": (52, -1022)}     # mantissa bits, min exponent


def ulp_error(result, reference, scalar: str) -> np.ndarray:
    """|result - reference| in units of the last place of ``scalar`` (``"half"``, ``"float"``,
    ``"double"``) at the reference value.

    ``reference`` is float64 (float32 functions) or a pair (hi, lo) of float64 arrays holding a
    double-double reference (float64 functions).  Equal non-finite values count 0, NaN vs NaN 0,
    other mismatches of non-finite values inf.
    """
    if isinstance(reference, tuple):
        hi, lo = reference
    else:
        hi, lo = np.asarray(reference, np.float64), np.zeros(len(reference))
    res = np.asarray(result, np.float64)
    narrow = _NARROW.get(scalar)
    if narrow is not None:  # a reference beyond the type's range rounds to +-inf
        with np.errstate(over="ignore"):
            hi = np.where(np.abs(hi) > float(np.finfo(narrow).max), hi.astype(narrow).astype(np.float64), hi)
    mant, emin = _FORMAT[scalar]
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.abs(hi)))
        e = np.where(np.isfinite(e), np.maximum(e, emin), emin)
        ulp = np.ldexp(1.0, (e - mant).astype(int))
        err = np.abs((res - hi) - lo) / ulp
    both_nan = np.isnan(res) & np.isnan(hi)
    same = (res == hi) & ~np.isfinite(hi)
    err = np.where(both_nan | same, 0.0, err)
    err = np.where(np.isnan(err) | (np.isinf(hi) != np.isinf(res)), np.inf, err)
    return err


# ---------------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------------

def _erf64(x):
    from math import erf

    return np.vectorize(erf, otypes=[np.float64])(x)


NUMPY_REF = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "atan2": np.arctan2, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "erf": _erf64, "pow": np.power, "cbrt": np.cbrt,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "lgamma": lambda x: OPS["lgamma"].numpy(Float64, x), "erfinv": lambda x: OPS["erfinv"].numpy(Float64, x),
}


def mp_reference(name, x, y=None):
    """Double-double (hi, lo) reference computed with mpmath at 40 digits."""
    import mpmath as mp

    mp.mp.dps = 40
    f = {
        "sin": mp.sin, "cos": mp.cos, "tan": mp.tan, "asin": mp.asin, "acos": mp.acos, "atan": mp.atan,
        "atan2": mp.atan2, "exp": mp.exp, "exp2": lambda v: mp.power(2, v), "expm1": mp.expm1, "log": mp.log,
        "log2": lambda v: mp.log(v, 2), "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh, "erf": mp.erf,
        "pow": mp.power, "cbrt": mp.cbrt, "asinh": mp.asinh, "acosh": mp.acosh, "atanh": mp.atanh,
        "lgamma": lambda v: mp.re(mp.loggamma(v)), "erfinv": mp.erfinv,
    }[name]
    hi = np.empty(len(x))
    lo = np.empty(len(x))
    for k in range(len(x)):
        args = [mp.mpf(float(x[k]))] + ([] if y is None else [mp.mpf(float(y[k]))])
        if name == "cbrt" and args[0] < 0:
            v = -mp.cbrt(-args[0])
        else:
            v = f(*args)
        h = float(v)
        hi[k] = h
        lo[k] = float(v - h) if np.isfinite(h) else 0.0
    return hi, lo


# ---------------------------------------------------------------------------------------------
# Test ranges: the documented domains of the op table (and of INTERNAL kernels)
# ---------------------------------------------------------------------------------------------

def _log_uniform(rng, n, lo_exp, hi_exp, signed=False):
    v = np.exp2(rng.uniform(lo_exp, hi_exp, n))
    if signed:
        v *= rng.choice([-1.0, 1.0], n)
    return v


def _draw(rng, part, n):
    if isinstance(part, Uniform):
        return rng.uniform(part.lo, part.hi, n)
    return _log_uniform(rng, n, part.lo_exp, part.hi_exp, part.signed)


def sample(name, scalar, rng, n):
    """(x, y, description) of the documented test range for ``name`` (the op table's
    :class:`~frostjit.trace.optable.Accuracy` domain; y is None for one operand)."""
    acc = accuracy_of(name).of(Float32 if scalar == "float" else Float64)
    operands = []
    for parts in acc.domain:
        share = n // len(parts)
        sizes = [share] * (len(parts) - 1) + [n - share * (len(parts) - 1)]
        draws = [_draw(rng, part, m) for part, m in zip(parts, sizes)]
        operands.append(draws[0] if len(draws) == 1 else np.concatenate(draws))
    return operands[0], operands[1] if len(operands) > 1 else None, acc.text


def measure(name, scalar, kernels, n, rng, reference="auto"):
    """Max ULP error of ``name`` over its documented range (n samples)."""
    x, y, desc = sample(name, scalar, rng, n)
    dt = _NP[scalar]
    x = x.astype(dt)
    y = None if y is None else y.astype(dt)
    outs = kernels(name, x, y)
    names = ("sin", "cos") if name == "sincos" else (name,)
    outs = outs if name == "sincos" else (outs,)
    worst = 0.0
    for nm, out in zip(names, outs):
        if scalar == "float" or reference == "numpy":
            args = (x.astype(np.float64),) + (() if y is None else (y.astype(np.float64),))
            ref = NUMPY_REF[nm](*args)
        else:
            ref = mp_reference(nm, x, y)
        worst = max(worst, float(np.max(ulp_error(out, ref, scalar))))
    return worst, desc


def main(argv=None):
    """Print the accuracy table (markdown)."""
    rng = np.random.default_rng(1)
    n32, n64 = 1_000_000, 20_000
    names = sorted(SUPPORTED)
    print("| function | dtype | range tested | samples | max ULP |")
    print("|---|---|---|---|---|")
    for scalar, n in (("float", n32), ("double", n64)):
        k = Kernels(names, scalar, 16)
        for name in names:
            err, desc = measure(name, scalar, k, n, rng)
            print(f"| {name} | {'float32' if scalar == 'float' else 'float64'} | {desc} | {n} | {err:.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
