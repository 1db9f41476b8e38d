"""Symbolic sizes: what a recording knows about *why* a size or a width-derived value is what it is.

While a frozen function records, every trace node gets ``node.sym``, a :class:`Sym` saying how
its size follows from the sizes of the inputs: ``s0`` is the size shared by the inputs of size
class 0, ``c2`` the element count returned by the third ``compress``, ``(s0 - 1)`` the size of
``arange(width(x) - 1)``.  ``fj.width(x)`` returns a :class:`Sym` too, so Python arithmetic on a
width stays symbolic and a replay recomputes it for the new inputs.

**A Sym is the number it stands for, to user code.**  ``isinstance(fj.width(x), int)`` is true
(``__class__`` reports the class of the value, which is what ``isinstance``, ``numbers.Integral``
and dispatch consult), indexing, ``range``, formatting and NumPy accept it, and every result
equals the plain call's.  It is deliberately *not* an ``int`` subclass: CPython reads the digits
of an ``int`` subclass directly in ``0.5 * w``, ``range(w)`` or ``lst[w]`` without calling any
method, so such a read would be invisible and baked into the recording; a Sym is read only
through its methods, so nothing escapes unseen.

Where a symbolic value *escapes* into Python (``int(w)``, ``range(w)``, ``if w > 10``, a dict
key, a string), the recording depends on a fact the layout key does not cover.  The escape
records a *guard* (``(s0) > 10`` was true), checked before the replay (or right after the
``compress`` that defines its symbols); a failing guard makes the call trace again.  So an
escape costs re-traces, never a stale result.

An expression is Python source text over the symbol names.  Constants appear in it as decimal
literals when they are ``int`` and otherwise as names (``_k0``) bound by the recording
(:meth:`~.recorder.Recorder.const_expr`), so the generated replay never depends on how a value
prints (``np.float64(0.5)``, ``nan``, ``inf`` are not valid Python there).
"""
from __future__ import annotations

import math
import numbers
import operator
import re

import numpy as np


def _plain(v):
    """Unpickling a Sym gives the number it stood for."""
    return v


class Sym:
    """A number known symbolically during a recording (see module docstring).

    Attributes
    ----------
    expr : str
        Python expression over the symbols (``"s0"``, ``"(s0 - 1)"``, ``"7"``, ``"(s0 * _k0)"``).
    value : int | float | number
        Its value in the call being recorded (of exactly the type a plain call computes).
    rec : Recorder | None
        The recorder that owns the symbols and constant names (``None`` for constants).
    ready : int
        Index of the recorded operation after which every symbol of ``expr`` is known
        (-1: known before the replay starts).
    """

    __slots__ = ("expr", "value", "rec", "ready")

    def __init__(self, expr: str, value, rec=None, ready: int = -1):
        self.expr = expr
        self.value = value
        self.rec = rec
        self.ready = ready

    # ``isinstance(w, int)`` (and numbers.Integral, and dispatch on ``int``) see the value's class.
    @property
    def __class__(self):
        return type(self.value)

    # The marker the engine looks for (functions/creation.py, array/flat.py, trace/ops.py):
    # its value is the concrete number, which is how the engine types the value.
    @property
    def __symbolic_size__(self):
        return self.value

    @property
    def is_const(self) -> bool:
        return self.rec is None

    def _live(self) -> bool:
        rec = self.rec
        return rec is not None and rec.active

    # -- arithmetic stays symbolic ------------------------------------------------
    def _binary(self, other, op: str, fn, reflected: bool = False):
        if type(other) is Sym:
            ov = other.value
        elif type(other) in (int, float) or isinstance(other, numbers.Number):
            ov = other
        elif not reflected and isinstance(self.value, np.generic):
            # a NumPy scalar's own operator decides first (``np.float32(2) * Float(...)`` converts
            # the array through NumPy): the plain result, with the value exact (a guard)
            return fn(self._escape(f"a NumPy scalar operator ({op})"), other)
        else:
            return NotImplemented       # arrays, NumPy arrays: their reflected operator decides
        value = fn(ov, self.value) if reflected else fn(self.value, ov)
        rec = _owner(self, other)
        if rec is None:
            return value
        # Small simplifications keep expressions (and guards) readable.
        if not reflected and type(ov) is int and type(self.value) is int and self.rec is rec \
                and ((op in ("+", "-") and ov == 0) or (op in ("*", "//") and ov == 1)):
            return self
        ea, eb = _expr(rec, self), _expr(rec, other)
        if reflected:
            ea, eb = eb, ea
        return rec.wrap(f"({ea} {op} {eb})", value, max(_ready(rec, self), _ready(rec, other)))

    def __add__(self, o): return self._binary(o, "+", operator.add)
    def __radd__(self, o): return self._binary(o, "+", operator.add, True)
    def __sub__(self, o): return self._binary(o, "-", operator.sub)
    def __rsub__(self, o): return self._binary(o, "-", operator.sub, True)
    def __mul__(self, o): return self._binary(o, "*", operator.mul)
    def __rmul__(self, o): return self._binary(o, "*", operator.mul, True)
    def __floordiv__(self, o): return self._binary(o, "//", operator.floordiv)
    def __rfloordiv__(self, o): return self._binary(o, "//", operator.floordiv, True)
    def __truediv__(self, o): return self._binary(o, "/", operator.truediv)
    def __rtruediv__(self, o): return self._binary(o, "/", operator.truediv, True)
    def __mod__(self, o): return self._binary(o, "%", operator.mod)
    def __rmod__(self, o): return self._binary(o, "%", operator.mod, True)
    def __rpow__(self, o): return self._binary(o, "**", operator.pow, True)
    def __and__(self, o): return self._binary(o, "&", operator.and_)
    def __rand__(self, o): return self._binary(o, "&", operator.and_, True)
    def __or__(self, o): return self._binary(o, "|", operator.or_)
    def __ror__(self, o): return self._binary(o, "|", operator.or_, True)
    def __xor__(self, o): return self._binary(o, "^", operator.xor)
    def __rxor__(self, o): return self._binary(o, "^", operator.xor, True)
    def __lshift__(self, o): return self._binary(o, "<<", operator.lshift)
    def __rlshift__(self, o): return self._binary(o, "<<", operator.lshift, True)
    def __rshift__(self, o): return self._binary(o, ">>", operator.rshift)
    def __rrshift__(self, o): return self._binary(o, ">>", operator.rshift, True)

    def __pow__(self, o, mod=None):
        if mod is not None:
            return pow(self._escape("pow(a, b, mod)"), o, mod)
        return self._binary(o, "**", operator.pow)

    def __divmod__(self, o):
        q = self // o
        return NotImplemented if q is NotImplemented else (q, self % o)

    def __rdivmod__(self, o):
        q = self.__rfloordiv__(o)
        return NotImplemented if q is NotImplemented else (q, self.__rmod__(o))

    def __neg__(self): return self._prefix("-", operator.neg)
    def __invert__(self): return self._prefix("~", operator.invert)
    def __pos__(self): return self
    def __abs__(self): return call(abs, self)
    def __trunc__(self): return call(math.trunc, self)
    def __floor__(self): return call(math.floor, self)
    def __ceil__(self): return call(math.ceil, self)

    def __round__(self, n=None):
        return call(round, self) if n is None else call(round, self, n)

    def _prefix(self, op: str, fn):
        value = fn(self.value)
        if not self._live():
            return value
        return self.rec.wrap(f"({op}{self.expr})", value, self.ready)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy ufuncs on a width (``np.sqrt(w)``, ``np.float32(0.5) * w``) stay symbolic when
        they give a scalar; anything else reads the value (a guard)."""
        if method == "__call__" and not kwargs and \
                all(type(x) is Sym or isinstance(x, numbers.Number) for x in inputs):
            r = call(ufunc, *inputs)
            if isinstance(r, numbers.Number) or type(r) is Sym:
                return r
        plain = [x._escape(f"numpy.{ufunc.__name__}") if type(x) is Sym else x for x in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)

    # -- escapes into Python: guard the observed fact -----------------------------------
    def _escape(self, what: str):
        if self._live():
            self.rec.guard_value(self, what)
            esc = getattr(self.rec, "escaped", None)
            if esc is not None:         # a Python-number parameter used as an exact value
                esc.update(_PARAM.findall(self.expr))
        return self.value

    def __int__(self): return int(self._escape("int()"))
    def __float__(self): return float(self._escape("float()"))
    def __complex__(self): return complex(self._escape("complex()"))
    def __hash__(self): return hash(self._escape("hash()"))
    def __str__(self): return str(self._escape("str()"))
    def __repr__(self): return repr(self._escape("repr()"))
    def __format__(self, spec): return format(self._escape("format()"), spec)
    def __copy__(self): return self
    def __deepcopy__(self, memo): return self
    def __reduce__(self): return (_plain, (self._escape("pickling or copying"),))

    def __index__(self):
        if not isinstance(self.value, numbers.Integral):
            return operator.index(self.value)      # raises as the plain value does
        return operator.index(self._escape("an index (range(), slicing, ...)"))

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self._escape("numpy.asarray()"))
        return a if dtype is None else a.astype(dtype)

    def __getattr__(self, name: str):
        # The value's public methods and attributes (``w.bit_length()``, ``(w / 2).is_integer()``,
        # ``.real``) read the value.  Private names are never forwarded: NumPy and the engine probe
        # protocol attributes (``__array_interface__``, ...) that must not record a guard.
        if name.startswith("_") or not hasattr(self.value, name):
            raise AttributeError(f"{type(self.value).__name__!r} object has no attribute {name!r}")
        return getattr(self._escape(f".{name}"), name)

    def __bool__(self):
        if self._live():
            return self.rec.guard_compare(self, "!=", 0, "bool()")
        return bool(self.value)

    def _compare(self, other, op: str, fn):
        if type(other) is not Sym and type(other) not in (int, float) and not isinstance(other, numbers.Number):
            if isinstance(self.value, np.generic):          # (as in _binary)
                return fn(self._escape(f"a NumPy scalar comparison ({op})"), other)
            return NotImplemented
        rec = _owner(self, other)
        if rec is not None:
            return rec.guard_compare(self, op, other, f"a comparison ({op})")
        return fn(self.value, other.value if type(other) is Sym else other)

    def __eq__(self, o): return self._compare(o, "==", operator.eq)
    def __ne__(self, o): return self._compare(o, "!=", operator.ne)
    def __lt__(self, o): return self._compare(o, "<", operator.lt)
    def __le__(self, o): return self._compare(o, "<=", operator.le)
    def __gt__(self, o): return self._compare(o, ">", operator.gt)
    def __ge__(self, o): return self._compare(o, ">=", operator.ge)


_PARAM = re.compile(r"\bp(\d+)\b")
_CONSTS: dict = {}


def const(value: int) -> Sym:
    """A constant size (one the layout key fixes, or a size with no symbol)."""
    s = _CONSTS.get(value)
    if s is None:
        if type(value) is not int:
            raise TypeError(f"frostjit.freeze: a constant size must be an int, got {type(value).__name__}")
        s = Sym(repr(value) if value >= 0 else f"({value!r})", value)
        if len(_CONSTS) < 4096:
            _CONSTS[value] = s
    return s


ONE = const(1)


def _owner(*xs):
    """The recorder of the first live :class:`Sym` among ``xs`` (``None``: no live one)."""
    for x in xs:
        if type(x) is Sym and x._live():
            return x.rec
    return None


def _expr(rec, x) -> str:
    """``x`` in an expression of ``rec``: its symbols when it is one of ``rec``'s live Syms, else
    its value as a constant (a Sym of a finished or another recording is just a number)."""
    if type(x) is Sym:
        return x.expr if x.rec is rec and x._live() else rec.const_expr(x.value)
    return rec.const_expr(x)


def _ready(rec, x) -> int:
    return x.ready if type(x) is Sym and x.rec is rec else -1


# Builtins written by name in expressions (always resolvable in generated code).
_BUILTIN_NAMES = {abs: "abs", round: "round", max: "max", min: "min"}


def call(fn, *args):
    """``fn(*args)`` kept symbolic when an argument is a live :class:`Sym` (``max``, ``abs``,
    ``math.floor``, a NumPy ufunc); else the plain result."""
    value = fn(*[a.value if type(a) is Sym else a for a in args])
    rec = _owner(*args)
    if rec is None:
        return value
    if not isinstance(value, numbers.Number):     # not a number (a tuple, an array): the args escape
        for a in args:
            if type(a) is Sym and a._live():
                a._escape(getattr(fn, "__name__", "a function"))
        return value
    name = _BUILTIN_NAMES.get(fn) if type(fn) is type(abs) else None
    exprs = ", ".join(_expr(rec, a) for a in args)
    ready = max(_ready(rec, a) for a in args)
    return rec.wrap(f"{name or rec.const_expr(fn)}({exprs})", value, ready)


def is_symbolic(x) -> bool:
    """Whether ``x`` is a live symbolic number of a recording in progress."""
    return type(x) is Sym and x._live()
