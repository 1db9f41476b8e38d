"""Choosing a method: the most specific matching signature, then precedence.

Resolution for a tuple of argument *types* ``K`` sorts every method into three bins by
:meth:`Hint.classify`: methods that match every value of those types (*sure*), methods that
match none (dropped), and methods whose match depends on the values (*maybe*: ``Literal``,
containers, jaxtyping, lying proxies). When no *maybe* method could change the outcome the
decision is a plain cache entry; otherwise the entry is a :class:`Deferred` that checks just
the *maybe* methods against the values at each call (and remembers hashable values).
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable, Sequence

from typing import TYPE_CHECKING

from ._call_path import compile_generated
from ._hints import DEPENDS, NEVER, Hint

if TYPE_CHECKING:  # pragma: no cover
    from ._signature import Method, Signature


class Candidate:
    """A signature of a method, expanded to a call arity."""

    __slots__ = ("signature", "method", "hints")

    def __init__(self, signature: Signature, method: Method, hints: tuple[Hint, ...]):
        self.signature = signature
        self.method = method
        self.hints = hints

    @property
    def precedence(self) -> int:
        return self.signature.precedence


def strictly_more_specific(a: Candidate, b: Candidate) -> bool:
    return a.signature.le(b.signature) and not b.signature.le(a.signature)


def best(cands: Sequence[Candidate]) -> Candidate | list[Candidate]:
    """The winner among matching candidates, or the list of tied candidates (ambiguity).

    The most specific candidates are kept (no other candidate is strictly more specific);
    among several, the highest precedence wins; a tie on precedence is an ambiguity.
    """
    if len(cands) == 1:
        return cands[0]
    minimal = [c for c in cands if not any(d is not c and strictly_more_specific(d, c) for d in cands)]
    if len(minimal) == 1:
        return minimal[0]
    top = max(c.precedence for c in minimal)
    winners = [c for c in minimal if c.precedence == top]
    if len(winners) == 1:
        return winners[0]
    return winners


def beats(w: Candidate, m: Candidate) -> bool:
    """Whether ``w`` wins over ``m`` whenever both match."""
    if not w.signature.le(m.signature):
        return False
    return not m.signature.le(w.signature) or w.precedence > m.precedence


def classify_candidates(cands: Sequence[Candidate], types: tuple[type, ...]):
    """Split candidates into ``sure`` and ``maybe`` (with the positions that depend on values)."""
    sure: list[Candidate] = []
    maybe: list[tuple[Candidate, tuple[int, ...]]] = []
    for c in cands:
        depends = []
        for i, (h, T) in enumerate(zip(c.hints, types)):
            k = h.classify(T)
            if k == NEVER:
                break
            if k == DEPENDS:
                depends.append(i)
        else:
            if depends:
                maybe.append((c, tuple(depends)))
            else:
                sure.append(c)
    return sure, maybe


class Deferred:
    """A cache entry whose decision depends on argument values, not only their types.

    Calling it selects the method for the actual values (checking only the value-dependent
    methods), then calls it. Decisions for hashable, value-keyable arguments (``Literal``
    strings, ``type[X]`` classes) are remembered, so repeated values skip the checks.
    """

    __slots__ = ("sure", "maybe", "positions", "keyable", "values", "pick")

    #: Bound on remembered values per type key, so a stream of distinct values cannot grow memory.
    MAX_VALUES = 1024

    def __init__(self, sure, maybe, types: tuple[type, ...], pick: Callable[[list[Candidate], tuple], Any]):
        self.sure = sure
        self.maybe = maybe
        self.pick = pick
        positions = sorted({i for _, pos in maybe for i in pos})
        self.positions = tuple(positions)
        self.keyable = all(c.hints[i].value_keyable(types[i]) for c, pos in maybe for i in pos)
        self.values: dict[Any, Any] = {}

    def select(self, args: tuple) -> Callable:
        """The callable that handles these argument values."""
        vkey = None
        if self.keyable:
            pos = self.positions
            vkey = args[pos[0]] if len(pos) == 1 else tuple([args[i] for i in pos])
            try:
                return self.values[vkey]
            except KeyError:
                pass
            except TypeError:  # unhashable value
                vkey = None
        matched = list(self.sure)
        for c, pos in self.maybe:
            hints = c.hints
            if all(hints[i].match(args[i]) for i in pos):
                matched.append(c)
        target = self.pick(matched, args)
        if vkey is not None:
            if len(self.values) >= self.MAX_VALUES:
                self.values.clear()
            self.values[vkey] = target
        return target

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.select(args)(*args, **kw)

    @property
    def _dispatch_select(self) -> Callable:
        return self.select

    def entry(self, arity: int | None = None) -> Callable:
        """The cache entry: a function that tries remembered values first (the common case).

        ``arity``: when the call path always calls entries with exactly that many positional
        arguments and no keywords (the fixed-arity path), the entry is generated code with
        that many positional parameters: no ``*args``/``**kw`` packing, so CPython can
        specialize both calls. Otherwise a generic ``(*args, **kw)`` closure.
        """
        if not self.keyable or len(self.positions) != 1:
            return self
        values, select, i = self.values, self.select, self.positions[0]
        if arity is not None and 1 <= arity <= 8 and i < arity:
            code = _value_entry_code(arity, i)
            fn = types.FunctionType(code.replace(), {"decided_by_value": values, "select": select,
                                                     "__builtins__": __builtins__})
            fn._dispatch_select = select
            return fn

        def deferred_call(*args: Any, **kw: Any) -> Any:
            try:
                t = values[args[i]]
            except (KeyError, TypeError):
                t = select(args)
            return t(*args, **kw)

        deferred_call._dispatch_select = select
        return deferred_call


@functools.lru_cache(maxsize=None)
def _value_entry_code(arity: int, i: int) -> types.CodeType:
    """Code of a value-keyed entry for ``arity`` positional arguments, keyed on argument ``i``.

    Each entry gets its own copy (``code.replace()``) so CPython's per-instruction caches for
    ``values``/``select`` (globals of that entry) do not thrash between entries.
    """
    names = ", ".join(f"a{k}" for k in range(arity))
    # Lookup and call in one expression; a KeyError/TypeError raised in this frame (not by
    # the implementation: no deeper traceback entry) is a new or unhashable value.
    src = (f"def call_by_value({names}, /):\n"
           f"    try:\n"
           f"        return decided_by_value[a{i}]({names})\n"
           f"    except (KeyError, TypeError) as error:\n"
           f"        if error.__traceback__.tb_next is not None:\n"
           f"            raise\n"
           f"    return select(({names},))({names})\n")
    return compile_generated(src, f"a decision by the value of argument {i} of {arity}", {})
