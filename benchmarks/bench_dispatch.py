"""Dispatch overhead: frostjit beside a plain call, plum, ovld, multipledispatch, singledispatch.

Run: ``python benchmarks/bench_dispatch.py`` (``--quick``: fewer, shorter repeats). Prints ns
per call (median over repeats, each repeat the best of a few ``timeit`` loops; the columns of a
row are measured interleaved, repeat by repeat) and ratios against the anchors measured in the
same run. Missing anchors are reported as ``n/a``. Not a test: no assertion on timings.
"""

import argparse
import functools
import statistics
import sys
import time
import timeit
from pathlib import Path
from typing import Literal

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frostjit.dispatch import (Dispatcher, add_conversion_method, add_promotion_rule,  # noqa: E402
                               parametric)
from frostjit.dispatch import promote as fj_promote  # noqa: E402

try:
    from frostjit.llvm import Float as FJFloat  # noqa: E402
except Exception:  # the JIT engine may not be importable yet
    FJFloat = None

REPEATS = 7
NUMBER = 50_000


def _timer(fn, args):
    stmt = "f(" + ", ".join(f"a{i}" for i in range(len(args))) + ")"
    env = {"f": fn, **{f"a{i}": a for i, a in enumerate(args)}}
    for _ in range(200):
        fn(*args)
    return timeit.Timer(stmt, globals=env)


def ns_per_call(fn, args) -> float:
    """ns per call of ``fn(*args)``: median of REPEATS, each the best of 3 loops of NUMBER calls."""
    return ns_per_call_many({"f": fn}, args)["f"]


def ns_per_call_many(fns, args) -> dict:
    """Like :func:`ns_per_call` for several callables, interleaved repeat by repeat (so a slow
    spell of this shared machine hits every column alike, not just one)."""
    return ns_per_call_many_args({k: (f, args) for k, f in fns.items()})


def ns_per_call_many_args(fns) -> dict:
    """:func:`ns_per_call_many` with each callable's own arguments: ``{name: (fn, args)}``."""
    timers = {k: _timer(f, a) for k, (f, a) in fns.items()}
    samples = {k: [] for k in fns}
    for _ in range(REPEATS):
        for k, t in timers.items():
            samples[k].append(min(t.repeat(repeat=3, number=NUMBER)) / NUMBER * 1e9)
    return {k: statistics.median(v) for k, v in samples.items()}


# -- implementations under test ------------------------------------------------------------

def plain1(x):
    return x


def plain2(x, y):
    return x


def plain3(x, y, z):
    return x


ARGS1 = {"int": (1,), "float": (1.0,), "ndarray": (np.ones(3),)}
if FJFloat is not None:
    try:
        ARGS1["frostjit Float"] = (FJFloat(1.0),)
    except Exception:
        pass
ARGS3 = (1, 2.0, np.ones(3))


def build_frostjit():
    d = Dispatcher()
    one_types = [int, float, np.ndarray, str] + ([FJFloat] if FJFloat is not None else [])
    fns = {}
    for T in one_types:
        d.multi((T,))(_rename(lambda x: x, "f1"))
    fns["f1"] = d.functions["f1"]
    d.multi((int, float, np.ndarray), (float, float, np.ndarray), (object, object, object))(
        _rename(lambda x, y, z: x, "f3"))
    fns["f3"] = d.functions["f3"]

    def ret(x: int) -> int:
        return x

    def ret_f(x: float) -> float:
        return x

    d(_rename(ret, "ret")), d(_rename(ret_f, "ret"))
    fns["ret"] = d.functions["ret"]

    def lit(x: int):
        return x

    def lit_s(x: Literal["fast"]):
        return x

    def lit_str(x: str):
        return x

    for g in (lit, lit_s, lit_str):
        d(_rename(g, "lit"))
    fns["lit"] = d.functions["lit"]

    def par(x: int):
        return x

    def par_l(x: list[int]):
        return x

    d(_rename(par, "par")), d(_rename(par_l, "par"))
    fns["par"] = d.functions["par"]
    def kw(x: int, *, scale: int = 1):
        return x

    def kw_f(x: float, *, scale: int = 1):
        return x

    d(_rename(kw, "kw")), d(_rename(kw_f, "kw"))
    fns["kw"] = d.functions["kw"]
    many = Dispatcher()
    classes = [type(f"C{i}", (), {}) for i in range(299)]
    for C in classes:
        many.multi((C,))(_rename(lambda x: x, "m300"))
    many.multi((int,))(_rename(lambda x: x, "m300"))
    fns["m300"] = many.functions["m300"]
    fns.update(_plum_feature_functions(Dispatcher(), parametric, add_conversion_method, add_promotion_rule))
    fns["promote"] = fj_promote
    return fns


def _plum_feature_functions(d, parametric, add_conversion_method, add_promotion_rule):
    """The same parametric, conversion and promotion workloads for frostjit and plum: a
    function of a parametric argument (3 methods), a function whose int result is converted
    to its ``float`` annotation, and the rules ``promote(1, 2.0)`` needs."""
    @parametric
    class Box:
        def __init__(self, x):
            self.x = x

    def box_int(x: Box[int]):
        return x

    def box_float(x: Box[float]):
        return x

    def box_any(x: Box):
        return x

    for g in (box_int, box_float, box_any):
        d(_rename(g, "box"))

    def conv(x: int) -> float:
        return x

    d(_rename(conv, "conv"))
    add_conversion_method(int, float, float)
    add_promotion_rule(int, float, float)
    return {"box": d.functions["box"], "conv": d.functions["conv"], "box_arg": Box(1)}


def _rename(fn, name):
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    return fn


def build_plum():
    try:
        import plum
    except ImportError:
        return None
    d = plum.Dispatcher()
    out = {}

    @d
    def f1(x: int): return x
    @d
    def f1(x: float): return x
    @d
    def f1(x: np.ndarray): return x
    @d
    def f1(x: str): return x
    out["f1"] = f1

    @d
    def f3(x: int, y: float, z: np.ndarray): return x
    @d
    def f3(x: float, y: float, z: np.ndarray): return x
    @d
    def f3(x: object, y: object, z: object): return x
    out["f3"] = f3

    @d
    def ret(x: int) -> int: return x
    @d
    def ret(x: float) -> float: return x
    out["ret"] = ret

    @d
    def lit(x: int): return x
    @d
    def lit(x: Literal["fast"]): return x
    @d
    def lit(x: str): return x
    out["lit"] = lit

    @d
    def par(x: int): return x
    @d
    def par(x: list[int]): return x
    out["par"] = par

    @d
    def kw(x: int, *, scale: int = 1): return x
    @d
    def kw(x: float, *, scale: int = 1): return x
    out["kw"] = kw
    out.update(_plum_feature_functions(d, plum.parametric, plum.add_conversion_method, plum.add_promotion_rule))
    out["promote"] = plum.promote
    return out


def build_ovld():
    try:
        from ovld import ovld
    except ImportError:
        return None
    out = {}

    @ovld
    def f1(x: int): return x
    @f1.register
    def f1(x: float): return x
    @f1.register
    def f1(x: np.ndarray): return x
    @f1.register
    def f1(x: str): return x
    out["f1"] = f1

    @ovld
    def f3(x: int, y: float, z: np.ndarray): return x
    @f3.register
    def f3(x: float, y: float, z: np.ndarray): return x
    @f3.register
    def f3(x: object, y: object, z: object): return x
    out["f3"] = f3
    return out


def build_multipledispatch():
    try:
        from multipledispatch import Dispatcher as MD
    except ImportError:
        return None
    f1 = MD("f1")
    for T in (int, float, np.ndarray, str):
        f1.add((T,), lambda x: x)
    f3 = MD("f3")
    f3.add((int, float, np.ndarray), lambda x, y, z: x)
    f3.add((float, float, np.ndarray), lambda x, y, z: x)
    f3.add((object, object, object), lambda x, y, z: x)
    return {"f1": f1, "f3": f3}


def build_singledispatch():
    @functools.singledispatch
    def f1(x):
        return x

    for T in (int, float, np.ndarray, str):
        f1.register(T, lambda x: x)
    return {"f1": f1}


def registration_ms(make) -> float:
    """Register 100 one-argument methods on a fresh function and make the first call (median of 5)."""
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        make()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def reg_frostjit():
    d = Dispatcher()
    classes = [type(f"R{i}", (), {}) for i in range(100)]
    for C in classes:
        def impl(x: C):
            return x
        impl.__name__ = impl.__qualname__ = "reg"
        d(impl)
    f = d.functions["reg"]
    f(classes[0]())


def reg_plum():
    import plum
    d = plum.Dispatcher()
    classes = [type(f"R{i}", (), {}) for i in range(100)]
    for C in classes:
        def reg(x: C):
            return x
        f = d(reg)
    f(classes[0]())


def reg_ovld():
    from ovld import ovld
    classes = [type(f"R{i}", (), {}) for i in range(100)]
    f = None
    for C in classes:
        def reg(x: C):
            return x
        f = ovld(reg) if f is None else f.register(reg)
    f(classes[0]())


_WITHOUT_EXTRA = {
    1: """def without_extra(a0=NOT_PASSED, /):
    try:
        return decisions[type(a0)](a0)
    except KeyError as error:
        if error.__traceback__.tb_next is not None:
            raise
    return resolve((a0,))(a0)
""",
    3: """def without_extra(a0=NOT_PASSED, a1=NOT_PASSED, a2=NOT_PASSED, /):
    try:
        return decisions[type(a0)][type(a1)][type(a2)](a0, a1, a2)
    except KeyError as error:
        if error.__traceback__.tb_next is not None:
            raise
    return resolve((a0, a1, a2))(a0, a1, a2)
""",
}


def extra_cost(repeats: int = 25) -> None:
    """What the ``*extra`` parameter of the fixed-arity call path costs: the current call path
    beside the same template without it (the one before plum's too-many-arguments semantics),
    both reading the same function's decisions, interleaved; the fastest of ``repeats``."""
    fj = build_frostjit()
    rows = {"1 arg, int": (fj["f1"], (1,)), "3 args (int, float, ndarray)": (fj["f3"], ARGS3)}
    print(f"Call path with and without *extra, ns per call (fastest of {repeats}; interleaved)\n")
    print("| case | without *extra | with *extra (current) | cost |")
    print("|---|---|---|---|")
    for label, (f, args) in rows.items():
        local: dict = {}
        exec(_WITHOUT_EXTRA[len(args)], f._dispatch_state.ns, local)  # noqa: S102 - a fixed template
        old = local["without_extra"]
        f(*args), old(*args)
        timers = {"old": _timer(old, args), "new": _timer(f, args)}
        best = {"old": float("inf"), "new": float("inf")}
        for _ in range(repeats):
            for k, t in timers.items():
                best[k] = min(best[k], min(t.repeat(repeat=3, number=NUMBER)) / NUMBER * 1e9)
        print(f"| {label} | {best['old']:.1f} | {best['new']:.1f} | +{best['new'] - best['old']:.1f} ns |")


def parser(prog: str = "bench_dispatch.py") -> argparse.ArgumentParser:
    """The command line (``python -m frostjit bench dispatch --help`` prints it)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 repeats of 10 000 calls (a smoke run)")
    ap.add_argument("--extra-cost", action="store_true",
                    help="only compare the call path with and without its *extra parameter")
    return ap


def main(argv=None, prog: str = "bench_dispatch.py") -> int:
    global REPEATS, NUMBER
    args = parser(prog).parse_args(argv)
    if args.quick:
        REPEATS, NUMBER = 3, 10_000
    if args.extra_cost:
        extra_cost()
        return 0
    fj = build_frostjit()
    anchors = {"plum": build_plum(), "ovld": build_ovld(), "multipledispatch": build_multipledispatch(),
               "singledispatch": build_singledispatch()}
    cols = ["plain", "frostjit", "plum", "ovld", "multipledispatch", "singledispatch"]
    rows = []

    def row(label, fj_fn, key, args, plain):
        row_with(label, fj_fn, key, args, args, plain)

    def row_with(label, fj_fn, key, args, plum_args, plain):
        """A row whose plum column takes its own arguments (plum's parametric instances)."""
        fns = {"plain": (plain, args), "frostjit": (fj_fn, args)}
        for name, table in anchors.items():
            fn = table.get(key) if table else None
            a = plum_args if name == "plum" else args
            if fn is not None and a is not None and not any(x is None for x in a):
                try:
                    fn(*a)
                    fns[name] = (fn, a)
                except Exception:
                    pass
        r = {"case": label, **ns_per_call_many_args(fns)}
        rows.append(r)

    ns_per_call_many({"warm-up": fj["f1"]}, (1,))  # the first measurement of a process runs slow
    for label, args in ARGS1.items():
        row(f"1 arg, {label}", fj["f1"], "f1", args, plain1)
    if FJFloat is None:
        print("note: frostjit.llvm.Float not importable; its row is skipped")
    row("3 args (int, float, ndarray)", fj["f3"], "f3", ARGS3, plain3)
    row("return annotation, int", fj["ret"], "ret", (1,), plain1)
    row("Literal method present, int arg", fj["lit"], "lit", (1,), plain1)
    row("Literal method present, 'fast' arg", fj["lit"], "lit", ("fast",), plain1)
    row("list[int] method present, int arg", fj["par"], "par", (1,), plain1)
    row("keyword-only parameter, int arg, no keyword", fj["kw"], "kw", (1,), plain1)
    row("300 methods, int arg", fj["m300"], "-", (1,), plain1)
    plum_box = (anchors["plum"] or {}).get("box_arg")
    row_with("parametric-type argument Box[int]", fj["box"], "box", (fj["box_arg"],), (plum_box,), plain1)
    row("return value converted (int -> float)", fj["conv"], "conv", (1,), plain1)
    row("promote(1, 2.0)", fj["promote"], "promote", (1, 2.0), plain2)

    def fmt(v):
        return "n/a" if v is None else f"{v:7.0f}"

    print(f"Dispatch cost, ns per call (median of {REPEATS}; Python {sys.version.split()[0]})\n")
    print("| case | " + " | ".join(cols) + " | frostjit vs plum | frostjit vs ovld |")
    print("|---" * (len(cols) + 3) + "|")
    for r in rows:
        vs_plum = f"{r['plum'] / r['frostjit']:.1f}x faster" if r.get("plum") else "n/a"
        vs_ovld = f"{r['ovld'] / r['frostjit']:.2f}x" if r.get("ovld") else "n/a"
        print(f"| {r['case']} | " + " | ".join(fmt(r.get(c)) for c in cols) + f" | {vs_plum} | {vs_ovld} |")
    def get(prefix):
        return next(r for r in rows if r["case"].startswith(prefix))["frostjit"]

    base = get("1 arg, int")
    ret, lit, par = get("return"), get("Literal method present, 'fast'"), get("list[int]")
    print(f"\nfrostjit: return annotation adds {100 * (ret / base - 1):.0f}% over the 1-arg int call; "
          f"value-dependent Literal call is {lit / base:.2f}x the plain cached call "
          f"(the list[int] function's int call {par / base:.2f}x)")
    print("\nRegistering 100 methods and making the first call (ms, median of 5):")
    print(f"  frostjit {registration_ms(reg_frostjit):.2f}", end="")
    for name, fn in (("plum", reg_plum), ("ovld", reg_ovld)):
        try:
            print(f"   {name} {registration_ms(fn):.2f}", end="")
        except Exception as e:
            print(f"   {name} n/a ({type(e).__name__})", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
