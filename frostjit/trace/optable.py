"""The op table: every operation of the traced program, declared once.

An :class:`OpDef` names an operation and says everything the layers need to know about
it: how many operands it takes, what kind of operation it is (:class:`OpKind`), which
types it accepts and returns (:class:`TypeRule`), what it computes (a NumPy reference,
the *spec*, in :mod:`frostjit.trace.numpy_semantics`), how it computes on Python numbers
(``fj.sin(0.5)``), its derivative, and, for transcendental functions, the accuracy a
backend must reach.  The layers read it instead of keeping their own lists:

* the array classes (``array/flat.py``) type and promote operands by ``types``;
* ``functions/math.py`` takes its Python-number fallbacks from ``py``;
* automatic differentiation (``ad/rules.py``) applies ``deriv``;
* a backend supplies one lowering per op (the LLVM backend: ``op_<name>`` in
  ``backend/llvm/codegen/lowering.py``; its vectorized math library reads ``arity``
  and ``accuracy``), and ``tests/trace/test_optable.py`` checks every backend against
  ``numpy`` for every entry, on every type ``types`` allows.

Adding an operation is one entry here, one lowering per backend, and nothing else: the
tests are generated from the table.  Example, a lane-wise ``hypot``::

    _op("hypot", 2, ELEMENTWISE, FLOAT, numpy=ns.hypot, py=math.hypot,
        deriv=(lambda f, a, z: a[0] / z, lambda f, a, z: a[1] / z),
        doc="sqrt(a*a + b*b) without intermediate overflow")

Derivative rules
----------------
``deriv`` is one of:

* a tuple with one *partial* per operand (``None``: no derivative in that operand).  A
  partial is ``partial(f, a, z)``: ``a`` the operands (detached arrays, or Python
  numbers), ``z`` the detached result, and ``f`` a namespace that automatic
  differentiation passes in (so this layer imports nothing above it).  ``f`` offers the
  functions of :mod:`frostjit.functions.math` (``f.sin``, ``f.select``, ``f.log``,
  ``f.rcp``, ...; on Python numbers they follow IEEE: ``f.rcp(0.0) == inf``), and
  ``f.mask(cond)`` (a 0/1 partial: the gradient passes where ``cond`` holds, without
  ``0 * inf``), ``f.is_array(x)``, ``f.is_mask(x)`` (a Bool array),
  ``f.literal_value(x)`` (the number held by a size-1 literal array, else None) and
  ``f.is_symbolic(c)`` (a frozen function's width, whose value must not be tested);
* :data:`ZERO`: piecewise constant; the result does not depend on the inputs' gradients;
* :data:`SPECIAL`: automatic differentiation implements the rule by hand (memory
  operations, reductions: they need gathers and scatters);
* ``None``: not differentiable (automatic differentiation raises).

Node and instruction names
--------------------------
``Node.op`` and ``Instr.op`` are the table's names (plain strings).  The public
operator ``**`` is ``"pow"`` on floats and ``"pow_int"`` on integers
(:attr:`OpDef.integer_variant`, :func:`node_op`).
"""
from __future__ import annotations

import enum
import math
import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from . import numpy_semantics as ns
from .dtypes import ALL_TYPES, FLOAT_TYPES, INTEGER_TYPES, Bool, Float32, Float64, VarType


class OpKind(enum.Enum):
    """What an operation does, in the words the layers ask about."""

    SOURCE = "source"            #: no operands: a buffer, a constant, the lane counter
    ELEMENTWISE = "elementwise"  #: lane-wise arithmetic and math
    COMPARISON = "comparison"    #: lane-wise, Bool result (comparisons, NaN/inf tests)
    CAST = "cast"                #: lane-wise type conversion
    MEMORY = "memory"            #: random access (gather, scatter) and kernel parameters (load, store)
    REDUCTION = "reduction"      #: whole-array operations run outside kernels (sums, prefix sums)
    CONTROL = "control"          #: symbolic loops: trace nodes and the loop regions of kernels


class TypeRule(enum.Enum):
    """Which operand types an operation accepts and what its result type is.

    Operands are first promoted to one type (Dr.Jit's order, :func:`dtypes.promote`;
    Python numbers adopt the array's type), then the rule applies.
    """

    NUMERIC = "numeric"          #: every type but Bool; result: the operand type
    ANY = "any"                  #: every type, Bool too; result: the operand type
    FLOAT = "float"              #: float types; integer operands are converted to Float32 (Float16 stays)
    ROUNDING = "rounding"        #: float types; fj.floor(integer array) returns it unchanged
    INTEGER = "integer"          #: integer types (not Bool)
    SHIFT = "shift"              #: integer types; the count has the value's type
    BITWISE = "bitwise"          #: every type (floats by their bits); ``x & mask``/``x | mask`` keep x's type
    NOT = "not"                  #: Bool and integer types
    COMPARE = "compare"          #: every type; result: Bool
    FLOAT_TEST = "float_test"    #: float types; result: Bool (on integers a constant)
    SELECT = "select"            #: a Bool condition and two values of any (promoted) type
    CONVERT = "convert"          #: any type to any type (the target is the node's ``value``)
    REINTERPRET = "reinterpret"  #: any type to one of the same width
    NONE = "none"                #: typed by the operation's constructor (sources, memory, reductions)


class Deriv(enum.Enum):
    """Derivative rules that are not a tuple of partials (see the module docstring)."""

    ZERO = "zero"
    SPECIAL = "special"


ZERO = Deriv.ZERO
SPECIAL = Deriv.SPECIAL


@dataclass(frozen=True, slots=True)
class Uniform:
    """Samples uniform in ``[lo, hi]``."""

    lo: float
    hi: float


@dataclass(frozen=True, slots=True)
class LogUniform:
    """Samples ``2**u`` with ``u`` uniform in ``[lo_exp, hi_exp]``, of random sign if ``signed``."""

    lo_exp: float
    hi_exp: float
    signed: bool = False


@dataclass(frozen=True, slots=True)
class Accuracy:
    """The documented accuracy of a transcendental function on one float type.

    Attributes
    ----------
    ulp : float
        The largest error allowed, in units in the last place, over ``domain``
        (what the tests check; docs/math_accuracy.md lists the measured maxima).
    domain : tuple
        One tuple per operand: the parts (:class:`Uniform`, :class:`LogUniform`) whose
        samples together make up the tested range (equal shares, the last part takes
        the remainder).
    text : str
        The range in words, as docs/math_accuracy.md prints it.
    """

    ulp: float
    domain: tuple
    text: str


@dataclass(frozen=True, slots=True)
class Bounds:
    """:class:`Accuracy` of a function for ``float32`` and for ``float64``.

    A type computed in another one (``Float16``: in ``float32``, :attr:`VarType.compute`)
    gets the bound of rounding that type's result once: 1 ULP (the ``float32`` error is
    below a thousandth of a half ULP), on the ``float32`` domain limited to its range.
    """

    float32: Accuracy
    float64: Accuracy

    def of(self, vt: VarType) -> Accuracy:
        """The accuracy for float type ``vt``."""
        if vt.compute is not None:
            return _rounded_from(self.of(vt.compute), vt)
        return self.float32 if vt is Float32 else self.float64


def _rounded_from(acc: Accuracy, vt: VarType) -> Accuracy:
    """``acc`` of the compute type, seen through one rounding to the narrower ``vt``."""
    info = np.finfo(vt.np_dtype)
    top = float(info.max)
    lo_exp, hi_exp = math.log2(float(info.smallest_subnormal)), math.log2(top)

    def clip(part):
        if isinstance(part, Uniform):
            return Uniform(max(part.lo, -top), min(part.hi, top))
        return LogUniform(max(part.lo_exp, lo_exp), min(part.hi_exp, hi_exp), part.signed)
    domain = tuple(tuple(clip(p) for p in parts) for parts in acc.domain)
    return Accuracy(1, domain, f"{acc.text}, within {vt.name}'s range (computed in {vt.compute.name})")


@dataclass(frozen=True, slots=True, eq=False)
class OpDef:
    """One operation (see the module docstring).

    Attributes
    ----------
    name : str
        The name nodes and kernel instructions carry (``Node.op``).
    arity : int
        Number of operands (node arguments).
    kind : OpKind
    types : TypeRule
    numpy : callable or None
        The reference semantics ``numpy(vt, *arrays) -> array`` of a lane-wise op
        (contract: :mod:`frostjit.trace.numpy_semantics`).
    unspecified : callable or None
        ``unspecified(vt, *arrays) -> bool array``: lanes whose result the spec leaves
        to the hardware (None: every lane is specified).
    py : callable or None
        The operation on Python numbers, as the public function computes it
        (``fj.sin(0.5)``): double precision, IEEE special values (``fj.log(0.0)`` is
        ``-inf``, not an exception), as Dr.Jit.
    deriv : tuple, Deriv or None
        The derivative rule (module docstring).
    accuracy : Bounds or None
        Transcendental functions: the error bound a backend must meet.
    integer_variant : str or None
        The op that replaces this one on integer operands (``pow`` -> ``pow_int``).
    doc : str
        One line: what the operation computes.
    """

    name: str
    arity: int
    kind: OpKind
    types: TypeRule
    numpy: Callable | None = None
    unspecified: Callable | None = None
    py: Callable | None = None
    deriv: object = None
    accuracy: Bounds | None = None
    integer_variant: str | None = None
    doc: str = ""

    @property
    def lanewise(self) -> bool:
        """Whether lane ``i`` of the result depends on lane ``i`` of the operands only."""
        return self.kind in (OpKind.ELEMENTWISE, OpKind.COMPARISON, OpKind.CAST)

    @property
    def bool_result(self) -> bool:
        """Whether the result is Bool whatever the operand types."""
        return self.types in (TypeRule.COMPARE, TypeRule.FLOAT_TEST)

    def operand_types(self) -> tuple[VarType, ...]:
        """The (promoted) operand types the op is defined on, as kernels see them (an op with
        an integer variant only ever sees floats: integers become that variant)."""
        if self.integer_variant is not None:
            return _FLOATS
        return _RULE_TYPES[self.types]

    def __repr__(self) -> str:
        return f"OpDef({self.name!r}, arity={self.arity}, {self.kind.value}, {self.types.value})"


_NUMERIC = tuple(t for t in ALL_TYPES if t is not Bool)
_FLOATS = FLOAT_TYPES
_INTEGERS = INTEGER_TYPES
_RULE_TYPES = {
    TypeRule.NUMERIC: _NUMERIC, TypeRule.ANY: ALL_TYPES, TypeRule.FLOAT: _FLOATS, TypeRule.ROUNDING: _FLOATS,
    TypeRule.INTEGER: _INTEGERS, TypeRule.SHIFT: _INTEGERS, TypeRule.BITWISE: ALL_TYPES,
    TypeRule.NOT: (Bool,) + _INTEGERS, TypeRule.COMPARE: ALL_TYPES, TypeRule.FLOAT_TEST: _FLOATS,
    TypeRule.SELECT: ALL_TYPES, TypeRule.CONVERT: ALL_TYPES, TypeRule.REINTERPRET: ALL_TYPES, TypeRule.NONE: (),
}

#: Every operation by name.
OPS: dict[str, OpDef] = {}


def _op(name: str, arity: int, kind: OpKind, types: TypeRule, **fields) -> OpDef:
    if name in OPS:
        raise ValueError(f"op table: {name!r} declared twice")
    entry = OPS[name] = OpDef(name, arity, kind, types, **fields)
    return entry


# -- Python-number implementations ------------------------------------------------------

def _ieee(f_math, f_numpy):
    """``f_math`` on Python numbers, with IEEE special values where :mod:`math` raises
    (``log(0) == -inf``, ``sqrt(-1)`` is NaN, ``exp(1000) == inf``), as Dr.Jit computes."""
    def py(*args):
        try:
            return f_math(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            with np.errstate(all="ignore"):
                return float(f_numpy(*(np.float64(a) for a in args)))
    py.__name__ = py.__qualname__ = getattr(f_math, "__name__", "py")
    return py


def _in_double(f_numpy):
    """A NumPy function on one Python number, computed in double precision (a float result)."""
    def py(x):
        with np.errstate(all="ignore"):
            return float(f_numpy(np.float64(x)))
    py.__name__ = py.__qualname__ = f_numpy.__name__
    return py


def _py_cbrt(x):
    """The cube root of one Python number, rounded to the nearest double.

    The C library's ``cbrt`` (and NumPy's, which calls it on CPUs without AVX-512) is only
    faithful: ``cbrt(27.0)`` is 3.0000000000000004 with glibc, 3.0 in Dr.Jit.  From the libm
    result, the walk goes to the neighbour whose cube is nearer ``x`` (exact rational
    arithmetic) while there is one: libm can be more than one step off (glibc's
    ``cbrt(7.599060965728662e-29)`` is two steps above the nearest).
    """
    x = float(x)
    y = math.cbrt(x) if hasattr(math, "cbrt") else float(np.cbrt(np.float64(x)))
    if not math.isfinite(y) or y == 0.0:
        return y
    target = Fraction(x)

    def miss(c):
        return abs(Fraction(c) ** 3 - target)
    for direction in (-math.inf, math.inf):
        while math.isfinite(c := math.nextafter(y, direction)) and miss(c) < miss(y):
            y = c
    return y


def _py_rcp(x):
    return 1.0 / x


def _py_rsqrt(x):
    return 1.0 / math.sqrt(x)


def _py_minmax(pick, less: bool):
    def py(a, b):
        """NaN if either is NaN (Python's min/max depend on the order); -0 < +0 as in the array
        version (IEEE 754-2019); a float if either is one."""
        if isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
            a, b = float(a), float(b)
            if a != a or b != b:
                return math.nan
            if a == b:
                a_negative = math.copysign(1.0, a) < 0
                return (a if a_negative else b) if less else (b if a_negative else a)
        return pick(a, b)
    py.__name__ = py.__qualname__ = pick.__name__
    return py


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _py_copysign(a, b):
    """The magnitude of ``a`` with the sign of ``b``; two integers give an integer (Dr.Jit)."""
    if _is_int(a) and _is_int(b):
        return -abs(a) if b < 0 else abs(a)
    return math.copysign(a, b)


def _py_fma(a, b, c):
    """One rounding in double precision (Dr.Jit: ``fma(0.1, 10.0, -1.0) == 5.55e-17``);
    integers stay integers."""
    if _is_int(a) and _is_int(b) and _is_int(c):
        return a * b + c
    args = (np.array([float(v)]) for v in (a, b, c))
    return float(ns.fma(Float64, *args)[0])


def _py_fminmax(less: bool):
    def py(a, b):
        """C's ``fmin``/``fmax`` on Python numbers: a NaN operand is ignored; the first operand on
        a tie; two integers give an integer (Dr.Jit)."""
        if isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
            a, b = float(a), float(b)
        if a != a:
            return b
        if b != b:
            return a
        return b if (b < a if less else b > a) else a
    py.__name__ = py.__qualname__ = "fmin" if less else "fmax"
    return py


# -- derivative helpers (written over the namespace ``f``, see the module docstring) ---------

def _abs_dx(f, x):
    # sign(x), but 0 at +-0; NaN gives -1 (Dr.Jit: x >= 0 is False for NaN).
    return f.select(x > 0, 1.0, f.select(x == 0, 0.0, -1.0))


def _pow_dx(f, x, y):
    c = f.literal_value(y) if f.is_array(y) else y
    if c is None:                       # an array exponent: 0 where y == 0 (not 0 * inf)
        return f.select(y == 0, 0.0, y * x ** (y - 1))
    if not f.is_symbolic(c):            # (testing a frozen function's width would guard it)
        if c == 0:
            return 0
        if c == 1:
            return 1
        if c == 2:
            return 2.0 * x
    return c * x ** (c - 1)


def _pow_dy(f, x, z):
    # z * log(x), 0 where z == 0 (x == 0 < y: the function is flat there, not 0 * -inf).
    return f.select(z == 0, 0.0, z * f.log(x))


def _mask_partial(f, a, k, keep_where_true):
    """``x & mask`` keeps x where mask, ``x | mask`` sets every bit there: the gradient of x
    passes where the mask is true (``&``) or false (``|``)."""
    m = a[1 - k]
    if not f.is_mask(m):
        raise NotImplementedError("frostjit AD: bitwise operations between float arrays are not differentiable")
    return f.mask(m if keep_where_true else ~m)


def _fmin_takes_b(a):
    # fmin(a, b) is b where b < a or a is NaN (a != a, also for a Python number)
    return (a[1] < a[0]) | (a[0] != a[0])


def _fmax_takes_b(a):
    return (a[1] > a[0]) | (a[0] != a[0])


_LN2 = math.log(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


# -- accuracy of the transcendental functions (docs/math_accuracy.md) -----------------------

def _bounds(ulp32, dom32, text32, ulp64, dom64=None, text64=None) -> Bounds:
    return Bounds(Accuracy(ulp32, dom32, text32),
                  Accuracy(ulp64, dom32 if dom64 is None else dom64, text32 if text64 is None else text64))


def _trig(ulp32, ulp64):
    return _bounds(ulp32, ((Uniform(-1e4, 1e4),),), "|x| <= 10000 (uniform)",
                   ulp64, ((Uniform(-1e6, 1e6),),), "|x| <= 1e+06 (uniform)")


def _log_domain(ulp32, ulp64):
    def dom(lo, hi):
        return ((LogUniform(lo, hi), Uniform(0.5, 2.0)),)

    def text(lo, hi):
        return f"all positive (2^{lo}..2^{hi} log-uniform, incl. subnormals) + [0.5, 2] uniform"
    return _bounds(ulp32, dom(-149, 128), text(-149, 128), ulp64, dom(-1074, 1024), text(-1074, 1024))


def _hyperbolic(ulp32, ulp64):
    def dom(lim):
        return ((Uniform(-lim, lim), LogUniform(-30, 3, True)),)

    def text(lim):
        return f"|x| <= {lim} uniform + |x| in [2^-30, 8] log-uniform"
    return _bounds(ulp32, dom(89.4), text(89.4), ulp64, dom(710.4), text(710.4))


def _all_finite(ulp32, ulp64, signed: bool):
    def dom(lo, hi):
        return ((Uniform(-10, 10) if signed else Uniform(0, 10), LogUniform(lo, hi, signed)),)

    def text(lo, hi):
        return f"{'|x|' if signed else 'x'} <= 10 uniform + {'|x|' if signed else 'x'} in [2^{lo}, 2^{hi}] log-uniform"
    return _bounds(ulp32, dom(-149, 128), text(-149, 128), ulp64, dom(-1074, 1024), text(-1074, 1024))


_WIDE = ((Uniform(-10, 10), LogUniform(-30, 30, True)),)
_WIDE_TEXT = "|x| <= 10 uniform + |x| in [2^-30, 2^30] log-uniform"
_UNIT = ((Uniform(-1, 1), LogUniform(-30, 0, True)),)
_UNIT_TEXT = "[-1, 1] uniform + |x| in [2^-30, 1] log-uniform"

# ===========================================================================================
# The table
# ===========================================================================================

SRC, EW, CMP, CAST, MEM, RED = (OpKind.SOURCE, OpKind.ELEMENTWISE, OpKind.COMPARISON, OpKind.CAST,
                                OpKind.MEMORY, OpKind.REDUCTION)
T = TypeRule

# -- sources --------------------------------------------------------------------------------
_op("data", 0, SRC, T.NONE, doc="an evaluated buffer (Node.value)")
_op("literal", 0, SRC, T.NONE, doc="a constant broadcast to the node's size (Node.value)")
_op("counter", 0, SRC, T.NONE, numpy=ns.counter, doc="the lane index 0, 1, ..., size - 1 (fj.arange)")

# -- arithmetic -----------------------------------------------------------------------------
_op("add", 2, EW, T.NUMERIC, numpy=ns.add, py=operator.add,
    deriv=(lambda f, a, z: 1, lambda f, a, z: 1), doc="a + b")
_op("sub", 2, EW, T.NUMERIC, numpy=ns.sub, py=operator.sub,
    deriv=(lambda f, a, z: 1, lambda f, a, z: -1), doc="a - b")
_op("mul", 2, EW, T.NUMERIC, numpy=ns.mul, py=operator.mul,
    deriv=(lambda f, a, z: a[1], lambda f, a, z: a[0]), doc="a * b")
_op("truediv", 2, EW, T.FLOAT, numpy=ns.truediv,
    deriv=(lambda f, a, z: f.rcp(a[1]), lambda f, a, z: -z / a[1]), doc="a / b")
_op("floordiv", 2, EW, T.NUMERIC, numpy=ns.floordiv, deriv=ZERO,
    doc="a // b: integers round toward zero (C, Dr.Jit), floats toward -inf")
_op("mod", 2, EW, T.NUMERIC, numpy=ns.mod,
    # (d/db of a - b * floor(a / b); f.floor, not '//': the operator refuses floats, as Dr.Jit's)
    deriv=(lambda f, a, z: 1, lambda f, a, z: -f.floor(a[0] / a[1])),
    doc="a % b: integers with the dividend's sign (C, Dr.Jit), floats with the divisor's")
_op("pow", 2, EW, T.NUMERIC, numpy=ns.power, py=_ieee(math.pow, np.power), integer_variant="pow_int",
    deriv=(lambda f, a, z: _pow_dx(f, a[0], a[1]), lambda f, a, z: _pow_dy(f, a[0], z)),
    accuracy=_bounds(1, ((LogUniform(-20, 20),), (Uniform(-30, 30),)),
                     "x in [2^-20, 2^20] log-uniform, y uniform in [-30, 30]", 2),
    doc="a ** b (C99 pow special values)")
_op("pow_int", 2, EW, T.INTEGER, numpy=ns.pow_int, doc="a ** b by repeated squaring; for b < 0 1 / a ** -b truncated toward zero")
_op("neg", 1, EW, T.NUMERIC, numpy=ns.neg, py=operator.neg, deriv=(lambda f, a, z: -1,), doc="-a")
_op("abs", 1, EW, T.ANY, numpy=ns.abs, py=abs, deriv=(lambda f, a, z: _abs_dx(f, a[0]),), doc="|a|")
_op("fma", 3, EW, T.NUMERIC, numpy=ns.fma, py=_py_fma,
    deriv=(lambda f, a, z: a[1], lambda f, a, z: a[0], lambda f, a, z: 1), doc="a * b + c, rounded once")
# Ties and NaNs: minimum's gradient goes to a, maximum's to b (Dr.Jit).
_op("min", 2, EW, T.NUMERIC, numpy=ns.minimum, py=_py_minmax(min, True),
    deriv=(lambda f, a, z: f.mask(a[0] <= a[1]), lambda f, a, z: f.mask(~(a[0] <= a[1]))),
    doc="the smaller operand; NaN if either is NaN")
_op("max", 2, EW, T.NUMERIC, numpy=ns.maximum, py=_py_minmax(max, False),
    deriv=(lambda f, a, z: f.mask(a[0] > a[1]), lambda f, a, z: f.mask(~(a[0] > a[1]))),
    doc="the larger operand; NaN if either is NaN")
# fmin/fmax ignore a NaN operand; the gradient goes to the operand the value came from.
_op("fmin", 2, EW, T.NUMERIC, numpy=ns.fmin, py=_py_fminmax(True),
    deriv=(lambda f, a, z: f.mask(~_fmin_takes_b(a)), lambda f, a, z: f.mask(_fmin_takes_b(a))),
    doc="the smaller operand, ignoring a NaN one (the first on a tie)")
_op("fmax", 2, EW, T.NUMERIC, numpy=ns.fmax, py=_py_fminmax(False),
    deriv=(lambda f, a, z: f.mask(~_fmax_takes_b(a)), lambda f, a, z: f.mask(_fmax_takes_b(a))),
    doc="the larger operand, ignoring a NaN one (the first on a tie)")
_op("copysign", 2, EW, T.FLOAT, numpy=ns.copysign, py=_py_copysign,
    deriv=(lambda f, a, z: f.copysign(1.0, a[0]) * f.copysign(1.0, a[1]), None),
    doc="the magnitude of a with the sign of b")
_op("select", 3, EW, T.SELECT, numpy=ns.select,
    deriv=(None, lambda f, a, z: f.mask(a[0]), lambda f, a, z: f.mask(~a[0])), doc="b where a else c")

# -- square roots and reciprocals (correctly rounded steps) -----------------------------------
_op("sqrt", 1, EW, T.FLOAT, numpy=ns.sqrt, py=_ieee(math.sqrt, np.sqrt),
    deriv=(lambda f, a, z: 0.5 / z,), doc="square root, correctly rounded")
_op("rsqrt", 1, EW, T.FLOAT, numpy=ns.rsqrt, py=_ieee(_py_rsqrt, lambda x: 1.0 / np.sqrt(x)),
    deriv=(lambda f, a, z: -0.5 * z * z * z,), doc="1 / sqrt(a) (two roundings)")
_op("rcp", 1, EW, T.FLOAT, numpy=ns.rcp, py=_ieee(_py_rcp, lambda x: 1.0 / x),
    deriv=(lambda f, a, z: -(z * z),), doc="1 / a")

# -- transcendental functions (vectorized polynomials; bounds in ULP) --------------------------
_op("cbrt", 1, EW, T.FLOAT, numpy=ns.cbrt, py=_py_cbrt, deriv=(lambda f, a, z: 1.0 / (3.0 * z * z),),
    accuracy=_bounds(1, ((LogUniform(-149, 128, True),),), "all finite (log-uniform, signed, incl. subnormals)",
                     1, ((LogUniform(-1074, 1024, True),),), "all finite (log-uniform, signed, incl. subnormals)"),
    doc="cube root")
_op("sin", 1, EW, T.FLOAT, numpy=ns.sin, py=_ieee(math.sin, np.sin),
    deriv=(lambda f, a, z: f.cos(a[0]),), accuracy=_trig(2, 1.5), doc="sine")
_op("cos", 1, EW, T.FLOAT, numpy=ns.cos, py=_ieee(math.cos, np.cos),
    deriv=(lambda f, a, z: -f.sin(a[0]),), accuracy=_trig(2, 1.5), doc="cosine")
_op("tan", 1, EW, T.FLOAT, numpy=ns.tan, py=_ieee(math.tan, np.tan),
    deriv=(lambda f, a, z: 1.0 + z * z,), accuracy=_trig(3, 3), doc="tangent")
_op("asin", 1, EW, T.FLOAT, numpy=ns.asin, py=_ieee(math.asin, np.arcsin),
    deriv=(lambda f, a, z: f.rsqrt(1.0 - a[0] * a[0]),), accuracy=_bounds(2, _UNIT, _UNIT_TEXT, 2),
    doc="arcsine")
_op("acos", 1, EW, T.FLOAT, numpy=ns.acos, py=_ieee(math.acos, np.arccos),
    deriv=(lambda f, a, z: -f.rsqrt(1.0 - a[0] * a[0]),), accuracy=_bounds(2, _UNIT, _UNIT_TEXT, 1.5),
    doc="arccosine")
_op("atan", 1, EW, T.FLOAT, numpy=ns.atan, py=_ieee(math.atan, np.arctan),
    deriv=(lambda f, a, z: 1.0 / (1.0 + a[0] * a[0]),), accuracy=_bounds(2.5, _WIDE, _WIDE_TEXT, 2),
    doc="arctangent")
_op("atan2", 2, EW, T.FLOAT, numpy=ns.atan2, py=_ieee(math.atan2, np.arctan2),
    deriv=(lambda f, a, z: a[1] / (a[0] * a[0] + a[1] * a[1]), lambda f, a, z: -a[0] / (a[0] * a[0] + a[1] * a[1])),
    accuracy=_bounds(3, ((Uniform(-10, 10),), (Uniform(-10, 10),)), "y, x uniform in [-10, 10]", 3),
    doc="four-quadrant arctangent of a / b")
_op("exp", 1, EW, T.FLOAT, numpy=ns.exp, py=_ieee(math.exp, np.exp), deriv=(lambda f, a, z: z,),
    accuracy=_bounds(1, ((Uniform(-103.9, 88.7),),), "[-103.9, 88.7] (uniform)",
                     1, ((Uniform(-745.0, 709.7),),), "[-745.0, 709.7] (uniform)"),
    doc="natural exponential")
_op("exp2", 1, EW, T.FLOAT, numpy=ns.exp2, py=_ieee(lambda x: 2.0 ** x, np.exp2), deriv=(lambda f, a, z: z * _LN2,),
    accuracy=_bounds(1, ((Uniform(-149.9, 127.9),),), "[-149.9, 127.9] (uniform)",
                     1, ((Uniform(-1074.0, 1023.9),),), "[-1074.0, 1023.9] (uniform)"),
    doc="base-2 exponential")
_op("log", 1, EW, T.FLOAT, numpy=ns.log, py=_ieee(math.log, np.log), deriv=(lambda f, a, z: 1.0 / a[0],),
    accuracy=_log_domain(1, 1), doc="natural logarithm")
_op("log2", 1, EW, T.FLOAT, numpy=ns.log2, py=_ieee(math.log2, np.log2), deriv=(lambda f, a, z: 1.0 / (a[0] * _LN2),),
    accuracy=_log_domain(2, 1.5), doc="base-2 logarithm")
_op("sinh", 1, EW, T.FLOAT, numpy=ns.sinh, py=_ieee(math.sinh, np.sinh), deriv=(lambda f, a, z: f.cosh(a[0]),),
    accuracy=_hyperbolic(2.5, 2), doc="hyperbolic sine")
_op("cosh", 1, EW, T.FLOAT, numpy=ns.cosh, py=_ieee(math.cosh, np.cosh), deriv=(lambda f, a, z: f.sinh(a[0]),),
    accuracy=_hyperbolic(2, 1.5), doc="hyperbolic cosine")
_op("tanh", 1, EW, T.FLOAT, numpy=ns.tanh, py=_ieee(math.tanh, np.tanh), deriv=(lambda f, a, z: 1.0 - z * z,),
    accuracy=_bounds(2.5, _WIDE, _WIDE_TEXT, 3), doc="hyperbolic tangent")
_op("erf", 1, EW, T.FLOAT, numpy=ns.erf, py=math.erf,
    deriv=(lambda f, a, z: _TWO_OVER_SQRT_PI * f.exp(-(a[0] * a[0])),),
    accuracy=_bounds(3, _WIDE, _WIDE_TEXT, 2), doc="error function")

_op("asinh", 1, EW, T.FLOAT, numpy=ns.asinh, py=_ieee(math.asinh, np.arcsinh),
    deriv=(lambda f, a, z: f.rsqrt(a[0] * a[0] + 1.0),), accuracy=_all_finite(2, 2, signed=True),
    doc="inverse hyperbolic sine")
_op("acosh", 1, EW, T.FLOAT, numpy=ns.acosh, py=_ieee(math.acosh, np.arccosh),
    deriv=(lambda f, a, z: f.rsqrt((a[0] - 1.0) * (a[0] + 1.0)),),
    accuracy=_bounds(2, ((Uniform(1, 10), LogUniform(0, 128)),), "[1, 10] uniform + [1, 2^128] log-uniform",
                     2, ((Uniform(1, 10), LogUniform(0, 1024)),), "[1, 10] uniform + [1, 2^1024] log-uniform"),
    doc="inverse hyperbolic cosine (NaN below 1)")
_op("atanh", 1, EW, T.FLOAT, numpy=ns.atanh, py=_ieee(math.atanh, np.arctanh),
    deriv=(lambda f, a, z: f.rcp((1.0 - a[0]) * (1.0 + a[0])),), accuracy=_bounds(2.5, _UNIT, _UNIT_TEXT, 2.5),
    doc="inverse hyperbolic tangent (+-inf at +-1, NaN beyond)")
_op("lgamma", 1, EW, T.FLOAT, numpy=ns.lgamma, py=lambda x: float(ns.lgamma(Float64, np.float64(x))), deriv=(lambda f, a, z: f.digamma(a[0]),),
    accuracy=_bounds(1, ((Uniform(0, 10), LogUniform(-149, 128)),),
                     "x > 0: (0, 10] uniform + [2^-149, 2^128] log-uniform",
                     3, ((Uniform(0, 10), LogUniform(-1074, 1024)),),
                     "x > 0: (0, 10] uniform + [2^-1074, 2^1024] log-uniform"),
    doc="log |gamma(a)| (+inf at 0 and the negative integers)")
_op("erfinv", 1, EW, T.FLOAT, numpy=ns.erfinv, py=lambda x: float(ns.erfinv(Float64, np.float64(x))),
    deriv=(lambda f, a, z: _SQRT_PI_OVER_TWO * f.exp(z * z),), accuracy=_bounds(1, _UNIT, _UNIT_TEXT, 3),
    doc="inverse error function (+-inf at +-1, NaN beyond)")

# -- rounding (exact) -------------------------------------------------------------------------
_op("floor", 1, EW, T.ROUNDING, numpy=ns.floor, py=_in_double(np.floor), deriv=ZERO, doc="round toward -inf")
_op("ceil", 1, EW, T.ROUNDING, numpy=ns.ceil, py=_in_double(np.ceil), deriv=ZERO, doc="round toward +inf")
_op("trunc", 1, EW, T.ROUNDING, numpy=ns.trunc, py=_in_double(np.trunc), deriv=ZERO, doc="round toward zero")
_op("round", 1, EW, T.ROUNDING, numpy=ns.round, py=_in_double(np.rint), deriv=ZERO,
    doc="round to nearest, ties to even")

# -- comparisons and tests (Bool results) ------------------------------------------------------
_op("eq", 2, CMP, T.COMPARE, numpy=ns.eq, py=operator.eq, doc="a == b")
_op("ne", 2, CMP, T.COMPARE, numpy=ns.ne, py=operator.ne, doc="a != b (true for NaN)")
_op("lt", 2, CMP, T.COMPARE, numpy=ns.lt, py=operator.lt, doc="a < b")
_op("le", 2, CMP, T.COMPARE, numpy=ns.le, py=operator.le, doc="a <= b")
_op("gt", 2, CMP, T.COMPARE, numpy=ns.gt, py=operator.gt, doc="a > b")
_op("ge", 2, CMP, T.COMPARE, numpy=ns.ge, py=operator.ge, doc="a >= b")
_op("isnan", 1, CMP, T.FLOAT_TEST, numpy=ns.isnan, py=math.isnan, doc="a is NaN")
_op("isinf", 1, CMP, T.FLOAT_TEST, numpy=ns.isinf, py=math.isinf, doc="a is +-inf")
_op("isfinite", 1, CMP, T.FLOAT_TEST, numpy=ns.isfinite, py=math.isfinite, doc="a is neither NaN nor infinite")

# -- bits -----------------------------------------------------------------------------------------
_op("and", 2, EW, T.BITWISE, numpy=ns.bitwise_and,
    deriv=(lambda f, a, z: _mask_partial(f, a, 0, True), lambda f, a, z: _mask_partial(f, a, 1, True)),
    doc="a & b (x & mask: x where mask, else 0)")
_op("or", 2, EW, T.BITWISE, numpy=ns.bitwise_or,
    deriv=(lambda f, a, z: _mask_partial(f, a, 0, False), lambda f, a, z: _mask_partial(f, a, 1, False)),
    doc="a | b (x | mask: every bit set where mask)")
_op("xor", 2, EW, T.BITWISE, numpy=ns.bitwise_xor, doc="a ^ b")
_op("not", 1, EW, T.NOT, numpy=ns.logical_not, doc="~a")
_op("shl", 2, EW, T.SHIFT, numpy=ns.shl, doc="a << b (0 for counts >= the width)")
_op("shr", 2, EW, T.SHIFT, numpy=ns.shr, doc="a >> b (arithmetic for signed types)")

_op("popcnt", 1, EW, T.INTEGER, numpy=ns.popcnt, doc="number of set bits")
_op("lzcnt", 1, EW, T.INTEGER, numpy=ns.lzcnt, doc="number of leading zero bits (the width for 0)")
_op("tzcnt", 1, EW, T.INTEGER, numpy=ns.tzcnt, doc="number of trailing zero bits (the width for 0)")
_op("brev", 1, EW, T.INTEGER, numpy=ns.brev, doc="the bits in reverse order")
_op("mul_hi", 2, EW, T.INTEGER, numpy=ns.mul_hi, doc="the high half of the double-width product a * b")

# -- conversions --------------------------------------------------------------------------------
_op("cast", 1, CAST, T.CONVERT, numpy=ns.cast, unspecified=ns.cast_unspecified, deriv=(lambda f, a, z: 1,),
    doc="convert to the type in Node.value")
_op("bitcast", 1, CAST, T.REINTERPRET, numpy=ns.bitcast, doc="the same bits as the type in Node.value")

# -- memory -----------------------------------------------------------------------------------------
_op("gather", 2, MEM, T.NONE, numpy=ns.gather, deriv=SPECIAL,
    doc="src[index] where active (args: index, active; Node.extra: the source node)")
_op("scatter", 3, MEM, T.NONE, numpy=ns.scatter, deriv=SPECIAL,
    doc="target[index] (op)= value where active (args: value, index, active; Node.extra: (target, reduce op))")
_op("scatter_rmw", -1, MEM, T.NONE,
    doc="atomic read-modify-write of target[index] where active, result: the value before (args: [compare,] "
        "value, index, active; Node.extra: (target, 'inc' | 'exch' | 'cas')); queued as a side effect, "
        "symbolic loop bodies only (functions/atomics.py)")
_op("load", 0, MEM, T.NONE, doc="kernels only: read parameter Instr.value at the lane")
_op("store", 1, MEM, T.NONE, doc="kernels only: write the operand to output parameter Instr.value")
_op("reduce", 1, MEM, T.NONE, doc="kernels only: fold the operand into the per-row partials of "
    "PARTIAL parameter Instr.value[0] with reduction Instr.value[1] (a fused reduction)")

# -- symbolic loops (trace/loops.py; the regions of backend/kernel.py): no lane-wise semantics --------
# (arity -1: as many operands as the loop has state variables and free nodes)
CTL = OpKind.CONTROL
_op("loop", -1, CTL, T.NONE, doc="a symbolic loop: the initial state, then the free nodes (Node.extra: LoopRecord)")
_op("loop_phi", 1, CTL, T.NONE, doc="a symbolic loop's state at the top of an iteration (Node.value: its position)")
_op("loop_out", 1, CTL, T.NONE, doc="a symbolic loop's final state (operand: the loop; value: the position)")
_op("loop_start", -1, CTL, T.NONE, doc="kernels only: a loop region begins (operands: the initial state)")
_op("loop_cond", 2, CTL, T.NONE, doc="kernels only: lanes whose condition is false retire; exit when none is left")
_op("loop_end", -1, CTL, T.NONE, doc="kernels only: the end of a loop region (operands: the new state)")
# ``@fj.func`` calls (trace/calls.py; the same names are kernel instructions, backend/kernel.py)
_op("call", -1, CTL, T.NONE, doc="a call of an @fj.func body (operands: the arguments; Node.extra: FuncRecord)")
_op("call_param", 0, CTL, T.NONE, doc="an @fj.func body's parameter, one lane (Node.value: its position)")
_op("call_out", 1, CTL, T.NONE, doc="an array result of a call (operand: the call; value: the position)")
del CTL

# -- whole-array operations (run by the backend outside kernels; named here for AD) -----------------
for _r in ("add", "mul", "min", "max"):
    _op(f"reduce_{_r}", 1, RED, T.NONE, deriv=SPECIAL, doc=f"reduce all elements with {_r}")
for _r in ("and", "or"):
    _op(f"reduce_{_r}", 1, RED, T.NONE, doc=f"reduce all elements with {_r} (Bool)")
_op("prefix_sum_incl", 1, RED, T.NONE, deriv=SPECIAL, doc="inclusive running sum")
_op("prefix_sum_excl", 1, RED, T.NONE, deriv=SPECIAL, doc="exclusive running sum")
_op("block_reduce", 1, RED, T.NONE, deriv=SPECIAL, doc="reduction of each block (fj.block_reduce)")
_op("block_prefix_reduce", 1, RED, T.NONE, deriv=SPECIAL, doc="prefix reduction within blocks")
_op("axis_reduce", 1, RED, T.NONE, deriv=SPECIAL, doc="reduction of a tensor's axis (a backend AxisReduction)")
del _r


# ===========================================================================================
# Classes of operations (what the layers ask about), derived from the table
# ===========================================================================================

def ops_where(**fields) -> frozenset:
    """Names of the entries whose attributes equal ``fields`` (e.g. ``kind=OpKind.MEMORY``)."""
    return frozenset(n for n, e in OPS.items() if all(getattr(e, k) == v for k, v in fields.items()))


#: Lane-wise operations (elementwise, comparisons, conversions).
LANEWISE = frozenset(n for n, e in OPS.items() if e.lanewise)
#: Comparisons: Bool result, operands promoted to one type.
COMPARISONS = ops_where(types=TypeRule.COMPARE)
#: isnan / isinf / isfinite.
FLOAT_TESTS = ops_where(types=TypeRule.FLOAT_TEST)
#: Float-only operations: integer operands become Float32.
FLOAT_ONLY = ops_where(types=TypeRule.FLOAT)
#: Float rounding (the identity on integer arrays at the public level).
ROUNDING = ops_where(types=TypeRule.ROUNDING)
#: and / or / xor.
BITWISE = ops_where(types=TypeRule.BITWISE)
#: shl / shr.
SHIFTS = ops_where(types=TypeRule.SHIFT)
#: Functions with a documented accuracy (vectorized polynomial approximations).
TRANSCENDENTAL = frozenset(n for n, e in OPS.items() if e.accuracy is not None)
#: Operations whose result has the (promoted) operand type and needs no further rule: what
#: the array classes' fast path may apply directly to operands of one type.
SAME_TYPE = frozenset(n for n, e in OPS.items()
                      if e.types in (TypeRule.NUMERIC, TypeRule.ANY, TypeRule.FLOAT) and e.integer_variant is None
                      and e.lanewise)


def node_op(name: str, vt: VarType) -> str:
    """The op a node of operand type ``vt`` carries for the public operation ``name``
    (``node_op("pow", Int32) == "pow_int"``)."""
    variant = OPS[name].integer_variant
    return variant if variant is not None and not vt.is_float else name
