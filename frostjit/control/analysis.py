"""Which variables a rewritten ``while``/``if``/``for`` reads and writes (for :mod:`.syntax`).

The rules (Dr.Jit's, stated once): stepping through the function in program order, a name is
*defined* once a statement before the construct binds it (parameters, assignments, ``for``
targets, ``with ... as``, imports, ``def``/``class``; union over branches, so "maybe defined"
counts).  The **state** of a loop is every defined name the condition or the body mentions; the
**inputs** of a conditional every defined name its condition or branches mention, and its
**outputs** the inputs plus the names both branches bind (:func:`branch_writes`: a nested ``if``
binds a name only when both of its branches do or the name was defined before it, a nested
``while`` only names defined before it).  A name first bound inside a loop body is local to the
body.  Names declared ``global``/``nonlocal`` are never state.
"""
from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function's signature binds."""
    a = fn.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    if a.vararg is not None:
        names.add(a.vararg.arg)
    if a.kwarg is not None:
        names.add(a.kwarg.arg)
    return names


def declarations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function declares ``global`` or ``nonlocal`` (not in nested scopes)."""
    out: set[str] = set()
    for node in _walk_scope(fn.body):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


def _walk_scope(nodes):
    """Every node of ``nodes`` in the current scope: nested functions, lambdas and classes are not
    entered (their names and decorators, defaults and bases are); comprehensions are entered
    (a walrus inside one binds in this scope)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            children = node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]
        elif isinstance(node, ast.ClassDef):
            children = node.decorator_list + node.bases + [k.value for k in node.keywords]
        elif isinstance(node, ast.Lambda):
            children = node.args.defaults + [d for d in node.args.kw_defaults if d]
        else:
            children = list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))


def stored_names(nodes) -> set[str]:
    """Names bound by ``nodes`` (statements or expressions) in the current scope."""
    out: set[str] = set()
    comprehension_targets: set[int] = set()
    for node in _walk_scope(nodes):
        if isinstance(node, _COMPREHENSIONS):
            for gen in node.generators:        # comprehension variables are the comprehension's own
                comprehension_targets.update(id(n) for n in ast.walk(gen.target))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if id(node) not in comprehension_targets:
                out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    out.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return out


def mentioned_names(nodes) -> set[str]:
    """Every name ``nodes`` mention, read or written, nested scopes included (a closure read)."""
    out: set[str] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                out.add(node.id)
    return out


def find_escape(body, kinds: tuple) -> ast.AST | None:
    """The first statement in ``body`` that would leave a rewritten construct: ``return``,
    ``yield``/``await`` anywhere in this scope, ``break``/``continue`` not inside a nested loop.

    ``kinds`` filters what counts (e.g. ``(ast.Break, ast.Continue)``)."""
    return _find_escape_in(body, False, kinds)


def _find_escape_in(nodes, in_loop: bool, kinds: tuple) -> ast.AST | None:
    # module-level rather than a recursive closure: a closure referring to itself is a reference
    # cycle per call, left for the cyclic GC
    for node in nodes:
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)) and isinstance(node, kinds):
            return node
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop and isinstance(node, kinds):
            return node
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            # the loop's own break/continue belong to it; its else clause is outside it
            header = [node.test] if isinstance(node, ast.While) else [node.target, node.iter]
            found = (_find_escape_in(header, in_loop, kinds) or _find_escape_in(node.body, True, kinds)
                     or _find_escape_in(node.orelse, in_loop, kinds))
        else:
            found = _find_escape_in(list(ast.iter_child_nodes(node)), in_loop, kinds)
        if found is not None:
            return found
    return None


def branch_writes(stmts, known: set[str]) -> set[str]:
    """The names a branch of a rewritten ``if`` binds, counted as Dr.Jit 1.5's ``@syntax`` counts them.

    ``known`` holds the names defined before the branch.  A nested ``if`` (a plain Python one
    or a hinted one alike) binds the names both of its branches bind, plus the names either
    binds that were defined before it; a nested ``while`` binds only names defined before it
    (a name first bound there may never be).  Every other statement binds what it stores.  So
    ``if c: (if flag: z = 1)`` / ``else: (if flag2: z = 2)`` does not make ``z`` an output:
    Dr.Jit leaves such a name out, and returning it would raise ``UnboundLocalError`` on the
    branch whose inner test is false.
    """
    out: set[str] = set()
    for st in stmts:
        before = known | out
        if isinstance(st, ast.If):
            w1, w2 = branch_writes(st.body, before), branch_writes(st.orelse, before)
            out |= (w1 & w2) | ((w1 | w2) & before)
        elif isinstance(st, ast.While):
            out |= stored_names(st.body + st.orelse) & before
        else:
            out |= stored_names([st])
    return out
