"""A backend's part of a frozen function's replay: the :class:`ReplayEmitter` interface.

A frozen function's recording is replayed by one generated Python function
(``frostjit/freeze/replay_code.py``).  Freeze writes what is the same for every backend: the
input buffers it binds, size expressions, guards, the kernel history, output nodes, write-backs.
For each recorded operation (a kernel launch, a reduction, an upload, ...) it asks the
backend's emitter to write the lines that run it, so the replay of the LLVM backend can patch
``ctypes`` argument arrays and call machine code directly while the reference backend's is
plain calls of its methods, and freeze imports nothing of either.

Conventions of the generated code, which an emitter follows:

* a slot's buffer is the local variable ``buffer_<slot>``; an emitter assigns the buffers
  of the operation's outputs;
* a size is a :class:`Size`: ``expr`` is a Python expression over the replay's size symbols
  (``s0`` the width of the inputs' first size class, ``c0`` the count of the first
  ``compress``, ...), with ``is_const`` and ``value`` when it is a known constant;
* names an emitter binds into the namespace (:meth:`ReplayCode.bind`) say what they hold
  (``kernel_3``, ``args_3``), and an emitter never raises anything but ``MemoryError`` or
  the errors of size arithmetic (``ArithmeticError``, ``ValueError``, ``TypeError``) for a
  replay to fall back on the plain call.
"""
from __future__ import annotations

import abc
from typing import NamedTuple, Protocol

from ..trace.dtypes import VarType


class Size(Protocol):
    """A size in a replay: a Python expression, and whether it is a constant (and which)."""

    expr: str
    is_const: bool
    value: object


class ReplayCode:
    """The source text of a generated function being written, and the namespace it runs in.

    Attributes
    ----------
    lines : list[str]
        The lines written so far (without the final newline).
    namespace : dict
        Global names of the generated code.
    indent : str
        Prefix of the lines :meth:`line` writes.
    """

    def __init__(self, indent: str = ""):
        self.lines: list[str] = []
        self.namespace: dict = {}
        self.indent = indent
        self._counts: dict = {}

    def line(self, text: str) -> None:
        """Write one line at the current indentation."""
        self.lines.append(self.indent + text)

    def bind(self, name: str, value) -> str:
        """Bind ``name`` to ``value`` in the namespace; return ``name``.

        Binding one name twice to different objects is an error (a name must say one thing).
        """
        old = self.namespace.get(name, _UNSET)
        if old is not _UNSET and old is not value:
            raise RuntimeError(f"frostjit: the generated name {name!r} is bound twice")
        self.namespace[name] = value
        return name

    def constant(self, stem: str, value) -> str:
        """Bind ``value`` to a new name ``<stem>_<k>``; return it."""
        k = self._counts.get(stem, 0)
        self._counts[stem] = k + 1
        return self.bind(f"{stem}_{k}", value)

    def type_name(self, vt: VarType) -> str:
        """The name of a :class:`VarType` in the namespace (its own name: ``Float32``)."""
        return self.bind(vt.name, vt)

    def dtype_name(self, vt: VarType) -> str:
        """The name of ``vt``'s NumPy dtype in the namespace (``dtype_float32``)."""
        return self.bind(f"dtype_{vt.np_dtype.name}", vt.np_dtype)

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"


_UNSET = object()


class LaunchArg(NamedTuple):
    """One parameter of a recorded kernel launch, as the replay binds it.

    Attributes
    ----------
    kind : str
        The parameter kind (``backend.kernel.IN``, ``OUT``, ...).
    vt : VarType
        Its element type.
    slot : int
        The slot of its buffer: the variable ``buffer_<slot>``.
    size : Size
        The buffer's element count (an OUT parameter's is the launch size).
    scratch : int | None
        For an OUT parameter whose buffer never leaves the replay: the scratch register it
        reuses (buffers kept between replays, grown when too small; planned by liveness).
    fixed : object | None
        For a buffer that is the same object at every replay (an array the function captured),
        that buffer: its address and size may be bound once, when the code is generated.
    """

    kind: str
    vt: VarType
    slot: int
    size: Size
    scratch: int | None = None
    fixed: object = None


class ReplayEmitter(abc.ABC):
    """Writes a backend's operations into a replay (see the module docstring).

    One emitter serves one generated function; it may keep state between operations (the
    scratch registers it bound, the argument arrays of its launches).
    """

    def __init__(self, backend, code: ReplayCode):
        self.backend = backend
        self.code = code

    def prologue(self) -> None:
        """Lines that run once at the start of every replay, before the first operation."""

    @abc.abstractmethod
    def launch(self, index: int, kernel, size: Size, args: list[LaunchArg], defer: bool = False) -> None:
        """Allocate the OUT buffers of ``args`` (scratch registers or new buffers, assigned to
        ``buffer_<slot>``) and run ``kernel`` over ``size`` lanes.

        ``index`` is the operation's position in the recording (for unique names).  ``defer``:
        the launch may still run when the lines after it run, until the lines of :meth:`join`
        (or the next launch); freeze asks for it only where those lines read and write none of
        its buffers.  A backend may ignore it (run every launch to its end).
        """

    def join(self) -> None:
        """Lines that end a deferred launch still running (nothing if none may be: the base
        class never defers)."""

    @abc.abstractmethod
    def reduce(self, index: int, op: str, vt: VarType, src: int, size: Size, out: int) -> None:
        """``buffer_<out>``: a size-1 buffer, the reduction (``Backend.reduce``) of ``size``
        elements of ``buffer_<src>``."""

    # prefix_sum, argsort, compress, copy (and block_reduce): a call of the backend's own method,
    # which every backend replays the same way (a backend may write them inline instead).
    def prefix_sum(self, index: int, exclusive: bool, vt: VarType, src: int, size: Size, out: int) -> None:
        """``buffer_<out>``: the prefix sum of ``size`` elements of ``buffer_<src>``."""
        c = self.code
        c.line(f"buffer_{out} = backend.prefix_sum({c.type_name(vt)}, buffer_{src}, {size.expr}, {exclusive})")

    def argsort(self, index: int, vt: VarType, src: int, size: Size, out: int) -> None:
        """``buffer_<out>``: ``Backend.argsort`` of ``size`` unsigned keys of ``buffer_<src>``."""
        c = self.code
        c.line(f"buffer_{out} = backend.argsort({c.type_name(vt)}, buffer_{src}, {size.expr})")

    def block_reduce(self, index: int, block, vt: VarType, src: int, size: Size, out: int) -> None:
        """``buffer_<out>``: ``Backend.block_reduce`` (the :class:`~frostjit.backend.base.
        BlockReduction` ``block``) of ``size`` elements of ``buffer_<src>``."""
        c = self.code
        name = c.bind(f"block_{index}", block)
        if getattr(block, "symbols", ()):
            # an axis reduction whose rows follow the batch size too (OpenAxisReduction): built
            # for the call's numbers (its symbols' expressions, the recording's names)
            name += f".at({', '.join(str(getattr(s, 'expr', s)) for s in block.symbols)})"
        c.line(f"buffer_{out} = backend.block_reduce({name}, {c.type_name(vt)}, buffer_{src}, {size.expr})")

    def compress(self, index: int, src: int, size: Size, count: str, out: int) -> None:
        """``buffer_<out>`` and the local ``count`` (``c<k>``): ``Backend.compress`` of
        ``size`` elements of ``buffer_<src>``."""
        self.code.line(f"buffer_{out}, {count} = backend.compress(buffer_{src}, {size.expr})")

    def copy(self, index: int, vt: VarType, src: int, size: Size, out: int) -> None:
        """``buffer_<out>``: a copy of ``size`` elements of ``buffer_<src>``."""
        c = self.code
        c.line(f"buffer_{out} = backend.copy({c.type_name(vt)}, buffer_{src}, {size.expr})")

    @abc.abstractmethod
    def fill(self, index: int, vt: VarType, value, size: Size, out: int) -> None:
        """``buffer_<out>``: ``size`` elements equal to the constant ``value``."""

    def fill_many(self, fills: list) -> None:
        """Several :meth:`fill` in a row, ``[(index, vt, value, size, out)]`` (consecutive fills of
        one size: the zeroed gradients of a backward pass); a backend may allocate them at once."""
        for index, vt, value, size, out in fills:
            self.fill(index, vt, value, size, out)

    @abc.abstractmethod
    def fill_value(self, index: int, vt: VarType, value_expr: str, out: int) -> None:
        """``buffer_<out>``: one element, the value of the Python expression ``value_expr``
        (already of ``vt``'s value type: ``normalize_literal`` applied)."""

    @abc.abstractmethod
    def upload(self, index: int, vt: VarType, array_name: str, out: int) -> None:
        """``buffer_<out>``: a copy of the contiguous NumPy array bound to ``array_name``
        (``array_name`` may also be an expression giving one, computed at every replay)."""

    @abc.abstractmethod
    def host_values(self, slot: int, size: Size) -> str:
        """An expression: a NumPy array of the first ``size`` elements of ``buffer_<slot>``
        (read by the Debug-mode bounds checks)."""
