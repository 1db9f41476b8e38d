"""The read set: which Python state a frozen function's code read while it was recorded.

A recording bakes in every Python value the traced code read: a class attribute, a helper's
global, a closure cell of a callback, a default argument, a NumPy array it summed.  The layout
key (:mod:`.layout`) covers the inputs; everything else is learned here, while the function runs
for real, and turned into guards (:mod:`.guards`) checked before every replay.

**Mechanism (chosen by measurement, see docs/freeze.md).**  During the recording only, the
recording thread runs under ``sys.settrace`` (per thread; it exists on every Python from 3.10 to
3.13).  The global trace function sees every Python frame that starts:

* frostjit's own frames (and its generated code) get no local tracer: one dictionary lookup, about
  0.2 us per call, nothing per instruction;
* library frames (the standard library, installed packages) are checked against a deny list
  (``random``, ``numpy.random``, clocks, file and environment reads, threads and queues), then
  left alone: what library code reads inside itself is not watched (what user code reads from
  library modules and classes is: ``np.sin``, ``math.tau``, a library class's method);
* every other frame (user code, at any call depth) is traced **per instruction**
  (``f_trace_opcodes``).  Each code object is analysed once with :mod:`dis` into *chains*: a
  root load (``LOAD_GLOBAL``, ``LOAD_DEREF``, ``LOAD_FAST``, ``globals()``) followed by attribute
  loads and constant subscripts (``cfg.model.scale``, ``d["k"]``), ``getattr(o, "name")``,
  ``vars(o)``, and the stores that end a chain (``o.x = v``, ``d[k] = v``, ``global``,
  ``nonlocal``); a key or attribute name held in a variable (``d[k]``, ``getattr(o, name)``) is
  read from the frame as the chain is evaluated, and ``d.get(k)`` reads one entry.  When an
  instruction that starts a chain is about to run, the chain is evaluated here **without running
  user code**: attribute lookups follow Python's rules statically
  (data descriptors, instance dict, class dicts along the MRO, ``__getattr__``), so a property
  or ``__getattr__`` stops the chain (its own frame is traced in turn).  Each step becomes an
  *atom*: the mapping entry, cell, attribute or container contents it read, with the value seen
  and the file:line of the read.

``sys.monitoring`` (3.12+) would cost less per event but has no per-instruction view of a
frame's locals without ``sys._getframe`` either; the trace hook is what all supported versions
share, and it runs only while recording (replays run no hook at all).

What cannot be watched makes the recording fall back to the plain call (``fallback``): a call
into the deny list, ``getattr`` with a computed name, a generator created before the call and
resumed inside, a write to state outside the inputs (a replay would not repeat it).

An attribute load on a value no chain names (a call's result: ``make().k``) is a *loose* name:
when the recording ends, it is looked up on the hidden objects the recording reached
(:meth:`ReadSet.loose_atoms`).  Identity comparisons (``x is SENTINEL``) make guards.build add a
guard on which inputs are which hidden objects; ``id()`` falls back.

A holder that turns out to be *fresh* (created during the call, and referenced by nothing but
this read set once the call returned) needs no guard: the code builds it again every call.
"""
from __future__ import annotations

import abc
import collections
import contextvars
import decimal
import functools
import gc
import importlib.util
import operator
import sys
import threading
import types
import weakref

import numpy as np

from .chains import MISSING, analyse, _hashable
from .code import INTERNAL, LIBRARY, USER, _CLASS, code_class, deny_attribute, deny_reason, deny_value, \
    opaque_iterator
from .lookup import ABSENT, STOP, Atom, read_attr, watched_class, _library_class, _CONTAINERS, _MUTATORS, _NP_META, _find_in_mro
from .values import C_BUFFERS, TooBig, contents, deep_contents

# Dunder methods that no implicit lookup on an existing object's class runs (or that run while
# the object is made: __init__ frames are handled by freshness).
_NOT_SPECIAL = frozenset(("__init__", "__post_init__", "__new__", "__init_subclass__", "__set_name__",
                          "__class_getitem__", "__del__"))


class _Frame:
    """What the tracer knows about one running user frame."""

    __slots__ = ("fns", "nested", "top")

    def __init__(self, fns, nested, top):
        self.fns = fns          # candidate function objects running this frame (may be empty)
        self.nested = nested    # the caller's _Frame when this code is a closure the caller just made
        self.top = top          # the frozen function's own frame


# mutators whose result or success depends on the contents (``lst.pop()``, ``d.setdefault(k, v)``)
_READING_MUTATORS = frozenset({"pop", "popitem", "popleft", "setdefault", "remove"})
_NESTED_MAX = 1000
_VARARGS = 0x04         # CO_VARARGS      # nested containers pictured at a first touch: of containers up to this size


def _never(v) -> bool:
    return False


# ------------------------------------------------------------------------------ the observer

_BUILTINS = sys.modules["builtins"]
_VIEWS = (types.MappingProxyType, type({}.keys()), type({}.values()), type({}.items()))


def _viewed(v):
    """The mapping a view shows (a mappingproxy's dict, a dict view's dict), else ``v``."""
    if isinstance(v, _VIEWS):
        for r in gc.get_referents(v):
            if isinstance(r, dict):
                return r
    return v

class ReadSet:
    """Watches the calling thread while a frozen function records (see module docstring).

    ``start()`` / ``stop()`` around the function's call.  Afterwards: ``atoms`` (by identity of
    what they read), ``writes`` (state written outside the frame's locals), ``fallback`` (why the
    recording cannot be replayed, or ``None``), ``dispatch`` (dispatched functions the code named)
    and ``abc`` (whether an ABC ``isinstance``/``issubclass`` or dispatch resolution ran).
    ``is_dispatched(v)`` recognises dispatched functions (``frostjit.dispatch.is_dispatched``;
    none when not given).
    """

    def __init__(self, top_fn, is_dispatched=None):
        self.atoms: dict = {}           # (kind, id(holder), key) -> Atom (the first read wins)
        self.writes: list = []          # (owner, label, where)
        self.fallback = None            # (what, why, where)
        self.dispatch: dict = {}        # id -> dispatched function
        # frostjit.dispatch.is_dispatched, handed in: these modules import nothing else of
        # frostjit (tests/freeze/readset_probe.py loads them alone under other Pythons)
        self.is_dispatched = is_dispatched if is_dispatched is not None else _never
        self.abc = False
        self.keep: dict = {}            # id -> object: every object held here (ids stay unique)
        self.refs = collections.Counter()       # id -> strong references this read set holds
        self.reached: set = set()       # ids of values read from outside a frame's locals
        self.made: set = set()          # ids of objects whose __init__ ran during the call
        # C iterators the code read (``next(it)`` advances state no guard sees): a recording
        # that used one it did not make itself falls back (guards.build, by freshness)
        self.iterators: list = []       # (id of the iterator (held in keep), label, where)
        # a container's contents when the code first touched it (read or mutated): a guard
        # compares the state a call starts from, not what the recording left behind
        # (``log.append(1); len(log)`` read the contents after its own append)
        self.first_contents: dict = {}  # id -> contents snapshot (or a NumPy copy)
        # NumPy arrays passed on as a whole by user code, and passed as arguments into user
        # functions (forwarded, not consumed): the difference is what frostjit and other code
        # consumed (guards.build compares it with the uploads)
        self.np_passes = collections.Counter()
        self.np_forwarded = collections.Counter()
        self.uses_type = False          # the code called type(): parameters must be exact values
        # attribute names loaded on values no chain names (``make().k``, ``d[i + 1].w``, the rest
        # of a chain that stopped): looked up on the hidden objects reached (loose_atoms)
        self.loose: dict = {}           # name -> where (the first such load)
        # classes a method's zero-argument super() (or __class__) starts from: super().m() looks
        # m up along the MRO in C, where no chain sees it (its name is loose, looked up here)
        self.loose_roots: list = []
        # modules user code got from importlib.import_module(name, package): what it then reads
        # on the result (``import_module("m").k``) is a loose name, looked up in these modules
        self.imported: list = []
        self._caller_seen: set = set()      # (id(globals), id(code)) looked up by _caller_entries
        # the code compared identities (``x is SENT``): an input that is (or is not) a hidden
        # object it read decides the outcome (guards.build adds an aliasing guard)
        self.uses_is = False
        # Decimal arithmetic reads the thread's decimal context in C (precision, rounding, traps):
        # its settings when the call started, guarded when the code used the decimal module
        # (or a Decimal reached it: guards.build also looks at the inputs)
        self.uses_decimal = False
        self.decimal_context = decimal_context()
        self.structs: set = set()       # ids of the DRJIT_STRUCT classes guarded (struct_class)
        self.known = collections.defaultdict(list)     # code -> functions seen
        self.frames: dict = {}
        self.top_code = getattr(top_fn, "__code__", None)
        self.thread = threading.get_ident()
        self.error = None
        self._prev = None
        if top_fn is not None:
            self.note_function(top_fn)
            # the frozen function's own globals and cells are inputs; its code and defaults are not
            self._function_atoms(top_fn, f"{self.top_code.co_filename}:{self.top_code.co_firstlineno}", False)

    # -- hook ----------------------------------------------------------------------------
    def start(self) -> None:
        if _MONITOR is not None:
            _MONITOR.add(self)
        else:
            self._prev = sys.gettrace()
            sys.settrace(self._global)

    def stop(self) -> None:
        if _MONITOR is not None:
            _MONITOR.remove(self)
        else:
            sys.settrace(self._prev)
            self._prev = None
        self.frames.clear()
        self.known.clear()

    def _global(self, frame, event, arg):
        try:
            code = frame.f_code
            cls = _CLASS.get(code)
            if cls is None:
                cls = code_class(code, frame)
            if cls == INTERNAL:
                return None
            if cls == LIBRARY:
                self._library_call(frame, code)
                return None
            self._caller_entries(frame, code)
            return self._user_call(frame, code)
        except Exception as e:  # noqa: BLE001 - a tracer must never break the traced code
            self._internal_error(e)
            return None

    def _internal_error(self, e) -> None:
        if self.error is None:
            self.error = e
            self.set_fallback("frostjit could not follow this code", f"{type(e).__name__}: {e}", None)

    def _library_call(self, frame, code) -> None:
        mod = frame.f_globals.get("__name__", "") or ""
        qn = getattr(code, "co_qualname", code.co_name)
        if mod == "abc" and code.co_name in ("__instancecheck__", "__subclasscheck__"):
            self.abc = True
            return
        if qn == code.co_name and not qn.startswith("<") and _called_by_user(frame.f_back):
            self._library_function(frame.f_globals, mod, qn)
            self._caller_entries(frame, code)
        if mod == "importlib" and qn == "import_module" and _called_by_user(frame.f_back):
            loc = frame.f_locals
            self.imported.append((loc.get("name"), loc.get("package"), _user_where(frame.f_back)))
        why = deny_reason(mod, qn)
        if why is not None and _called_by_user(frame.f_back):
            self.set_fallback(f"{mod}.{qn}", why, _user_where(frame.f_back))
        elif code.co_argcount or code.co_kwonlyargcount or code.co_flags & _VARARGS:
            self._library_arguments(frame, code, mod, qn)

    def _caller_entries(self, frame, code) -> None:
        """A function called by library code, found in the calling module's globals (``from .a
        import h`` there, or a user function ``mock.patch("pkg.b.h", f)`` put there): that
        entry, which a patch where the function is used replaces (the library frame's global
        load is not watched).  Matched by code object, by name first, else by a scan of the
        module dict (once per dict and code in a recording)."""
        back = frame.f_back
        if back is None or code_class(back.f_code, back) != LIBRARY:
            return
        bg = back.f_globals
        if bg is frame.f_globals:
            if code.co_name in bg and code_class(code, frame) == LIBRARY:
                return          # (a library function of the same module: _library_function)
        key = (id(bg), id(code))
        if key in self._caller_seen:
            return
        self._caller_seen.add(key)
        m = sys.modules.get(bg.get("__name__", ""))
        if m is None or getattr(m, "__dict__", None) is not bg:
            return
        v = bg.get(code.co_name)
        F = types.FunctionType      # (functions only: another object's getattr could run code)
        names = [code.co_name] if type(v) is F and v.__code__ is code else \
            [k for k, v in bg.items() if type(v) is F and v.__code__ is code] if len(bg) <= 5000 else []
        for k in names:
            if type(k) is str:
                self.add(Atom("entry", bg, k, bg[k], m, f"{m.__name__}.{k}", None))

    def _library_function(self, g, mod, name) -> None:
        """A library module's function ran for user code (called by it, or by library code it
        called; not frostjit's own use of libraries, whose state is frostjit's): its entry in its
        module, where ``mock.patch("pkg.helper", f)`` puts another (r13: a package function
        calling a patched helper of its own replayed the old helper's recording).  Top-level
        functions only (a method's class is reached through the code that called it)."""
        m = sys.modules.get(mod)
        if m is not None and getattr(m, "__dict__", None) is g and name in g:
            key = ("entry", id(g), name)
            if key not in self.atoms:
                self.add(Atom("entry", g, name, g[name], m, f"{mod}.{name}", None))

    def _library_arguments(self, frame, code, mod, qn) -> None:
        """Library code reads the objects user code hands it (``copy.copy(cfg)``,
        ``dataclasses.asdict(cfg)``, a library base class's method on ``self``), where no chain
        sees the reads: the instance dict of each user object among the arguments is guarded
        as a whole (contents as first touched)."""
        n = code.co_argcount + code.co_kwonlyargcount
        loc = frame.f_locals
        values = [loc.get(name) for name in code.co_varnames[:n]]
        if code.co_flags & _VARARGS:
            more = loc.get(code.co_varnames[n])
            if type(more) is tuple:
                values.extend(more)
        users = [v for v in values if v is not None and watched_class(type(v))]
        arrays = [v for v in values if isinstance(v, np.ndarray)]
        if not (users or arrays) or not _called_by_user(frame.f_back):
            return
        where = _user_where(frame.f_back)
        for a in arrays:
            # NumPy code reads the data (np.sum(a), np.linalg.norm(a)): its result is baked into
            # the recording, even where the array is also uploaded (re-read by replays)
            self.numpy_read(a, f"<ndarray passed to {mod}.{qn}>", where, "read")
        for v in users:
            try:
                d = object.__getattribute__(v, "__dict__")
            except (AttributeError, TypeError):
                continue
            if type(d) is dict:
                self.add(Atom("contents", d, None, None, v, f"<{type(v).__qualname__} passed to {mod}.{qn}>", where))

    def set_fallback(self, what, why, where) -> None:
        if self.fallback is None:
            self.fallback = (what, why, where)

    def _user_frame(self, frame, code) -> None:
        """A user frame starts or resumes."""
        if code.co_flags & (0x20 | 0x80 | 0x200) and frame.f_lasti > 0 and frame not in self.frames \
                and not self._made_here(code, frame):
            # a generator / coroutine resumed, created before this call: its state is hidden
            self.set_fallback(f"the generator {getattr(code, 'co_qualname', code.co_name)}",
                              "state kept by a generator created before the call", _where(frame))
        if frame not in self.frames:
            self._enter(frame, code)

    def _made_here(self, code, frame) -> bool:
        """Whether a resumed generator's code is nested in code running in this call (a generator
        expression or generator function made by it, e.g. ``sum(x for x in xs)``)."""
        f = frame.f_back
        while f is not None:
            if f in self.frames and code in _nested_codes(f.f_code):
                return True
            f = f.f_back
        return any(code in _nested_codes(fr.f_code) for fr in list(self.frames))

    def _user_call(self, frame, code):
        self._user_frame(frame, code)
        # (in this order: 3.12 enables opcode events when f_trace_opcodes is set on a frame
        # that already has its trace function and no line events)
        local = self._local
        frame.f_trace = local
        frame.f_trace_lines = False
        frame.f_trace_opcodes = True
        return local

    def _enter(self, frame, code):
        if code.co_name in ("__init__", "__post_init__") and code.co_argcount:
            obj = frame.f_locals.get(code.co_varnames[0])
            if obj is not None:
                self.made.add(id(obj))      # made during this call (an output, rebuilt by replays)
                self.hold(obj)
        top = code is self.top_code and not any(f.top for f in self.frames.values())
        caller = self.frames.get(frame.f_back)
        fns = [f for f in self.known.get(code, ()) if _code_of(f) is code]
        nested = None
        if not fns and caller is not None and code in _nested_codes(frame.f_back.f_code):
            nested = caller         # a closure the caller made during this call: fresh
        elif not fns:
            fns = _functions_of(code, frame)
        if len(fns) > 1 and code.co_freevars:
            fns = _running(fns, code, frame)
        info = _Frame(fns, nested, top)
        self.frames[frame] = info
        if "__class__" in code.co_freevars:
            # super() looks along the first argument's MRO after __class__ (each class there is a
            # root: its own lookup of the name covers the classes after it)
            cls = frame.f_locals.get("__class__")
            o = frame.f_locals.get(code.co_varnames[0], MISSING) if code.co_argcount else MISSING
            mro = (o if isinstance(o, type) else type(o)).__mro__ if o is not MISSING else ()
            if isinstance(cls, type):
                self.loose_roots.extend(mro[mro.index(cls) + 1:] if cls in mro else cls.__mro__[1:])
        n = code.co_argcount + code.co_kwonlyargcount
        if n and not top:
            loc = frame.f_locals
            for name in code.co_varnames[:n]:
                v = loc.get(name)
                if isinstance(v, np.ndarray):
                    self.np_forwarded[id(v)] += 1
        where = _where(frame)
        for fn in fns:
            if top:
                continue    # the frozen function itself: its code, defaults are guarded in guards.py
            self._function_atoms(fn, where)
        if not top and fns and code.co_argcount:
            self._special_atoms(frame, code, fns, where)
        return info

    def _special_atoms(self, frame, code, fns, where) -> None:
        """A special method (``__call__``, ``__mul__``, ``__getitem__``, ``__len__``, ...) runs:
        Python looked it up on the class of its first argument in C (``o(x)``, ``o * x``,
        ``o[k]``), where no chain sees it.  Guard that lookup as a read of ``type(o).<name>``
        (the class dicts along the MRO, and the object's class), so a method replaced on the
        class (``K.__call__ = other``, whatever the new function's name) or an object whose
        class is swapped traces again.  (Found by where the running function sits in the user
        classes' dicts under a dunder name: record time only.)"""
        o = frame.f_locals.get(code.co_varnames[0], MISSING)
        if o is MISSING:
            return
        t = type(o)
        if not watched_class(t):
            return
        names = [k for c in t.__mro__ if watched_class(c) for k, v in c.__dict__.items()
                 if k[:2] == "__" == k[-2:] and k not in _NOT_SPECIAL
                 and any(v is f or getattr(v, "__func__", None) is f for f in fns)]
        if not names:
            return
        for name in names:
            atoms = []
            _find_in_mro(t.__mro__, name, atoms, f"{t.__qualname__}.{name}", where)
            for a in atoms:
                self.add(a)
        if watched_class(t) and not isinstance(o, type):
            try:
                h = weakref.ref(o)          # (a guard must not keep the object alive)
            except TypeError:
                h = o
            self.add(Atom("class", h, None, t, o, f"type(<{t.__qualname__} object>)", where))

    def _function_atoms(self, fn, where, code=True) -> None:
        name = fn.__qualname__
        if code:    # (not for the frozen function itself: a replay pays nothing for what it cannot change)
            self.add(Atom("attr", fn, "__code__", fn.__code__, fn, f"{name}.__code__", where))
        if fn.__defaults__:
            self.add(Atom("attr", fn, "__defaults__", fn.__defaults__, fn, f"{name}.__defaults__", where))
            for v in fn.__defaults__:
                self.consider(v, where, True)
        if fn.__kwdefaults__:
            self.add(Atom("attr", fn, "__kwdefaults__", fn.__kwdefaults__, fn, f"{name}.__kwdefaults__", where))
            self.add(Atom("contents", fn.__kwdefaults__, None, None, fn, f"{name}.__kwdefaults__", where))
            for v in fn.__kwdefaults__.values():
                self.consider(v, where, True)

    def _local(self, frame, event, arg):
        try:
            if event == "opcode":
                acts = analyse(frame.f_code).get(frame.f_lasti)
                if acts is not None:
                    self._run(frame, acts)
            elif event == "return":
                self.frames.pop(frame, None)
        except Exception as e:  # noqa: BLE001
            self._internal_error(e)
        return self._local

    # -- evaluating chains -----------------------------------------------------------------
    def _run(self, frame, acts) -> None:
        info = self.frames.get(frame)
        if info is None:
            info = self._enter(frame, frame.f_code)
        for a in acts:
            if type(a) is not tuple:
                self._chain(frame, info, a)
            elif a[0] == "loose":
                if not (a[1].startswith("__") and a[1].endswith("__")):     # (super().__init__: methods)
                    self.loose.setdefault(a[1], f"{frame.f_code.co_filename}:{a[2]}")
            elif a[0] == "is":
                self.uses_is = True
            elif a[0] == "import":
                # a module another can replace in sys.modules between calls (a test's patch.dict,
                # a lazy-module swap): its entry is what the import read
                for name in dict.fromkeys(a[1]):
                    mod = sys.modules.get(name)
                    if mod is not None:
                        self.add(Atom("entry", sys.modules, name, mod, sys.modules, f"sys.modules[{name!r}]",
                                      f"{frame.f_code.co_filename}:{a[2]}"))
            elif a[0] == "import_from":
                # ``from mod import X`` inside the function: the module's entry, read in C
                mod = sys.modules.get(a[1][0])
                if isinstance(mod, types.ModuleType):
                    _, atoms = read_attr(mod, a[1][1], f"{a[1][0]}.{a[1][1]}", f"{frame.f_code.co_filename}:{a[2]}")
                    for at in atoms:
                        self.add(at)
            else:
                self._store(frame, info, a)

    def _store(self, frame, info, a) -> None:
        kind, name, line = a
        where = f"{frame.f_code.co_filename}:{line}"
        if kind == "store_global":
            g = frame.f_globals
            self.write(g, f"the global {name} of {g.get('__name__', '?')}", where, key=name)
        else:
            for cell in self._cells(frame, info, name):
                self.write(cell, f"the closure variable {name!r}", where)

    def _chain(self, frame, info, ch) -> None:
        where = f"{frame.f_code.co_filename}:{ch.line}"
        root = ch.root
        loc = frame.f_locals
        reached = False
        if root == "fast":
            if ch.name not in loc:
                return
            v = loc[ch.name]
        elif root == "deref":
            if ch.name not in loc:
                return
            v = loc[ch.name]
            for cell in self._cells(frame, info, ch.name):
                self.add(Atom("cell", cell, None, v, cell, f"{ch.name} (a closure variable)", where))
            reached = True
        elif root == "global":
            g = frame.f_globals
            if ch.name in g:
                v = g[ch.name]
                self.add(Atom("entry", g, ch.name, v, g, f"{g.get('__name__', '?')}.{ch.name}", where))
            else:
                b = frame.f_builtins
                if ch.name not in b:
                    return
                v = b[ch.name]
                self.add(Atom("entry", g, ch.name, ABSENT, g, f"{g.get('__name__', '?')}.{ch.name}", where))
                # the builtin itself: ``mock.patch("builtins.round", f)`` between calls (r14: a
                # stale replay); checked with the recording's other library entries, by identity
                self.add(Atom("entry", b, ch.name, v, _BUILTINS if b is _BUILTINS.__dict__ else b,
                              f"builtins.{ch.name}", where))
                if v is type:
                    self.uses_type = True       # type(p) tells a symbolic number from a float
                elif v is __import__:
                    # ``__import__("m").k``: the builtin runs in C (no frame shows its argument),
                    # so every imported module with a loose name's attribute is a candidate
                    self.imported.append((None, None, where))
                elif v is id and not ch.steps:
                    # id() of an input differs every call (arrays are made anew), and the code may
                    # act on it (a cache keyed by id): no guard can say whether a replay would
                    self.set_fallback("id()", "object identities (id()), which differ between calls", where)
            reached = True
        else:   # globals()
            v = frame.f_globals
            reached = True
        end = ch.end
        if end is not None and end[0] == "builtin":
            if v in (getattr, setattr, delattr, hasattr, vars):
                self.set_fallback(f"{v.__name__}() with a computed attribute name",
                                  "an attribute frostjit cannot name", where)
            return
        if end is not None and end[0] == "builtin-const":
            return
        steps = ch.steps
        text = ch.name
        # the last step before a call (``lst.pop`` of ``lst.pop().x``): a mutator there writes
        last = len(steps) - 1
        for i, (k, _) in enumerate(steps):
            if k == "call0":
                last = i - 1
                break
        holder = v
        if steps:
            self.consider(v, where, False)
        for i, (k, key) in enumerate(steps):
            holder = v
            if k == "attr_var" or k == "item_var":
                key = _resolve(frame, key)
                if key is MISSING or (type(key) is not str if k == "attr_var" else not _plain_key(key)):
                    # (a key whose hash runs user code, an Enum member: the holder as a whole)
                    self.consider(holder, where, True, label=text)
                    return self._stopped(steps, i)
                k = "attr" if k == "attr_var" else "item"
            elif k == "get" and not (isinstance(holder, dict) and type(holder).get is dict.get):
                # not a dict's get (a ContextVar's, os.environ's): the method itself, as before
                k, key = "attr", "get"
                steps = steps[:i + 1]
                last = i
            if k == "attr":
                label = f"{text}.{key}"
                if isinstance(holder, _CONTAINERS) and holder is not frame.f_globals:
                    # a method of a container reads its contents (``d.get``, ``lst.index``,
                    # ``lst.pop``), except a mutator that only writes (``log.append``: a side
                    # effect, which a replay does not repeat); before the mutation runs
                    if key not in _MUTATORS or key in _READING_MUTATORS:
                        self.add(Atom("contents", holder, None, None, holder, text, where))
                    if i == last and (end is None or len(steps) > i + 1) and key in _MUTATORS:
                        self.first_touch(holder)
                        self.write(holder, f"{text} (.{key}())", where)
                        return self._stopped(steps, i + 1)
                if isinstance(holder, np.ndarray) and key not in _NP_META:
                    self.numpy_read(holder, text, where)
                d = deny_attribute(holder, key) if not isinstance(holder, types.ModuleType) else None
                if d is not None:
                    self.set_fallback(d[0], d[1], where)
                v, atoms = read_attr(holder, key, label, where)
            elif k == "get":
                # ``d.get(k, default)`` of a dict: one entry (the default when it is absent)
                kspec, dspec = key
                kk = _resolve(frame, kspec)
                if kk is MISSING or not _plain_key(kk):
                    self.consider(holder, where, True, label=text)
                    self.add(Atom("contents", holder, None, None, holder, text, where))
                    return self._stopped(steps, i)
                label = f"{text}.get({kk!r})"
                if kk in holder:
                    v = holder[kk]
                    atoms = [Atom("entry", holder, kk, v, holder, label, where)]
                else:
                    atoms = [Atom("entry", holder, kk, ABSENT, holder, label, where)]
                    v = _resolve(frame, dspec)
                    if v is MISSING:
                        v = STOP
            elif k == "call0":
                if not isinstance(holder, weakref.ref):
                    return self._stopped(steps, i)      # a call: its frame is watched on its own
                label = f"{text}()"
                v = holder()
                atoms = [Atom("deref", holder, None, v, holder, label, where)]
            else:
                label = f"{text}[{key!r}]"
                v, atoms = self.read_item(holder, key, label, where)
            text = label
            for at in atoms:
                self.add(at)
            if v is STOP or v is ABSENT:
                return self._stopped(steps, i + 1)
            if reached or atoms:
                self.reached.add(id(v))
                self.hold(v)
            reached = reached or bool(atoms)
            if i < len(steps) - 1:
                self.consider(v, where, False)
        if end is not None:
            if end[0] == "aug":         # ``o.x += v`` / ``d[k] += v``: read above, stored to the holder
                self.write(holder, text, where, key=end[1])
            elif end[0] in ("store_attr", "del_attr", "store_attr_var"):
                name = end[1] if end[0] != "store_attr_var" else _resolve(frame, end[1])
                self.write(v, f"{text}.{name}", where, key=None if name is MISSING else name)
            elif end[0] == "store_item":
                self.write(v, f"{text}[{'...' if end[1] is MISSING else repr(end[1])}]", where,
                           key=None if end[1] is MISSING else end[1])
            return
        if v is operator.attrgetter or v is operator.methodcaller:
            for c in frame.f_code.co_consts:     # (the names it is made with, among them)
                if type(c) is str:
                    for part in c.split("."):
                        self.loose.setdefault(part, where)
        self.consider(v, where, True, label=text)

    def _stopped(self, steps, i) -> None:
        """A chain stopped before step ``i`` (a property's value, a call's result): the attribute
        names it goes on to load are loose (looked up on the hidden objects reached)."""
        for k, key in steps[i:]:
            if k == "attr" and type(key) is str and not (key.startswith("__") and key.endswith("__")):
                self.loose.setdefault(key, None)
        return None

    def loose_atoms(self) -> None:
        """Attributes loaded on values no chain named (``make().k``, ``r().k``, ``d[i + 1].w``,
        ``operator.attrgetter("k")(o)``): their receiver is unknown, so every hidden object the
        recording reached (the values and containers its guards hold, and what they hold, a few
        levels deep) that has such an attribute is guarded on it, as if the code had read it.
        More guards than needed (an attribute of the same name on another object), never fewer
        among what is reachable; ``_LOOSE_*`` bound the search."""
        if not self.loose:
            return
        names = self.loose
        self._imported_atoms(names)
        seen = set()
        frontier = []
        for a in list(self.atoms.values()):
            if a.kind in ("entry", "item", "cell", "attr", "deref"):
                frontier.append(a.value)
            elif a.kind == "contents":
                frontier.append(a.holder)
            if isinstance(a.owner, type):
                frontier.append(a.owner)        # a class whose dict was consulted
        frontier.extend(self.loose_roots)
        found = 0
        for _depth in range(_LOOSE_DEPTH):
            nxt = []
            for o in frontier:
                if id(o) in seen or o is None or isinstance(o, _LOOSE_SKIP) or len(seen) >= _LOOSE_OBJECTS:
                    continue
                seen.add(id(o))
                self.hold(o)
                t = type(o)
                if isinstance(o, (list, tuple, set, frozenset, collections.deque)):
                    if len(o) <= _NESTED_MAX:
                        nxt.extend(o)
                    continue
                if isinstance(o, dict):
                    if len(o) <= _NESTED_MAX:
                        nxt.extend(o.values())
                    continue
                if isinstance(o, weakref.ref):
                    nxt.append(o())
                    continue
                if isinstance(o, types.MappingProxyType):
                    continue
                if t is _LRU_WRAPPER or t.__name__ == "_lru_list_elem":
                    # (the results a cache returns without running the function)
                    nxt.extend(r for r in gc.get_referents(o) if not isinstance(r, _LOOSE_SKIP))
                    continue
                d = None
                try:
                    d = object.__getattribute__(o, "__dict__")
                except (AttributeError, TypeError):
                    pass
                if isinstance(o, type):
                    if not (watched_class(o) or _library_class(o)):
                        continue
                elif not watched_class(t):
                    if t in _LIB_MAPPINGS or t is types.SimpleNamespace:
                        if type(d) is dict and len(d) <= _NESTED_MAX:      # (WeakValueDictionary.data)
                            nxt.extend(d.values())
                    elif t is functools.partial:
                        nxt.extend(o.args)
                        nxt.extend(o.keywords.values())
                    if t is not types.SimpleNamespace:
                        continue        # (other library and frostjit objects: their state is theirs)
                for name, where in names.items():
                    if found >= _LOOSE_ATOMS:
                        break
                    if isinstance(o, type):
                        if not any(name in c.__dict__ for c in o.__mro__ if watched_class(c) or _library_class(c)):
                            continue
                    elif not ((type(d) is dict and name in d) or
                              any(name in c.__dict__ for c in t.__mro__ if watched_class(c))):
                        continue
                    _, atoms = read_attr(o, name, f"<{getattr(t, '__qualname__', t.__name__)} object>.{name}"
                                         if not isinstance(o, type) else f"{o.__qualname__}.{name}", where)
                    for at in atoms:
                        self.add(at)
                        found += 1
                if type(d) is dict and len(d) <= _NESTED_MAX:
                    nxt.extend(d.values())
            frontier = nxt
            if not frontier:
                break

    def _imported_atoms(self, names) -> None:
        """The modules ``importlib.import_module`` handed to user code: their ``sys.modules``
        entry (another module may be put there) and their entries named by a loose attribute
        load (r13: ``import_module("m").k`` replayed a stale ``k``)."""
        for name, package, where in self.imported:
            if name is None:            # (``__import__``: any module in sys.modules)
                self._dunder_import_atoms(names, where)
                continue
            try:
                full = importlib.util.resolve_name(name, package) if type(name) is str else None
            except (ImportError, ValueError, TypeError):
                full = None
            mod = sys.modules.get(full) if full else None
            if not isinstance(mod, types.ModuleType):
                continue
            self.add(Atom("entry", sys.modules, full, mod, sys.modules, f"sys.modules[{full!r}]", where))
            d = mod.__dict__
            for k, w in names.items():
                if k in d:
                    _, atoms = read_attr(mod, k, f"{full}.{k}", w or where)
                    for at in atoms:
                        self.add(at)

    def _dunder_import_atoms(self, names, where) -> None:
        """The entries named by loose attribute loads in every module of ``sys.modules`` that
        has them (``__import__("m").k``, r14: a stale replay): more guards than the one module
        read, never fewer."""
        for full, mod in list(sys.modules.items()):
            d = getattr(mod, "__dict__", None) if isinstance(mod, types.ModuleType) else None
            if type(d) is not dict:
                continue
            for k, w in names.items():
                if k in d:
                    self.add(Atom("entry", sys.modules, full, mod, sys.modules, f"sys.modules[{full!r}]", where))
                    _, atoms = read_attr(mod, k, f"{full}.{k}", w or where)
                    for at in atoms:
                        self.add(at)

    def read_item(self, c, key, label, where):
        t = type(c)
        if t is dict or (isinstance(c, dict) and t.__getitem__ is dict.__getitem__):
            if key in c:
                v = c[key]
                return v, [Atom("entry", c, key, v, c, label, where)]
            if hasattr(t, "__missing__"):
                atoms = [Atom("entry", c, key, ABSENT, c, label, where)]
                if isinstance(c, collections.defaultdict):
                    # its __missing__ (C) calls the factory: which one is state (r14: an argument
                    # with another factory replayed the first one's value)
                    atoms.append(Atom("attr", c, "default_factory", c.default_factory, c,
                                      f"{label.rsplit('[', 1)[0]}.default_factory", where))
                return STOP, atoms
            return ABSENT, [Atom("entry", c, key, ABSENT, c, label, where)]
        if t is list or t is tuple:
            try:
                v = c[key]
            except (IndexError, TypeError):
                return ABSENT, [Atom("contents", c, None, None, c, label, where)] if t is list else []
            return v, [Atom("item", c, key, v, c, label, where)] if t is list else []
        if isinstance(c, np.ndarray):
            self.numpy_read(c, label, where)
            return STOP, []
        if t in _LIB_MAPPINGS:
            # ChainMap, UserDict, the weak dictionaries: their entries, through their get
            v = c.get(key, ABSENT)
            return (STOP if v is ABSENT else v), [Atom("entry", c, key, v, c, label, where)]
        if isinstance(c, _CONTAINERS):
            return STOP, [Atom("contents", c, None, None, c, label, where)]
        return STOP, []

    def consider(self, v, where, final, label=None) -> None:
        """A value the code read: remember functions, check the deny list, watch containers."""
        t = type(v)
        if t is types.FunctionType:
            self.note_function(v)
            reg = v.__dict__.get("registry")
            if type(reg) is types.MappingProxyType:
                # a functools.singledispatch function: it picks its implementation in library
                # code from this registry, which register() changes
                self.add(Atom("contents", reg, None, None, v, f"{v.__qualname__}.registry", where))
        elif t is types.MethodType:
            self.note_function(v.__func__)
        elif t is functools.partial:
            self.note_function(v.func)
            if v.keywords:
                # its keywords are a dict the code may change between calls (``p.keywords[k] = v``)
                self.add(Atom("contents", v.keywords, None, None, v, f"{label or '<partial>'}.keywords", where))
            if final and type(v.func) is not types.FunctionType:
                # called, it hands its arguments to C code (``partial(d.get, "s")``,
                # ``partial(operator.getitem, lst)``), which reads them where no chain follows
                # (r15: a stale replay): the function (a C method's object) and the arguments as
                # passed on whole.  (A Python function's own reads are watched in its frame.)
                name = label or "<partial>"
                self.consider(v.func, where, True, label=f"{name}.func")
                for i, a in enumerate(v.args):
                    self.consider(a, where, True, label=f"{name}.args[{i}]")
                for k, a in (v.keywords or {}).items():
                    self.consider(a, where, True, label=f"{name}.keywords[{k!r}]")
        elif isinstance(v, type):
            self.struct_class(v, label or v.__qualname__, where)
        if t is types.BuiltinMethodType and v.__name__ == "get" and isinstance(v.__self__, contextvars.ContextVar):
            # a context variable's value (``CV.get()``): set per context, read in C
            self.add(Atom("deref", v.__self__, "get", v.__self__.get(ABSENT), v.__self__,
                          label or f"{v.__self__.name}.get()", where))
        elif t is operator.attrgetter or t is operator.methodcaller:
            # reads attributes in C, on an object no chain sees: the names are loose
            try:
                args = v.__reduce__()[1]
            except Exception:  # noqa: BLE001
                args = ()
            for n in (args if t is operator.attrgetter else args[:1]):
                if type(n) is str:
                    for part in n.split("."):
                        self.loose.setdefault(part, where)
        elif t is _LRU_WRAPPER:
            # a cached function: a cache hit returns what an earlier call computed (no frame
            # runs); cache_clear() (or an eviction) makes the next call compute it again
            cache = _lru_cache_dict(v)
            if cache is not None:
                self.add(Atom("contents", cache, None, None, v, f"{v.__qualname__} (its cache)", where))
            else:
                self.add(Atom("deref", v, "cache", _lru_state(v), v, f"{v.__qualname__}.cache_info()", where))
        elif (t is types.FunctionType or t is types.BuiltinFunctionType) and v in _state_getters():
            # NumPy's process state read in Python (``np.geterr()``, ``np.get_printoptions()``),
            # the interpreter's (``sys.getrecursionlimit()``: r14, a branch on it replayed stale)
            self.add(Atom("deref", v, None, v(), None, f"{v.__module__}.{v.__qualname__}()", where))
        if t is decimal.Decimal or t is decimal.Context or v is decimal or \
                (callable(v) and getattr(v, "__module__", None) == "decimal"):
            self.uses_decimal = True
        if isinstance(v, C_BUFFERS):
            # its data is read in C (a[1], c.value), where no chain follows: guarded whole; a
            # view (``K.__dict__``, ``vars(K)``, ``d.keys()``) is made anew by each access, so it is
            # fresh, but what it shows is not: its owner is the mapping behind it (r14: the order
            # of a class dict's keys, changed by ``del K.a; K.a = v``, replayed stale)
            self.add(Atom("contents", v, None, None, _viewed(v), label or f"<{t.__name__}>", where))
        if opaque_iterator(v):
            self.hold(v)
            self.iterators.append((id(v), label or f"<{t.__name__}>", where))
        if t is types.FunctionType and getattr(v, "__fj_state__", False):
            # a getter of frostjit's process state (fj.thread_count()): the code may act on what
            # it returns, and a replay must find the same
            self.add(Atom("token", v, None, v(), None, f"{v.__module__}.{v.__qualname__}()", where))
        if callable(v):
            d = deny_value(v)
            if d is not None:
                self.set_fallback(d[0], d[1], where)
            if self.is_dispatched(v):
                self.dispatch[id(v)] = v
        if final and (t is types.BuiltinMethodType or t is types.MethodWrapperType):
            # a C method bound to a container (``GET = d.get``, ``lst.__getitem__`` kept in a
            # global or an attribute, then called): it reads the container in C, where no chain
            # follows (r15: a stale replay); the container is read whole
            s = getattr(v, "__self__", None)
            if isinstance(s, (_CONTAINERS, C_BUFFERS, np.ndarray)):
                self.consider(s, where, True, label=f"{label or '<' + t.__name__ + '>'}.__self__")
        if final and isinstance(v, _CONTAINERS):
            self.add(Atom("contents", v, None, None, v, label or f"<{t.__name__}>", where))
            if t is not bytearray and len(v) and any(_holds_mutable(x) for x in
                                                     (v.values() if isinstance(v, dict) else v)):
                # passed on whole (``np.array(rows)``, ``sorted(rows)``, ``copy.deepcopy``): C
                # code reads the containers inside too, where no chain follows
                self.deep(v, label or f"<{t.__name__}>", where)
        elif final and t is tuple and any(_holds_mutable(x) for x in v):
            self.deep(v, label or "<tuple>", where)
        elif final and isinstance(v, np.ndarray):
            # passed on as a whole: to frostjit (an upload, re-read by every replay) or to Python
            # code that reads it (its data becomes part of the recording): decided in guards.build
            self.numpy_read(v, label or "<ndarray>", where, "passed")

    def struct_class(self, cls, label, where) -> None:
        """Guard the ``DRJIT_STRUCT`` of user class ``cls`` (an input's class, or a class the code
        read: ``fj.zeros(S)``): frostjit reads its field names and types in its own code, unseen,
        at each use (r16: reassigned or changed in place between calls, a stale replay).  Its
        entry (the class attribute, inherited or not) and the dict's items."""
        if id(cls) in self.structs or str(getattr(cls, "__module__", "")).startswith("frostjit") or \
                not any("DRJIT_STRUCT" in k.__dict__ for k in cls.__mro__):
            return
        self.structs.add(id(cls))
        label = f"{label}.DRJIT_STRUCT"
        v, atoms = read_attr(cls, "DRJIT_STRUCT", label, where)
        if type(v) is not dict:
            return
        for a in atoms:
            self.add(a)
        # its names and types in order, compared in C (a tuple of the live items view: a
        # "contents" guard snapshots each entry in Python, ~300 opcodes per replay)
        self.add(Atom("token", functools.partial(tuple, v.items()), None, tuple(v.items()), cls, label, where))

    def deep(self, c, label, where) -> None:
        """Guard ``c`` and the containers inside it (deep contents, as first seen)."""
        key = ("contents", id(c), "deep")
        if key in self.atoms:
            return
        try:
            pic = deep_contents(c)
        except TooBig:
            return      # (a documented gap: the top level is guarded, not what is inside)
        self.atoms[key] = Atom("contents", c, "deep", pic, c, label, where)
        self.hold(c)

    def numpy_read(self, a, label, where, how="read") -> None:
        if how == "passed":
            self.np_passes[id(a)] += 1
        key = ("numpy", id(a), None)
        old = self.atoms.get(key)
        if old is not None and old.key == "passed" and how == "read":
            old.key = "read"
        self.add(Atom("numpy", a, how, None, a, label, where))

    # -- cells and functions ----------------------------------------------------------------
    def note_function(self, fn) -> None:
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        lst = self.known[code]
        if not any(f is fn for f in lst):
            lst.append(fn)

    def _cells(self, frame, info, name):
        """The closure cells a frame reads as ``name`` (more than one when the running function is
        ambiguous; none when the cell was made during this call)."""
        if info.nested is not None:
            caller = info.nested
            code = frame.f_back.f_code if frame.f_back is not None else None
            if code is not None and name in code.co_freevars:
                return self._cells(frame.f_back, caller, name)
            return []       # a cell of the caller's frame: made during this call
        out = []
        for fn in info.fns:
            code = fn.__code__
            if name in code.co_freevars and fn.__closure__:
                out.append(fn.__closure__[code.co_freevars.index(name)])
        if not out and not info.top:
            self.set_fallback(f"the closure variable {name!r} of {frame.f_code.co_name}",
                              "a closure frostjit cannot identify", _where(frame))
        return [] if info.top else out

    # -- bookkeeping -----------------------------------------------------------------------
    def hold(self, o) -> None:
        """Keep ``o`` alive while recording (ids stay unique) and count the reference."""
        i = id(o)
        if i not in self.keep:
            self.keep[i] = o

    def first_touch(self, c):
        """The contents of container or NumPy array ``c`` when the code first touched it."""
        i = id(c)
        snap = self.first_contents.get(i)
        if snap is None:
            self.hold(c)
            if isinstance(c, np.ndarray):
                snap = self.first_contents[i] = np.array(c, copy=True)
                return snap
            snap = self.first_contents[i] = contents(c)
            # the containers inside too (one level): ``d.setdefault(k, []).append(1)`` mutates
            # one through a call's result, which no chain sees before a later ``len(d[k])``
            if isinstance(c, _CONTAINERS) and not isinstance(c, (set, bytearray)) and len(c) <= _NESTED_MAX:
                for v in (c.values() if isinstance(c, dict) else c):
                    if isinstance(v, _CONTAINERS) and id(v) not in self.first_contents:
                        self.hold(v)
                        self.first_contents[id(v)] = contents(v)
        return snap

    def add(self, atom) -> None:
        kind = atom.kind
        if kind in ("item", "entry") and id(atom.holder) in self.first_contents \
                and isinstance(atom.holder, _CONTAINERS):
            # read after the code mutated it (``lst.pop(); lst[-1]``): what was read depends on
            # the contents before the mutation, which a replay does not repeat
            atom = Atom("contents", atom.holder, None, None, atom.owner, atom.label, atom.where)
            kind = "contents"
        if kind in ("contents", "numpy"):
            atom.value = self.first_touch(atom.holder)
        key = (kind, id(atom.holder), None if kind == "numpy" else
               atom.key if _hashable(atom.key) else id(atom.key))
        if key in self.atoms:
            return
        self.atoms[key] = atom
        self.hold(atom.holder)
        self.hold(atom.owner)

    def write(self, owner, label, where, key=None) -> None:
        self.hold(owner)
        self.writes.append((owner, key, label, where))


_LOOSE_DEPTH = 4         # levels below the values read that loose attribute names are looked up on
_LOOSE_OBJECTS = 5000    # objects visited at most
_LOOSE_ATOMS = 512       # guards added at most
_LOOSE_SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
               types.CodeType, np.ndarray, str, bytes, int, float, complex, bool)


_GETTERS = None
_MUTABLE = (list, dict, set, collections.deque, bytearray)


def _holds_mutable(x) -> bool:
    """A mutable container, or a tuple holding one (what a deep picture adds to a shallow one)."""
    return isinstance(x, _MUTABLE) or (type(x) is tuple and any(isinstance(y, _MUTABLE) for y in x))
_LIB_MAPPINGS = (collections.ChainMap, collections.UserDict, weakref.WeakValueDictionary, weakref.WeakKeyDictionary)
_LRU_WRAPPER = type(functools.lru_cache(None)(lambda: None))


def _lru_cache_dict(w):
    """The dict an ``lru_cache`` wrapper keeps its results in (its C struct hands it to the
    garbage collector, the only way to see it from Python), or ``None``."""
    own = getattr(w, "__dict__", None)
    for r in gc.get_referents(w):
        if type(r) is dict and r is not own:
            return r
    return None


def _lru_state(w) -> tuple:
    """What a guard compares of an ``lru_cache`` wrapper: its misses and size."""
    info = w.cache_info()
    return (info.misses, info.currsize)


def decimal_context() -> tuple:
    """The current thread's decimal context as a guard compares it: the settings Decimal
    arithmetic reads in C (``decimal.getcontext()``; not its flags, which arithmetic sets)."""
    c = decimal.getcontext()
    return (c.prec, c.rounding, c.Emin, c.Emax, c.capitals, c.clamp,
            tuple(sorted(t.__name__ for t, on in c.traps.items() if on)))


def _state_getters() -> frozenset:
    """Functions that return process state a frozen function may act on (guarded by value)."""
    global _GETTERS
    if _GETTERS is None:
        _GETTERS = frozenset(f for f in [getattr(np, n, None) for n in (
            "geterr", "get_printoptions", "getbufsize", "geterrcall")] + [getattr(sys, n, None) for n in (
            "getrecursionlimit", "getswitchinterval", "get_int_max_str_digits")] if f is not None)
    return _GETTERS


def _resolve(frame, spec):
    """The value a key or argument ``spec`` (:func:`.chains._spec`) has in ``frame`` now
    (``MISSING`` when it cannot be read)."""
    kind, name = spec
    if kind == "const":
        return name
    if kind == "global":
        g = frame.f_globals
        if name in g:
            return g[name]
        return frame.f_builtins.get(name, MISSING)
    return frame.f_locals.get(name, MISSING)


def _plain_key(k) -> bool:
    """A key whose hash and equality run no user code: a builtin value, or an object hashed by
    identity."""
    if _hashable(k):
        return True
    t = type(k)
    return t.__hash__ is object.__hash__ and t.__eq__ is object.__eq__


class _Monitor:
    """``sys.monitoring`` (3.12+) for every recording thread at once (see module docstring).

    Python 3.12 does not deliver a trace function's opcode events on the first call of a code
    object; ``sys.monitoring`` does, and costs less: ``PY_START`` / ``PY_RESUME`` for every frame
    (frostjit's own and unwatched library code are disabled after their first call) and
    ``INSTRUCTION`` events only in user code objects, only at the instructions that start a
    chain (the others are disabled).  Events fire in every thread; each callback serves the
    calling thread's read set, if any.
    """

    def __init__(self):
        self.by_thread: dict = {}
        self.codes: set = set()         # user code objects with INSTRUCTION events on
        self.lock = threading.Lock()
        self.tool = None

    def add(self, rs) -> None:
        M = sys.monitoring
        with self.lock:
            if self.tool is None:
                for t in (4, 3, 2, 1, 0, 5):
                    if M.get_tool(t) is None:
                        M.use_tool_id(t, "frostjit.freeze")
                        self.tool = t
                        break
                else:
                    raise RuntimeError("frostjit.freeze: no free sys.monitoring tool id")
                E = M.events
                M.register_callback(self.tool, E.PY_START, self._start)
                M.register_callback(self.tool, E.PY_RESUME, self._start)
                M.register_callback(self.tool, E.INSTRUCTION, self._instruction)
            self.by_thread[rs.thread] = rs
            if len(self.by_thread) == 1:
                M.set_events(self.tool, M.events.PY_START | M.events.PY_RESUME)

    def remove(self, rs) -> None:
        M = sys.monitoring
        with self.lock:
            if self.by_thread.get(rs.thread) is rs:
                del self.by_thread[rs.thread]
            if not self.by_thread and self.tool is not None:
                M.set_events(self.tool, 0)
                for code in self.codes:         # user code runs without events outside recordings
                    M.set_local_events(self.tool, code, 0)
                self.codes.clear()

    def _start(self, code, offset):
        rs = self.by_thread.get(threading.get_ident())
        if rs is None:
            return None
        try:
            frame = sys._getframe(1)
            cls = _CLASS.get(code)
            if cls is None:
                cls = code_class(code, frame)
            if cls == INTERNAL:
                return sys.monitoring.DISABLE
            if cls == LIBRARY:
                mod = frame.f_globals.get("__name__", "") or ""
                qn = getattr(code, "co_qualname", code.co_name)
                if deny_reason(mod, qn) is None and not (mod == "abc" and "check__" in qn) and \
                        not (code.co_argcount or code.co_kwonlyargcount or code.co_flags & _VARARGS) \
                        and (qn != code.co_name or qn.startswith("<")):
                    # (takes no arguments: reads no user object; a top-level function's module
                    # entry is still guarded when it runs: _library_function)
                    return sys.monitoring.DISABLE
                rs._library_call(frame, code)
                return None
            rs._caller_entries(frame, code)
            rs._user_frame(frame, code)
            if code not in self.codes:
                with self.lock:
                    self.codes.add(code)
                    sys.monitoring.set_local_events(self.tool, code, sys.monitoring.events.INSTRUCTION)
        except Exception as e:  # noqa: BLE001 - a callback must never break the traced code
            rs._internal_error(e)
        return None

    def _instruction(self, code, offset):
        acts = analyse(code).get(offset)
        if acts is None:
            return sys.monitoring.DISABLE        # never starts a chain: no more events here
        rs = self.by_thread.get(threading.get_ident())
        if rs is None:
            return None
        try:
            rs._run(sys._getframe(1), acts)
        except Exception as e:  # noqa: BLE001
            rs._internal_error(e)
        return None


_MONITOR = _Monitor() if sys.version_info >= (3, 12) else None


def _code_of(fn):
    return getattr(fn, "__code__", None)


_NESTED: dict = {}


def _nested_codes(code) -> frozenset:
    s = _NESTED.get(code)
    if s is None:
        s = _NESTED[code] = frozenset(k for k in code.co_consts if isinstance(k, types.CodeType))
    return s


_BY_CODE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _functions_of(code, frame) -> list:
    """The function objects that run ``code``: by qualified name from the frame's globals, else
    by a search of the heap (once per code object, for functions without free variables)."""
    qn = getattr(code, "co_qualname", code.co_name)
    if "<locals>" not in qn and "<lambda>" not in qn:
        o = frame.f_globals
        ok = True
        for part in qn.split("."):
            o = o.get(part) if isinstance(o, dict) else getattr(o, "__dict__", {}).get(part)
            if o is None:
                ok = False
                break
            if isinstance(o, (staticmethod, classmethod)):
                o = o.__func__
        if ok and getattr(o, "__code__", None) is code:
            return [o]
    # (_BY_CODE is keyed by ==: code objects compiled from the same text are equal, e.g. the
    # __init__ that dataclasses generate for two classes with the same fields, so its entry may
    # hold another code object's functions: keep only this code's, search again when none is.
    # r15: the second class's __init__.__defaults__ changed, the first's was guarded: stale.)
    cached = _BY_CODE.get(code) if not code.co_freevars else None
    if cached is not None:
        fns = [f for f in (r() for r in cached) if f is not None and f.__code__ is code]
        if fns:
            return fns
    fns = [f for f in gc.get_referrers(code) if type(f) is types.FunctionType and f.__code__ is code]
    if not code.co_freevars:
        _BY_CODE[code] = [r for r in cached or () if r() is not None] + [weakref.ref(f) for f in fns]
    return fns


def _running(fns, code, frame) -> list:
    """Among functions that share ``code`` (the closures one factory made: ``make()`` called
    twice), those whose closure cells hold what ``frame`` sees in its free variables: the one
    running.  (r15: a closure variable of every candidate was guarded with the running one's
    value, so the other closure's own value failed the guard at every call: traced every call.)
    All of them when none matches (nothing is left unguarded)."""
    loc = frame.f_locals
    names = code.co_freevars
    out = []
    for f in fns:
        cl = f.__closure__
        if cl is None or len(cl) != len(names):
            continue
        for name, cell in zip(names, cl):
            try:
                if cell.cell_contents is not loc.get(name, MISSING):
                    break
            except ValueError:          # an empty cell: the frame must not see the name either
                if name in loc:
                    break
        else:
            out.append(f)
    return out or fns


def _where(frame) -> str:
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _called_by_user(frame) -> bool:
    """Whether the nearest caller that is not library code is user code (frostjit's own use of
    the standard library, e.g. the kernel disk cache's temporary files, is not the function's)."""
    while frame is not None:
        c = code_class(frame.f_code, frame)
        if c != LIBRARY:
            return c == USER
        frame = frame.f_back
    return False


def _user_where(frame) -> str | None:
    while frame is not None:
        if code_class(frame.f_code, frame) == USER:
            return _where(frame)
        frame = frame.f_back
    return None


#: The ABC cache token (``ABC.register`` changes it; dispatch resolutions depend on it): the C
#: function itself, which a generated guard calls on every replay (no Python frame around it).
abc_token = abc.get_cache_token

