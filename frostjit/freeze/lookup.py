"""Reading an attribute or item the way Python would, without running user code, and the
*atoms* (guardable facts) each read rests on (see :mod:`.readset`)."""
from __future__ import annotations

import collections
import sys
import types
import weakref
from _thread import _local as _thread_local

from .code import _is_library_module

ABSENT = type("Absent", (), {"__repr__": lambda self: "<absent>", "__slots__": ()})()
STOP = object()         # a lookup that would run user code (property, __getattr__): the chain stops


# ------------------------------------------------------------------------------ what is mutable
_IMMUTABLE_TYPE = 1 << 8        # Py_TPFLAGS_IMMUTABLETYPE (3.10+)
_HEAPTYPE = 1 << 9


def watched_class(c) -> bool:
    """Whether a class dict can change in a way we must watch as user state: user classes only
    (builtin and extension types are immutable; frostjit's classes are taken as constant; the
    entries read from libraries' Python classes are guarded through :func:`_library_class`)."""
    f = c.__flags__
    if f & _IMMUTABLE_TYPE or not f & _HEAPTYPE:
        return False
    m = getattr(c, "__module__", "") or ""
    if not isinstance(m, str) or m.startswith("frostjit"):
        return False
    mod = sys.modules.get(m)
    return mod is None or not _is_library_module(mod)


def _library_class(c) -> bool:
    """A class written in Python by a library (not frostjit): its dict may be patched, and every
    entry read there is guarded (its settings, r13 redteam; its methods, r13 libfn:
    ``mock.patch.object(json.JSONEncoder, "encode", f)`` replayed the old method's recording)."""
    f = c.__flags__
    return bool(f & _HEAPTYPE) and not f & _IMMUTABLE_TYPE and not str(getattr(c, "__module__", "")).startswith("frostjit")


_CONTAINERS = (list, dict, set, collections.deque, bytearray)
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "discard",
             "popleft", "appendleft", "extendleft", "rotate", "sort", "reverse", "popitem", "__setitem__",
             "__delitem__", "difference_update", "intersection_update", "symmetric_difference_update"}
_NP_META = {"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides", "flags", "T", "base"}


_DATA_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)
_C_GET = (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType, types.MethodDescriptorType,
          types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.MethodWrapperType)


class Atom:
    """One fact a recording depends on: a mapping entry, attribute, cell, list item, container
    contents or token, the value seen, and where it was read.

    ``kind``: ``"entry"`` (``holder`` is a mapping: globals, a class or module dict, an instance
    ``__dict__``), ``"attr"`` (``getattr(holder, key)`` of a slot or a function's ``__code__`` /
    ``__defaults__``), ``"class"`` (``type(holder())``: ``holder`` is a weak reference to ``owner``, or ``owner`` itself), ``"cell"``, ``"item"`` (``holder[key]`` of a list), ``"contents"`` (a whole
    mutable container), ``"numpy"`` (an array's data), ``"token"`` (``holder()``: the ABC cache
    token).  ``owner`` is the object whose state this is (the instance whose ``__dict__`` holds an
    entry), used to decide freshness and input paths.
    """

    __slots__ = ("kind", "holder", "key", "value", "owner", "label", "where")

    def __init__(self, kind, holder, key, value, owner, label, where):
        self.kind = kind
        self.holder = holder
        self.key = key
        self.value = value
        self.owner = owner
        self.label = label
        self.where = where

    def __repr__(self) -> str:
        return f"<atom {self.label} = {self.value!r} at {self.where}>"


# ------------------------------------------------------------------------------ static lookups
_PROXIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cls_dict_of(c):
    """``c.__dict__``, one mappingproxy per class (each access makes a new one; guards on one
    class's attributes share one holder and are checked together)."""
    try:
        p = _PROXIES.get(c)
        if p is None:
            p = _PROXIES[c] = c.__dict__
        return p
    except TypeError:
        return c.__dict__


def _find_in_mro(mro, name, atoms, label, where, lib_absent=True):
    """The first class of ``mro`` whose dict has ``name``: ``(class, value)`` or ``(None, ABSENT)``;
    appends atoms for every watched class dict consulted."""
    if len(mro) > 1 and name not in _cls_dict_of(mro[0]) and watched_class(mro[0]):
        # found on a base, or nowhere: which bases are consulted is the MRO, which
        # ``Cls.__bases__ = (Other,)`` replaces (r14: the old base's value replayed stale); the
        # class keeps one MRO tuple until then, so the guard is an identity test
        atoms.append(Atom("attr", mro[0], "__mro__", mro, mro[0], f"{mro[0].__qualname__}.__mro__", where))
    for c in mro:
        d = _cls_dict_of(c)
        if name in d:
            v = d[name]
            if watched_class(c) or _library_class(c):
                atoms.append(Atom("entry", d, name, v, c, f"{c.__qualname__}.{name}", where))
            return c, v
        if watched_class(c) or (lib_absent and _library_class(c)):
            # (absent here: a patch there, ``mock.patch.object(Sub, "m")`` of an inherited method,
            # would shadow what the recording found further on)
            atoms.append(Atom("entry", d, name, ABSENT, c, f"{c.__qualname__}.{name}", where))
    return None, ABSENT


def read_attr(o, name, label, where):
    """``o.<name>`` without running user code: ``(value, atoms)``; value ``STOP`` when the lookup
    would run user code (a property, ``__getattr__``, a Python descriptor)."""
    atoms = []
    if name == "__dict__":          # vars(o) / o.__dict__: the instance dict itself (its contents are watched)
        try:
            return object.__getattribute__(o, "__dict__"), atoms
        except (AttributeError, TypeError):
            return STOP, atoms
    if isinstance(o, type):
        return _read_type_attr(o, name, label, where, atoms)
    t = type(o)
    if isinstance(o, types.ModuleType):
        d = o.__dict__
        if name in d:
            # every entry read, a library's too: its settings (``math.tau = 1``) and its
            # functions (``math.sqrt = f``, ``mock.patch("numpy.sin")``: r13, a stale replay);
            # a library module's entries are checked together (guards.GuardSet: one C call each)
            v = d[name]
            atoms.append(Atom("entry", d, name, v, o, label, where))
            return v, atoms
        atoms.append(Atom("entry", d, name, ABSENT, o, label, where))
        return STOP, atoms
    owner, attr = _find_in_mro(t.__mro__, name, atoms, label, where)
    if watched_class(t) and any(a.owner is not o for a in atoms):
        # the class dicts consulted are those of o's class, which ``o.__class__ = Other`` changes
        try:
            h = weakref.ref(o)          # (a guard must not keep the object alive)
        except TypeError:
            h = o
        atoms.append(Atom("class", h, None, t, o, f"type({label.rsplit('.', 1)[0]})", where))
    at = type(attr)
    if owner is not None and (hasattr(at, "__set__") or hasattr(at, "__delete__")):
        if isinstance(attr, _DATA_DESCRIPTORS):
            try:
                v = attr.__get__(o, t)
            except AttributeError:
                v = ABSENT
            if watched_class(t) and name not in ("__dict__", "__class__", "__weakref__"):
                atoms.append(Atom("attr", o, name, v, o, label, where))
            return v, atoms
        return STOP, atoms          # a property or Python data descriptor: its code is traced
    if isinstance(o, _thread_local) and not (owner is not None and hasattr(at, "__get__")):
        # a threading.local: one attribute dict per thread, read in C (guarded by attribute, so a
        # replay on another thread checks that thread's value)
        try:
            v = getattr(o, name)
        except AttributeError:
            v = ABSENT
        atoms.append(Atom("attr", o, name, v, o, label, where))
        return (attr if v is ABSENT and owner is not None else v), atoms
    try:
        d = object.__getattribute__(o, "__dict__")
    except (AttributeError, TypeError):
        d = None
    if isinstance(d, dict):
        if (watched_class(t) or t is types.FunctionType) and t.__getattribute__ is object.__getattribute__:
            # which dict: ``o.__dict__ = {...}`` leaves the old one, whose entries hold, behind
            # (r14: a stale replay); one guard per object (ReadSet.add keeps the first)
            atoms.append(Atom("attr", o, "__dict__", d, o, f"{label.rsplit('.', 1)[0]}.__dict__", where))
        if name in d:
            v = d[name]
            atoms.append(Atom("entry", d, name, v, o, label, where))
            return v, atoms
        if watched_class(t) or t is types.FunctionType or (owner is not None and _library_class(t)):
            # (a library object's method shadowed by an instance attribute between calls:
            # ``mock.patch.object(obj, "m")``; a function attribute set after the call read it
            # absent, ``f.n = getattr(f, "n", 0) + 1``: r14, a stale replay)
            atoms.append(Atom("entry", d, name, ABSENT, o, label, where))
    if owner is not None:
        if hasattr(at, "__get__"):
            if isinstance(attr, _C_GET):
                try:
                    return attr.__get__(o, t), atoms
                except Exception:  # noqa: BLE001 - the real lookup raises the same way
                    return STOP, atoms
            return STOP, atoms
        return attr, atoms
    return (STOP if hasattr(t, "__getattr__") else ABSENT), atoms


def _read_type_attr(cls, name, label, where, atoms):
    meta = type(cls)
    # (a library metaclass's absence is not guarded: ``EnumType`` / ``ABCMeta`` gaining the
    # name of a class attribute read is not a patch programs make; each would cost every replay)
    mowner, mattr = _find_in_mro(meta.__mro__, name, atoms, label, where, lib_absent=False)
    mt = type(mattr)
    if mowner is not None and (hasattr(mt, "__set__") or hasattr(mt, "__delete__")):
        if isinstance(mattr, _DATA_DESCRIPTORS):
            try:
                return mattr.__get__(cls, meta), atoms
            except AttributeError:
                return ABSENT, atoms
        return STOP, atoms
    owner, attr = _find_in_mro(cls.__mro__, name, atoms, label, where)
    if owner is not None:
        at = type(attr)
        if hasattr(at, "__get__"):
            if isinstance(attr, _C_GET) or isinstance(attr, property):
                try:
                    return attr.__get__(None, cls), atoms
                except Exception:  # noqa: BLE001
                    return STOP, atoms
            return STOP, atoms
        return attr, atoms
    if mowner is not None:
        return mattr, atoms
    return (STOP if hasattr(meta, "__getattr__") else ABSENT), atoms


