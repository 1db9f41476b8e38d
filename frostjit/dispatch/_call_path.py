"""The generated call path: the Python function users call, specialised per table shape.

For a function whose methods all take two positional arguments the body is::

    def f(a0=NOT_PASSED, a1=NOT_PASSED, /, *extra):
        if extra:                                           # more than any method takes
            return call_slowly((a0, a1), extra, {})
        try:
            return decisions[type(a0)][type(a1)](a0, a1)    # the implementation itself
        except KeyError as error:                           # raised here, not by the method
            if error.__traceback__.tb_next is not None:
                raise
        return resolve((a0, a1))(a0, a1)

The code is registered with :mod:`linecache` under a readable file name, so tracebacks show
its lines, and written to ``$FROSTJIT_DUMP/dispatch/the_call_path_of_<module>.<name>-<digest>.py``
when the environment variable ``FROSTJIT_DUMP`` is set (the code then runs from that file).
"""

from __future__ import annotations

import linecache
import os
import re
import zlib
from typing import Any

#: Functions with more methods' arity than this use the ``*args`` path.
MAX_SPECIALIZED_ARITY = 4


def source(name: str, shape: int | None, keywords: bool, uses_abc: bool, returns: bool) -> str:
    """Source of the call path for a table shape.

    ``shape``: the single arity of every method (fixed positional parameters), or ``None``
    (``*args``). ``keywords``: some method can take keywords (then ``**kw``, ~26 ns per call:
    CPython allocates its dict). The fixed-arity path takes ``*extra`` so that more positional
    arguments than the methods take reach the slow path (``NotFoundLookupError``, or a parent
    class's method); it costs ~5-8 ns per call, since CPython 3.11 does not inline calls of
    functions with ``*args``. ``uses_abc``: check ``abc``'s cache token. ``returns``: some
    method has a return annotation (converted inline). With two or more fixed parameters the
    decisions are a nested dict, ``decisions[type(a0)][type(a1)]...``: cheaper than building
    and hashing a tuple key.
    """
    lines = []
    if shape is None:
        params, call, packed = "*args, **kw", "*args, **kw", "args"
        key = "[type(args[0]) if len(args) == 1 else tuple(map(type, args))]"
    else:
        names = [f"a{i}" for i in range(shape)]
        params = ", ".join(f"{n}=NOT_PASSED" for n in names) + ", /, *extra" + (", **kw" if keywords else "")
        call = ", ".join(names)
        packed = f"({call},)"
        if keywords:
            lines += ["    if extra or kw:", f"        return call_slowly({packed}, extra, kw)"]
        else:
            lines += ["    if extra:", f"        return call_slowly({packed}, extra, {{}})"]
        key = "".join(f"[type({n})]" for n in names)
    if uses_abc:
        lines += ["    if abc_token() != token[0]:", "        abc_registered()"]
    more = ", kw" if shape is None else ""
    if returns:
        # Decisions are (implementation, classes, unchanged types, ReturnTypes); a method
        # without a return annotation has classes ``object``.
        lines += ["    try:", f"        method, classes, unchanged, returns = decisions_returning{key}",
                  "    except KeyError:", "        method = None",
                  "    if method is None:",  # the miss runs outside the handler
                  f"        method, classes, unchanged, returns = resolve_returning({packed}{more})",
                  f"    result = method({call})",
                  "    if isinstance(result, classes) or type(result) in unchanged:",
                  "        return result",
                  "    return convert_result(result, returns)"]
    else:
        # Lookup and call in one expression: a KeyError raised in *this* frame (no deeper
        # traceback entry) is a miss; one from the implementation is re-raised. The miss runs
        # after the handler, so lookup errors carry no "during handling" context.
        lines += ["    try:", f"        return decisions{key}({call})", "    except KeyError as error:",
                  "        if error.__traceback__.tb_next is not None:", "            raise",
                  f"    return resolve({packed}{more})({call})"]
    return f"def {_identifier(name)}({params}):\n" + "\n".join(lines) + "\n"


def _identifier(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    return ident if ident and not ident[0].isdigit() else f"_{ident}"


def compile_source(src: str, module: str, qualname: str, namespace: dict) -> Any:
    """Compile a generated call path; returns the code object, named after the dispatched
    function (see :func:`compile_generated`)."""
    code = compile_generated(src, f"the call path of {module}.{qualname}", namespace)
    name = qualname.rsplit(".", 1)[-1]
    if hasattr(code, "co_qualname"):  # Python >= 3.11
        return code.replace(co_name=name, co_qualname=qualname)
    return code.replace(co_name=name)


def compile_generated(src: str, what: str, namespace: dict) -> Any:
    """Compile generated code defining one function; return that function's code object.

    The source is registered with ``linecache`` under a readable file name
    (``<frostjit.dispatch: the call path of mod.f 1a2b3c4d>``), so tracebacks show its lines,
    and written to ``$FROSTJIT_DUMP/dispatch/<what>-<digest>.py`` when the environment variable
    ``FROSTJIT_DUMP`` is set (the code then runs from that file). The digest of the source
    names the entry, so generating the same code again reuses it: entries stay bounded.
    """
    digest = f"{zlib.crc32(src.encode()):08x}"
    label = what.replace("<locals>", "locals")
    src = f"# frostjit.dispatch: {what} (generated)\n" + src
    dump = os.environ.get("FROSTJIT_DUMP")
    if dump:
        folder = os.path.join(dump, "dispatch")
        os.makedirs(folder, exist_ok=True)
        safe = re.sub(r"[^\w.]", "_", label.replace(" ", "_"))
        filename = os.path.join(folder, f"{safe}-{digest}.py")
        with open(filename, "w") as fh:
            fh.write(src)
    else:
        filename = f"<frostjit.dispatch: {label} {digest}>"
    # mtime None: linecache.checkcache() keeps entries that are not files on disk.
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    local: dict[str, Any] = {}
    exec(compile(src, filename, "exec"), namespace, local)  # noqa: S102 - our own templates
    (fn,) = local.values()
    return fn.__code__
