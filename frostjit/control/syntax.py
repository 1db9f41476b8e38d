"""``@fj.syntax``: rewrite a function's Python ``while``/``if`` (and ``for ... in range(...)``) into
:func:`~frostjit.while_loop` / :func:`~frostjit.if_stmt` calls, and ``fj.hint``.

The rewrite follows Dr.Jit 1.5's ``@dr.syntax`` (checked side by side with its ``print_code``):

* ``while test: body`` becomes ``state = while_loop(state, cond, body, labels=...)``; the state is
  every name defined before the loop that the test or the body mentions (:mod:`.analysis`), in
  sorted order.  A name first bound inside the body is local to it.
* ``if test: a else: b`` becomes ``rv = if_stmt(args, test, true_fn, false_fn, ...)``; the
  arguments are the names defined before that the test or a branch mentions, the results those
  plus every name both branches bind (:func:`.analysis.branch_writes`: nested ``if``/``while`` count as in Dr.Jit).
* ``for i in range(...)`` stays a Python loop when the bounds are Python integers (Dr.Jit never
  rewrites ``for``); with JIT array bounds (where Python's ``range`` would fail) it runs as a
  ``while_loop`` over ``i`` (an extension; ``i`` ends at the first value past the range).
* The decision between Python and vectorized control flow is taken when the code runs, by the
  modes of ``while_loop``/``if_stmt``: a test that is a Python ``bool`` runs as plain Python
  (scalar mode).  ``fj.hint(test, mode="scalar")`` keeps the statement as written.
* ``break``, ``continue`` and ``return`` inside a rewritten statement raise ``SyntaxError`` when
  the function is decorated (Dr.Jit's limitation), naming the file and line.
* Nested functions are rewritten only with ``recursive=True``.

The generated code is registered with :func:`frostjit._dump.register_source`, so tracebacks
show it (and ``FROSTJIT_DUMP`` writes it out); ``print_code=True`` prints it.
"""
from __future__ import annotations

import __future__
import ast
import copy
import functools
import inspect
import operator
import os
import textwrap
import types
from dataclasses import dataclass, field

from .. import _dump
from . import syntax_runtime
from .analysis import branch_writes, declarations, find_escape, mentioned_names, parameters, stored_names

_RT = "_fj_rt"          # the name under which generated code reaches syntax_runtime
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # frostjit/
_HINT_KEYS = ("mode", "label", "max_iterations", "strict", "include", "exclude", "compress")
_ESCAPES = (ast.Break, ast.Continue, ast.Return)


def hint(arg, /, *, mode=None, max_iterations=None, label=None, include=None, exclude=None, strict=True,
         compress=None):
    """Return ``arg``; inside an ``@fj.syntax`` function, annotate the ``while``/``if`` it tests.

    Parameters
    ----------
    arg : object
        The loop or ``if`` condition (returned unchanged).
    mode : {None, "scalar", "symbolic", "evaluated"}
        ``"scalar"`` keeps the statement a plain Python ``while``/``if`` (no rewrite); the other
        modes are passed to the generated ``while_loop``/``if_stmt`` call.
    max_iterations : int, optional
        Passed to ``while_loop``.
    label : str, optional
        Passed as ``label=``.
    include, exclude : list, optional
        Local variables (by name, as a list of bare names) to add to or remove from the state
        that the rewrite infers.
    strict : bool
        Passed as ``strict=`` (``False`` relaxes the check that Python values keep their value).
    compress : bool, optional
        Passed to ``while_loop`` (evaluated loops).

    Returns
    -------
    object
        ``arg``.

    Examples
    --------
    >>> @fj.syntax
    ... def f(i):
    ...     while fj.hint(i < 10, mode="evaluated", label="count"):
    ...         i += 1
    ...     return i
    """
    return arg


def syntax(f=None, *, recursive: bool = False, print_ast: bool = False, print_code: bool = False):
    """Decorator: rewrite ``f``'s ``while``/``if`` statements into ``fj.while_loop``/``fj.if_stmt``.

    Parameters
    ----------
    f : function
        A function whose source is available (not one typed at the interactive prompt).
        ``@fj.syntax`` must be its innermost decorator.
    recursive : bool
        Also rewrite the functions defined inside ``f``.
    print_ast, print_code : bool
        Print the rewritten syntax tree / source when decorating.

    Returns
    -------
    function
        The rewritten function (``functools.wraps(f)``; its closure cells are ``f``'s).

    Raises
    ------
    SyntaxError
        ``break``, ``continue`` or ``return`` inside a statement that is rewritten (annotate it
        with ``fj.hint(cond, mode="scalar")`` when it is plain Python).
    RuntimeError
        The source of ``f`` cannot be read.

    Examples
    --------
    >>> @fj.syntax
    ... def collatz(x: UInt32):
    ...     n = UInt32(0)
    ...     while x != 1:
    ...         if x % 2 == 0:
    ...             x //= 2
    ...         else:
    ...             x = 3 * x + 1
    ...         n += 1
    ...     return n
    """
    if f is None:
        return functools.partial(syntax, recursive=recursive, print_ast=print_ast, print_code=print_code)
    return _rewrite(f, recursive, print_ast, print_code)


# -- the rewrite ------------------------------------------------------------------------------

@dataclass
class _Context:
    """What the rewrite of one function needs along the way."""
    filename: str
    first_line: int
    recursive: bool
    declared: set = field(default_factory=set)      # global/nonlocal names of the current function
    globals_: set = field(default_factory=set)      # the subset declared 'global'
    counter: int = 0

    def fresh(self) -> int:
        self.counter += 1
        return self.counter

    def error(self, node: ast.AST, what: str) -> SyntaxError:
        line = self.first_line + getattr(node, "lineno", 1) - 1
        err = SyntaxError(f"@fj.syntax ({self.filename}:{line}): {what}")
        err.filename, err.lineno = self.filename, line
        return err


_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, n).compiler_flag
                                                for n in __future__.all_feature_names))


def _rewrite(f, recursive: bool, print_ast: bool, print_code: bool):
    if not isinstance(f, types.FunctionType):
        raise TypeError(f"fj.syntax(): expected a Python function, got {type(f).__name__}")
    if os.path.dirname(os.path.abspath(f.__code__.co_filename)).startswith(_PACKAGE):
        # a frostjit decorator's wrapper (fj.wrap, ...): its source is frostjit's, not the user's
        raise RuntimeError(f"fj.syntax(): {f.__qualname__!r} is a function of frostjit (in "
                           f"{f.__code__.co_filename}), giving up. It is likely that you declared decorators in "
                           "the wrong order (@fj.syntax should be \"closest\" to the actual function definition).")
    try:
        source = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError) as e:
        raise RuntimeError(f"fj.syntax(): cannot read the source of {f.__qualname__!r} (a function typed at the "
                           "interactive prompt or built with exec has none)") from e
    tree = ast.parse(source)
    fn = tree.body[0]
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise TypeError(f"fj.syntax(): {f.__qualname__!r} is not defined by a 'def' statement")
    fn.decorator_list = []          # decorators above @fj.syntax apply to the result as usual
    ctx = _Context(inspect.getsourcefile(f) or "<unknown>", f.__code__.co_firstlineno, recursive)
    _rewrite_function(fn, ctx)

    freevars = list(f.__code__.co_freevars)
    factory = ast.FunctionDef(name="_fj_syntax_factory",
                              args=ast.arguments(posonlyargs=[], args=[ast.arg(a) for a in freevars + [_RT]],
                                                 kwonlyargs=[], kw_defaults=[], defaults=[]),
                              body=[fn, ast.Return(ast.Name(fn.name, ast.Load()))], decorator_list=[],
                              returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    text = ast.unparse(module)
    if print_ast:
        print(ast.dump(fn, indent=2))
    if print_code:
        print(ast.unparse(fn))
    filename = _dump.register_source(f"syntax {f.__qualname__}", text)
    # The user's future imports, not syntax.py's: compile() would inherit this module's
    # ``from __future__ import annotations`` and turn the annotations of classes defined in ``f``
    # into strings (a dataclass field ``x: t`` of a local ``t`` then fails to resolve).
    code = compile(text, filename, "exec", flags=f.__code__.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    namespace: dict = {}
    exec(code, f.__globals__, namespace)        # noqa: S102 -- our own generated code
    inner = _find_code(namespace["_fj_syntax_factory"].__code__, fn.name)
    cells = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
    cells[_RT] = types.CellType(syntax_runtime)
    closure = tuple(cells[name] for name in inner.co_freevars)
    g = types.FunctionType(inner, f.__globals__, f.__name__, f.__defaults__, closure)
    g.__kwdefaults__ = f.__kwdefaults__
    functools.update_wrapper(g, f)
    g.__fj_syntax_source__ = ast.unparse(fn)
    return g


def _find_code(code: types.CodeType, name: str) -> types.CodeType:
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == name:
            return c
    raise RuntimeError(f"fj.syntax(): the rewritten function {name!r} was not found")     # pragma: no cover


def _rewrite_function(fn, ctx: _Context) -> None:
    """Rewrite ``fn``'s body in place.  The names of enclosing functions that it reads are not
    state of its statements (as in Dr.Jit): they stay closure variables (passing one as state
    would assign it, making it a local name of ``fn``, unbound where it is read)."""
    saved = ctx.declared, ctx.globals_
    ctx.declared = declarations(fn)
    ctx.globals_ = {n for s in ast.walk(fn) if isinstance(s, ast.Global) for n in s.names}
    defined = parameters(fn) - ctx.declared
    fn.body = _block(fn.body, defined, ctx) or [ast.Pass()]
    ctx.declared, ctx.globals_ = saved


def _block(stmts: list, defined: set, ctx: _Context) -> list:
    """Rewrite a statement list; ``defined`` (updated) holds the names bound so far."""
    out: list = []
    for s in stmts:
        out.extend(_statement(s, defined, ctx))
    return out


def _statement(s: ast.stmt, defined: set, ctx: _Context) -> list:
    if isinstance(s, ast.While):
        return _while(s, defined, ctx)
    if isinstance(s, ast.If):
        return _if(s, defined, ctx)
    if isinstance(s, ast.For) and _is_range(s.iter) and not s.orelse and find_escape(s.body, _ESCAPES) is None:
        return _for_range(s, defined, ctx)
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if ctx.recursive:
            _rewrite_function(s, ctx)
        defined.add(s.name)
        return [s]
    if isinstance(s, (ast.For, ast.AsyncFor)):      # a Python loop: its body may hold rewritten statements
        inner = set(defined) | stored_names([s.target])
        s.body = _block(s.body, inner, ctx) or [ast.Pass()]
        s.orelse = _block(s.orelse, set(inner), ctx)
        defined |= inner | stored_names(s.orelse)
        return [s]
    if isinstance(s, (ast.With, ast.AsyncWith)):
        defined |= stored_names([i.optional_vars for i in s.items if i.optional_vars is not None])
        s.body = _block(s.body, defined, ctx) or [ast.Pass()]
        return [s]
    if isinstance(s, ast.Try):
        s.body = _block(s.body, defined, ctx) or [ast.Pass()]
        for h in s.handlers:
            if h.name:
                defined.add(h.name)
            h.body = _block(h.body, defined, ctx) or [ast.Pass()]
        s.orelse = _block(s.orelse, defined, ctx)
        s.finalbody = _block(s.finalbody, defined, ctx)
        return [s]
    defined |= stored_names([s]) - ctx.declared
    return [s]


# -- hints --------------------------------------------------------------------------------------

def _is_hint(node) -> bool:
    if not isinstance(node, ast.Call):
        return False
    fn = node.func
    return (isinstance(fn, ast.Name) and fn.id == "hint") or (isinstance(fn, ast.Attribute) and fn.attr == "hint")


def _split_hint(test, ctx: _Context):
    """``(condition, keywords for the call, include, exclude, scalar)`` of a (hinted) test."""
    if not _is_hint(test):
        return test, [], set(), set(), False
    if len(test.args) != 1:
        raise ctx.error(test, "fj.hint() takes the condition as its only positional argument")
    keywords, include, exclude, scalar = [], set(), set(), False
    for kw in test.keywords:
        if kw.arg not in _HINT_KEYS:
            raise ctx.error(test, f"fj.hint(): unknown keyword {kw.arg!r} (expected one of {', '.join(_HINT_KEYS)})")
        if kw.arg in ("include", "exclude"):
            if not isinstance(kw.value, (ast.List, ast.Tuple)) or \
                    not all(isinstance(e, ast.Name) for e in kw.value.elts):
                raise ctx.error(test, f"fj.hint(): '{kw.arg}' must be a list of variable names")
            (include if kw.arg == "include" else exclude).update(e.id for e in kw.value.elts)
        elif kw.arg == "mode" and isinstance(kw.value, ast.Constant) and kw.value.value == "scalar":
            scalar = True
        else:
            keywords.append(kw)
    return test.args[0], keywords, include, exclude, scalar


# -- while ------------------------------------------------------------------------------------

def _check_escape(nodes, ctx: _Context) -> None:
    bad = find_escape(nodes, _ESCAPES + (ast.Yield, ast.YieldFrom, ast.Await))
    if bad is not None:
        word = {ast.Break: "break", ast.Continue: "continue", ast.Return: "return"}.get(type(bad), "yield/await")
        raise ctx.error(bad, f"use of '{word}' inside a transformed 'while' loop or 'if' statement is currently "
                             "not supported. If the operations are all scalar, you can annotate them with "
                             "fj.hint(condition, mode='scalar') to avoid this limitation.")


def _names_tuple(names, ctx=ast.Load) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


def _def(name: str, args, body: list) -> ast.FunctionDef:
    return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(a) for a in args],
                                                         kwonlyargs=[], kw_defaults=[], defaults=[]),
                           body=body, decorator_list=[], returns=None, type_params=[])


def _rt_call(fn: str, args: list, keywords: list) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name(_RT, ast.Load()), fn, ast.Load()), args, keywords)


def _declarations_for(body: list, ctx: _Context) -> list:
    """``global``/``nonlocal`` statements a generated function needs to keep writing the same names."""
    names = stored_names(body) & ctx.declared
    out = []
    if names & ctx.globals_:
        out.append(ast.Global(sorted(names & ctx.globals_)))
    if names - ctx.globals_:
        out.append(ast.Nonlocal(sorted(names - ctx.globals_)))
    return out


def _labels(names) -> ast.Tuple:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _while(s: ast.While, defined: set, ctx: _Context) -> list:
    test, keywords, include, exclude, scalar = _split_hint(s.test, ctx)
    if scalar or s.orelse:
        if s.orelse and not scalar:
            raise ctx.error(s, "a 'while' loop with an 'else' clause cannot be transformed; annotate it with "
                               "fj.hint(condition, mode='scalar') if it is plain Python")
        s.test = test
        s.body = _block(s.body, set(defined), ctx) or [ast.Pass()]
        s.orelse = _block(s.orelse, set(defined), ctx)
        defined |= stored_names(s.body) | stored_names(s.orelse)
        return [s]
    _check_escape(s.body, ctx)
    state = sorted(((defined & mentioned_names([test] + s.body)) | include) - exclude - ctx.declared)
    k = ctx.fresh()
    cond_name, body_name = f"_fj_loop_cond_{k}", f"_fj_loop_body_{k}"
    body = _block(copy.deepcopy(s.body), set(defined) | set(state), ctx)
    cond_fn = _def(cond_name, state, [ast.Return(test)])
    body_fn = _def(body_name, state, _declarations_for(s.body, ctx) + body + [ast.Return(_names_tuple(state))])
    call = _rt_call("while_loop", [_names_tuple(state), ast.Name(cond_name, ast.Load()),
                                   ast.Name(body_name, ast.Load())],
                    [ast.keyword("labels", _labels(state))] + keywords)
    out = [ast.Expr(ast.Constant("-------- loop transformed by fj.syntax --------")), cond_fn, body_fn]
    out.append(ast.Assign([_names_tuple(state, ast.Store)], call) if state else ast.Expr(call))
    out.append(ast.Delete([ast.Name(cond_name, ast.Del()), ast.Name(body_name, ast.Del())]))
    for node in out:
        ast.copy_location(node, s)
    return out


# -- if ---------------------------------------------------------------------------------------

def _if(s: ast.If, defined: set, ctx: _Context) -> list:
    test, keywords, include, exclude, scalar = _split_hint(s.test, ctx)
    if scalar:
        s.test = test
        t_def, f_def = set(defined), set(defined)
        s.body = _block(s.body, t_def, ctx) or [ast.Pass()]
        s.orelse = _block(s.orelse, f_def, ctx)
        defined |= t_def | f_def
        return [s]
    _check_escape(s.body + s.orelse, ctx)
    loop_only = [kw.arg for kw in keywords if kw.arg in ("max_iterations", "compress")]
    if loop_only:
        raise ctx.error(s, f"fj.hint(): '{loop_only[0]}' applies to loops, not to an 'if' statement")
    args = sorted(((defined & mentioned_names([test] + s.body + s.orelse)) | include) - exclude - ctx.declared)
    both = (branch_writes(s.body, defined) & branch_writes(s.orelse, defined)) - ctx.declared - exclude
    rv = sorted(set(args) | both)
    k = ctx.fresh()
    t_name, f_name = f"_fj_if_true_{k}", f"_fj_if_false_{k}"
    t_body = _block(copy.deepcopy(s.body), set(defined) | set(args), ctx)
    f_body = _block(copy.deepcopy(s.orelse), set(defined) | set(args), ctx)
    t_fn = _def(t_name, args, _declarations_for(s.body, ctx) + t_body + [ast.Return(_names_tuple(rv))])
    f_fn = _def(f_name, args, _declarations_for(s.orelse, ctx) + f_body + [ast.Return(_names_tuple(rv))])
    call = _rt_call("if_stmt", [_names_tuple(args), test, ast.Name(t_name, ast.Load()), ast.Name(f_name, ast.Load())],
                    [ast.keyword("arg_labels", _labels(args)), ast.keyword("rv_labels", _labels(rv))] + keywords)
    out = [ast.Expr(ast.Constant("---- if statement transformed by fj.syntax ----")), t_fn, f_fn]
    out.append(ast.Assign([_names_tuple(rv, ast.Store)], call) if rv else ast.Expr(call))
    out.append(ast.Delete([ast.Name(t_name, ast.Del()), ast.Name(f_name, ast.Del())]))
    for node in out:
        ast.copy_location(node, s)
    defined |= set(rv)
    return out


# -- for i in range(...) ----------------------------------------------------------------------

def _is_range(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and 1 <= len(node.args) <= 3 and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args))


def _for_range(s: ast.For, defined: set, ctx: _Context) -> list:
    """Python ints: the ``for`` loop as written; JIT arrays: a ``while_loop`` over the target."""
    if not isinstance(s.target, ast.Name) or all(isinstance(a, ast.Constant) for a in s.iter.args):
        inner = set(defined) | stored_names([s.target])
        s.body = _block(s.body, inner, ctx) or [ast.Pass()]
        defined |= inner
        return [s]
    k = ctx.fresh()
    bounds, stop, step = f"_fj_range_{k}", f"_fj_range_stop_{k}", f"_fj_range_step_{k}"
    i = s.target.id
    bind = ast.Assign([ast.Name(bounds, ast.Store())], ast.Tuple(s.iter.args, ast.Load()))
    py_loop = ast.For(target=s.target, iter=ast.Call(ast.Name("range", ast.Load()),
                                                     [ast.Starred(ast.Name(bounds, ast.Load()), ast.Load())], []),
                      body=copy.deepcopy(s.body), orelse=[])
    py_defined = set(defined) | {bounds}
    py_branch = _statement(py_loop, py_defined, ctx)
    vec_defined = set(defined) | {bounds, i, stop, step}
    start = ast.Assign([_names_tuple([i, stop, step], ast.Store)],
                       _rt_call("range_state", [ast.Starred(ast.Name(bounds, ast.Load()), ast.Load())], []))
    increment = ast.Assign([ast.Name(i, ast.Store())],
                           ast.BinOp(ast.Name(i, ast.Load()), ast.Add(), ast.Name(step, ast.Load())))
    loop = ast.While(test=_rt_call("range_cond", [ast.Name(i, ast.Load()), ast.Name(stop, ast.Load()),
                                                  ast.Name(step, ast.Load())], []),
                     body=copy.deepcopy(s.body) + [increment], orelse=[])
    ast.copy_location(loop, s)
    vec_branch = [start] + _while(loop, vec_defined, ctx)
    choose = ast.If(test=_rt_call("python_range", [ast.Name(bounds, ast.Load())], []), body=py_branch,
                    orelse=vec_branch)
    out = [bind, choose]
    for node in out:
        ast.copy_location(node, s)
    defined |= py_defined | vec_defined
    return out
