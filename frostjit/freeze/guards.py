"""Guards: the Python state a recording read (:mod:`.readset`), checked before every replay.

:func:`build` turns a finished :class:`~.readset.ReadSet` into a :class:`GuardSet`:

1. atoms the layout key already covers are dropped (entries of an input object's walked
   ``__dict__``, items of an input dict or list, the frozen function's own globals and cells);
2. atoms whose holder was *fresh* (created during the call and referenced by nothing else once it
   returned: ``p = P(); helper(p)``) are dropped: the code builds them again every call;
3. writes to state outside the inputs, and values the read set could not watch, make the
   recording a fallback (the plain call, with one :class:`FreezeWarning`);
4. the rest become one generated function ``check(flat) -> None | index`` (straight-line code,
   registered through :mod:`frostjit._dump` so tracebacks show it): a global ``G.get('K', MISS) is V``,
   a class attribute ``Cfg.__dict__.get('scale', MISS)`` compared by type and bits, a closure
   cell, an instance entry reached from an input (``conts[3].__dict__``), the contents of a list
   or dict, a NumPy array's data, the ABC cache token.

Values are compared as the layout key compares them: numbers by type and bits
(:func:`~.values.value_key`), tuples element by element, objects by identity (held weakly where
the type allows, so a guard does not keep a rebound array alive; a guard whose object died can
never hold again, and its recording is dropped).  The cost per guard is one dictionary or
attribute read and an ``is`` test (about 30 ns).
"""
from __future__ import annotations

import decimal
import functools
import gc
import operator
import os
import sys
import types
import weakref

import numpy as np

from .._dump import register_source
from ..tree.kinds import PROTOCOL, STRUCT
from .code import _is_library_module
from .layout import ValueNode, entries, hidden_attrs, hidden_changes, node_of, slot_value
from .lookup import ABSENT, Atom
from .readset import abc_token, decimal_context
from .records import ConstRoot, ContainerRoot, NumpyRoot
from .symbolic import Sym
from .values import _ATOM_TYPES, C_BUFFERS, contents, deep_contents, snap

MISS = object()
_BULK_MIN = 4           # entries of one dict checked in one C-level pass from this many on
_UNPACK_MAX = 256       # up to this many, unpacked into locals and tested with `is` (bigger: map(is_))


def np_same(a, b) -> bool:
    """Same dtype, shape and data (NaN equal to NaN)."""
    if type(a) is not type(b) or a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def _raw_dict(m):
    """The dict behind a mappingproxy (a class's ``__dict__``), or ``m`` itself."""
    if type(m) is types.MappingProxyType:
        for r in gc.get_referents(m):
            if type(r) is dict:
                return r
    return m


def _weak(v):
    try:
        return weakref.ref(v)
    except TypeError:
        return None


def _library_entry(a) -> bool:
    """Whether atom ``a`` is a library's (or frostjit's) module entry holding a function, class,
    module or other callable (a ufunc, NumPy's dispatchers): held strongly and compared by
    identity (the module holds it as long as it is not replaced; r13: ``np.sin = f`` between
    calls replayed the recording of the old one)."""
    o = a.owner
    return isinstance(o, types.ModuleType) and a.holder is o.__dict__ and _is_library_module(o) \
        and (callable(a.value) or isinstance(a.value, types.ModuleType))


def _strong_ok(v) -> bool:
    """Objects held strongly by a guard (cheap ``is`` test): modules, classes, functions, and
    values that do not hold arrays alive."""
    return isinstance(v, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
                          types.CodeType, types.MethodType)) or isinstance(v, _ATOM_TYPES)


class GuardSet:
    """The generated guard check of one recording and the atoms behind it."""

    def __init__(self, atoms: list, roots: list, name: str, leaf_of: dict | None = None):
        self.atoms = atoms
        self.roots = roots          # per atom: a ConstRoot, ContainerRoot or NumpyRoot (records.py)
        self.name = name
        # atom index -> where the value read sits among the recording call's walked inputs
        # (``flat.leaves[k]``, ``conts[i]``: also walked, e.g. returned by state_fn): the guard
        # asks for the current call's input there, not for the recording's object (a new
        # array or object there each call would trace every call).
        self.input_of = leaf_of or {}
        self.source = ""
        self.check = self._generate()

    def __len__(self) -> int:
        return len(self.atoms)

    # -- code generation ---------------------------------------------------------------------
    def _generate(self):
        self.weaks = []
        ns = {"MISS": MISS, "SNAP": snap, "CONT": contents, "DEEP": deep_contents, "NPEQ": np_same, "ABC": abc_token,
              "WEAKS": self.weaks, "TYPE": type, "IS": operator.is_, "ALL": all, "MAP": map}
        L = ["def check(flat):", "    conts = flat.containers; npin = flat.numpy", "    try:"]
        I = "        "
        holders = {}            # id(constant holder) -> its name in the namespace
        bulk = {}               # id(holder) -> [atom indices checked in one C-level pass]
        one = set()             # holders checked in one pass from one entry on: modules' dicts
        for i, (a, root) in enumerate(zip(self.atoms, self.roots)):
            if type(root) is ConstRoot and a.kind == "entry" and a.value is not ABSENT and type(a.value) is not tuple:
                lib = _library_entry(a)
                if lib or _strong_ok(a.value):
                    bulk.setdefault(id(root.holder), []).append(i)
                    if lib or isinstance(a.owner, types.ModuleType):
                        one.add(id(root.holder))
        bulk = {k: v for k, v in bulk.items() if len(v) >= _BULK_MIN or k in one}
        done = set()
        for i, (a, root) in enumerate(zip(self.atoms, self.roots)):
            if i in done:
                continue
            if type(root) is ConstRoot:
                h = holders.get(id(root.holder))
                if h is None:
                    h = holders[id(root.holder)] = f"H{len(holders)}"
                    ns[h] = root.holder
                group = bulk.get(id(root.holder)) if a.kind == "entry" else None
                if group is not None and i in group:
                    # Many entries of one dict (a module's globals, a class's attributes): one
                    # itemgetter and one identity pass in C; the exact checks only if that fails.
                    j = len(done)
                    ns[f"IG{j}"] = operator.itemgetter(*[self.atoms[g].key for g in group])
                    # (a class's mappingproxy reads through to its dict: read the dict itself)
                    ns[f"D{j}"] = _raw_dict(root.holder)
                    if len(group) < _BULK_MIN:
                        # A few entries of a module (``np.sin``, ``math.sqrt``): subscripted and
                        # tested with `is` (6 opcodes each, fewer than an itemgetter's unpacking;
                        # a deleted entry raises: the guard fails)
                        tests = []
                        for k, g in enumerate(group):
                            ns[f"E{j}_{k}"] = self.atoms[g].value
                            ns[f"K{j}_{k}"] = self.atoms[g].key
                            tests.append(f"D{j}[K{j}_{k}] is not E{j}_{k}")
                        sub = [f"{I}if {' or '.join(tests)}:"]
                    elif len(group) <= _UNPACK_MAX:
                        # Unpacked into locals and tested with `is` in bytecode: ~7 ns less per entry
                        # than all(map(operator.is_, ...)) (the guard cost of issue 9's benchmark).
                        xs = [f"X{j}_{k}" for k in range(len(group))]
                        for k, g in enumerate(group):
                            ns[f"E{j}_{k}"] = self.atoms[g].value
                        test = " and ".join(f"{x} is E{j}_{k}" for k, x in enumerate(xs))
                        sub = [f"{I}{', '.join(xs)}, = IG{j}(D{j})", f"{I}if not ({test}):"]
                    else:
                        ns[f"E{j}"] = tuple(self.atoms[g].value for g in group)
                        sub = [f"{I}if not ALL(MAP(IS, IG{j}(D{j}), E{j})):"]
                    for g in group:
                        sub += self._one(g, self.atoms[g], h, ns, I + "    ")
                        done.add(g)
                    L += sub
                    continue
            elif type(root) is ContainerRoot:
                h = f"conts[{root.index}].__dict__" if root.via_dict else f"conts[{root.index}]"
            else:
                h = f"npin[{root.index}]"
            L += self._one(i, a, h, ns, I)
        L.append("    except Exception:")
        L.append("        return -1")
        L.append("    return None")
        body = "\n".join(L[3:])
        if "conts[" not in body and "npin[" not in body:
            del L[1]            # (no input paths: nothing to bind)
        self.source = "\n".join(L) + "\n"
        fname = register_source(f"freeze guards {self.name}", self.source)
        exec(compile(self.source, fname, "exec"), ns)
        return ns["check"]

    def _one(self, i, a, h, ns, I) -> list:
        """The lines checking atom ``i`` read from holder expression ``h``."""
        k = a.kind
        if k == "entry":
            ns[f"K{i}"] = a.key
            if a.value is ABSENT:
                return [f"{I}if K{i} in {h}: return {i}"]
            acc = f"{h}.get(K{i}, MISS)"
        elif k == "attr" and a.key == "__dict__" and type(a.value) is dict:
            # which dict an object has (lookup.read_attr: only for classes without their own
            # __getattribute__): one attribute load and an identity test
            ns[f"V{i}"] = a.value
            return [f"{I}if {h}.__dict__ is not V{i}: return {i}"]
        elif k == "attr":
            acc = f"getattr({h}, {a.key!r}, MISS)"
            if a.value is ABSENT:
                return [f"{I}if {acc} is not MISS: return {i}"]
        elif k == "cell":
            acc = f"{h}.cell_contents"
        elif k == "deref":
            # a weak reference's referent, a context variable's value (``.get``), NumPy's
            # error state or print options (compared by value: a new dict each call)
            acc = f"{h}.get(ABSENT)" if a.key == "get" else f"{h}.cache_info()[1::2]" if a.key == "cache" \
                else f"{h}()"
            ns["ABSENT"] = ABSENT
            if type(a.value) is dict:
                ns[f"V{i}"] = a.value
                return [f"{I}if {acc} != V{i}: return {i}"]
        elif k == "item":
            acc = f"{h}[{a.key!r}]"
        elif k == "contents":
            # (as the code first touched it: a call must start from the state the recording
            # started from, which is not the state it left when it mutated the container)
            if a.key == "deep":       # the containers inside too (passed whole to C code)
                ns[f"S{i}"] = a.value
                return [f"{I}if DEEP({h}) != S{i}: return {i}"]
            ns[f"S{i}"] = a.value if a.value is not None else contents(a.holder)
            return [f"{I}if CONT({h}) != S{i}: return {i}"]
        elif k == "numpy":
            ns[f"S{i}"] = a.value if a.value is not None else np.array(a.holder, copy=True)
            return [f"{I}if not NPEQ({h}, S{i}): return {i}"]
        elif k == "class":
            # ``obj.__class__ = Other`` between calls; the object held weakly (its death drops
            # the recording, as for any object a guard expects)
            ns[f"V{i}"] = a.value
            if not isinstance(a.holder, weakref.ref):
                return [f"{I}if TYPE({h}) is not V{i}: return {i}"]
            ns["WEAKS"].append(a.holder)
            return [f"{I}if TYPE({h}()) is not V{i}: return {i}"]
        elif k == "alias":
            ns[f"S{i}"] = a.value
            ns[f"T{i}"] = a.holder
            return [f"{I}if T{i}(flat) != S{i}: return {i}"]
        else:   # token: the result of a getter of process state (the ABC cache token, fj.thread_count)
            ns[f"S{i}"] = a.value
            if a.holder is abc_token:
                return [f"{I}if ABC() != S{i}: return {i}"]
            ns[f"T{i}"] = a.holder
            return [f"{I}if T{i}() != S{i}: return {i}"]
        where = self.input_of.get(i)
        if where is not None:
            return [f"{I}if {acc} is not {where}: return {i}"]
        return [f"{I}x = {acc}", f"{I}if {self._differs('x', a.value, ns, i)}: return {i}"]

    @staticmethod
    def _differs(x: str, v, ns, i) -> str:
        """The condition that ``x`` is not the value ``v`` a recording saw."""
        t = type(v)
        if v is None or t is bool:
            return f"{x} is not {v!r}"
        if isinstance(v, _ATOM_TYPES) or t is tuple or t is frozenset:
            # the same object (the common case) passes at once; an equal one by type and bits
            ns[f"V{i}"] = v
            ns[f"S{i}"] = snap(v)
            return f"{x} is not V{i} and SNAP({x}) != S{i}"
        if _strong_ok(v):
            ns[f"V{i}"] = v
            return f"{x} is not V{i}"
        w = _weak(v)
        if w is None:
            ns[f"V{i}"] = v
            return f"{x} is not V{i}"
        ns[f"W{i}"] = w
        ns["WEAKS"].append(w)
        return f"{x} is not W{i}() or {x} is None"

    # -- diagnostics ---------------------------------------------------------------------------
    def current(self, flat, i):
        """The value atom ``i`` sees now (``ABSENT`` when missing), for messages."""
        a, root = self.atoms[i], self.roots[i]
        try:
            if type(root) is ConstRoot:
                h = root.holder
            elif type(root) is ContainerRoot:
                h = flat.containers[root.index]
                h = h.__dict__ if root.via_dict else h
            else:
                h = flat.numpy[root.index]
            k = a.kind
            if k == "entry":
                return h.get(a.key, ABSENT)
            if k == "attr":
                return getattr(h, a.key, ABSENT)
            if k == "cell":
                return h.cell_contents
            if k == "item":
                return h[a.key]
            if k == "deref":
                return h.get(ABSENT) if a.key == "get" else tuple(h.cache_info()[1::2]) if a.key == "cache" \
                    else h()
            if k == "token":
                return a.holder()
            if k == "alias":
                return a.holder(flat)
            if k == "class":
                return type(h() if isinstance(h, weakref.ref) else h)
            return h
        except Exception:  # noqa: BLE001
            return ABSENT

    def failed(self, flat, i) -> int:
        """The index of the first failing atom (``i`` from ``check``, or -1: search)."""
        if i >= 0:
            return i
        for j in range(len(self.atoms)):
            try:
                if not self._holds(flat, j):
                    return j
            except Exception:  # noqa: BLE001
                return j
        return 0

    def _holds(self, flat, j) -> bool:
        a = self.atoms[j]
        now = self.current(flat, j)
        if a.kind in ("contents", "numpy"):
            return False
        if a.value is ABSENT:
            return now is ABSENT
        return now is a.value or snap(now) == snap(a.value)

    def explain(self, flat, i) -> str:
        """``Cfg.scale read at model.py:12 changed from 2.0 to 3.0``."""
        j = self.failed(flat, i)
        a = self.atoms[j]
        where = a.where or "?"
        try:
            path, line = where.rsplit(":", 1)
            where = f"{os.path.basename(path)}:{line}"
        except ValueError:
            pass
        if a.kind == "contents":
            return f"the contents of {a.label} read at {where} changed"
        if a.kind == "numpy":
            return f"the data of the NumPy array {a.label} read at {where} changed"
        if a.kind == "token" and a.holder is abc_token:
            return f"{a.label} changed (an ABC.register() since the recording)"
        now = self.current(flat, j)
        old = "absent" if a.value is ABSENT else _short(a.value)
        new = "absent" if now is ABSENT else _short(now)
        if a.value is not ABSENT and now is not ABSENT and old == new:
            new += " (another object)"
        return f"{a.label} read at {where} changed from {old} to {new}"

    def dead(self) -> bool:
        """Whether an object a guard holds weakly died (the guard can never hold again)."""
        return any(w() is None for w in self.weaks)

    def describe(self, flat=None) -> list:
        """One line per guard: what it watches, where it was read, the value recorded (and the
        value now, given a call's ``flat``), for FreezeMismatchError."""
        out = []
        for i, a in enumerate(self.atoms):
            where = _short_where(a.where)
            if a.kind in ("contents", "numpy") or a.holder is abc_token:
                out.append(f"{a.label} (contents) read at {where}")
                continue
            line = f"{a.label} read at {where}: {'absent' if a.value is ABSENT else _short(a.value)}"
            if flat is not None:
                now = self.current(flat, i)
                line += f" (now {'absent' if now is ABSENT else _short(now)})"
            out.append(line)
        return out


def _short(v) -> str:
    node = getattr(v, "_node", None)
    if node is not None and getattr(node, "op", "data") not in ("data", "literal"):
        # an unevaluated JIT array (perhaps a symbolic loop's variable, which has no value of
        # its own): explaining a guard must not launch a kernel
        return f"{type(v).__name__} of {node.size} lanes (not evaluated)"
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


# ------------------------------------------------------------------------------ building
_BASE = None


def _baseline() -> int:
    """References ``sys.getrefcount`` reports for an object held once by a dict (calibrated)."""
    global _BASE
    if _BASE is None:
        probe = {0: type("Probe", (), {})()}
        _BASE = _refs(probe, 0)
    return _BASE


def _refs(keep, i) -> int:
    return sys.getrefcount(keep[i])


def _ours(rs) -> dict:
    """How many strong references the read set itself holds to each object."""
    ours = {}

    def inc(o):
        ours[id(o)] = ours.get(id(o), 0) + 1
    for a in rs.atoms.values():
        inc(a.holder)
        inc(a.owner)
        inc(a.value)
        inc(a)      # (atoms are referenced by the dict)
    for w in rs.writes:
        inc(w[0])
    return ours


def fresh_ids(rs, candidates) -> set:
    """Ids of the objects among ``candidates`` that nothing outside the read set can reach now:
    referenced by nothing but the read set, or (transitively) only by the read set and such
    objects (a per-call lambda's closure cells and what they hold, a fresh object's attributes).

    Sound because an object only fresh objects reference is garbage once they are: no later call
    can reach it, so what the recording read there needs no guard (a guard would keep it alive).
    """
    base = _baseline()
    ours = _ours(rs)
    keep = rs.keep
    out = {i for i in candidates if i in keep and _refs(keep, i) - ours.get(i, 0) <= base}
    if not out or all(i in out for i in candidates if i in keep):
        return out
    # Walk what the fresh objects reference; an object whose every reference comes from the
    # read set or from objects already known unreachable is unreachable too.  Each object
    # looked at sits in ``pool`` once, so its count is measured the way ``_refs`` measures
    # ``keep``'s (``base`` = held by one dict), less the read set's own references.
    pool = {}
    inbound: dict = {}
    frontier = [keep[i] for i in out]
    done = set(out)
    while frontier:
        for o in frontier:
            for r in gc.get_referents(o):
                if isinstance(r, _ATOM_TYPES) or isinstance(r, (type, types.ModuleType, types.CodeType)):
                    continue
                i = id(r)
                pool.setdefault(i, r)
                inbound[i] = inbound.get(i, 0) + 1
        o = r = None        # (no temporary reference left while counting)
        frontier = []
        for i in list(pool):
            if i in done:
                continue
            held = 1 + (i in keep) + ours.get(i, 0) + inbound[i]
            if _refs(pool, i) - base + 1 <= held:
                done.add(i)
                frontier.append(pool[i])
    return {i for i in candidates if i in done}


def build(rs, flat, covered, top_globals, top_names, top_cells, describer_ids, name, uploaded=(), before=None,
          hidden=None):
    """The guards of a finished recording, or a fallback reason.

    ``before``: the entries of each container of ``flat`` before the call (``None`` for a tuple),
    what the next call's walk will see there.

    ``uploaded``: how many times the recording uploads each NumPy input (by index; re-read by
    every replay): passing one on as a whole (``x + a``) needs no guard on its data when every
    pass was an upload; reading it in Python (``a.sum()``, ``max(a)`` beside ``Float(a)``) does.
    ``hidden``: ``(before, outputs)``, the non-field attributes of each ``DRJIT_STRUCT`` object
    and dataclass among the inputs before the call (:func:`.layout.hidden_attrs`) and the objects
    the outputs reach (``{id: object}``).
    ``covered(owner, atom) -> root | None | False``: the input path of an owner reached through
    the inputs (a :class:`~.records.ContainerRoot` / :class:`~.records.NumpyRoot`), ``False`` when the layout key already
    covers the atom, ``None`` for objects outside the inputs.  Returns ``(GuardSet | None,
    fallback reason | None, [writes to state outside the inputs]])``: a replay does not repeat
    those writes (Python side effects outside the inputs happen when tracing); a value written
    there and read back is guarded like any other read.
    """
    if rs.fallback is not None:
        what, why, where = rs.fallback
        return None, f"uses {why} ({what}{' at ' + _short_where(where) if where else ''})", []
    rs.loose_atoms()        # attributes read on values no chain named (make().k)
    for c in flat.containers:           # the DRJIT_STRUCTs the walk read (fj.tree reads them anew)
        if node_of(type(c)).kind is STRUCT:
            rs.struct_class(type(c), type(c).__qualname__, None)
    if hidden is not None:
        _copied_attributes(rs, flat, *hidden)
    owners = {id(a.owner) for a in rs.atoms.values()} | {id(w[0]) for w in rs.writes}
    fresh = fresh_ids(rs, owners | {i for i, _, _ in rs.iterators})
    for i, label, where in rs.iterators:
        if i not in fresh:
            # next() on an iterator the call did not make: its position is state no guard sees
            return None, f"uses an iterator made before the call ({label} at {_short_where(where)})", []
    hidden_writes = []
    through_inputs = _inside_hidden_attributes(hidden[0] if hidden is not None else None)
    for owner, key, label, where in rs.writes:
        if id(owner) in fresh or covered(owner, None) is not None:
            continue
        if (owner is top_globals and key in top_names) or any(owner is c for c in top_cells):
            continue
        if id(owner) in describer_ids and id(owner) in rs.made:
            continue        # an object made during the call and returned (rebuilt by every replay)
        if id(owner) in through_inputs:
            # state of the caller's objects (``s.cache["y"] = x * 2``, ``s.inner.y = ...`` in a
            # non-field attribute of an input), which a replay would not write (r16: stale)
            return None, (f"writes into {label} (at {_short_where(where)}), inside an attribute of an input "
                          "that is not walked (not a field), which a replay does not repeat"), []
        hidden_writes.append(f"{label} at {_short_where(where)}")
    atoms = []
    roots = []
    rewritten = _rewritten_attributes(flat, hidden[0] if hidden is not None else None)
    for a in rs.atoms.values():
        if id(a.owner) in fresh or (id(a.owner) in describer_ids and id(a.owner) in rs.made):
            continue
        if a.kind == "entry" and id(a.holder) in rewritten and a.key in rewritten[id(a.holder)]:
            # a non-field attribute of an input the call wrote (and a replay writes back), read
            # after the write: a call must start from the state the recording started from
            # (r16: the value written was guarded, so the next call traced again)
            a.value = rewritten[id(a.holder)][a.key]
        if a.kind == "entry" and a.holder is top_globals and a.key in top_names:
            continue
        if a.kind == "cell" and any(a.holder is c for c in top_cells):
            continue
        root = covered(a.owner, a)
        if root is False:
            continue
        if a.kind == "numpy" and a.key == "passed" and type(root) is NumpyRoot and \
                rs.np_passes[id(a.holder)] - rs.np_forwarded[id(a.holder)] <= uploaded.get(root.index, 0):
            continue    # every pass was an upload (re-read by every replay), none went elsewhere (max(a))
        if root is None:
            root = ConstRoot(a.holder)
        atoms.append(a)
        roots.append(root)
    if rs.dispatch or rs.abc:
        atoms.append(Atom("token", abc_token, None, abc_token(), None, "abc.get_cache_token()", None))
        roots.append(ConstRoot(None))
    if rs.uses_decimal or any(isinstance(v, decimal.Decimal) for v in flat.leaves):
        # Decimal arithmetic reads the thread's context in C: a replay must find the settings
        # the recording ran with (as when it started)
        atoms.append(Atom("token", decimal_context, None, rs.decimal_context, None,
                          "decimal.getcontext()'s settings", None))
        roots.append(ConstRoot(None))
    # An array or object read through a hidden attribute of an input (a DRJIT_STRUCT's or a
    # dataclass's non-field attribute) that is also among the walked inputs (state_fn returns
    # it): guarded as "is the current call's input there" (the recording bound that input's
    # nodes), not as the recording's object.  Only through the inputs: a constant holder (a
    # closure cell of a function made during the call) is not the current call's holder.
    walked = {id(c): f"conts[{k}]" for k, c in enumerate(flat.containers)}
    walked.update((id(v), f"flat.leaves[{k}]") for k, v in enumerate(flat.leaves))
    input_of = {i: walked[id(a.value)] for i, (a, root) in enumerate(zip(atoms, roots))
                if type(root) is ContainerRoot and a.kind in ("entry", "attr", "item")
                and id(a.value) in walked and not isinstance(a.value, _ATOM_TYPES)
                and type(a.value) not in (tuple, frozenset)}
    for ci, names in _hidden_names_touched(rs, flat, hidden[0] if hidden is not None else None):
        # the call changed (or could have: ``vars(s).pop("tmp", None)``, ``del s.tmp`` in a
        # ``try``) which non-field attributes an input has, in C where no read is seen: a replay
        # must find the ones the recording started from (r16: stale, or a write-back that raised)
        fn = functools.partial(_hidden_names, ci)
        atoms.append(Atom("alias", fn, None, names, None,
                          f"which attributes of {type(flat.containers[ci]).__qualname__} that are not fields it has",
                          None))
        roots.append(ConstRoot(None))
    if rs.uses_is:
        # The code compared identities (``x is SENT``): whether an input is one of the hidden
        # objects it read decides the outcome, and the layout key does not say (it keys the
        # inputs' types and sizes).  One guard compares which inputs are which of those objects.
        # (only objects of a type some input has: no other can be one of them)
        kinds = {type(o) for o in flat.leaves} | {type(o) for o in flat.containers}
        hid = {}
        for a, root in zip(atoms, roots):
            v = a.value
            if a.kind in ("entry", "item", "cell", "attr", "deref") and type(root) is ConstRoot \
                    and type(v) in kinds and not isinstance(v, _NOT_IDENTITIES):
                hid.setdefault(id(v), len(hid))
        if hid:
            fn = _aliasing(hid)
            atoms.append(Atom("alias", fn, None, fn(flat), None,
                              "which inputs are objects the code read elsewhere (an `is` comparison)", None))
            roots.append(ConstRoot(None))
        # Python values among the inputs are keyed by value, so which of them are the same object
        # (``mode is TRAIN`` for an equal string made at run time, ``a is b`` for two equal ints)
        # is guarded too: one pattern of identities over them and the hidden values read (r14)
        seen = {}
        for a, root in zip(atoms, roots):
            if a.kind in ("entry", "item", "cell", "attr", "deref") and type(root) is ConstRoot \
                    and _by_value(a.value):
                seen.setdefault(id(a.value), len(seen))
        fn, pattern = _value_identities(seen, flat, before)
        if fn is not None:
            atoms.append(Atom("alias", fn, None, pattern, None,
                              "which Python values among the inputs are the same objects (an `is` comparison)", None))
            roots.append(ConstRoot(None))
    gs = GuardSet(atoms, roots, name, input_of) if atoms else None
    if gs is not None:
        gs.hidden_writes = hidden_writes
    return gs, None, hidden_writes


# (tuples and frozensets are keyed by contents, so an input equal to a hidden one shares its
# key: whether it *is* that one is guarded too; r13, ``t is CFG`` replayed for an equal tuple)
_NOT_IDENTITIES = _ATOM_TYPES + (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                                  types.MethodType)


def _by_value(v) -> bool:
    """A Python value keyed by value whose identity the code may still test (not a singleton)."""
    return isinstance(v, _BY_VALUE) and v is not None and v is not True and v is not False


_BY_VALUE = _ATOM_TYPES + (decimal.Decimal,)


def _entry_getter(c, key):
    """``get(c)``: entry ``key`` of container ``c`` as the walk reads it, cheaply for the usual kinds."""
    if type(c) in (tuple, list, dict):
        return operator.itemgetter(key)
    if hasattr(type(c), "__fj_traverse__") and not hasattr(type(c), "__fj_traverse_attrs__"):
        return lambda c: c.__fj_traverse__()[key]        # (the function's globals and cells views)
    if key in (_instance_dict(c) or ()):
        return lambda c: object.__getattribute__(c, "__dict__")[key]
    return lambda c: dict(entries(c))[key]


def _value_identities(seed: dict, flat, before=None):
    """``(idents, pattern)``: ``idents(flat)`` gives, for each Python value among the inputs'
    entries (walk order), the number of the first of them, or of the hidden value (``seed``: ids
    -> number), that is the same object; ``pattern`` is what it gave for the recording call
    ``flat``, whose containers held ``before`` before the call (``None``: no such values).
    (Ids only, as :func:`_aliasing`; the places are read directly: the layout key fixes them.)"""
    places = []
    seen = dict(seed)
    pattern = []
    for k, c in enumerate(flat.containers):
        es = before[k] if before is not None and before[k] is not None else entries(c)
        for key, v in es:
            if type(v) is Sym:
                v = v.value         # (a parameter while recording: the number it stands for)
            if _by_value(v):
                places.append((k, _entry_getter(c, key)))
                pattern.append(seen.setdefault(id(v), len(seen)))
    if not places:
        return None, None

    def idents(flat):
        seen = dict(seed)
        conts = flat.containers
        out = []
        for k, get in places:
            v = get(conts[k])
            if type(v) is Sym:
                v = v.value
            out.append(seen.setdefault(id(v), len(seen)))
        return tuple(out)
    return idents, tuple(pattern)


def _aliasing(hid: dict):
    """``alias(flat)``: which of a call's input arrays and objects are which of the hidden
    objects ``hid`` (ids -> index) names.  (Ids only: a guard must not keep them alive; an id
    reused by a new object can only make the guard fail, and the call trace again.)"""
    get = hid.get

    def alias(flat):
        out = [(k, j) for k, o in enumerate(flat.leaves) if (j := get(id(o))) is not None]
        out += [(-1 - k, j) for k, o in enumerate(flat.containers) if (j := get(id(o))) is not None]
        return tuple(out)
    return alias


def covering(flat, before=None):
    """The ``covered`` function of :func:`build` for one call's inputs: how a guard reaches
    an object through the inputs (``conts[ci]``), or that the layout key already covers it.

    ``before``: the entries of each container before the call (:func:`.layout.entries`), what
    the walk keyed; a protocol child the function replaced was keyed by its old value."""
    cont_index = {id(c): i for i, c in enumerate(flat.containers)}
    np_index = {id(a): k for k, a in enumerate(flat.numpy)}
    # the instance dicts of the walked objects: a chain through ``vars(o)`` owns what it reads
    # by ``o.__dict__``, which is ``o``'s (keyed by the walk: a parameter's read there is the
    # parameter, not a value to guard)
    dict_index = {}
    for i, c in enumerate(flat.containers):
        d = _instance_dict(c)
        if type(d) is dict:
            dict_index.setdefault(id(d), i)

    def covered(owner, atom):
        i = id(owner)
        k = np_index.get(i)
        if k is not None:
            return NumpyRoot(k)
        ci = cont_index.get(i)
        if ci is None:
            ci = dict_index.get(i)
            if ci is None:
                return None
            if atom is None:
                return ContainerRoot(ci, True)
            if atom.holder is not owner:
                return None
        if atom is None:
            return ContainerRoot(ci, False)
        c = flat.containers[ci]
        node = node_of(type(c))      # the walk read c's children through it: those are keyed
        if atom.kind == "entry":
            if atom.holder is c:
                return False            # an entry of an input dict: walked
            if _walked_attribute(node, atom.key):
                return False
            if node.kind is PROTOCOL and node.fields is None and \
                    _walked_by_protocol(c, atom.value, before[ci] if before is not None else None):
                return False            # what __fj_traverse__ hands out is walked (keyed) already
            return ContainerRoot(ci, True)
        if atom.kind in ("item", "contents") and atom.holder is c:
            # (the walk keyed a container's items; of a ctypes object it saw only the __dict__)
            return ContainerRoot(ci, False) if isinstance(c, C_BUFFERS) else False
        if atom.kind == "contents" and atom.holder is _instance_dict(c):
            # an input object handed to library code as a whole: the walk keyed what it walks
            # (its fields hold this call's arrays: a guard on their identity would fail every call)
            return False
        if atom.kind == "class" or (atom.kind == "attr" and (atom.key == "__dict__" or _walked_attribute(node, atom.key))):
            return False                # the class (the layout key's type); a slot the walk read
        if atom.kind in ("item", "contents") and atom.holder is not c:
            # read in a part of the owner that the walk reached as a container of its own (a
            # walked partial's keywords dict): the walk keyed its items.  (A guard rooted at the
            # owner would read the owner's contents, never equal: a trace every call.)
            hi = cont_index.get(id(atom.holder))
            if hi is not None:
                return ContainerRoot(hi, False) if isinstance(atom.holder, C_BUFFERS) else False
        return ContainerRoot(ci, False)
    return covered


def _rewritten_attributes(flat, before) -> dict:
    """``{id(instance dict): {name: value before the call (ABSENT: none)}}`` of the non-field
    attributes of the inputs that the call set, rebound or deleted."""
    out = {}
    for i, now, b in hidden_changes(flat.containers, before):
        d = _instance_dict(flat.containers[i])
        out[id(d)] = {k: b.get(k, ABSENT) for k in set(b) | set(now) if b.get(k, MISS) is not now.get(k, MISS)}
    return out


def _hidden_names(ci, flat) -> tuple:
    """The names of the non-field attributes of input container ``ci`` (the guard below)."""
    return tuple(hidden_attrs(flat.containers[ci]) or ())


def _hidden_names_touched(rs, flat, before) -> list:
    """``[(i, names before the call)]`` of the inputs whose non-field attributes the call
    changed, wrote or deleted (by name or through their ``__dict__``), or read through their
    ``__dict__`` as a whole."""
    out = []
    changed = {i for i, _, _ in hidden_changes(flat.containers, before)}
    for i, b in enumerate(before or ()):
        if b is None:
            continue
        c = flat.containers[i]
        d = _instance_dict(c)
        fields = node_of(type(c)).fields
        if i in changed or \
                any(w[0] is d or (w[0] is c and (w[1] is None or w[1] not in fields)) for w in rs.writes) or \
                (d is not None and any(a.kind == "contents" and a.holder is d for a in rs.atoms.values())):
            out.append((i, tuple(b)))
    return out


def _inside_hidden_attributes(before) -> set:
    """``id`` of the objects held by the non-field attributes of the inputs (``before``: their
    :func:`.layout.hidden_attrs` before the call), of their instance dicts, and of the mutable
    containers directly inside those."""
    out = set()
    for b in before or ():
        for v in (b or {}).values():
            if isinstance(v, _ATOM_TYPES) or isinstance(v, type):
                continue
            out.add(id(v))
            d = _instance_dict(v)
            if type(d) is dict:
                out.add(id(d))
            if isinstance(v, (list, dict)):
                out.update(id(x) for x in (v.values() if isinstance(v, dict) else v)
                           if isinstance(x, (list, dict, set)))
    return out


def _copied_attributes(rs, flat, before, outputs) -> None:
    """Guard the non-field attributes of the ``DRJIT_STRUCT`` objects and dataclasses among the
    inputs that an output object of the same class holds too: frostjit's own code copied them
    there (``fj.detach(s)``, a PyTree rebuilt from ``s``: its ``__dict__`` is copied), unseen
    by the read set (r16: the replay returned the recording call's attribute)."""
    for ci, b in enumerate(before or ()):
        if not b:
            continue
        c = flat.containers[ci]
        t = type(c)
        holders = [o for o in outputs.values() if type(o) is t and o is not c]
        if not holders:
            continue
        d = _instance_dict(c)
        for k, v in b.items():
            if any(slot_value(o, k) is v for o in holders):
                label = f"{t.__qualname__}.{k}"
                rs.add(Atom("entry", d, k, v, c, label, None) if type(d) is dict and k in d
                       else Atom("attr", c, k, v, c, label, None))     # (a slot)


def _instance_dict(c):
    """``c.__dict__`` without running ``c``'s code (``None`` without one)."""
    try:
        return object.__getattribute__(c, "__dict__")
    except (AttributeError, TypeError):
        return None


def _walked_attribute(node, name) -> bool:
    """Whether the walk read attribute ``name`` of the container ``node`` describes: every
    attribute of a plain object, the fields of a ``DRJIT_STRUCT`` class, a dataclass, a protocol
    class with ``__fj_traverse_attrs__``, a partial or a bound method."""
    if type(node) is ValueNode and node.what == "object":
        return True
    return node.fields is not None and name in node.fields


def _walked_by_protocol(c, value, before) -> bool:
    """Whether ``value`` (an attribute read on ``c``) is one of the values ``c``'s traversal
    protocol handed to the walk (``before`` the call) or hands out now (a value the function
    stored, written back by every replay): the protocol's keys need not be attribute names, so
    the attribute is matched by identity."""
    return any(v is value for _, v in before or ()) or any(v is value for _, v in entries(c))


def _short_where(where) -> str:
    if not where:
        return "?"
    try:
        path, line = where.rsplit(":", 1)
        return f"{os.path.basename(path)}:{line}"
    except ValueError:
        return where
