"""The entry point of the math library: :func:`math_function` assembles one function's IR.

Which functions exist and their arity come from the op table (its transcendental
entries, :data:`frostjit.trace.optable.TRANSCENDENTAL`) plus this library's own
kernels that are not operations (:data:`INTERNAL`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ....trace.optable import OPS, TRANSCENDENTAL, Accuracy, Bounds, LogUniform, Uniform
from . import erf, exponential, inverse_trig, logarithm, power, special, trig
from .emitter import Body, Builder

#: Kernels of this library that are not ops of the table: name -> (arity, results, accuracy).
#: ``sincos`` computes both results of one reduction; ``expm1`` underlies sinh, cosh and tanh.
INTERNAL = {
    "sincos": (1, 2, Bounds(Accuracy(2, ((Uniform(-1e4, 1e4),),), "|x| <= 10000 (uniform)"),
                            Accuracy(1.5, ((Uniform(-1e6, 1e6),),), "|x| <= 1e+06 (uniform)"))),
    "expm1": (1, 1, Bounds(
        Accuracy(2, ((Uniform(-20.0, 88.7), LogUniform(-30, 0, True)),),
                 "[-20.0, 88.7] uniform + |x| in [2^-30, 1] log-uniform"),
        Accuracy(2, ((Uniform(-40.0, 709.7), LogUniform(-30, 0, True)),),
                 "[-40.0, 709.7] uniform + |x| in [2^-30, 1] log-uniform"))),
}


def _trig(name):
    return lambda b, args, state: [trig.sincos(b, args[0], state, want=(name,))[name]]


def _unary(kernel):
    return lambda b, args, state: [kernel(b, args[0])]


def _binary(kernel):
    return lambda b, args, state: [kernel(b, args[0], args[1])]


def _sincos(b, args, state):
    sc = trig.sincos(b, args[0], state)
    return [sc["sin"], sc["cos"]]


#: name -> builder(b, args, state) returning the result values: the functions this library has.
_KERNELS = {
    "sin": _trig("sin"), "cos": _trig("cos"), "tan": _trig("tan"), "sincos": _sincos,
    "exp": _unary(exponential.exp), "exp2": _unary(exponential.exp2), "expm1": _unary(exponential.expm1),
    "sinh": _unary(exponential.sinh), "cosh": _unary(exponential.cosh), "tanh": _unary(exponential.tanh),
    "log": _unary(logarithm.log), "log2": _unary(logarithm.log2),
    "atan": _unary(inverse_trig.atan), "asin": _unary(inverse_trig.asin), "acos": _unary(inverse_trig.acos),
    "atan2": _binary(inverse_trig.atan2), "erf": _unary(erf.erf), "pow": _binary(power.pow),
    "cbrt": _unary(power.cbrt),
    "asinh": _unary(special.asinh), "acosh": _unary(special.acosh), "atanh": _unary(special.atanh),
    "lgamma": lambda b, args, state: [special.lgamma(b, args[0], state)],
    "erfinv": lambda b, args, state: [special.erfinv(b, args[0], state)],
}

#: name -> (arity, results): ops of the table take their arity from it.
_SIGNATURES = {name: (OPS[name].arity, 1) if name in OPS else INTERNAL[name][:2] for name in _KERNELS}
SUPPORTED: frozenset[str] = frozenset(_SIGNATURES)
assert all(name in TRANSCENDENTAL or name in INTERNAL for name in SUPPORTED), "vmath: a function of no op"


def accuracy_of(name: str) -> Bounds:
    """The documented accuracy of function ``name`` (an op of the table or an internal kernel)."""
    return INTERNAL[name][2] if name in INTERNAL else OPS[name].accuracy


@dataclass(frozen=True, slots=True)
class MathFunction:
    """One vectorized math function, ready to be pasted into an LLVM module.

    Attributes
    ----------
    symbol : str
        LLVM function name, e.g. ``"fj_sin_v16f32"`` (``"fj_sin_f32"`` for width 1).
    definitions : dict[str, str]
        ``symbol -> IR text`` of this function and every helper it calls (all ``internal``,
        ``alwaysinline``); union these dicts across functions to emit each definition once.
    declarations : frozenset[str]
        Full ``declare ...`` lines of the LLVM intrinsics the definitions use.
    arity, results : int
        Number of arguments; number of results (2 for ``sincos``, returned as a literal struct
        ``{ <W x T>, <W x T> }`` holding sin then cos).
    """

    symbol: str
    definitions: dict = field(hash=False, compare=False)
    declarations: frozenset
    arity: int
    results: int

    @property
    def ir(self) -> str:
        """Definitions of the function and its helpers (no declarations), as one string."""
        return "\n".join(self.definitions.values())


@lru_cache(maxsize=None)
def math_function(name: str, scalar: str, width: int) -> MathFunction:
    """Return the vectorized implementation of ``name`` on ``<width x scalar>`` values.

    Parameters
    ----------
    name : str
        One of :data:`SUPPORTED` (``"sin"``, ``"atan2"``, ``"sincos"``, ...).
    scalar : {"float", "double"}
        Element type.
    width : {1, 4, 8, 16, 32}
        Lanes; width 1 uses the scalar type itself (``float``), not ``<1 x float>``.

    Returns
    -------
    MathFunction
        Memoized: the same arguments return the same object.

    Examples
    --------
    >>> fn = math_function("sin", "float", 16)
    >>> fn.symbol
    'fj_sin_v16f32'
    >>> "define internal <16 x float> @fj_sin_v16f32(<16 x float> %x0) alwaysinline" in fn.ir
    True
    """
    if name not in _SIGNATURES:
        raise ValueError(f"math_function: unknown function {name!r}; supported: {sorted(SUPPORTED)}")
    if scalar not in ("float", "double"):
        raise ValueError(f"math_function: scalar must be 'float' or 'double', got {scalar!r}")
    if width not in (1, 4, 8, 16, 32):
        raise ValueError(f"math_function: width must be 1, 4, 8, 16 or 32, got {width!r}")
    arity, results = _SIGNATURES[name]
    body = Body()
    b = Builder(body, scalar, width)
    args = [f"%x{k}" for k in range(arity)]
    state: dict = {}
    outs = _KERNELS[name](b, args, state)
    tag = ("f32" if scalar == "float" else "f64") if width == 1 else f"v{width}{'f32' if scalar == 'float' else 'f64'}"
    symbol = f"fj_{name}_{tag}"
    if results == 1:
        ret_ty = b.F
        ret = f"  ret {b.F} {outs[0]}"
    else:
        ret_ty = f"{{ {b.F}, {b.F} }}"
        body.lines.append(f"  %agg0 = insertvalue {ret_ty} poison, {b.F} {outs[0]}, 0")
        body.lines.append(f"  %agg1 = insertvalue {ret_ty} %agg0, {b.F} {outs[1]}, 1")
        ret = f"  ret {ret_ty} %agg1"
    params = ", ".join(f"{b.F} {a}" for a in args)
    text = "\n".join([f"define internal {ret_ty} @{symbol}({params}) alwaysinline {{", "entry:",
                      *body.lines, ret, "}", ""])
    definitions = {symbol: text, **state.get("helpers", {})}
    return MathFunction(symbol=symbol, definitions=definitions, declarations=frozenset(body.decls),
                        arity=arity, results=results)
