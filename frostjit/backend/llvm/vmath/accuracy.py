"""Compile vmath functions into a test kernel and measure their error in ULP.

Used by ``tests/backend/test_vmath.py`` and, as a script, to produce the table of
``docs/math_accuracy.md``::

    python -m frostjit.backend.llvm.vmath.accuracy          # needs mpmath for the float64 rows
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from . import SUPPORTED, math_function

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


def ulp_error(result, reference, scalar: str) -> np.ndarray:
    """|result - reference| in units of the last place of ``scalar`` at the reference value.

    ``reference`` is float64 (float32 functions) or a pair (hi, lo) of float64 arrays holding a
    double-double reference (float64 functions).  Equal non-finite values count 0, NaN vs NaN 0,
    other mismatches of non-finite values inf.
    """
    if isinstance(reference, tuple):
        hi, lo = reference
    else:
        hi, lo = np.asarray(reference, np.float64), np.zeros(len(reference))
    res = np.asarray(result, np.float64)
    if scalar == "float":  # a reference beyond the float32 range rounds to +-inf
        with np.errstate(over="ignore"):
            hi = np.where(np.abs(hi) > 3.4028235677973366e38, hi.astype(np.float32).astype(np.float64), hi)
    mant, emin = (23, -126) if scalar == "float" else (52, -1022)
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
}


def mp_reference(name, x, y=None):
    """Double-double (hi, lo) reference computed with mpmath at 40 digits."""
    import mpmath as mp

    mp.mp.dps = 40
    f = {
        "sin": mp.sin, "cos": mp.cos, "tan": mp.tan, "asin": mp.asin, "acos": mp.acos, "atan": mp.atan,
        "atan2": mp.atan2, "exp": mp.exp, "exp2": lambda v: mp.power(2, v), "expm1": mp.expm1, "log": mp.log,
        "log2": lambda v: mp.log(v, 2), "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh, "erf": mp.erf,
        "pow": mp.power, "cbrt": mp.cbrt,
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
# Test ranges: name -> (scalar -> sampler(rng, n) returning (x, y|None), description)
# ---------------------------------------------------------------------------------------------

def _log_uniform(rng, n, lo_exp, hi_exp, signed=False):
    v = np.exp2(rng.uniform(lo_exp, hi_exp, n))
    if signed:
        v *= rng.choice([-1.0, 1.0], n)
    return v


def sample(name, scalar, rng, n):
    """(x, y, description) of the documented test range for ``name``."""
    f32 = scalar == "float"
    u = rng.uniform
    if name in ("sin", "cos", "tan", "sincos"):
        lim = 1e4 if f32 else 1e6
        return u(-lim, lim, n), None, f"|x| <= {lim:g} (uniform)"
    if name in ("exp",):
        lo, hi = (-103.9, 88.7) if f32 else (-745.0, 709.7)
        return u(lo, hi, n), None, f"[{lo}, {hi}] (uniform)"
    if name == "exp2":
        lo, hi = (-149.9, 127.9) if f32 else (-1074.0, 1023.9)
        return u(lo, hi, n), None, f"[{lo}, {hi}] (uniform)"
    if name == "expm1":
        lo, hi = (-20.0, 88.7) if f32 else (-40.0, 709.7)
        x = np.concatenate([u(lo, hi, n // 2), _log_uniform(rng, n - n // 2, -30, 0, signed=True)])
        return x, None, f"[{lo}, {hi}] uniform + |x| in [2^-30, 1] log-uniform"
    if name in ("log", "log2"):
        lo, hi = (-149, 128) if f32 else (-1074, 1024)
        x = np.concatenate([_log_uniform(rng, n // 2, lo, hi), u(0.5, 2.0, n - n // 2)])
        return x, None, f"all positive (2^{lo}..2^{hi} log-uniform, incl. subnormals) + [0.5, 2] uniform"
    if name in ("sinh", "cosh"):
        lim = 89.4 if f32 else 710.4
        x = np.concatenate([u(-lim, lim, n // 2), _log_uniform(rng, n - n // 2, -30, 3, signed=True)])
        return x, None, f"|x| <= {lim} uniform + |x| in [2^-30, 8] log-uniform"
    if name in ("tanh", "erf", "atan"):
        x = np.concatenate([u(-10, 10, n // 2), _log_uniform(rng, n - n // 2, -30, 30, signed=True)])
        return x, None, "|x| <= 10 uniform + |x| in [2^-30, 2^30] log-uniform"
    if name in ("asin", "acos"):
        x = np.concatenate([u(-1, 1, n // 2), _log_uniform(rng, n - n // 2, -30, 0, signed=True)])
        return x, None, "[-1, 1] uniform + |x| in [2^-30, 1] log-uniform"
    if name == "atan2":
        return u(-10, 10, n), u(-10, 10, n), "y, x uniform in [-10, 10]"
    if name == "pow":
        x = _log_uniform(rng, n, -20, 20)
        y = u(-30, 30, n)
        return x, y, "x in [2^-20, 2^20] log-uniform, y uniform in [-30, 30]"
    if name == "cbrt":
        lo, hi = (-149, 128) if f32 else (-1074, 1024)
        return _log_uniform(rng, n, lo, hi, signed=True), None, "all finite (log-uniform, signed, incl. subnormals)"
    raise KeyError(name)


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
