"""Symbolic sizes: what a recording knows about *why* a size or a width-derived value is what it is.

While a frozen function records, every trace node gets ``node.sym``, a :class:`Sym` saying how
its size follows from the sizes of the inputs: ``s0`` is the size shared by the inputs of size
class 0, ``c2`` the element count returned by the third ``compress``, ``(s0 - 1)`` the size of
``arange(width(x) - 1)``.  ``fj.width(x)`` returns a :class:`Sym` too, so Python arithmetic on a
width stays symbolic and a replay recomputes it for the new inputs.

Where a symbolic value *escapes* into Python (``int(w)``, ``range(w)``, ``if w > 10``, a dict
key, a string), the recording depends on a fact the layout key does not cover.  The escape
records a *guard* (``(s0) > 10`` was true), checked before the replay (or right after the
``compress`` that defines its symbols); a failing guard makes the call trace again.  So an
escape costs re-traces, never a stale result.

An expression is kept as Python source text over the symbol names, so a recording compiles all
of its sizes into the generated replay function (see :mod:`.recording`) with no interpretation.
"""
from __future__ import annotations

import math
import operator


class Sym:
    """A number known symbolically during a recording (see module docstring).

    Attributes
    ----------
    expr : str
        Python expression over the symbols (``"s0"``, ``"(s0 - 1)"``, ``"7"``).
    value : int | float
        Its value in the call being recorded.
    rec : Recorder | None
        The recorder that owns the symbols (``None`` for constants).
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
        if isinstance(other, Sym):
            o = other
        elif isinstance(other, (int, float)) and not isinstance(other, bool):
            o = const(other)
        else:
            return NotImplemented
        a, b = (o, self) if reflected else (self, o)
        if not (a._live() or b._live()):
            return fn(a.value, b.value)
        value = fn(a.value, b.value)
        if a.is_const and b.is_const:
            return const(value)
        # Small simplifications keep expressions (and guards) readable.
        if op in ("+", "-") and b.is_const and b.value == 0:
            return a
        if op == "*" and b.is_const and b.value == 1:
            return a
        if op == "*" and a.is_const and a.value == 1:
            return b
        rec = a.rec if a.rec is not None else b.rec
        return Sym(f"({a.expr} {op} {b.expr})", value, rec, max(a.ready, b.ready))

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
    def __pow__(self, o): return self._binary(o, "**", operator.pow)
    def __rpow__(self, o): return self._binary(o, "**", operator.pow, True)

    def __neg__(self):
        return self._binary(0, "-", operator.sub, True)

    def __pos__(self):
        return self

    def __abs__(self):
        return sym_call("abs", abs, self)

    # -- escapes into Python: guard the observed fact -----------------------------------
    def _escape(self, what: str):
        if self._live():
            self.rec.guard_value(self, what)
        return self.value

    def __int__(self): return int(self._escape("int()"))
    def __index__(self): return operator.index(self._escape("an index (range(), slicing, ...)"))
    def __float__(self): return float(self._escape("float()"))
    def __complex__(self): return complex(self._escape("complex()"))
    def __round__(self, n=None): return round(self._escape("round()"), n)
    def __trunc__(self): return math.trunc(self._escape("math.trunc()"))
    def __floor__(self): return math.floor(self._escape("math.floor()"))
    def __ceil__(self): return math.ceil(self._escape("math.ceil()"))
    def __hash__(self): return hash(self._escape("hash()"))
    def __str__(self): return str(self._escape("str()"))
    def __repr__(self): return repr(self._escape("repr()"))
    def __format__(self, spec): return format(self._escape("format()"), spec)

    def __bool__(self):
        if self._live():
            return bool(self.rec.guard_compare(self, "!=", const(0), "bool()"))
        return bool(self.value)

    def _compare(self, other, op: str, fn):
        if isinstance(other, Sym):
            o = other
        elif isinstance(other, (int, float)):
            o = const(other)
        else:
            return NotImplemented
        if not (self._live() or o._live()):
            return fn(self.value, o.value)
        return self.rec.guard_compare(self, op, o, f"a comparison ({op})") if self._live() \
            else o.rec.guard_compare(self, op, o, f"a comparison ({op})")

    def __eq__(self, o): return self._compare(o, "==", operator.eq)
    def __ne__(self, o): return self._compare(o, "!=", operator.ne)
    def __lt__(self, o): return self._compare(o, "<", operator.lt)
    def __le__(self, o): return self._compare(o, "<=", operator.le)
    def __gt__(self, o): return self._compare(o, ">", operator.gt)
    def __ge__(self, o): return self._compare(o, ">=", operator.ge)


_CONSTS: dict = {}


def const(value) -> Sym:
    """A constant (a size the layout key fixes, or a literal)."""
    key = (type(value), value)
    s = _CONSTS.get(key)
    if s is None:
        s = Sym(repr(value), value)
        if len(_CONSTS) < 4096:
            _CONSTS[key] = s
    return s


ONE = const(1)


def sym_call(name: str, fn, *args) -> Sym:
    """``fn(*args)`` kept symbolic as ``name(...)`` (``max``, ``min``, ``abs``)."""
    syms = [a if isinstance(a, Sym) else const(a) for a in args]
    value = fn(*(s.value for s in syms))
    live = [s for s in syms if s._live()]
    if not live:
        return const(value) if all(s.is_const for s in syms) else value
    return Sym(f"{name}({', '.join(s.expr for s in syms)})", value, live[0].rec, max(s.ready for s in syms))


def is_symbolic(x) -> bool:
    """Whether ``x`` is a live symbolic number of a recording in progress."""
    return isinstance(x, Sym) and x._live()
