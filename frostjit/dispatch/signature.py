"""Signatures and methods: what one registered implementation accepts.

A :class:`Method` is created at registration with the raw callable only; its annotations are
read and normalised lazily (:meth:`Method.resolve`), at the first call of the function, so
that string forward references to classes defined later work.
"""

from __future__ import annotations

import builtins
import inspect
import os
import sys
import typing
from typing import Any, Callable

from . import hints as H
from .forward_refs import enclosing_namespace, has_forward_refs, resolve_forward_refs
from .hints import ANY, Hint

_P = inspect.Parameter


class Signature:
    """The positional parameter hints of a method, its ``*args`` hint and its precedence.

    Parameters
    ----------
    *types : Any
        Annotations of the positional parameters (classes, unions, ``Literal``, ...).
    varargs : Any, optional
        Annotation of ``*args``; ``None`` when the method takes no ``*args``.
    precedence : int
        Breaks ties between equally specific methods; higher wins.

    Examples
    --------
    >>> Signature(int, float)
    Signature(int, float)
    """

    __slots__ = ("raw", "raw_varargs", "types", "varargs", "precedence", "_fast_key")

    def __init__(self, *types: Any, varargs: Any = None, precedence: int = 0):
        self.raw = types
        self.raw_varargs = varargs
        self.precedence = precedence
        self.types: tuple[Hint, ...] | None = None
        self.varargs: Hint | None = None

    @classmethod
    def _from_hints(cls, types: tuple[Hint, ...], varargs: Hint | None, precedence: int) -> Signature:
        s = cls(precedence=precedence)
        s.types, s.varargs = types, varargs
        return s

    def _normalize(self) -> Signature:
        if self.types is None:
            H.prepare_annotation(None)
            self.types = tuple(H.normalize(t) for t in self.raw)
            self.varargs = None if self.raw_varargs is None else H.normalize(self.raw_varargs)
        return self

    def accepts(self, n: int) -> bool:
        """Whether the signature can take ``n`` positional arguments."""
        k = len(self.types)
        return n == k or (n > k and self.varargs is not None)

    def expand(self, n: int) -> tuple[Hint, ...]:
        """The hints of ``n`` positional arguments (varargs repeated)."""
        k = len(self.types)
        if n <= k:
            return self.types
        return self.types + (self.varargs,) * (n - k)

    def le(self, other: Signature) -> bool:
        """Whether ``self`` is at least as specific as ``other`` (plum's order, varargs rules included)."""
        a, b = self, other
        na, nb = len(a.types), len(b.types)
        if not (na == nb or (na > nb and b.varargs is not None) or (na < nb and a.varargs is not None)):
            return False
        ta, tb = a.expand(nb), b.expand(na)
        if all(x is y or (H.le(x, y) and H.le(y, x)) for x, y in zip(ta, tb)):
            if a.varargs is not None and b.varargs is not None:
                return H.le(a.varargs, b.varargs)
            # Having varargs makes a signature slightly less specific.
            return a.varargs is None
        if all(H.le(x, y) for x, y in zip(ta, tb)):
            if a.varargs is not None and b.varargs is not None:
                return H.le(a.varargs, b.varargs)
            return True
        return False

    def fast_key(self) -> tuple | None:
        """For plain-class signatures, a tuple equal exactly for equivalent signatures; else ``None``."""
        try:
            return self._fast_key
        except AttributeError:
            pass
        hs = self.types + ((self.varargs,) if self.varargs is not None else ())
        key = None
        if all(h is ANY or (type(h) is H.ClassHint and h._kind == "plain") for h in hs):
            key = (self.varargs is not None,) + tuple(h if h is ANY else h.cls for h in hs)
        self._fast_key = key
        return key

    def equivalent(self, other: Signature) -> bool:
        """Same parameter hints and same varargs hint (a redefinition)."""
        if len(self.types) != len(other.types) or (self.varargs is None) != (other.varargs is None):
            return False
        if any(x is not y and not (H.le(x, y) and H.le(y, x)) for x, y in zip(self.types, other.types)):
            return False
        if self.varargs is None:
            return True
        v, w = self.varargs, other.varargs
        return v is w or (H.le(v, w) and H.le(w, v))

    def __repr__(self) -> str:
        parts = [repr(t) for t in (self.types if self.types is not None else self.raw)]
        va = self.varargs if self.types is not None else self.raw_varargs
        if va is not None:
            parts.append(f"*{va!r}")
        if self.precedence:
            parts.append(f"precedence={self.precedence}")
        return f"Signature({', '.join(parts)})"


def source_location(fn: Any) -> str:
    """``file:line`` of a callable, or ``<module>`` / ``<unknown>`` when it has no source."""
    target = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(target, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    mod = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(mod, "__file__", None)
    return path or "<unknown>"


class Method:
    """One registered implementation.

    Attributes
    ----------
    implementation : callable
        The function that runs.
    precedence : int
        Tie-breaker between equally specific methods.
    signatures : list of Signature
        After :meth:`resolve`: one signature, or several when default arguments expand it.
    return_hint : Hint or None
        After :meth:`resolve`: the normalised return annotation, ``None`` when absent or ``Any``.
    """

    __slots__ = ("implementation", "precedence", "explicit", "signatures", "return_hint",
                 "_inspected", "location", "function_name", "arity", "takes_keywords", "_doc", "target", "__weakref__")

    def __init__(self, implementation: Callable, explicit: Signature | None, precedence: int,
                 function_name: str):
        self.implementation = implementation
        self.explicit = explicit
        self.precedence = explicit.precedence if explicit is not None and explicit.precedence else precedence
        self.function_name = function_name
        self.signatures: list[Signature] | None = None
        self.return_hint: Hint | None = None
        #: What the cache stores for this method (set by the function at the first decision).
        self.target: Callable | None = None
        self.location = source_location(implementation)
        try:
            self._inspected: inspect.Signature | None = inspect.signature(implementation)
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
                if self.explicit is not None and positional > len(self.explicit.raw):
                    return True
        return False

    def _fixed_arity(self) -> int | None:
        """The one number of positional arguments this method takes, or ``None`` (defaults, ``*args``)."""
        if self.explicit is not None:
            return None if self.explicit.raw_varargs is not None else len(self.explicit.raw)
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

    # -- lazy resolution ---------------------------------------------------------------------
    def resolve(self) -> None:
        """Read and normalise the annotations (resolving string forward references)."""
        if self.signatures is not None:
            return
        H.prepare_annotation(None)
        if self.explicit is not None:
            self.signatures = [self.explicit._normalize()]
            self.return_hint = self._return_hint(self._annotations())
            return
        anns = self._annotations()
        positional: list[_P] = []
        var: _P | None = None
        params = self._inspected.parameters.values() if self._inspected is not None else ()
        for p in params:
            if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                positional.append(p)
            elif p.kind == _P.VAR_POSITIONAL:
                var = p
            else:
                break  # keyword-only parameters and **kwargs are passed through, not dispatched on
        if self._inspected is None:
            self.signatures = [Signature._from_hints((), ANY, self.precedence)]
            return

        def hint_of(p: _P) -> Hint:
            ann = anns.get(p.name, p.annotation)
            return ANY if ann is _P.empty else H.normalize(ann)

        types = tuple(hint_of(p) for p in positional)
        varargs = hint_of(var) if var is not None else None
        for p, h in zip(positional, types):
            if p.default is not _P.empty and not h.match(p.default):
                raise TypeError(
                    f"{self.function_name}: default {p.default!r} of parameter `{p.name}` does not "
                    f"match its annotation {h!r}"
                )
        sigs = [Signature._from_hints(types, varargs, self.precedence)]
        for k in range(len(positional) - 1, -1, -1):
            if positional[k].default is _P.empty:
                break
            sigs.append(Signature._from_hints(types[:k], None, self.precedence))
        self.signatures = sigs
        self.return_hint = self._return_hint(anns)

    def _annotations(self) -> dict[str, Any]:
        """The raw annotations, with string forward references resolved wherever they are
        nested (``"B"``, ``Union[int, "B"]``, ``list["B"]``, PEP 563 strings)."""
        if self._inspected is None:
            return {}
        raw = {p.name: p.annotation for p in self._inspected.parameters.values()}
        raw["return"] = self._inspected.return_annotation
        if not any(has_forward_refs(a) for a in raw.values()):
            return raw
        target = inspect.unwrap(self.implementation)
        glb = getattr(target, "__globals__", None) or vars(sys.modules.get(
            getattr(self.implementation, "__module__", None) or "builtins", builtins))
        loc = enclosing_namespace(target)
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

    @staticmethod
    def _return_hint(anns: dict[str, Any]) -> Hint | None:
        ann = anns.get("return", _P.empty)
        if ann is _P.empty:
            return None
        h = H.normalize(ann)
        return None if h is ANY else h

    # -- display -----------------------------------------------------------------------------
    def describe(self) -> str:
        """``f(x: int, y: float = 1.0) -> int`` from the raw annotations."""
        if self.explicit is not None:
            return f"{self.function_name}({', '.join(_fmt(t) for t in self.explicit.raw)})"
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
        """The method's part of the function's ``__doc__`` (computed once)."""
        try:
            return self._doc
        except AttributeError:
            pass
        doc = (getattr(self.implementation, "__doc__", None) or "").strip()
        body = self.describe()
        if doc:
            body += "\n\n" + "\n".join("    " + line for line in doc.splitlines())
        self._doc = body
        return body

    def __repr__(self) -> str:
        return f"<method {self.describe()} @ {self.location}>"


def _fmt(a: Any) -> str:
    if isinstance(a, str):
        return a
    if isinstance(a, type):
        return H.type_name(a)
    return repr(a).replace("typing.", "")


def short_path(path: str) -> str:
    """A path relative to the current directory when that is shorter."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if len(rel) < len(path) else path
