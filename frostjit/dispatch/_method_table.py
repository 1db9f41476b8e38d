"""The method table of one dispatched function: registrations, methods, redefinitions.

Registrations are queued as they come (``pending``) and resolved into :class:`Method` objects
at the first call or the first look at ``f.methods`` (plum's laziness, so forward references
work). A method whose signature is equivalent to an earlier one replaces it (a redefinition;
with ``warn_redefinition`` a :class:`MethodRedefinitionWarning`).
"""

from __future__ import annotations

import warnings
from typing import Any

from ._errors import MethodRedefinitionWarning
from ._resolution import Candidate
from ._signature import Method, Registration
from .repr import repr_pyfunction


class MethodList(list):
    """The methods of a dispatched function (plum's ``MethodList``), a live ``list``.

    Reading it first resolves pending registrations (as plum does), so a method replaced by a
    redefinition is no longer listed; a registration whose annotations cannot be resolved yet
    is listed with its annotations as written.
    """

    __slots__ = ("_table",)

    def __init__(self, table: MethodTable | None = None):
        super().__init__()
        self._table = table

    def _synced(self) -> None:
        if self._table is not None:
            self._table.sync()

    def __len__(self) -> int:
        self._synced()
        return list.__len__(self)

    def __iter__(self):
        self._synced()
        return list.__iter__(self)

    def __getitem__(self, i: Any) -> Any:
        self._synced()
        return list.__getitem__(self, i)

    def __repr__(self) -> str:
        self._synced()
        lines = [f"List of {list.__len__(self)} method(s):"]
        for i, m in enumerate(list.__iter__(self)):
            lines.append(f"    [{i}] {m.describe()}\n        {repr_pyfunction(m.implementation)}")
        return "\n".join(lines)

    __str__ = __repr__


class _RedefinitionIndex:
    """Finds the methods a new signature would replace without comparing it with every
    method: plain-class signatures are looked up by :meth:`Signature.fast_key`; the others
    (``Literal``, containers, promised types, ...) are compared one by one."""

    def __init__(self, methods: list[Method]):
        self.rebuild(methods)

    def rebuild(self, methods: list[Method]) -> None:
        self.by_key: dict[tuple, list[Method]] = {}
        self.others: list[Method] = []
        for m in methods:
            self.add(m)

    def add(self, m: Method) -> None:
        k = m.signature.fast_key()
        if k is None:
            self.others.append(m)
        else:
            self.by_key.setdefault(k, []).append(m)

    def equivalents(self, sig: Any) -> list[Method]:
        k = sig.fast_key()
        found = list(self.by_key.get(k, ())) if k is not None else [
            m for ms in self.by_key.values() for m in ms if m.signature.equivalent(sig)]
        found += [m for m in self.others if m.signature.equivalent(sig)]
        return found


class MethodTable:
    """Registrations and the methods they resolved to, for one dispatched function.

    Attributes
    ----------
    registrations : list of Registration
        Every live registration, in order (the function's docs list them).
    pending : list of Registration
        Not resolved yet.
    methods : MethodList
        The resolved methods, in registration order (``f.methods``).
    uses_abc : bool
        Some hint's answer can change when a class is registered with an ABC.
    """

    def __init__(self, function_name: str, warn_redefinition: bool = False,
                 lock: Any = None):
        self.function_name = function_name
        self.warn_redefinition = warn_redefinition
        self.lock = lock
        self.registrations: list[Registration] = []
        self.pending: list[Registration] = []
        #: The resolved methods (what resolution considers).
        self.active: list[Method] = []
        #: What ``f.methods`` shows: ``active``, then unresolvable registrations as written.
        self.methods = MethodList(self)
        self.by_arity: dict[int, list[Candidate]] = {}
        self.uses_abc = False
        #: Registrations whose annotations could not be resolved at the last attempt.
        self.unresolved: list[Registration] = []
        #: Called (under the lock) after pending registrations were resolved.
        self.after_resolve: Any = None
        # The shape of the live registrations, kept up to date as they come (see ``shape``).
        self._arities: dict[Any, int] = {}
        self._keywords = 0
        self._returns: bool | None = False

    # -- registration ------------------------------------------------------------------------
    def add(self, registration: Registration) -> None:
        """Queue a registration (under the function's lock)."""
        self.registrations.append(registration)
        self.pending.append(registration)
        self._count(registration, 1)

    def _count(self, r: Registration, k: int) -> None:
        n = self._arities.get(r.arity, 0) + k
        if n:
            self._arities[r.arity] = n
        else:
            del self._arities[r.arity]
        self._keywords += k if r.takes_keywords else 0

    def sync(self) -> None:
        """Resolve what can be resolved, for ``f.methods`` (a name not defined yet is listed
        as written and raises at the call)."""
        if not self.pending:
            return
        with self.lock:
            try:
                self.resolve_pending()
            except Exception:  # noqa: S110 - an unresolvable annotation raises at the call
                pass

    def resolve_pending(self) -> bool:
        """Resolve pending registrations into methods (under the lock); whether any were."""
        if not self.pending:
            return False
        pending, self.pending = self.pending, []
        methods = list(self.active)
        index = _RedefinitionIndex(methods)
        try:
            for reg in pending:
                new = reg.resolve()
                for m in new:
                    methods = self._insert(methods, m, index)
                    self._note_hints(m)
        except Exception:
            done = pending.index(reg)
            self.pending = pending[done:] + self.pending
            self.unresolved = list(self.pending)
            self._install(methods)
            raise
        self.unresolved = []
        self._install(methods)
        if self.after_resolve is not None:
            self.after_resolve()
        return True

    def _insert(self, methods: list[Method], m: Method, index: _RedefinitionIndex) -> list[Method]:
        """``methods`` with ``m`` added; a method of an equivalent signature is replaced in
        place (a redefinition, as in plum)."""
        replaced = index.equivalents(m.signature)
        if not replaced:
            methods.append(m)
            index.add(m)
            return methods
        for old in replaced:
            if self.warn_redefinition and old.implementation is not m.implementation:
                warnings.warn(
                    f"`{m!s}` (`{m.location}`) overwrites the earlier definition `{old!s}` "
                    f"(`{old.location}`).", MethodRedefinitionWarning, stacklevel=6)
        gone = {id(old) for old in replaced}
        out: list[Method] = []
        for old in methods:
            if id(old) in gone:
                if m not in out:
                    out.append(m)
                continue
            out.append(old)
        index.rebuild(out)
        return out

    def _note_hints(self, m: Method) -> None:
        sig = m.signature
        hs = sig.hints + ((sig.varargs_hint,) if sig.varargs_hint is not None else ())
        if any(h.uses_abc for h in hs) or (m.return_hint is not None and m.return_hint.uses_abc):
            self.uses_abc = True

    def _install(self, methods: list[Method]) -> None:
        self.active = methods
        self._returns = None
        shown = list(methods)
        for r in self.unresolved:
            shown.extend(r.provisional_methods())
        self.methods[:] = shown
        live = {id(m.registration) for m in methods}
        live.update(id(r) for r in self.pending)
        # Registrations whose every method was redefined are gone (as in plum); ``live`` holds
        # ids of objects alive right now, so it cannot confuse two of them.
        kept = []
        for r in self.registrations:
            if id(r) in live:
                kept.append(r)
            else:
                self._count(r, -1)
        self.registrations = kept
        self.by_arity = {}

    def reset(self) -> None:
        """Forget resolved annotations: every registration is resolved again (``clear_cache``
        with ``reregister``, ``clear_all_cache``: type mappings or promised types changed)."""
        for r in self.registrations:
            r.methods = None
        self.pending = list(self.registrations)
        self.active = []
        self._returns = None
        self.methods[:] = []
        self.by_arity = {}
        self.uses_abc = False

    def documented(self) -> list[Registration]:
        """The registrations to document, in the order of their methods (a redefinition takes
        the place of the method it replaced), then those not resolved yet."""
        out: list[Registration] = []
        seen: set[int] = set()
        for m in self.active:
            r = m.registration
            if r is not None and id(r) not in seen:
                seen.add(id(r))
                out.append(r)
        for r in self.registrations:
            if id(r) not in seen:
                seen.add(id(r))
                out.append(r)
        return out

    # -- queries -----------------------------------------------------------------------------
    def shape(self) -> tuple[int | None, bool, bool]:
        """``(arity, keywords, returns)``: the single arity of every registration (or
        ``None``), whether some can take keywords, whether some resolved method has a return
        annotation."""
        arities = self._arities
        arity = next(iter(arities)) if len(arities) == 1 else None
        kw = self._keywords > 0
        ret = self._returns
        if ret is None:
            ret = self._returns = any(m.return_hint is not None for m in self.active)
        return arity, kw, ret

    def candidates(self, n: int) -> list[Candidate]:
        """Methods whose signature accepts ``n`` positional arguments (under the lock)."""
        try:
            return self.by_arity[n]
        except KeyError:
            pass
        cands = [Candidate(m.signature, m, m.signature.expand(n))
                 for m in self.active if m.signature.accepts(n)]
        self.by_arity[n] = cands
        return cands

    def closest(self, args: tuple) -> list[Method]:
        """Up to three methods nearest to the call: arity difference plus mismatched positions."""
        scored = []
        for m in self.active:
            try:
                dist = m.signature.compute_distance(args)
            except Exception:  # noqa: BLE001 - an unresolvable hint: rank it last
                dist = 1 << 30
            scored.append((dist, len(scored), m))
        scored.sort(key=lambda t: (t[0], t[1]))
        out: list[Method] = []
        for _, _, m in scored:
            if m not in out:
                out.append(m)
            if len(out) == 3:
                break
        return out

