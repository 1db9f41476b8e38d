"""Bytecode analysis for the read set: each code object, once, into *chains* (a root load
followed by attribute loads and constant subscripts, ``cfg.model.scale``, ``d["k"]``) and the
stores that end them, keyed by instruction offset (see :mod:`.readset`).  Written against
:mod:`dis` names of Python 3.10 to 3.13."""
from __future__ import annotations

import dis

# ------------------------------------------------------------------------------ code analysis
_ROOTS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_GLOBAL", "LOAD_NAME",
          "LOAD_FROM_DICT_OR_DEREF"}
_CALLS = {"CALL", "CALL_FUNCTION", "PRECALL", "CALL_METHOD"}
_SINGLE = {"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_SMALL_INT"}
_ANALYSIS: dict = {}


class Chain:
    """A root load followed by attribute / constant-subscript steps (see module docstring)."""

    __slots__ = ("root", "name", "steps", "end", "line", "text")

    def __init__(self, root, name, steps, end, line):
        self.root = root            # "fast" | "deref" | "global" | "globals()" | "builtin-fn"
        self.name = name
        self.steps = steps          # (("attr", name) | ("item", key), ...)
        self.end = end              # None | ("store_attr", n) | ("del_attr", n) | ("store_item", key|MISSING)
        self.line = line
        text = "globals()" if root == "globals()" else str(name)
        for k, v in steps:
            text += f".{v}" if k == "attr" else f"[{v!r}]"
        self.text = text


MISSING = object()


def _hashable(k) -> bool:
    try:
        hash(k)
    except TypeError:
        return False
    return type(k) in (int, str, bytes, bool, float, tuple, type(None))


def _call_arity(ins, j):
    """``n`` when ``ins[j:]`` is ``[PRECALL n] CALL n`` (any version), else ``None``."""
    if j < len(ins) and ins[j].opname == "PRECALL":
        j += 1
    if j < len(ins) and ins[j].opname in ("CALL", "CALL_FUNCTION", "CALL_METHOD"):
        return ins[j].arg
    return None


def _steps(ins, j):
    """Attribute loads and constant subscripts from ``ins[j]`` on: ``(steps, end, next index)``."""
    steps = []
    end = None
    n = len(ins)
    while j < n:
        y = ins[j]
        op = y.opname
        if op in ("LOAD_ATTR", "LOAD_METHOD"):
            steps.append(("attr", y.argval))
            j += 1
            continue
        if op == "LOAD_CONST" and j + 1 < n and ins[j + 1].opname == "BINARY_SUBSCR" and _hashable(y.argval):
            steps.append(("item", y.argval))
            j += 2
            continue
        if op in ("COPY", "DUP_TOP") and (y.arg in (None, 1)) and j + 1 < n and ins[j + 1].opname == "LOAD_ATTR":
            # ``o.x += v``: a read of o.x and a store to it
            steps.append(("attr", ins[j + 1].argval))
            end = ("aug", ins[j + 1].argval)
            break
        if op == "STORE_ATTR":
            end = ("store_attr", y.argval)
        elif op == "DELETE_ATTR":
            end = ("del_attr", y.argval)
        elif op in _SINGLE and j + 1 < n and ins[j + 1].opname in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            end = ("store_item", y.argval if op == "LOAD_CONST" and _hashable(y.argval) else MISSING)
        elif op == "LOAD_CONST" and j + 2 < n and ins[j + 1].opname in ("COPY", "DUP_TOP_TWO") \
                and _hashable(y.argval):
            # ``d["k"] += v``: a read of d["k"] and a store to it
            k = y.argval
            for z in ins[j + 1:j + 5]:
                if z.opname == "BINARY_SUBSCR":
                    steps.append(("item", k))
                    end = ("aug", k)
                    break
        break
    return tuple(steps), end, j


def analyse(code) -> dict:
    """``{instruction offset: [Chain or ("store_global", name) ...]}`` for one code object."""
    table = _ANALYSIS.get(code)
    if table is not None:
        return table
    # EXTENDED_ARG prefixes (an operand of 256 or more: the 257th name of a function) are not
    # steps: dropped, so a chain reads through them (``C.a300``); a root's table entry is also
    # keyed at its prefixes' offsets, wherever the trace reports the instruction.
    ins, prefixes, pending = [], {}, []
    for x in dis.get_instructions(code):
        if x.opname == "EXTENDED_ARG":
            pending.append(x.offset)
            continue
        if pending:
            prefixes[x.offset], pending = pending, []
        ins.append(x)
    table = {}
    line = code.co_firstlineno
    freevars = set(code.co_freevars)
    extra = {}      # root index -> (extra trailing steps, end) (getattr(o, "x").y, vars(o), type(o).k)
    for i, x in enumerate(ins):
        ln = x.starts_line if isinstance(x.starts_line, int) and not isinstance(x.starts_line, bool) \
            else getattr(x, "line_number", None)
        if isinstance(ln, int) and ln > 0:
            line = ln
        op = x.opname
        acts = None
        if op == "LOAD_GLOBAL" and x.argval == "globals" and _call_arity(ins, i + 1) == 0:
            j = i + 1 + (ins[i + 1].opname == "PRECALL") + 1
            steps, end, _ = _steps(ins, j)
            acts = [Chain("globals()", "globals", steps, end, line)]
        elif op in _ROOTS or op == "LOAD_FAST_LOAD_FAST":
            names = x.argval if op == "LOAD_FAST_LOAD_FAST" else (x.argval,)
            kind = "global" if op in ("LOAD_GLOBAL", "LOAD_NAME") else \
                "deref" if op in ("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF") else "fast"
            if kind == "deref" and names[0] not in freevars:
                kind = "fast"           # a cell variable of this frame: local state
            steps, end, j = _steps(ins, i + 1)
            acts = [Chain(kind, n, (), None, line) for n in names[:-1]]
            acts.append(Chain(kind, names[-1], steps, end, line))
            if op == "LOAD_GLOBAL" and x.argval in ("getattr", "hasattr", "setattr", "delattr", "vars", "type") \
                    and not steps and i + 1 < len(ins):
                acts[-1].end = ("builtin", x.argval)
                k = _builtin_pattern(ins, i + 1, x.argval)
                if k is not None:
                    root_i, more, end2 = k
                    extra[root_i] = (more, end2)
                    acts[-1].end = ("builtin-const", x.argval)
                elif x.argval == "type":
                    acts[-1].end = ("builtin-const", "type")     # type(<expression>): nothing to follow
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            acts = [("store_global", x.argval, line)]
        elif op in ("STORE_DEREF", "DELETE_DEREF") and x.argval in freevars:
            acts = [("store_deref", x.argval, line)]
        if acts:
            table.setdefault(x.offset, []).extend(acts)
    for i, (more, end2) in extra.items():
        for a in table.get(ins[i].offset, ()):
            if isinstance(a, Chain) and a.end is None:
                a.steps = a.steps + more
                a.end = end2
                for k, v in more:
                    a.text += f".{v}" if k == "attr" else f"[{v!r}]"
    for offset, extended in prefixes.items():
        if offset in table:
            for o in extended:
                table[o] = table[offset]
    _ANALYSIS[code] = table
    return table


def _after_call(ins, k) -> int:
    """The index after the ``[PRECALL n] CALL n`` at ``ins[k]``."""
    return k + (ins[k].opname == "PRECALL") + 1


def _builtin_pattern(ins, j, fn):
    """``getattr(<chain>, "x"[, default])`` / ``hasattr`` / ``setattr(<chain>, "x", v)`` /
    ``vars(<chain>)`` / ``type(<chain>)``, and the attribute loads and constant subscripts on
    the result (``type(self).k``, ``vars(o)["k"]``): ``(index of the chain's root, its extra
    steps, the chain's end)``, or ``None``."""
    if j >= len(ins) or ins[j].opname not in _ROOTS:
        return None
    _, _, k = _steps(ins, j + 1)
    if fn in ("vars", "type"):
        if _call_arity(ins, k) != 1:
            return None
        # (type(o) is o's __class__: a static read of the class, its dicts guarded on the way)
        more, end, _ = _steps(ins, _after_call(ins, k))
        return j, (("attr", "__dict__" if fn == "vars" else "__class__"),) + more, end
    if k >= len(ins) or ins[k].opname != "LOAD_CONST" or not isinstance(ins[k].argval, str):
        return None
    name = ins[k].argval
    k += 1
    want = {"getattr": (2, 3), "hasattr": (2,), "setattr": (3,), "delattr": (2,)}[fn]
    for extra_args in range(0, 2):
        n = _call_arity(ins, k + extra_args)
        if n in want and n == 2 + extra_args:
            if extra_args and ins[k].opname not in _SINGLE:
                return None
            if fn in ("setattr", "delattr"):
                return j, (), ("store_attr", name)
            more, end = ((), None) if fn == "hasattr" else _steps(ins, _after_call(ins, k + extra_args))[:2]
            return j, (("attr", name),) + more, end
    return None


