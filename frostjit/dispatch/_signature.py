"""Signatures, methods and registrations: what one implementation accepts.

A :class:`Registration` is what ``@dispatch`` records: the implementation, an optional explicit
signature and a precedence. Its annotations are read lazily (:meth:`Registration.resolve`), at
the first call of the function or the first look at ``f.methods``, so that forward references
to classes defined later work. Resolving it yields one :class:`Method` per :class:`Signature`:
``f(x: int, y: float = 1.0)`` gives ``Signature(int, float)`` and ``Signature(int)``, as in plum.
"""

from __future__ import annotations

import builtins
import inspect
import operator
import os
import sys
from typing import Any, Callable

from . import _hints as H
from ._forward_refs import enclosing_namespace, has_forward_refs, resolve_forward_refs
from ._hints import ANY, Hint
from .repr import repr_pyfunction, repr_short, repr_type
from ._util import Missing

_P = inspect.Parameter


_UNKNOWN = object()


class Signature:
    """The positional parameter types of a method, its ``*args`` type and its precedence.

    Parameters
    ----------
    *types : Any
        Annotations of the positional parameters (classes, unions, ``Literal``, ...).
    varargs : Any, optional
        Annotation of ``*args``; :class:`Missing` (or ``None``) when the method takes none.
    precedence : int
        Breaks ties between equally specific methods; higher wins.

    Attributes
    ----------
    types, varargs, precedence
        As given (plum's attributes).
    hints : tuple of Hint
        The normalised ``types`` (after :meth:`normalize`), which dispatch compares.

    Examples
    --------
    >>> Signature(int, float, varargs=str, precedence=1)
    Signature(int, float, varargs=str, precedence=1)
    >>> Signature(int) <= Signature(object)
    True
    """

    __slots__ = ("types", "varargs", "precedence", "hints", "varargs_hint", "_fast_key")

    def __init__(self, *types: Any, varargs: Any = Missing, precedence: int = 0):
        self.types = types
        self.varargs = Missing if varargs is None else varargs
        self.precedence = precedence
        self.hints: tuple[Hint, ...] | None = None
        self.varargs_hint: Hint | None = None
        self._fast_key: Any = _UNKNOWN

    @classmethod
    def from_hints(cls, types: tuple, hints: tuple[Hint, ...], varargs: Any, varargs_hint: Hint | None,
                   precedence: int) -> Signature:
        """A signature whose annotations are already normalised."""
        s = cls(*types, varargs=varargs, precedence=precedence)
        s.hints, s.varargs_hint = hints, varargs_hint
        return s

    @classmethod
    def from_callable(cls, f: Callable, precedence: int = 0) -> Signature:
        """The signature of ``f``'s positional parameters (the first, longest one; plum's name)."""
        reg = Registration(f, None, precedence, getattr(f, "__name__", "f"))
        return reg.resolve()[0].signature

    def normalize(self) -> Signature:
        """Normalise ``types`` into ``hints`` (once)."""
        if self.hints is None:
            H.prepare_annotation(None)
            self.hints = tuple(H.normalize(t) for t in self.types)
            self.varargs_hint = None if self.varargs is Missing else H.normalize(self.varargs)
        return self

    @property
    def has_varargs(self) -> bool:
        return self.varargs is not Missing

    @property
    def is_faithful(self) -> bool:
        """Whether every type is *faithful* (``isinstance(x, t) == issubclass(type(x), t)``)."""
        self.normalize()
        hs = self.hints + ((self.varargs_hint,) if self.varargs_hint is not None else ())
        return all(H.is_faithful_hint(h) for h in hs)

    # -- arity -------------------------------------------------------------------------------
    def accepts(self, n: int) -> bool:
        """Whether the signature can take ``n`` positional arguments."""
        k = len(self.types)
        return n == k or (n > k and self.varargs is not Missing)

    def expand(self, n: int) -> tuple[Hint, ...]:
        """The hints of ``n`` positional arguments (the varargs hint repeated)."""
        k = len(self.hints)
        if n <= k:
            return self.hints
        return self.hints + (self.varargs_hint,) * (n - k)

    def expand_varargs(self, n: int) -> tuple:
        """The types of ``n`` positional arguments (plum's name): varargs repeated."""
        k = len(self.types)
        if n <= k or self.varargs is Missing:
            return self.types
        return self.types + (self.varargs,) * (n - k)

    # -- order -------------------------------------------------------------------------------
    def le(self, other: Signature) -> bool:
        """Whether ``self`` is at least as specific as ``other`` (plum's order, varargs included)."""
        a, b = self.normalize(), other.normalize()
        na, nb = len(a.hints), len(b.hints)
        va, vb = a.varargs_hint, b.varargs_hint
        if not (na == nb or (na > nb and vb is not None) or (na < nb and va is not None)):
            return False
        ta, tb = a.expand(nb), b.expand(na)
        if all(x is y or (H.le(x, y) and H.le(y, x)) for x, y in zip(ta, tb)):
            if va is not None and vb is not None:
                if not H.le(va, vb):
                    return False
                # Equal expanded types and equivalent varargs (``(int, *int)`` against
                # ``(*int)``): the one with more fixed parameters accepts fewer calls (it
                # needs more arguments), so it is the more specific. Plum lets the later
                # registration win here; this order does not depend on registration order.
                return na >= nb or not H.le(vb, va)
            # Having varargs makes a signature slightly less specific.
            return va is None
        if all(H.le(x, y) for x, y in zip(ta, tb)):
            if va is not None and vb is not None:
                return H.le(va, vb)
            return True
        return False

    __le__ = le

    def __lt__(self, other: Signature) -> bool:
        return self.le(other) and not other.le(self)

    def fast_key(self) -> tuple | None:
        """For plain-class signatures, a tuple equal exactly for equivalent signatures; else ``None``."""
        key = self._fast_key
        if key is not _UNKNOWN:
            return key
        self.normalize()
        hs = self.hints + ((self.varargs_hint,) if self.varargs_hint is not None else ())
        key = None
        if all(h is ANY or (type(h) is H.ClassHint and h._kind == "plain") for h in hs):
            key = (self.varargs_hint is not None,) + tuple(h if h is ANY else h.cls for h in hs)
        self._fast_key = key
        return key

    def equivalent(self, other: Signature) -> bool:
        """Same parameter hints and same varargs hint (a redefinition), precedence aside."""
        a, b = self.normalize(), other.normalize()
        fa, fb = a.fast_key(), b.fast_key()
        if fa is not None and fb is not None:
            return fa == fb
        if len(a.hints) != len(b.hints) or (a.varargs_hint is None) != (b.varargs_hint is None):
            return False
        if any(x is not y and not (H.le(x, y) and H.le(y, x)) for x, y in zip(a.hints, b.hints)):
            return False
        v, w = a.varargs_hint, b.varargs_hint
        return v is None or v is w or (H.le(v, w) and H.le(w, v))

    def __copy__(self) -> Signature:
        """A new signature with the same types, varargs and precedence (plum's ``__copy__``)."""
        return Signature(*self.types, varargs=self.varargs, precedence=self.precedence)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Signature):
            return NotImplemented
        if self is other:
            return True
        try:
            return self.precedence == other.precedence and self.equivalent(other)
        except Exception:  # an unresolvable type: compare what was written
            return (self.types, self.varargs, self.precedence) == (other.types, other.varargs,
                                                                   other.precedence)

    def __hash__(self) -> int:
        return hash((len(self.types), self.varargs is Missing, self.precedence))

    # -- values ------------------------------------------------------------------------------
    def match(self, values: tuple) -> bool:
        """Whether these argument values match the signature."""
        self.normalize()
        if not self.accepts(len(values)):
            return False
        return all(h.match(v) for h, v in zip(self.expand(len(values)), values))

    def compute_mismatches(self, values: tuple) -> tuple[set[int], bool]:
        """Positions whose value does not match, and whether the varargs all match (plum's name)."""
        self.normalize()
        k = len(self.hints)
        mismatches = {i for i, (h, v) in enumerate(zip(self.hints, values)) if not h.match(v)}
        va = self.varargs_hint
        varargs_ok = va is None or all(va.match(v) for v in values[k:])
        return mismatches, varargs_ok

    def compute_distance(self, values: tuple) -> int:
        """How far these values are from matching: arity difference plus mismatched positions."""
        self.normalize()
        n, k = len(values), len(self.hints)
        dist = 0 if (self.varargs_hint is not None and n >= k) else abs(n - k)
        hints = self.expand(n) if self.accepts(n) else self.hints
        return dist + sum(1 for h, v in zip(hints, values) if not h.match(v))

    def __repr__(self) -> str:
        parts = [repr_short(t) for t in self.types]
        if self.varargs is not Missing:
            parts.append(f"varargs={repr_short(self.varargs)}")
        if self.precedence:
            parts.append(f"precedence={self.precedence}")
        return f"Signature({', '.join(parts)})"


#: The signature of the ``operator`` getters (one positional argument, as plum reports them);
#: ``inspect.signature`` cannot read them.
_GETTER_SIGNATURE = inspect.Signature([inspect.Parameter("x", _P.POSITIONAL_OR_KEYWORD)])


def inspect_signature(f: Callable) -> inspect.Signature:
    """``inspect.signature(f)``, also for ``operator.itemgetter``/``attrgetter`` objects
    (plum's name): a getter takes one positional argument ``(x)``.

    Raises
    ------
    ValueError, TypeError
        As ``inspect.signature`` for other callables without a signature.
    """
    if isinstance(f, (operator.itemgetter, operator.attrgetter)):
        return _GETTER_SIGNATURE
    return inspect.signature(f)


def extract_return_type(f: Callable) -> Any:
    """The return annotation of ``f`` with forward references resolved; ``typing.Any`` when
    there is none (plum's name)."""
    reg = Registration(f, None, 0, getattr(f, "__name__", "f"))
    ret = reg._annotations().get("return", _P.empty)
    return Any if ret is _P.empty else ret


def append_default_args(signature: Signature, f: Callable) -> list[Signature]:
    """``signature`` and the shorter signatures ``f``'s default arguments allow: for
    ``f(x, y=1.0)``, ``[Signature(int, float), Signature(int)]`` (plum's name)."""
    params = [p for p in inspect_signature(f).parameters.values()
              if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
    # Only parameters the signature types can be dropped (an explicit signature may
    # cover fewer parameters than ``f`` has).
    params = params[:len(signature.types)]
    out = [signature]
    for k in range(len(params) - 1, -1, -1):
        if params[k].default is _P.empty:
            break
        out.append(Signature(*signature.types[:k], precedence=signature.precedence))
    return out


def source_location(fn: Any) -> str:
    """``file:line`` of a callable, or its module's file / ``<unknown>`` when it has no source."""
    target = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(target, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    mod = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(mod, "__file__", None)
    return path or "<unknown>"


class Method:
    """One method of a dispatched function: an implementation under one signature (plum's).

    Parameters
    ----------
    implementation : callable
        The function that runs.
    signature : Signature
        The positional parameter types it is chosen for.
    function_name : str, optional
        The dispatched function's name (for display).
    return_type : Any, optional
        The return annotation (results are converted to it). When not given, that of
        ``implementation`` (``typing.Any`` when it has none), as plum.

    Examples
    --------
    >>> f.methods[0]                                        # doctest: +SKIP
    Method(function_name='f', signature=Signature(int), return_type=typing.Any, implementation=<function f at 0x...>)
    """

    __slots__ = ("implementation", "signature", "function_name", "return_type", "return_hint",
                 "registration", "location", "target", "__weakref__")

    def __init__(self, implementation: Callable, signature: Signature, function_name: str | None = None,
                 return_type: Any = None, *, registration: Registration | None = None):
        self.implementation = implementation
        self.signature = signature
        self.function_name = function_name or getattr(implementation, "__name__", "f")
        if return_type is None:
            # A registration passes the annotation it read; a method made directly reads it.
            return_type = Any if registration is not None else extract_return_type(implementation)
        self.return_type = return_type
        #: The normalised return annotation, ``None`` when absent or ``Any``.
        self.return_hint: Hint | None = None
        if return_type is not Any and return_type is not inspect.Signature.empty:
            h = H.normalize(return_type)
            self.return_hint = None if h is ANY else h
        self.registration = registration
        self.location = registration.location if registration is not None else source_location(implementation)
        #: What the resolution cache stores for this method (set at the first decision). Kept
        #: on the method: a table keyed by ``id(method)`` would hand a new method the target of
        #: a freed (redefined) one that happened to live at the same address.
        self.target: Callable | None = None

    @property
    def arity(self) -> int | None:
        return None if self.signature.varargs is not Missing else len(self.signature.types)

    @property
    def takes_keywords(self) -> bool:
        reg = self.registration
        return True if reg is None else reg.takes_keywords

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Method):
            return NotImplemented
        return (self.function_name == other.function_name and self.implementation == other.implementation
                and self.signature == other.signature and self.return_type == other.return_type)

    def __hash__(self) -> int:
        return hash((self.function_name, self.signature, _hash_or_zero(self.implementation),
                     _hash_or_zero(self.return_type)))

    def describe(self) -> str:
        """``f(x: int, *, option, **kw) -> int``: this method's signature with the
        implementation's parameter names (keyword-only parameters and ``**kwargs`` by name, as
        plum shows them)."""
        reg = self.registration
        if reg is not None:
            inspected = reg._inspected
        else:
            try:
                inspected = inspect_signature(self.implementation)
            except (TypeError, ValueError):  # a C callable without a signature
                inspected = None
        params = list(inspected.parameters.values()) if inspected is not None else []
        names = [p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
        parts = []
        for i, t in enumerate(self.signature.types):
            name = names[i] if i < len(names) else f"arg{i}"
            parts.append(f"{name}: {_fmt(t)}")
        var = next((p.name for p in params if p.kind == _P.VAR_POSITIONAL), None)
        if self.signature.varargs is not Missing:
            parts.append(f"*{var or 'args'}: {_fmt(self.signature.varargs)}")
        keyword_only = [p.name for p in params if p.kind == _P.KEYWORD_ONLY]
        if keyword_only:
            # A bare ``*`` only where no ``*args`` already ends the positional parameters.
            parts += ([] if self.signature.varargs is not Missing else ["*"]) + keyword_only
        parts += [f"**{p.name}" for p in params if p.kind == _P.VAR_KEYWORD]
        out = f"{self.function_name}({', '.join(parts)})"
        if self.return_hint is not None:
            out += f" -> {_fmt(self.return_type)}"
        return out

    def __repr__(self) -> str:
        """``f(x: int) -> float`` and the implementation with its source location (plum's
        rich display, as plain text)."""
        prec = self.signature.precedence
        line = f"\n    precedence={prec}" if prec else ""
        return f"{self.describe()}{line}\n    {repr_pyfunction(self.implementation)}"

    def repr_mismatch(self, mismatches: Any = frozenset(), varargs_matched: bool = True) -> str:
        """The text of :meth:`__repr__` (plum highlights the mismatched parameters in
        ``rich`` colours; as plain text the two are the same)."""
        return repr(self)

    def __str__(self) -> str:
        return (f"Method(function_name={self.function_name!r}, signature={self.signature!r}, "
                f"return_type={self.return_type!r}, implementation={self.implementation!r})")


class Registration:
    """What one ``@dispatch`` (or ``f.register``) recorded; resolved lazily into methods.

    Attributes
    ----------
    implementation : callable
        The body.
    explicit : Signature or None
        A signature given explicitly (``multi``, ``register``); else the annotations count.
    precedence : int
        Tie-breaker between equally specific methods.
    methods : list of Method or None
        After :meth:`resolve`.
    arity : int or None
        The one number of positional arguments it takes (``None``: defaults or ``*args``),
        known before resolution: the call path is shaped by it.
    """

    __slots__ = ("implementation", "explicit", "precedence", "function_name", "methods", "location",
                 "_inspected", "arity", "takes_keywords", "_doc", "__weakref__")

    def __init__(self, implementation: Callable, explicit: Signature | None, precedence: int,
                 function_name: str):
        self.implementation = implementation
        self.explicit = explicit
        self.precedence = explicit.precedence if explicit is not None and explicit.precedence else precedence
        self.function_name = function_name
        self.methods: list[Method] | None = None
        self.location = source_location(implementation)
        try:
            self._inspected: inspect.Signature | None = inspect_signature(implementation)
        except (TypeError, ValueError):  # some C callables have no signature
            self._inspected = None
        self.arity = self._fixed_arity()
        self.takes_keywords = self._takes_keywords()

    def _takes_keywords(self) -> bool:
        """Whether some keyword argument can reach the implementation (besides dispatched ones).

        Keyword-only parameters and ``**kwargs`` do; so do positional parameters beyond an
        explicit signature (``register(lambda x, scale=1: ..., (int,))`` accepts ``scale=``).
        Callables without a signature are assumed to.
        """
        if self._inspected is None:
            return True
        positional = 0
        for p in self._inspected.parameters.values():
            if p.kind in (_P.KEYWORD_ONLY, _P.VAR_KEYWORD):
                return True
            if p.kind == _P.POSITIONAL_OR_KEYWORD:
                positional += 1
                if self.explicit is not None and positional > len(self.explicit.types):
                    return True
        return False

    def _fixed_arity(self) -> int | None:
        """The one number of positional arguments this takes, or ``None`` (defaults, ``*args``)."""
        if self.explicit is not None:
            return None if self.explicit.varargs is not Missing else len(self.explicit.types)
        if self._inspected is None:
            return None
        n = 0
        for p in self._inspected.parameters.values():
            if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                if p.default is not _P.empty:
                    return None
                n += 1
            elif p.kind == _P.VAR_POSITIONAL:
                return None
        return n

    def positional_names(self) -> list[str]:
        if self._inspected is None:
            return []
        return [p.name for p in self._inspected.parameters.values()
                if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]

    def varargs_name(self) -> str | None:
        if self._inspected is None:
            return None
        for p in self._inspected.parameters.values():
            if p.kind == _P.VAR_POSITIONAL:
                return p.name
        return None

    # -- lazy resolution ---------------------------------------------------------------------
    def resolve(self) -> list[Method]:
        """Read and normalise the annotations (resolving forward references): the methods."""
        if self.methods is not None:
            return self.methods
        H.prepare_annotation(None)
        anns = self._annotations()
        ret = anns.get("return", _P.empty)
        ret = Any if ret is _P.empty else ret
        if self.explicit is not None:
            sig = self.explicit
            glb, loc = self._namespaces()
            if any(has_forward_refs(t) for t in sig.types + (sig.varargs,)):
                sig = Signature(*(resolve_forward_refs(t, glb, loc) for t in sig.types),
                                varargs=resolve_forward_refs(sig.varargs, glb, loc),
                                precedence=sig.precedence)
            sig.normalize()
            self.methods = [Method(self.implementation, sig, self.function_name, ret, registration=self)]
            return self.methods
        if self._inspected is None:
            sig = Signature.from_hints((), (), Any, ANY, self.precedence)
            self.methods = [Method(self.implementation, sig, self.function_name, registration=self)]
            return self.methods
        positional: list[_P] = []
        var: _P | None = None
        for p in self._inspected.parameters.values():
            if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                positional.append(p)
            elif p.kind == _P.VAR_POSITIONAL:
                var = p
            else:
                break  # keyword-only parameters and **kwargs are passed through, not dispatched on

        def annotation(p: _P) -> Any:
            a = anns.get(p.name, p.annotation)
            # ``x: None`` means ``NoneType`` (as ``typing.get_type_hints`` reads it, and plum).
            return Any if a is _P.empty else type(None) if a is None else a

        types = tuple(annotation(p) for p in positional)
        hints = tuple(H.normalize(t) for t in types)
        varargs = annotation(var) if var is not None else Missing
        varargs_hint = H.normalize(varargs) if var is not None else None
        for p, h in zip(positional, hints):
            if p.default is not _P.empty and not h.match(p.default):
                raise TypeError(
                    f"Default value `{p.default!r}` is not an instance of the annotated type "
                    f"`{repr_short(types[positional.index(p)])}`. (Parameter `{p.name}` of "
                    f"{self.function_name}.)"
                )
        sigs = [Signature.from_hints(types, hints, varargs, varargs_hint, self.precedence)]
        for k in range(len(positional) - 1, -1, -1):
            if positional[k].default is _P.empty:
                break
            sigs.append(Signature.from_hints(types[:k], hints[:k], Missing, None, self.precedence))
        self.methods = [Method(self.implementation, s, self.function_name, ret, registration=self) for s in sigs]
        return self.methods

    def provisional_methods(self) -> list[Method]:
        """Methods to list before the annotations can be resolved (unresolved names stay strings)."""
        if self.explicit is not None:
            sig = self.explicit
        else:
            names = self._inspected.parameters.values() if self._inspected is not None else ()
            types = []
            varargs: Any = Missing
            for p in names:
                a = Any if p.annotation is _P.empty else p.annotation
                if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                    types.append(a)
                elif p.kind == _P.VAR_POSITIONAL:
                    varargs = a
                else:
                    break
            sig = Signature(*types, varargs=varargs, precedence=self.precedence)
        return [Method(self.implementation, sig, self.function_name, registration=self)]

    def _namespaces(self) -> tuple[dict, dict | None]:
        target = inspect.unwrap(self.implementation)
        glb = getattr(target, "__globals__", None)
        if glb is None:
            module = sys.modules.get(getattr(self.implementation, "__module__", None) or "builtins", builtins)
            glb = vars(module)
        return glb, enclosing_namespace(target)

    def _annotations(self) -> dict[str, Any]:
        """The raw annotations, with string forward references resolved wherever they are
        nested (``"B"``, ``Union[int, "B"]``, ``list["B"]``, PEP 563 strings)."""
        if self._inspected is None:
            return {}
        raw = {p.name: p.annotation for p in self._inspected.parameters.values()}
        raw["return"] = self._inspected.return_annotation
        if not any(has_forward_refs(a) for a in raw.values()):
            return raw
        glb, loc = self._namespaces()
        out = {}
        for k, a in raw.items():
            try:
                out[k] = resolve_forward_refs(a, glb, loc)
            except Exception as e:
                raise NameError(
                    f"{self.function_name}: cannot resolve the annotation {a!r} of `{k}` "
                    f"({e}); forward references are resolved at the first call"
                ) from None
        return out

    # -- display -----------------------------------------------------------------------------
    def describe(self) -> str:
        """``f(x: int, y: float = 1.0) -> int``: the implementation's own signature line."""
        if self.explicit is not None:
            return Method(self.implementation, self.explicit, self.function_name, registration=self).describe()
        if self._inspected is None:
            return f"{self.function_name}(...)"
        parts = []
        for p in self._inspected.parameters.values():
            s = p.name
            if p.kind == _P.VAR_POSITIONAL:
                s = "*" + s
            elif p.kind == _P.VAR_KEYWORD:
                s = "**" + s
            if p.annotation is not _P.empty:
                s += f": {_fmt(p.annotation)}"
            if p.default is not _P.empty:
                s += f" = {p.default!r}"
            parts.append(s)
        out = f"{self.function_name}({', '.join(parts)})"
        if self._inspected.return_annotation is not _P.empty:
            out += f" -> {_fmt(self._inspected.return_annotation)}"
        return out

    def doc_entry(self) -> str:
        """This implementation's part of the function's ``__doc__`` (plum's layout)."""
        try:
            return self._doc
        except AttributeError:
            pass
        body = self.describe()
        doc = inspect.cleandoc(getattr(self.implementation, "__doc__", None) or "")
        if doc:
            body += "\n\n" + doc
        self._doc = body
        return body

    def __repr__(self) -> str:
        return f"<registration {self.describe()} @ {self.location}>"


def _hash_or_zero(x: Any) -> int:
    """``hash(x)``, or 0 for an unhashable object (equal objects still hash alike)."""
    try:
        return hash(x)
    except TypeError:
        return 0


def _fmt(a: Any) -> str:
    if isinstance(a, str):
        return a
    return repr_type(a)


def short_path(path: str) -> str:
    """A path relative to the current directory when that is shorter."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if len(rel) < len(path) else path
