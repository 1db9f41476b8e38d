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
# a key or attribute name held in a variable (``d[k]``, ``getattr(o, name)``): the variable is
# read from the frame when the chain is evaluated (nothing runs between the chain's root and it)
_KEY_LOADS = {"LOAD_FAST": "fast", "LOAD_FAST_CHECK": "fast", "LOAD_DEREF": "deref", "LOAD_CLASSDEREF": "deref",
              "LOAD_GLOBAL": "global", "LOAD_NAME": "global"}
_ANALYSIS: dict = {}


class Chain:
    """A root load followed by attribute / constant-subscript steps (see module docstring)."""

    __slots__ = ("root", "name", "steps", "end", "line", "text")

    def __init__(self, root, name, steps, end, line):
        self.root = root            # "fast" | "deref" | "global" | "globals()" | "builtin-fn"
        self.name = name
        # (("attr", name) | ("item", key) | ("item_var", spec) | ("attr_var", spec) |
        #  ("get", (key spec, default spec)) | ("call0", None), ...); a spec is ("const", value)
        # or (variable kind, name) (``_KEY_LOADS``), read from the frame when evaluated
        self.steps = steps
        self.end = end              # None | ("store_attr", n) | ("del_attr", n) | ("store_item", key|MISSING)
        self.line = line
        text = "globals()" if root == "globals()" else str(name)
        for k, v in steps:
            text += _step_text(k, v)
        self.text = text


MISSING = object()


_PLAIN_LOADS = ("LOAD_FAST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK")

def _step_text(k, v) -> str:
    if k == "attr":
        return f".{v}"
    if k == "item":
        return f"[{v!r}]"
    if k == "item_var":
        return f"[{v[1]}]"
    if k == "attr_var":
        return f".<{v[1]}>"
    if k == "get":
        return f".get({v[0][1]!r})" if v[0][0] == "const" else f".get({v[0][1]})"
    return "()"


def _spec(x):
    """How a call argument or key is loaded: ``("const", value)``, ``(kind, name)``, or ``None``."""
    if x.opname in ("LOAD_CONST", "LOAD_SMALL_INT"):
        return ("const", x.argval) if _hashable(x.argval) else None
    kind = _KEY_LOADS.get(x.opname)
    return None if kind is None else (kind, x.argval)


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


def _steps(ins, j, used=None):
    """Attribute loads and constant subscripts from ``ins[j]`` on: ``(steps, end, next index)``;
    ``used`` collects the indices of the attribute loads taken as steps."""
    steps = []
    end = None
    n = len(ins)
    while j < n:
        y = ins[j]
        op = y.opname
        if op in ("LOAD_ATTR", "LOAD_METHOD") and y.argval == "get" and j + 1 < n:
            # ``d.get(k[, default])`` on a dict reads one entry (and the chain goes on from it)
            key = _spec(ins[j + 1])
            if key is not None:
                for extra in (0, 1):
                    m = _call_arity(ins, j + 2 + extra)
                    if m == 1 + extra and (not extra or _spec(ins[j + 2]) is not None):
                        steps.append(("get", (key, _spec(ins[j + 2]) if extra else ("const", None))))
                        if used is not None:
                            used.add(j)
                        j = _after_call(ins, j + 2 + extra)
                        break
                else:
                    key = None
                if key is not None:
                    continue
        if op in ("LOAD_ATTR", "LOAD_METHOD"):
            steps.append(("attr", y.argval))
            if used is not None:
                used.add(j)
            j += 1
            continue
        if op == "LOAD_CONST" and j + 1 < n and ins[j + 1].opname == "BINARY_SUBSCR" and _hashable(y.argval):
            steps.append(("item", y.argval))
            j += 2
            continue
        if op in _KEY_LOADS and j + 1 < n and ins[j + 1].opname == "BINARY_SUBSCR":
            steps.append(("item_var", (_KEY_LOADS[op], y.argval)))
            j += 2
            continue
        if _call_arity(ins, j) == 0 and j + 2 < n:
            # ``r().k``: a weak reference's referent (evaluated only for weak references)
            k2 = _after_call(ins, j)
            if k2 < n and ins[k2].opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_CONST") \
                    and not (ins[k2].opname == "LOAD_CONST" and (k2 + 1 >= n or ins[k2 + 1].opname != "BINARY_SUBSCR")):
                steps.append(("call0", None))
                j = k2
                continue
        if op in ("COPY", "DUP_TOP") and (y.arg in (None, 1)) and j + 1 < n and ins[j + 1].opname == "LOAD_ATTR":
            # ``o.x += v``: a read of o.x and a store to it
            steps.append(("attr", ins[j + 1].argval))
            if used is not None:
                used.add(j + 1)
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
    """``{instruction offset: [Chain or ("store_global", name) or ("loose", name) ...]}`` for one
    code object.  A ``"loose"`` act is an attribute load whose receiver no chain names (the
    result of a call or of a computed subscript: ``make().k``): the read set looks the name up
    on the hidden objects the recording reached (:meth:`.readset.ReadSet.loose_atoms`)."""
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
    lines = {}
    freevars = set(code.co_freevars)
    used = set()    # indices of attribute loads that are steps of a chain
    extra = {}      # root index -> (extra trailing steps, end) (getattr(o, "x").y, vars(o), type(o).k)
    for i, x in enumerate(ins):
        ln = x.starts_line if isinstance(x.starts_line, int) and not isinstance(x.starts_line, bool) \
            else getattr(x, "line_number", None)
        if isinstance(ln, int) and ln > 0:
            line = ln
        lines[i] = line
        op = x.opname
        acts = None
        if op == "LOAD_GLOBAL" and x.argval == "globals" and _call_arity(ins, i + 1) == 0:
            j = i + 1 + (ins[i + 1].opname == "PRECALL") + 1
            steps, end, _ = _steps(ins, j, used)
            acts = [Chain("globals()", "globals", steps, end, line)]
        elif op in _ROOTS or op == "LOAD_FAST_LOAD_FAST":
            names = x.argval if op == "LOAD_FAST_LOAD_FAST" else (x.argval,)
            kind = "global" if op in ("LOAD_GLOBAL", "LOAD_NAME") else \
                "deref" if op in ("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF") else "fast"
            if kind == "deref" and names[0] not in freevars:
                kind = "fast"           # a cell variable of this frame: local state
            if len(names) == 2 and i + 1 < len(ins) and ins[i + 1].opname == "BINARY_SUBSCR":
                # (3.13) ``d[k]`` with both locals: one instruction loads the root and its key
                steps, end, j = _steps(ins, i + 2, used)
                acts = [Chain(kind, names[0], (("item_var", ("fast", names[1])),) + steps, end, line),
                        Chain(kind, names[1], (), None, line)]
            else:
                steps, end, j = _steps(ins, i + 1, used)
                acts = [Chain(kind, n, (), None, line) for n in names[:-1]]
                acts.append(Chain(kind, names[-1], steps, end, line))
            if op == "LOAD_GLOBAL" and x.argval in ("getattr", "hasattr", "setattr", "delattr", "vars", "type") \
                    and not steps and i + 1 < len(ins):
                acts[-1].end = ("builtin", x.argval)
                k = _builtin_pattern(ins, i + 1, x.argval, used)
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
                    a.text += _step_text(k, v)
    for i, x in enumerate(ins):
        # (LOAD_SUPER_ATTR, 3.12+: ``super().k`` in one instruction, no call result to load from)
        if x.opname in ("LOAD_ATTR", "LOAD_METHOD") and x.argval == "__getattribute__":
            # ``object.__getattribute__(o, "s")``, ``type.__getattribute__(K, "s")``: C reads the
            # attribute a constant names, and no load of that name shows it (r15: a hidden
            # object's attribute read so was a stale replay): the code's identifier constants
            # are loose names, looked up on the hidden objects the recording reached
            for c in code.co_consts:
                if type(c) is str and c.isidentifier() and not (c.startswith("__") and c.endswith("__")):
                    table.setdefault(x.offset, []).append(("loose", c, lines[i]))
        if x.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR") and i not in used and isinstance(x.argval, str):
            table.setdefault(x.offset, []).append(("loose", x.argval, lines[i]))
        elif x.opname == "IMPORT_NAME" and i >= 2 and ins[i - 2].opname == "LOAD_CONST" and ins[i - 2].argval == 0 \
                and i + 1 < len(ins) and isinstance(x.argval, str):
            # ``import a.b`` / ``from a.b import X`` inside the function: the module objects read
            # from sys.modules in C (the top package and the module itself), looked at once the
            # import has run (at the next instruction)
            names = (x.argval.partition(".")[0], x.argval)
            table.setdefault(ins[i + 1].offset, []).append(("import", names, lines[i]))
        elif x.opname == "IMPORT_FROM":
            k = i - 1
            while k >= 0 and ins[k].opname in ("IMPORT_FROM", "STORE_FAST", "STORE_NAME", "STORE_GLOBAL",
                                               "STORE_DEREF", "POP_TOP", "SWAP"):
                k -= 1
            if k >= 2 and ins[k].opname == "IMPORT_NAME" and ins[k - 2].opname == "LOAD_CONST" \
                    and ins[k - 2].argval == 0:
                table.setdefault(x.offset, []).append(("import_from", (ins[k].argval, x.argval), lines[i]))
        elif x.opname == "IS_OP" and i and ins[i - 1].opname != "LOAD_CONST" \
                and not (i > 1 and ins[i - 2].opname == "LOAD_CONST" and ins[i - 1].opname in _PLAIN_LOADS):
            # (not ``x is None`` / ``None is x``; ``a is d["k"]`` ends LOAD_CONST, BINARY_SUBSCR: r14,
            # that identity test was not seen)
            table.setdefault(x.offset, []).append(("is", None, lines[i]))
    for offset, extended in prefixes.items():
        if offset in table:
            for o in extended:
                table[o] = table[offset]
    _ANALYSIS[code] = table
    return table


def _after_call(ins, k) -> int:
    """The index after the ``[PRECALL n] CALL n`` at ``ins[k]``."""
    return k + (ins[k].opname == "PRECALL") + 1


def _builtin_pattern(ins, j, fn, used=None):
    """``getattr(<chain>, "x"[, default])`` / ``hasattr`` / ``setattr(<chain>, "x", v)`` /
    ``vars(<chain>)`` / ``type(<chain>)``, and the attribute loads and constant subscripts on
    the result (``type(self).k``, ``vars(o)["k"]``): ``(index of the chain's root, its extra
    steps, the chain's end)``, or ``None``.  An attribute name held in a variable
    (``getattr(o, name)``) is an ``attr_var`` step (read from the frame when evaluated)."""
    if j >= len(ins) or ins[j].opname not in _ROOTS:
        return None
    _, _, k = _steps(ins, j + 1)
    if fn in ("vars", "type"):
        if _call_arity(ins, k) != 1:
            return None
        # (type(o) is o's __class__: a static read of the class, its dicts guarded on the way)
        more, end, _ = _steps(ins, _after_call(ins, k), used)
        return j, (("attr", "__dict__" if fn == "vars" else "__class__"),) + more, end
    if k >= len(ins):
        return None
    if ins[k].opname == "LOAD_CONST" and isinstance(ins[k].argval, str):
        step = ("attr", ins[k].argval)
    elif ins[k].opname in _KEY_LOADS:
        step = ("attr_var", (_KEY_LOADS[ins[k].opname], ins[k].argval))
    else:
        return None
    k += 1
    want = {"getattr": (2, 3), "hasattr": (2,), "setattr": (3,), "delattr": (2,)}[fn]
    for extra_args in range(0, 2):
        n = _call_arity(ins, k + extra_args)
        if n in want and n == 2 + extra_args:
            if extra_args and ins[k].opname not in _SINGLE:
                return None
            if fn in ("setattr", "delattr"):
                return j, (), ("store_attr", step[1]) if step[0] == "attr" else ("store_attr_var", step[1])
            more, end = ((), None) if fn == "hasattr" else _steps(ins, _after_call(ins, k + extra_args), used)[:2]
            return j, (step,) + more, end
    return None
