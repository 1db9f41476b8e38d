"""Side by side with Dr.Jit 1.5: derivatives at kinks and domain edges, scopes, seeding, scatters.

    python tests/ad/anchor_compare.py            # runs both systems, prints every difference
    python tests/ad/anchor_compare.py --child fj # one system's results as JSON

Each system runs in its own subprocess (never drjit and frostjit in one process; see
DEVELOPERS.md).  Not a test (pytest does not collect it: drjit is not a dependency); the
expected values it confirmed are in test_ad_kinks.py, test_ad_scopes.py and test_ad_seeding.py,
and the remaining differences are listed under "Differences from Dr.Jit" in docs/ad.md.
"""
from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys

INF, NAN = math.inf, math.nan
U = [-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, INF]
UNIT = [-2.0, -1.0000001, -1.0, -1 + 2.0 ** -24, -0.99999, 0.0, 0.99999, 1 - 2.0 ** -24, 1.0, 1.0000001, 2.0]
PAIRS = [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (-1.0, -1.0), (0.0, 1.0),
         (1.0, 0.0), (0.0, -1.0), (2.0, 0.5), (0.0, 2.0), (0.0, 0.5), (-2.0, 2.0), (INF, 1.0), (1.0, INF),
         (INF, INF), (NAN, 1.0), (1.0, NAN), (3e-30, 4e-30), (1e30, 1e30)]


def child(system: str) -> dict:
    if system == "dr":
        import drjit as dr
        from drjit.llvm.ad import Float, Array3f, UInt32
    else:
        import frostjit as dr
        from frostjit.llvm.ad import Float, Array3f
        from frostjit.llvm import UInt32
    res = {}

    def lst(a):
        return ["nan" if v != v else v for v in a.numpy().ravel().tolist()]

    def record(name, fn):
        try:
            res[name] = fn()
        except Exception as e:          # an error is a result too (Dr.Jit raises in some cases)
            res[name] = "error " + type(e).__name__

    def leaf(*v):
        x = Float(*v)
        dr.enable_grad(x)
        return x

    def elementwise(f, cols):
        def run():
            out = {}
            args = [Float(c) for c in cols]
            dr.enable_grad(*args)
            dr.backward(f(*args))
            out["reverse"] = [lst(dr.grad(a)) for a in args]
            for i in range(len(cols)):
                args = [Float(c) for c in cols]
                dr.enable_grad(*args)
                y = f(*args)
                dr.forward(args[i])
                out[f"forward{i}"] = lst(dr.grad(y))
            return out
        return run

    unary = {
        "abs": dr.abs, "sqrt": dr.sqrt, "rsqrt": dr.rsqrt, "rcp": dr.rcp, "cbrt": dr.cbrt, "log": dr.log,
        "log2": dr.log2, "exp": dr.exp, "sin": dr.sin, "tan": dr.tan, "atan": dr.atan, "tanh": dr.tanh,
        "erf": dr.erf, "square": dr.square, "safe_sqrt": dr.safe_sqrt, "relu": lambda x: dr.maximum(x, 0),
        "min0": lambda x: dr.minimum(x, 0), "clip01": lambda x: dr.clip(x, 0, 1), "x**2": lambda x: x ** 2,
        "x**3": lambda x: x ** 3, "x**-1": lambda x: x ** -1, "x**1.5": lambda x: x ** 1.5, "2**x": lambda x: 2.0 ** x,
        "x/0": lambda x: x / 0.0, "hypot(x,0)": lambda x: dr.hypot(x, 0.0), "hypot(x,x)": lambda x: dr.hypot(x, x),
        "atan2(x,x)": lambda x: dr.atan2(x, x), "fma(x,x,x)": lambda x: dr.fma(x, x, x),
        "select": lambda x: dr.select(x > 0, x, -x), "copysign": lambda x: dr.copysign(x, -1.0),
        "floor*x": lambda x: dr.floor(x) * x, "round*x": lambda x: dr.round(x) * x,
    }
    for name, f in unary.items():
        record(name, elementwise(f, [U]))
    for name, f in {"asin": dr.asin, "acos": dr.acos, "safe_asin": dr.safe_asin, "safe_acos": dr.safe_acos,
                    "safe_sqrt_unit": dr.safe_sqrt, "clip_unit": lambda x: dr.clip(x, -1, 1)}.items():
        record(name, elementwise(f, [UNIT]))
    a, b = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    binary = {"mul": lambda x, y: x * y, "div": lambda x, y: x / y, "pow": lambda x, y: x ** y,
              "minimum": dr.minimum, "maximum": dr.maximum, "atan2": dr.atan2, "hypot": dr.hypot,
              "select_lt": lambda x, y: dr.select(x < y, x, y)}
    for name, f in binary.items():
        record(name, elementwise(f, [a, b]))

    def select_nan():
        x = leaf(1, 2, 30, 40)
        dr.backward(dr.select(x < 20, x, x * (Float(0) / Float(0))))
        return lst(dr.grad(x))
    record("select leaks no NaN", select_nan)

    def normalize_zero():
        v = Array3f(Float(0.0, 3.0), Float(0.0, 4.0), Float(0.0, 0.0))
        dr.enable_grad(v)
        dr.backward(dr.normalize(v))
        return [lst(dr.grad(v)[i]) for i in range(3)]
    record("normalize of zero vector", normalize_zero)

    for vals in ([1.0, 3.0, 3.0, 2.0], [0.0, 2.0, 3.0, 4.0], [0.0, 0.0, 3.0, 4.0]):
        for name, f in {"sum": dr.sum, "prod": dr.prod, "min": dr.min, "max": dr.max}.items():
            def red(f=f, vals=vals):
                x = leaf(*vals)
                dr.backward(f(x))
                return lst(dr.grad(x))
            record(f"{name}{vals}", red)

    # scopes (issue 8 item 18)
    def scopes():
        a, b = leaf(1.0), leaf(1.0)
        with dr.suspend_grad():
            with dr.resume_grad(a):
                d = Float(3.0)
                dr.enable_grad(d)
                y, w = a * 2, b * 2
                inside = [dr.grad_enabled(t) for t in (a, b, d, y, w, y * 3)]
            middle = [dr.grad_enabled(t) for t in (a, d, y)]
            e = Float(1.0)
            dr.enable_grad(e)
        return [inside, middle, [dr.grad_enabled(t) for t in (d, y, e)]]
    record("scopes: suspend/resume(a)/enable_grad", scopes)

    def isolate_forward_to():                       # item 19
        x = leaf(1.0)
        with dr.isolate_grad():
            dr.set_grad(x, 2.0)
            first = lst(dr.forward_to(x * 2))
            second = lst(dr.forward_to(x * 3))
        return [first, second, lst(dr.grad(x))]
    record("isolate_grad: forward_to twice", isolate_forward_to)

    def seeding():                                  # item 20
        out = []
        for fn in ("backward_from", "backward"):
            x = leaf(1.0)
            y = x * 2
            dr.set_grad(y, 1000.0)
            getattr(dr, fn)(y)
            out.append(lst(dr.grad(x)))
        x = leaf(1.0)
        v = Array3f(x * 1, x * 2, x * 3)
        dr.set_grad(v.y, 20.0)
        dr.backward_from(v)
        out.append(lst(dr.grad(x)))
        x, z = leaf(1.0), leaf(1.0)
        y = x * 2 + z * 3
        dr.forward(Array3f(x, z, x))
        out.append(lst(dr.grad(y)))
        return out
    record("seeding: backward_from/backward/vectors", seeding)

    def scatter_clear_vertices():                   # item 21
        x = leaf(1.0)
        buf = dr.zeros(Float, 4)
        dr.scatter(buf, x * 8, UInt32(2))
        dr.forward(x, flags=dr.ADFlag.ClearVertices)
        first = lst(dr.grad(buf))
        dr.scatter(buf, 5.0, UInt32(0))
        dr.forward(x)
        return [first, lst(dr.grad(buf))]
    record("scatter: forward after ClearVertices", scatter_clear_vertices)
    return res


def _close(x, y) -> bool:
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_close(p, q) for p, q in zip(x, y))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= 1e-4 * max(1.0, abs(x), abs(y))
    return x == y


def run(system: str) -> dict:
    env = dict(os.environ)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    if "DRJIT_LIBLLVM_PATH" not in env:
        libs = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
        if libs:
            env["DRJIT_LIBLLVM_PATH"] = libs[0]
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", system], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        json.dump(child(sys.argv[2]), sys.stdout)
        return
    dr, fj = run("dr"), run("fj")
    differ = [k for k in dr if not _close(dr[k], fj.get(k))]
    for k in differ:
        print(f"{k}:\n  drjit    {dr[k]}\n  frostjit {fj.get(k)}")
    print(f"{len(dr) - len(differ)} of {len(dr)} cases agree; the differences are explained in docs/ad.md")


if __name__ == "__main__":
    main()
