"""Whose code is running, and what it may call: frostjit's own, a library's or the user's
(:mod:`.readset` watches only the user's), and the deny list of calls whose results no guard can
cover (randomness, clocks, input/output, other threads)."""
from __future__ import annotations

import inspect
import os
import sys
import sysconfig
import types

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items()
                              if k in ("stdlib", "platstdlib", "purelib", "platlib") and p}))

INTERNAL, LIBRARY, USER = 0, 1, 2
_CLASS: dict = {}           # code -> INTERNAL / LIBRARY / USER


def code_class(code, frame=None) -> int:
    """Whose code this is: frostjit's own (not watched), a library's (deny list only), user code.

    Code without a file (``<string>``: the ``__init__`` a dataclass generates) belongs to the
    module whose globals it runs with.  Code ``exec``-ed into a namespace of its own is the user's
    when that namespace has no ``__name__`` or is ``__main__``'s (``exec(src, {...})`` in a script,
    a notebook cell): its reads are watched, else a replay could be stale; a namespace that names
    itself otherwise (``namedtuple``'s generated methods) is a library's.  (frostjit's own
    generated code is ``<frostjit...>``.)
    """
    c = _CLASS.get(code)
    if c is None:
        fn = code.co_filename
        if fn.startswith("<") and not fn.startswith(("<frostjit", "<frozen")) and frame is not None:
            mod = sys.modules.get(frame.f_globals.get("__name__", ""))
            f = getattr(mod, "__file__", None)
            if mod is None or getattr(mod, "__dict__", None) is not frame.f_globals:
                own_name = frame.f_globals.get("__name__")
                c = USER if fn == "<stdin>" or own_name is None or own_name == "__main__" else LIBRARY
            else:
                c = code_class_of_file(f) if f else USER
        elif fn.startswith("<frostjit"):
            c = _generated_code_class(frame.f_globals if frame is not None else None)
        elif not fn.startswith("<"):
            c = _file_class(fn, frame.f_globals if frame is not None else None)
        elif fn.startswith(_LIBRARY_DIRS) or fn.startswith("<frozen") or "site-packages" in fn \
                or "dist-packages" in fn:
            c = LIBRARY
        else:
            c = USER
        _CLASS[code] = c
    return c


def function_class(f) -> int:
    """:func:`code_class` of function ``f`` before it runs (its globals stand for the frame's;
    nothing is cached: generated code is classed by the globals it runs with)."""
    code = f.__code__
    c = _CLASS.get(code)
    if c is not None:
        return c
    fn = code.co_filename
    g = getattr(f, "__globals__", None)
    if fn.startswith("<frostjit"):
        return _generated_code_class(g)
    if not fn.startswith("<"):
        return _file_class(fn, g)
    return USER


def _file_class(fn: str, g) -> int:
    """The class of code from file ``fn`` run with globals ``g`` (or ``None``): the file's, except
    that frostjit model code of a module that sets ``__fj_watched__ = True`` is the user's (it
    reads its objects' settings: see :func:`_generated_code_class`)."""
    c = code_class_of_file(fn)
    return USER if c == INTERNAL and isinstance(g, dict) and g.get("__fj_watched__") is True else c


def _generated_code_class(g) -> int:
    """The class of code frostjit generated (``<frostjit ...>``), run with globals ``g``: its own
    (replay steps, guards, plan checks, run with frostjit's namespaces) unless ``g`` is the dict
    of a module that is not frostjit's.  That is ``@fj.syntax``'s rewrite of a user function (run with
    ``f.__globals__``): the user's code, whose reads must be watched (r15: a closure value or a
    global it read changed between calls and the replay kept the old one).  frostjit modules that
    set ``__fj_watched__ = True`` are watched the same way: model code on the public API
    (``frostjit.nn``'s layers) whose objects hold Python settings the user may change between
    calls (``LeakyReLU.negative_slope``, ``ScaleAdd.scale``: not PyTree fields, so not in the key;
    r15: their replays kept the first value)."""
    if not isinstance(g, dict):
        return INTERNAL
    name = g.get("__name__", "")
    mod = sys.modules.get(name) if isinstance(name, str) else None
    if mod is None or name.startswith("frostjit") or getattr(mod, "__dict__", None) is not g:
        return INTERNAL
    f = getattr(mod, "__file__", None)
    return code_class_of_file(f) if f else USER


def _is_library_module(m) -> bool:
    f = getattr(m, "__file__", None)
    if not f:       # builtin modules; a module made in Python (types.ModuleType) is the user's
        return m.__name__ in sys.builtin_module_names or m.__name__.startswith("frostjit")
    return code_class_of_file(f) != USER

def code_class_of_file(fn: str) -> int:
    fn = os.path.abspath(fn)
    if fn.startswith(_PACKAGE_DIR + os.sep):
        return INTERNAL
    if fn.startswith(_LIBRARY_DIRS) or "site-packages" in fn or "dist-packages" in fn:
        return LIBRARY
    return USER

# ------------------------------------------------------------------------------ the deny list
_RANDOM_MODULES = ("random", "_random", "secrets", "numpy.random")
_THREAD_MODULES = ("concurrent.futures", "queue", "multiprocessing", "_queue")
_OS_SAFE = {"fspath", "getpid", "cpu_count", "sched_getaffinity", "fsencode", "fsdecode"}


def _under(mod: str, prefixes) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def deny_reason(module: str, qualname: str) -> str | None:
    """Why calling ``module.qualname`` inside a recording cannot be guarded (``None``: it can)."""
    name = qualname.rsplit(".", 1)[-1]
    if _under(module, _RANDOM_MODULES) or (module in ("posix", "nt", "os") and name == "urandom") \
            or (module == "uuid" and name in ("uuid1", "uuid4")):
        return "random numbers"
    if module == "time" and name not in ("sleep", "struct_time"):
        return "the clock"
    if module in ("datetime", "_datetime") and name in ("now", "today", "utcnow"):
        return "the clock"
    if _under(module, _THREAD_MODULES) or (module == "_thread" and name.startswith("start")) \
            or (module == "threading" and qualname in ("Thread.start", "Timer.start")):
        return "work in another thread"
    if (module in ("io", "_io") and name == "open") or (module == "builtins" and name in ("open", "input")) \
            or (module in ("posix", "nt") and name not in _OS_SAFE) \
            or (module == "os" and (qualname.startswith("_Environ.") or name in ("getenv", "getenvb"))) \
            or module in ("socket", "_socket", "select", "subprocess", "tempfile"):
        return "input/output or the environment"
    return None


def deny_attribute(o, name: str):
    """``deny_reason`` of the method ``o.<name>`` looked up statically on ``o``'s class (or on
    ``o`` itself when it is a class), as ``(what, why)`` or ``None``.

    Methods of extension classes (Cython's ``numpy.random.Generator.random``) are neither
    builtins nor functions: the static lookup of the read set stops at them without seeing the
    bound method that :func:`deny_value` recognises, so the owner class decides.  Only callables
    count (``time.struct_time.tm_year`` is data, not the clock)."""
    t = o if isinstance(o, type) else type(o)
    for c in t.__mro__:
        d = c.__dict__
        if name in d:
            attr = d[name]
            if not callable(attr) and not isinstance(attr, (staticmethod, classmethod)):
                return None
            mod = getattr(c, "__module__", None)
            if not isinstance(mod, str):
                return None
            why = deny_reason(mod, f"{c.__qualname__}.{name}")
            return None if why is None else (f"{mod}.{c.__qualname__}.{name}", why)
    return None


def opaque_iterator(v) -> bool:
    """Whether ``v`` is an iterator whose position lives in C (``iter(list)``,
    ``itertools.count()``, ``map``, ``zip``, a generator): ``next(v)`` reads and advances state
    no guard can see.  (A Python class's ``__next__`` runs as user code and is watched.)"""
    nxt = getattr(type(v), "__next__", None)
    return nxt is not None and type(nxt) is not types.FunctionType


_ABSENT = object()


def _has_static(v, name: str) -> bool:
    """``hasattr(v, name)`` without running ``v``'s code (``__getattr__``, properties)."""
    return inspect.getattr_static(v, name, _ABSENT) is not _ABSENT


def deny_value(v) -> str | None:
    """``deny_reason`` of a callable value (a function, method or builtin), as ``what: why``."""
    t = type(v)
    # (static lookups: a user object's __getattr__ must not run while the read set observes)
    if t not in (types.BuiltinFunctionType, types.FunctionType, types.MethodType) and \
            not (callable(v) and _has_static(v, "__self__") and _has_static(v, "__qualname__")):
        return None
    qn = getattr(v, "__qualname__", None) or getattr(v, "__name__", "")
    if not isinstance(qn, str):
        return None
    mods = [getattr(v, "__module__", None)]
    s = getattr(v, "__self__", None)
    if s is not None and not isinstance(s, types.ModuleType):
        mods.append(s.__module__ if isinstance(s, type) else type(s).__module__)
    elif isinstance(s, types.ModuleType):
        mods.append(s.__name__)
    for m in mods:
        if isinstance(m, str):
            why = deny_reason(m, qn)
            if why is not None:
                return f"{m}.{qn}", why
    return None


