"""Side by side with Dr.Jit 1.5: PyTrees through eval, width, AD, gather/scatter, select, tile/repeat.

    python tests/anchor_compare_pytrees.py            # runs both systems, prints every difference
    python tests/anchor_compare_pytrees.py --child fj # one system's results as JSON

Each system runs in its own subprocess (never drjit and frostjit in one process; see
DEVELOPERS.md).  Not a test (pytest does not collect it: drjit is not a dependency); the
behaviours it confirmed are tested in tests/tree/, tests/functions/test_pytrees.py and
tests/ad/test_ad_pytrees.py, and the remaining differences are listed in docs/engine.md
("PyTrees") and docs/ad.md.
"""
from __future__ import annotations

import collections
import dataclasses
import glob
import json
import os
import subprocess
import sys


def child(system: str) -> dict:
    if system == "dr":
        import drjit as dr
        from drjit.llvm.ad import Float, Array3f, UInt32, Bool
        from drjit.llvm import Float as PlainFloat
    else:
        import frostjit as dr
        from frostjit.llvm.ad import Float, Array3f
        from frostjit.llvm import UInt32, Bool, Float as PlainFloat

    @dataclasses.dataclass
    class DC:
        a: object
        b: object

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        a: object
        b: object

    class Struct:
        DRJIT_STRUCT = {"a": Float, "b": Float}

        def __init__(self, a=None, b=None):
            self.a, self.b = a, b

    NT = collections.namedtuple("NT", "a b")

    def describe(o):
        """A JSON picture of a result: arrays by kind and values, containers by type."""
        if isinstance(o, (Float, PlainFloat, UInt32, Bool)):
            return {"array": "ad" if isinstance(o, Float) else "plain", "values": o.numpy().tolist()}
        if isinstance(o, Array3f):
            return {"vector": 3, "values": o.numpy().tolist()}
        if isinstance(o, (tuple, list)):
            return {type(o).__name__: [describe(x) for x in o]}
        if isinstance(o, dict):
            return {type(o).__name__: {str(k): describe(v) for k, v in o.items()}}
        if dataclasses.is_dataclass(o) or hasattr(type(o), "DRJIT_STRUCT"):
            names = list(type(o).DRJIT_STRUCT) if hasattr(type(o), "DRJIT_STRUCT") else \
                [f.name for f in dataclasses.fields(o)]
            return {type(o).__name__: {n: describe(getattr(o, n)) for n in names}}
        if o is None or isinstance(o, (int, float, str, bool)):
            return o
        return f"<{type(o).__name__}>"

    res = {}

    def record(name, fn):
        try:
            res[name] = describe(fn())
        except Exception as e:          # an error is a result too
            res[name] = "error " + type(e).__name__

    def containers(a, b):
        return {"tuple": (a, b), "list": [a, b], "dict": {"a": a, "b": b}, "dataclass": DC(a, b),
                "frozen dataclass": Frozen(a, b), "DRJIT_STRUCT": Struct(a, b)}

    for kind in containers(1, 2):
        def make(a=None, b=None, kind=kind):
            return containers(Float(1, 2, 3) if a is None else a, Float(4, 5, 6) if b is None else b)[kind]

        def evaluated(kind=kind):
            t = make(Float(1, 2, 3) + 1, Float(4, 5, 6) * 2)
            dr.eval(t)
            return t

        record(f"{kind}: eval", evaluated)
        record(f"{kind}: width", lambda: dr.width(make(Float(1, 2, 3), Float(7))))
        record(f"{kind}: gather", lambda: dr.gather(type(make()), make(), UInt32(2, 0)))
        record(f"{kind}: gather with mask", lambda: dr.gather(type(make()), make(), UInt32(2, 0), Bool(True, False)))

        def scatter(op, kind=kind, make=make):
            t = make(dr.zeros(Float, 3), dr.zeros(Float, 3))
            getattr(dr, op)(t, make(Float(1, 2), Float(3, 4)), UInt32(2, 0))
            return t
        record(f"{kind}: scatter", lambda: scatter("scatter"))
        record(f"{kind}: scatter_add", lambda: scatter("scatter_add"))
        record(f"{kind}: select", lambda: dr.select(Bool(True, False, True), make(), make(Float(7, 8, 9), Float(0))))
        record(f"{kind}: tile", lambda: dr.tile(make(), 2))
        record(f"{kind}: repeat", lambda: dr.repeat(make(), 2))
        record(f"{kind}: detach", lambda: dr.detach(make()))
        record(f"{kind}: detach plain", lambda: dr.detach(make(), preserve_type=False))

        def backward(kind=kind, make=make):
            t = make()
            dr.enable_grad(t)
            x, y = (t[0], t[1]) if kind in ("tuple", "list") else (t["a"], t["b"]) if kind == "dict" else (t.a, t.b)
            dr.backward(dr.sum(x * x) + dr.sum(y * 3))
            return dr.grad(t)
        record(f"{kind}: enable_grad, backward, grad", backward)

        def set_grad(kind=kind, make=make):
            t = make()
            dr.enable_grad(t)
            dr.set_grad(t, make(Float(5), Float(6)))
            return dr.grad(t)
        record(f"{kind}: set_grad", set_grad)
        record(f"{kind}: replace_grad", lambda: dr.replace_grad(make(), make(Float(7, 8, 9), Float(1, 2, 3))))

    record("namedtuple: tile", lambda: dr.tile(NT(Float(1, 2), Float(3)), 2))
    record("width()", lambda: dr.width())
    record("width(())", lambda: dr.width(()))
    record("width(None)", lambda: dr.width(None))
    record("width((Float(), Float(1)))", lambda: dr.width((Float(), Float(1))))
    record("width ragged", lambda: dr.width((Float(), Float(1, 2))))
    record("width with a number", lambda: dr.width((Float(1, 2, 3), 5)))
    record("grad of numbers in a dict", lambda: dr.grad({"x": Float(1, 2), "n": 5, "f": 2.5}))
    record("detach of numbers in a dict", lambda: dr.detach({"x": Float(1, 2), "n": 5, "s": "s", "none": None}))
    record("tile of a number", lambda: dr.tile(5, 2))
    record("select: equal Python values kept", lambda: dr.select(Bool(True, False), (Float(1, 2), 3, None),
                                                                  (Float(5, 6), 3, None)))
    record("select: different lengths", lambda: dr.select(Bool(True, False), (Float(1, 2), Float(3, 4)), (Float(0),)))
    record("select: different keys", lambda: dr.select(Bool(True, False), {"a": Float(1, 2)}, {"b": Float(0)}))
    record("scatter: value of another length", lambda: dr.scatter((dr.zeros(Float, 3), dr.zeros(Float, 3)),
                                                                   (Float(1),), UInt32(0)))
    record("gather: a Python value in the source", lambda: dr.gather(tuple, (Float(1, 2, 3), 5), UInt32(1)))
    record("gather: nested with a vector", lambda: dr.gather(tuple, (Float(1, 2, 3), [{"k": Array3f([1, 2], [3, 4], [5, 6])}]),
                                                             UInt32(1)))
    record("replace_grad: different lengths", lambda: dr.replace_grad((Float(1),), (Float(1), Float(2))))
    return res


def run(system: str) -> dict:
    env = dict(os.environ)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
    differ = [k for k in dr if dr[k] != fj.get(k)]
    for k in differ:
        print(f"{k}:\n  drjit    {dr[k]}\n  frostjit {fj.get(k)}")
    print(f"{len(dr) - len(differ)} of {len(dr)} cases agree; the differences are explained in docs/engine.md")


if __name__ == "__main__":
    main()
