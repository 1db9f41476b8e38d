"""``frostjit.format`` and ``frostjit.print``: Dr.Jit's format strings and PyTree pretty-printing.

>>> fj.format("{}:\\n{foo}", "A PyTree", foo={"a": Array3f(1, 2, 3)})
"A PyTree:\\n{\\n  'a': [[1, 2, 3]]\\n}"

The format-string language is Dr.Jit's subset of Python's: ``{}`` (implicit numbering),
``{0}`` (explicit; the two may not be mixed), ``{name}`` (keyword arguments), ``{name=}``
(prints ``name=`` before the value), ``{{``/``}}`` (braces).  Unreferenced arguments are ignored.

Values print as Dr.Jit prints them: arrays as :mod:`frostjit.array.printing` formats them,
containers (``list``, ``tuple``, ``dict``, ``DRJIT_STRUCT`` classes) one item per line with
two-space indentation, strings inside containers in quotes, Python floats as ``%g``, anything
else with ``repr`` (dataclasses and NumPy arrays included, as in Dr.Jit).

An ``active`` mask keeps the lanes where it is true in every array of its width; when no lane
is active nothing is formatted (``format`` returns ``None``, ``print`` prints nothing).
"""
from __future__ import annotations

import sys

import numpy as np

from ..array.flat import ArrayBase
from ..array.meta import meta_of
from ..array.registry import flat_type
from ..array.printing import format_lanes, format_scalar, lanes_first
from ..trace import masks
from ..trace.state import JitBackend

__all__ = ["format", "print"]


class _Formatter:
    """Formats PyTrees of values, with the lanes selected by an ``active`` mask and a ``limit``."""

    def __init__(self, limit: int, active):
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise TypeError(f"frostjit.format(): 'limit' must be an int, got {type(limit).__name__}")
        self.limit = limit
        self.active = active        # None, or a NumPy bool array of the lanes to show

    def value(self, v, indent: int, top: bool = False) -> str:
        """``v`` formatted at ``indent`` (continuation lines are indented by it)."""
        meta = meta_of(type(v))
        if meta is not None:
            return self.array(v, meta).replace("\n", "\n" + " " * indent)
        if isinstance(v, str):
            return v if top else f"'{v}'"       # Dr.Jit quotes without escaping
        if isinstance(v, bool) or v is None:
            return str(v)
        if isinstance(v, float):
            return format_scalar(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, (list, tuple)):
            brackets = "[]" if isinstance(v, list) else "()"
            return self.block(brackets, [self.value(x, indent + 2) for x in v], indent)
        if isinstance(v, dict):
            items = [f"{self.value(k, indent + 2)}: {self.value(x, indent + 2)}" for k, x in v.items()]
            return self.block("{}", items, indent)
        struct = getattr(type(v), "DRJIT_STRUCT", None)
        if isinstance(struct, dict):
            items = [f"{name}={self.value(getattr(v, name), indent + 2)}" for name in struct]
            return type(v).__name__ + self.block("[]", items, indent)
        return repr(v)

    @staticmethod
    def block(brackets: str, items: list, indent: int) -> str:
        if not items:
            return brackets
        inner = " " * (indent + 2)
        return brackets[0] + "\n" + ",\n".join(inner + i for i in items) + "\n" + " " * indent + brackets[1]

    def array(self, x, meta) -> str:
        a = lanes_first(x)
        if self.active is not None and meta.is_jit and a.ndim >= 1 and a.shape[0] == self.active.shape[0]:
            a = a[self.active]
        return format_lanes(a, meta, self.limit)


def _active_lanes(active):
    """``active`` as ``None`` (every lane), ``False`` (nothing to print) or a NumPy bool array."""
    if active is True:
        return None
    if active is False:
        return False
    meta = meta_of(type(active))
    if meta is None or meta.vt.name != "Bool" or meta.is_vector or meta.is_tensor:
        raise TypeError(f"frostjit.format(): 'active' must be a bool or a 1-D Bool array, "
                        f"got {type(active).__name__}")
    mask = np.asarray(active).astype(bool, copy=False)
    if not mask.any():
        return False
    return None if mask.all() else mask


def _fields(fmt: str):
    """Split ``fmt`` into literal text and fields: yields ``(text, None)`` or ``(field, position)``."""
    i, n, text = 0, len(fmt), []
    while i < n:
        c = fmt[i]
        if c == "{":
            if i + 1 < n and fmt[i + 1] == "{":
                text.append("{")
                i += 2
                continue
            end = fmt.find("}", i + 1)
            if end < 0:
                raise RuntimeError(f"frostjit.format(): unmatched brace in format string (at position {i}).")
            if text:
                yield "".join(text), None
                text = []
            yield fmt[i + 1:end], i
            i = end + 1
        elif c == "}":
            if i + 1 < n and fmt[i + 1] == "}":
                text.append("}")
                i += 2
                continue
            raise RuntimeError('frostjit.format(): single "}" encountered in format string.')
        else:
            text.append(c)
            i += 1
    if text:
        yield "".join(text), None


def format(fmt=None, *args, limit: int = 20, active=True, **kwargs):  # noqa: A001  (Dr.Jit's name)
    """A formatted string of arrays, PyTrees and Python values, as Dr.Jit 1.5 formats them.

    Parameters
    ----------
    fmt : str or object
        A format string referencing ``*args`` / ``**kwargs`` (see the module docstring), or a
        single value to format (then no other positional argument is allowed).
    *args, **kwargs
        The values the format string references.
    limit : int
        Arrays with more than ``limit`` entries along a dimension show only their first and
        last three (default 20).
    active : bool or Bool array
        Only the lanes where this mask is true are shown.

    Returns
    -------
    str or None
        The text; ``None`` when ``active`` selects no lane.

    Raises
    ------
    TypeError
        No argument, ``None`` as the value, or a wrong ``limit``/``active``.
    RuntimeError
        A malformed format string or a missing argument (the message names it and its position).

    Examples
    --------
    >>> fj.format("{x=}", x=Float(1, 2))
    'x=[1, 2]'
    >>> fj.format(fj.arange(Int, 30))
    '[0, 1, 2, .. 24 skipped .., 27, 28, 29]'
    """
    if fmt is None:
        raise TypeError("frostjit.format(): expected a format string or a value to format, got None")
    mask = _active_lanes(active)
    if mask is False:
        return None
    f = _Formatter(limit, mask)
    if not isinstance(fmt, str):
        if args:
            raise TypeError("frostjit.format(): the first argument must be the format string when "
                            "several values are given")
        return f.value(fmt, 0, top=True)
    out, implicit, explicit, next_arg = [], False, False, 0
    for field, pos in _fields(fmt):
        if pos is None:
            out.append(field)
            continue
        name, echo = (field[:-1], True) if field.endswith("=") else (field, False)
        if name == "":
            if explicit:
                raise RuntimeError("frostjit.format(): cannot switch from explicit to implicit field numbering.")
            implicit = True
            index = next_arg
            next_arg += 1
        elif name.isdigit():
            if implicit:
                raise RuntimeError("frostjit.format(): cannot switch from implicit to explicit field numbering.")
            explicit = True
            index = int(name)
        else:
            index = None
        if index is None:
            if name not in kwargs:
                raise RuntimeError(f'frostjit.format(): missing keyword argument "{name}" referenced by '
                                   f"format string (at position {pos}).")
            value = kwargs[name]
        else:
            if index >= len(args):
                raise RuntimeError(f"frostjit.format(): missing positional argument {index} referenced by "
                                   f"format string (at position {pos}).")
            value = args[index]
        text = f.value(value, 0, top=True)
        out.append(f"{name}={text}" if echo else text)
    return "".join(out)


def refuse_symbolic(who: str, *trees) -> None:
    """Raise :class:`~frostjit.schedule.loops.LoopVariableError` naming ``who`` when an array in
    ``trees`` is a variable of a symbolic loop, conditional or call body: its values exist only
    while the kernel runs, and frostjit has no delayed (in-kernel) printing or checks yet."""
    from ..trace import loops                       # (late: control flow imports this module)
    from ..schedule.loops import LoopVariableError
    from ..tree import leaves
    nodes = [a._node for a in leaves(trees) if hasattr(a, "_node")]
    if nodes and loops.is_symbolic(nodes):
        raise LoopVariableError(
            f"{who}(): an argument is a variable of a symbolic loop, conditional or call body, whose "
            f"values exist only while its kernel runs; frostjit cannot print or check it there yet "
            f"(Dr.Jit delays the output until the kernel runs). Use it after the loop, or run the "
            f"loop in evaluated mode: with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, False) "
            f"(SymbolicConditionals / SymbolicCalls for branches and calls)")


def _in_scope(active):
    """``active`` and the lanes of the enclosing symbolic conditional's branch: it runs on every
    lane under a mask (trace/masks.py), and Dr.Jit prints only its lanes there (``[2, 3]`` in the
    true branch of ``x > 1.5`` for ``x = [1, 2, 3]``, ``[1]`` in the false one; an evaluated
    branch or loop body prints every lane, in both). An ``active`` array (not a Python ``True``)
    is also restricted to the active lanes of an enclosing evaluated loop or branch, as Dr.Jit
    applies its mask stack to it (``[2]`` for ``i = [2, 3, 3]`` in the second iteration of
    ``while i < 3``; with ``active=True``, ``[2, 3, 3]``)."""
    top = masks.top()
    if isinstance(active, ArrayBase) and top is not None and getattr(active, "_node", None) is not None \
            and masks.compatible(top, active._node.size):
        active = active & type(active)._from_node(top)
    m = masks.shown()
    if m is None or active is False:
        return active
    lanes = flat_type(JitBackend.LLVM, m.vt)._from_node(m)
    if active is True:
        return lanes
    return active & lanes if masks.compatible(m, len(active)) else active


def print(fmt=None, *args, active=True, end: str = "\n", file=None, limit: int = 20,  # noqa: A001
          mode: str = "auto", **kwargs) -> None:
    """Format like :func:`format` and write the result (plus ``end``) to ``file`` (``sys.stdout``).

    Parameters
    ----------
    fmt, *args, **kwargs, limit, active
        As for :func:`format`; nothing is written when ``active`` selects no lane.
    end : str
        Appended to the text (default: a newline).
    file : object with ``write(str)``
        Where the text goes (default: ``sys.stdout``).
    mode : str
        ``"auto"``, ``"evaluate"`` (also ``"evaluated"``) or ``"symbolic"``.  frostjit has no symbolic variables, so
        every mode prints at once (Dr.Jit delays printing symbolic inputs to the next evaluation).

    Examples
    --------
    >>> fj.print("{} and {b}", 1, b=UInt32(2, 3))
    1 and [2, 3]
    """
    if mode not in ("auto", "evaluate", "evaluated", "symbolic"):   # ("evaluate": Dr.Jit's spelling)
        raise ValueError(f"frostjit.print(): 'mode' must be 'auto', 'evaluate' or 'symbolic', got {mode!r}")
    refuse_symbolic("print", fmt, args, kwargs, active)
    text = format(fmt, *args, limit=limit, active=_in_scope(active), **kwargs)
    if text is None:
        return
    (sys.stdout if file is None else file).write(text + end)

