"""Traversal of a frozen function's inputs into its *layout key*.

One walk over the input PyTree (arguments, keyword arguments, the globals and closure cells the
function names, ``state_fn``'s result) produces:

* ``key``: a tuple of tokens, one per visited object, capturing everything the seed docstring
  lists: the type of every node, container lengths, dict keys and field names, grad-enabled
  status, Python values (by ``hash``/``==``, by identity when unhashable), literal values,
  size 1 versus wide, which arrays share a size (*size classes*, numbered in order of first
  appearance), aliasing (the same node or object reached twice), NumPy dtype/shape/alignment;
* ``leaves``: the distinct JIT array objects, in walk order (write-back targets);
* ``nodes``: the distinct evaluated nodes (the recording's input slots);
* ``sizes``: the size of each size class (the replay's symbols ``s0, s1, ...``);
* ``containers``: every container object visited, in walk order (write-back targets);
* ``numpy``: the NumPy arrays among the inputs (re-read at every replay).

With ``paths=True`` the walk also records the path of every token in Dr.Jit's notation
(``args[1]``, ``kwargs["scene"].camera``), for the re-trace diagnostics.

What each object is comes from the one PyTree definition, :func:`frostjit.tree.node_type`
(arrays, static vectors, the traversal protocol, sequences, mappings, ``DRJIT_STRUCT`` classes,
dataclasses; ``__fj_opaque__`` classes are Python values): its children are walked in the order
:mod:`frostjit.tree` gives them, read and written with its ``children``/``assign``.  Freeze also
looks inside some of what the tree calls Python values, because a frozen call's key must see
them (:class:`ValueNode`): a plain object's ``__dict__``/``__slots__`` (keyed by ``hash``/``==``
when its class defines ``__eq__``, else by identity, *and* walked attribute by attribute, so a
changed plain attribute of ``self`` is a key change), a deque's items, a partial's function,
arguments and keywords, a bound method's function and instance; NumPy arrays, symbolic widths
and ``None`` have tokens of their own.
"""
from __future__ import annotations

import collections
import dataclasses
import decimal
import enum
import functools
import sys
import types

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions.evaluation import make_opaque
from ..tree.kinds import (frostjit_class, ARRAY, ARRAY_TYPES, DATACLASS, MAPPING, PROTOCOL, SEQUENCE, STRUCT, VALUE, VECTOR,
                          NodeType, node_type, slot_names)
from .values import Eq, Ident, coarse_eq, exact_state, float_bits, float_of_bits, value_key


_NO_SLOT = object()


def instance_dict(o):
    """``o``'s instance ``__dict__`` (or ``None``), read past a ``__getattribute__`` override (a
    proxy that forwards every attribute would hand over another object's dict)."""
    try:
        d = object.__getattribute__(o, "__dict__")
    except (AttributeError, TypeError):
        return None
    return d if isinstance(d, dict) else None


def slot_value(o, name):
    """The value in ``o``'s slot ``name`` (``_NO_SLOT`` when unset), read past a
    ``__getattribute__`` override."""
    try:
        return object.__getattribute__(o, name)
    except AttributeError:
        return _NO_SLOT


def value_token(o):
    """A plain object's identity in the key: itself when it compares by value (hashable, with its
    own ``__eq__``), else its (weak) identity (:class:`~.values.Ident`)."""
    t = type(o)
    if t.__eq__ is not object.__eq__:
        try:
            hash(o)
        except TypeError:
            return Ident(o)
        # (a subclass of a C type whose == is coarse, e.g. of datetime: its C state too)
        return (Eq(o), exact_state(o, t)) if coarse_eq(t) else Eq(o)
    return Ident(o)


def keys_token(keys: tuple) -> tuple:
    """Dict keys in the key: ``str`` keys as they are, others by :func:`~.values.value_key`
    (``{1: a}`` and ``{True: a}``, ``{0.0: a}`` and ``{-0.0: a}`` are different inputs)."""
    for k in keys:
        if type(k) is not str:
            return tuple(k if type(k) is str else value_key(k) for k in keys)
    return keys


# NumPy scalars that become recording parameters like Python ints and floats when their value
# changes between calls (a learning rate as ``np.float32``, ``arr.mean()``): the types a kernel
# literal can hold exactly (not ``np.longdouble``, ``np.bool_``, complex).  A parameter keeps its
# type in the key, so a replay sees the recorded type and NumPy's promotion of it.
NP_PARAM_NUMBERS = frozenset((np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                              np.uint8, np.uint16, np.uint32, np.uint64))
PARAM_NUMBERS = frozenset((int, float)) | NP_PARAM_NUMBERS


class Flat:
    """The result of walking one call's inputs (see module docstring)."""

    __slots__ = ("key", "leaves", "nodes", "node_index", "sizes", "size_index", "containers",
                 "numpy", "paths", "pending", "has_jit", "leaf_nodes", "cont_paths", "leaf_paths", "params",
                 "number_locs", "through", "tuple_locs", "shared")

    def __init__(self, paths: bool):
        self.key = []
        self.leaves = []
        self.leaf_nodes = []
        self.nodes = []
        self.node_index = {}
        self.sizes = []
        self.size_index = {}
        self.containers = []
        self.numpy = []
        self.paths = [] if paths else None
        self.cont_paths = [] if paths else None     # path of each container / leaf (paths=True)
        self.leaf_paths = [] if paths else None
        self.params = []            # Python numbers that are parameters of the recording (p0, p1, ...)
        self.number_locs = [] if paths else None     # (container, key, path) of each Python number
        # (paths=True) id(tuple) -> (parent, key) where each tuple was reached, and the ids of
        # containers reached more than once: a number inside a tuple becomes a parameter by
        # rebuilding the tuples above it (frozen.FrozenFunction._substitute_params)
        self.tuple_locs = {} if paths else None
        self.shared = set() if paths else None
        self.pending = []
        self.has_jit = False

    def data_token(self, array, node) -> tuple:
        """Key token of an evaluated array input (its node becomes an input slot on first sight).

        The token holds the array type, the slot, the size class on first sight (-1 for size
        1: size-1 arrays broadcast, so they are a different layout) and grad status.
        """
        k = self.node_index.get(id(node))
        if k is not None:
            return (type(array), k, array._ad is not None)
        k = self.node_index[id(node)] = len(self.nodes)
        self.nodes.append(node)
        return (type(array), k, self.size_class(node.size), array._ad is not None)

    def size_class(self, size: int) -> int:
        """-1 for size 1 (it broadcasts); else the index of the first input with this size."""
        if size == 1:
            return -1
        c = self.size_index.get(size)
        if c is None:
            c = self.size_index[size] = len(self.sizes)
            self.sizes.append(size)
        return c


def type_name(t) -> str:
    """Display name of a type in diagnostics (Dr.Jit spells Float32 ``Float``)."""
    n = getattr(t, "__name__", str(t))
    return "Float" if n == "Float32" and issubclass(t, ArrayBase) else n


# ---------------------------------------------------------------------------------- walker
class Walker:
    """Walks one input PyTree (see module docstring)."""

    __slots__ = ("f", "memo", "P", "opaque_mask", "force_opaque", "make_opaque", "param_mask", "n_numbers", "loc")

    def __init__(self, paths: bool, opaque_mask=frozenset(), force_opaque: bool = False, param_mask=frozenset()):
        self.f = Flat(paths)
        self.memo = {}
        self.P = paths
        self.opaque_mask = opaque_mask
        self.force_opaque = force_opaque
        self.make_opaque = False    # (set when the walk made a literal input opaque: evaluated it)
        # Python numbers (int, float, NP_PARAM_NUMBERS) are counted in walk order; those in param_mask are keyed by
        # type only and become parameters of the recording (see frozen.FrozenFunction._miss)
        self.param_mask = param_mask
        self.n_numbers = 0
        self.loc = None             # (container, key) of the value walked now (paths=True only)

    def tok(self, tok, path) -> None:
        self.f.key.append(tok)
        if self.P:
            self.f.paths.append((path, tok))

    def walk(self, o, path) -> None:
        h = _HANDLERS.get(type(o))
        if h is None:
            h = handler_of(type(o))
        h(self, o, path)

    # -- handlers ---------------------------------------------------------------------
    def array(self, o, path) -> None:
        if self._array_leaf(o, path) and o._ad is not None:
            # A grad-enabled array's AD vertex holds its gradient: an input, and a write-back target.
            self.walk(o._ad, f"{path}.ad" if self.P else None)

    def _array_leaf(self, o, path) -> bool:
        f = self.f
        i = self.memo.get(id(o))
        if i is not None:
            self.tok(("ref", i), path)
            return False
        self.memo[id(o)] = len(self.memo)
        li = len(f.leaves)
        f.leaves.append(o)
        if self.P:
            f.leaf_paths.append(path)
        f.has_jit = True
        node = o._node
        op = node.op
        if op == "literal":
            if self.force_opaque or li in self.opaque_mask:
                make_opaque(o)
                self.make_opaque = True
                node = o._node
                op = node.op
            else:
                v = node.value
                f.leaf_nodes.append(node)
                self.tok((type(o), "L", float_bits(v) if type(v) is float else v, node.size, o._ad is not None), path)
                return True
        f.leaf_nodes.append(node)
        if op == "data":
            tok = f.data_token(o, node)
            if self.P:
                f.paths.append((path, tok))
            f.key.append(tok)
        else:
            f.pending.append(node)
            self.tok((type(o), "pending"), path)
        return True

    def vector(self, o, path) -> None:
        if self._container(o, path, (type(o), len(o._c))):
            for i, c in enumerate(o._c):
                self.walk(c, f"{path}[{i}]" if self.P else None)

    def _container(self, o, path, tok) -> bool:
        i = self.memo.get(id(o))
        if i is not None:
            if self.P:
                self.f.shared.add(id(o))
            self.tok(("ref", i), path)
            return False
        self.memo[id(o)] = len(self.memo)
        self.f.containers.append(o)
        if self.P:
            self.f.cont_paths.append(path)
            if isinstance(o, tuple) and self.loc is not None:
                self.f.tuple_locs[id(o)] = self.loc
        self.tok(tok, path)
        return True

    def seq(self, o, path) -> None:
        if self._container(o, path, (type(o), len(o))):
            if self.P:
                for i, v in enumerate(o):
                    self.loc = (o, i)
                    self.walk(v, f"{path}[{i}]")
            else:
                self._seq_fast(o)

    def _seq_fast(self, o) -> None:
        """``seq`` without paths, with evaluated array leaves handled inline (the hot loop)."""
        w = self.walk
        at = ARRAY_TYPES
        f = self.f
        memo = self.memo
        leaves = f.leaves
        leaf_nodes = f.leaf_nodes
        key = f.key
        for v in o:
            if type(v) not in at:
                w(v, None)
                continue
            node = v._node
            vid = id(v)
            if node.op != "data" or vid in memo or v._ad is not None:
                self.array(v, None)
                continue
            memo[vid] = len(memo)
            leaves.append(v)
            leaf_nodes.append(node)
            key.append(f.data_token(v, node))
        if leaves:
            f.has_jit = True

    def dict(self, o, path) -> None:
        try:
            keys = keys_token(tuple(o))
        except TypeError:
            keys = ()
        if self._container(o, path, (type(o), keys)):
            if self.P:
                fmt = _NODES[type(o)].format_key
                for k, v in o.items():
                    self.loc = (o, k)
                    self.walk(v, path + fmt(k))
            else:
                w = self.walk
                for v in o.values():
                    w(v, None)

    def fields(self, o, path) -> None:
        """A node whose children are attributes fixed per type: a ``DRJIT_STRUCT`` class, a
        dataclass, a protocol class with ``__fj_traverse_attrs__``, a partial, a bound method."""
        node = _NODES[type(o)]
        if node.struct is not None and node.stale():      # DRJIT_STRUCT changed since it was resolved
            refresh(type(o))
            return handler_of(type(o))(self, o, path)
        names = node.fields
        if self._container(o, path, (type(o), names)):
            if self.P:
                for n in names:
                    self.loc = (o, n)
                    self.walk(getattr(o, n), path + node.format_key(n))
            else:
                w = self.walk
                for n in names:
                    w(getattr(o, n), None)

    def custom(self, o, path) -> None:
        """A protocol object without ``__fj_traverse_attrs__``: the children ``__fj_traverse__()``
        returns (its keys need not be attribute names)."""
        node = _NODES[type(o)]
        keys, values = node.children(o)
        if self._container(o, path, (type(o), keys_token(keys))):
            for n, v in zip(keys, values):
                self.loc = (o, n)
                self.walk(v, path + node.format_key(n) if self.P else None)

    def obj(self, o, path) -> None:
        d = instance_dict(o)
        names = tuple(d) if d is not None else ()
        slots = slot_names(type(o))
        if slots:
            names = names + tuple(n for n in slots if slot_value(o, n) is not _NO_SLOT)
        # A plain object is a Python value compared by identity (the seed: "changes of
        # non-PyTree Python objects, as detected by mismatching id()"), *and* its attributes
        # are walked, so a changed attribute of the same object is a key change too.
        if self._container(o, path, (type(o), names, value_token(o))):
            for n in names:
                v = d[n] if d is not None and n in d else slot_value(o, n)
                self.loc = (o, n)
                self.walk(v, f"{path}.{n}" if self.P else None)

    def numpy(self, o, path) -> None:
        i = self.memo.get(id(o))
        if i is not None:
            self.tok(("ref", i), path)
            return
        self.memo[id(o)] = len(self.memo)
        f = self.f
        k = len(f.numpy)
        f.numpy.append(o)
        c = f.size_class(o.shape[0]) if o.ndim >= 1 else -2
        aligned = o.ctypes.data % max(o.dtype.itemsize, 1) == 0
        self.tok((np.ndarray, k, o.dtype.str, o.ndim, o.shape[1:], c, aligned, o.flags.c_contiguous), path)

    def value(self, o, path) -> None:
        # numbers by type and bits (-0.0 is not 0.0, NaN is NaN, True is not 1), objects by
        # their own ==, else by weak identity (values.value_key)
        t = type(o)
        if t is float or t is int or t in NP_PARAM_NUMBERS:
            i = self.n_numbers
            self.n_numbers = i + 1
            if self.P:
                self.f.number_locs.append((self.loc, path))
            # a parameter: any value of this type replays, except a NaN (keyed by its bits, a
            # literal as in the plain call: which NaN an operation on two NaNs returns differs
            # between LLVM's folding of a constant and the CPU's instruction; r15/r16, `fj.lerp`)
            if i in self.param_mask and o == o:
                self.f.params.append(o)
                self.tok((t, "param"), path)
                return
        self.tok(value_key(o), path)

    def sym(self, o, path) -> None:
        if o._live():               # a width inside a recording (outputs): no escape guard
            self.tok(("sym",), path)
        else:
            self.value(o.value, path)

    def none(self, o, path) -> None:
        self.tok(None, path)


# ---------------------------------------------------------------------------------- kinds
@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class ValueNode:
    """How freeze looks inside a Python value of :mod:`frostjit.tree` (its ``VALUE`` kind), with
    the interface of :class:`frostjit.tree.NodeType` (``children``, ``assign``, ``format_key``).

    Attributes
    ----------
    cls : type
    what : str
        ``"object"`` (the ``__dict__`` entries and set slots), ``"deque"`` (its items) or
        ``"parts"`` (a partial's ``func``/``args``/``keywords``, a bound method's
        ``__func__``/``__self__``, a C function's or method's ``__self__``/``__name__``).
    fields : tuple of str or None
        The attribute names of ``"parts"``.
    """

    cls: type
    what: str
    fields: tuple | None = None
    kind = VALUE
    key_paths = False
    struct = None           # (fixed per type, as a NodeType of frostjit's own class)

    def children(self, o) -> tuple[tuple | None, list]:
        """``(keys, values)`` of ``o`` (keys None for a deque: positions)."""
        if self.what == "deque":
            return None, list(o)
        if self.fields is not None:
            # (a C function's __name__ is a new str at each access: interned, the same object,
            # so the call is not taken for one that renamed it)
            return self.fields, [v if type(v := getattr(o, n)) is not str else sys.intern(v) for n in self.fields]
        d = instance_dict(o)
        keys = list(d) if d is not None else []
        values = list(d.values()) if d is not None else []
        for n in slot_names(type(o)):
            v = slot_value(o, n)
            if v is not _NO_SLOT:
                keys.append(n)
                values.append(v)
        return tuple(keys), values

    def assign(self, o, keys: tuple | None, values: list) -> None:
        """Write the entries ``values`` into ``o`` (a deque: all its items)."""
        if self.what == "deque":
            o.clear()
            o.extend(values)
            return
        for n, v in zip(keys, values):
            try:
                setattr(o, n, v)
            except AttributeError:
                object.__setattr__(o, n, v)

    def format_key(self, key) -> str:
        return f"[{key}]" if self.what == "deque" else f".{key}"


_OPAQUE_TYPES = (int, float, complex, str, bytes, bool, enum.Enum, type, types.ModuleType, types.FunctionType,
                 types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType, functools.partial,
                 np.generic, np.dtype, range, slice, frozenset, set, bytearray, memoryview,
                 types.CodeType, property, staticmethod, classmethod)
_PARTIAL_NAMES = ("func", "args", "keywords")
_METHOD_NAMES = ("__func__", "__self__")
# A C function or method: the object it is bound to (a module for len, math.sqrt) and its name.
# A bound C method reads its object in C (d.get, lst.__getitem__, s.__contains__ passed as a
# callback): r15, keyed as a value (== compares the object's identity only) it replayed the
# contents the dict or list had when it was recorded.
_BUILTIN_METHOD_NAMES = ("__self__", "__name__")


def _classify(t):
    """``(handler, node)`` of type ``t``: the :class:`Walker` method that walks its objects, and
    the node that reads and writes their children (``None`` for leaves)."""
    nt = node_type(t)
    kind = nt.kind
    if kind is ARRAY:
        return Walker.array, None
    if kind is VECTOR:
        return Walker.vector, nt
    if kind is SEQUENCE:
        return Walker.seq, nt
    if kind is MAPPING:
        return Walker.dict, nt
    if kind is STRUCT or kind is DATACLASS or (kind is PROTOCOL and nt.fields is not None):
        return Walker.fields, nt
    if kind is PROTOCOL:
        return Walker.custom, nt
    # a Python value to frostjit.tree: freeze's own tokens, and the values it looks inside
    if t is type(None):
        return Walker.none, None
    if getattr(t, "__fj_opaque__", False):
        return Walker.value, None      # keyed by identity/equality, never walked (e.g. frozen functions)
    if issubclass(t, collections.deque):
        return Walker.seq, ValueNode(t, "deque")
    if issubclass(t, functools.partial):
        return Walker.fields, ValueNode(t, "parts", _PARTIAL_NAMES)
    if issubclass(t, types.MethodType):
        return Walker.fields, ValueNode(t, "parts", _METHOD_NAMES)
    if issubclass(t, (types.BuiltinMethodType, types.MethodWrapperType)):
        return Walker.fields, ValueNode(t, "parts", _BUILTIN_METHOD_NAMES)
    if issubclass(t, np.ndarray):
        return Walker.numpy, None
    if hasattr(t, "__symbolic_size__") and hasattr(t, "_live"):
        return Walker.sym, None
    if issubclass(t, _OPAQUE_TYPES):
        return Walker.value, None
    if getattr(t, "__dictoffset__", 0) or slot_names(t):
        if t.__module__ == "builtins" or t.__module__.startswith(("threading", "_thread", "logging", "io")):
            return Walker.value, None
        return Walker.obj, ValueNode(t, "object")
    return Walker.value, None


_HANDLERS: dict = {}     # type -> Walker method (the walk's one dict lookup per object)
_NODES: dict = {}        # type -> NodeType | ValueNode | None


def handler_of(t):
    """The :class:`Walker` method that walks objects of type ``t`` (resolved once per type)."""
    h = _HANDLERS.get(t)
    if h is None:
        h, node = _classify(t)
        _NODES[t] = node
        _HANDLERS[t] = h
    return h


def node_of(t) -> NodeType | ValueNode | None:
    """How the children of objects of type ``t`` are read and written: the tree's
    :class:`~frostjit.tree.NodeType` for a PyTree node, a :class:`ValueNode` for a Python value
    freeze looks inside, ``None`` for a leaf."""
    node = _NODES.get(t, _MISSING)
    if node is _MISSING or (node is not None and node.struct is not None and node.stale()):
        refresh(t)
        handler_of(t)
        node = _NODES[t]
    return node


def refresh(t) -> None:
    """Forget how objects of type ``t`` are walked (a ``DRJIT_STRUCT`` class whose dict changed:
    :meth:`frostjit.tree.NodeType.stale`); the next use resolves it again."""
    _HANDLERS.pop(t, None)
    _NODES.pop(t, None)
    node_type(t)


# ---------------------------------------------------------------------------------- entries
def entries(o) -> list:
    """``[(key, value)]`` of a container (an object the walk put in ``flat.containers``), as the
    walker visits them (positions for sequences, static vectors and deques)."""
    keys, values = node_of(type(o)).children(o)
    return list(zip(range(len(values)) if keys is None else keys, values))


def hidden_attrs(o) -> dict | None:
    """The instance attributes of a ``DRJIT_STRUCT`` object, a dataclass or a protocol object with
    ``__fj_traverse_attrs__`` (a container the walk put in ``flat.containers``) that are not its
    fields, hence not walked, in its ``__dict__`` and slots (``None`` for other containers and for
    frostjit's own classes): what the function may write there is written back like a field (r16: every
    replay left them as the caller had them), and what frostjit's own code copies from there
    into an output (``fj.detach(s)`` copies the object's ``__dict__``) is guarded."""
    t = type(o)
    node = node_of(t)
    if node is None or node.fields is None or type(node) is ValueNode or \
            frostjit_class(t):
        return None         # (frostjit's own classes are taken as constant: an AD vertex's slots)
    d = instance_dict(o)
    fields = node.fields
    out = {k: v for k, v in d.items() if k not in fields} if d else {}
    for n in slot_names(t):
        if n not in fields and (v := slot_value(o, n)) is not _NO_SLOT:
            out[n] = v
    return out


def hidden_changes(containers, before) -> list:
    """``[(i, now, before)]``: the containers whose :func:`hidden_attrs` the call changed (set,
    rebound or deleted), given ``before``, their ``hidden_attrs`` before the call."""
    out = []
    for i, b in enumerate(before or ()):
        if b is None:
            continue
        now = hidden_attrs(containers[i])
        if now is None or (len(now) == len(b) and all(b.get(k, _MISSING) is v for k, v in now.items())):
            continue        # (unchanged; or the class changed: the recording falls back)
        out.append((i, now, b))
    return out


ITEMS, PROTOCOL_ASSIGN, KEYS = "items", "protocol", "keys"


def write_mode(o) -> str:
    """How a changed container is written back: ``ITEMS`` (all items at once: a list, deque or
    static vector), ``PROTOCOL_ASSIGN`` (all children through ``__fj_assign__``), or ``KEYS`` (the
    changed entries one by one: dict keys, attributes)."""
    node = node_of(type(o))
    if node.kind is SEQUENCE or node.kind is VECTOR or (type(node) is ValueNode and node.what == "deque"):
        return ITEMS
    if node.kind is PROTOCOL and hasattr(node.cls, "__fj_assign__"):
        return PROTOCOL_ASSIGN
    return KEYS


def assign_items(o, values: list) -> None:
    """Replace all items of a list, deque or static vector (``ITEMS``)."""
    node_of(type(o)).assign(o, None, values)


def set_entry(o, key, value) -> None:
    """Write one entry of a container: an item, a dict key, an attribute (``setattr``, or
    ``object.__setattr__`` for a frozen dataclass or a read-only property), a component, or one
    child of a protocol object (``__fj_assign__`` is given all its children)."""
    node = node_of(type(o))
    mode = write_mode(o)
    if mode is ITEMS:
        keys, values = node.children(o)
        values[key] = value
        node.assign(o, None, values)
    elif mode is PROTOCOL_ASSIGN:
        keys, values = node.children(o)
        node.assign(o, keys, [value if k == key else v for k, v in zip(keys, values)])
    else:
        node.assign(o, (key,), [value])


def writable(o, key, value) -> bool:
    """Whether :func:`set_entry` ``(o, key, value)`` makes ``o``'s entry ``key`` be ``value``: a
    protocol object without ``__fj_assign__`` is written by ``setattr``, which is right only when
    its ``__fj_traverse__`` keys are attribute names (or for a tuple, which cannot be written)."""
    if isinstance(o, tuple):
        return False
    node = node_of(type(o))
    if node.kind is PROTOCOL and node.fields is None and not hasattr(node.cls, "__fj_assign__"):
        return type(key) is str and getattr(o, key, _MISSING) is value
    return True


_MISSING = object()


def del_entry(o, key) -> None:
    """Delete one entry of a container: a dict key, or an attribute."""
    if node_of(type(o)).kind is MAPPING:
        del o[key]
    else:
        try:
            delattr(o, key)
        except AttributeError:
            object.__delattr__(o, key)


# ---------------------------------------------------------------------------------- diff
def _describe_token(tok) -> str:
    if tok is None:
        return "None"
    if isinstance(tok, tuple) and tok and isinstance(tok[0], type):
        return type_name(tok[0])
    return repr(tok)


def diff(old_paths, new_paths, limit: int = 8) -> list[str]:
    """Lines ``path: what changed`` between two walks made with ``paths=True``."""
    old = {}
    for p, t in old_paths:
        old.setdefault(p, t)
    new = {}
    for p, t in new_paths:
        new.setdefault(p, t)
    out = []
    for p, t in new.items():
        if p not in old:
            out.append(f"{p}: new input (not present in the previous recording)")
        elif old[p] != t:
            out.append(f"{p}: {_token_change(old[p], t)}")
        if len(out) >= limit:
            break
    for p in old:
        if p not in new and len(out) < limit:
            out.append(f"{p}: no longer present")
    return out


def _token_change(a, b) -> str:
    ta = a[0] if isinstance(a, tuple) and a else a
    tb = b[0] if isinstance(b, tuple) and b else b
    pa = isinstance(a, tuple) and len(a) == 2 and a[1] == "param"
    pb = isinstance(b, tuple) and len(b) == 2 and b[1] == "param"
    if (pa or pb) and ta is tb:
        return ("became a parameter of the recording (its value changed)" if pb
                else "keyed by value again (the recording needed its exact value)")
    if p_is_flags(a):
        return f"JIT flags changed from {a[1]!r} to {b[1]!r}"
    if isinstance(a, tuple) and a and a[0] == "ad scope":
        return (f"the AD scope changed (suspend_grad / resume_grad / isolate_grad: tracked new variables, "
                f"isolated, tracked inputs) from {a[1]!r} to {b[1]!r}")
    if ta == "ref" or tb == "ref":
        return "aliasing changed (the same object or array is now reached through another path)"
    if ta != tb:
        return f"type changed from {_describe_token(a)} to {_describe_token(b)}"
    t = ta
    if t == "ref" or (isinstance(b, tuple) and b and b[0] == "ref"):
        return "aliasing changed (the same object or array is now reached through another path)"
    if isinstance(t, type) and issubclass(t, ArrayBase):
        if len(a) >= 2 and len(b) >= 2 and (a[1] == "L") != (b[1] == "L"):
            return "changed from a literal to an evaluated array" if a[1] == "L" else \
                "changed from an evaluated array to a literal"
        if a[1] == "L":
            if a[3] != b[3]:
                return f"literal size changed from {a[3]} to {b[3]}"
            return f"literal value changed from {a[2]} to {b[2]}"
        if a[-1] != b[-1]:
            return f"grad-enabled status changed from {a[-1]} to {b[-1]}"
        if len(a) == 4 and len(b) == 4:
            if (a[2] == -1) != (b[2] == -1):
                return "size class changed (size 1 versus wide)" if a[2] == -1 or b[2] == -1 else "size class changed"
            if a[2] != b[2]:
                return f"size class changed (from class {a[2]} to class {b[2]}: it now shares its size " \
                       "with different inputs)"
        return f"aliasing changed (input slot {a[1]} -> {b[1]})"
    if t is np.ndarray:
        names = ("", "slot", "dtype", "ndim", "trailing shape", "size class", "alignment", "contiguity")
        for i in range(2, len(a)):
            if a[i] != b[i]:
                return f"NumPy {names[i]} changed from {a[i]!r} to {b[i]!r}"
        return "NumPy array aliasing changed"
    if t is float:
        return f"Python value changed from {float_of_bits(a[1])!r} to {float_of_bits(b[1])!r}"
    if isinstance(t, type) and issubclass(t, (list, tuple)) and len(a) == 2 and isinstance(a[1], int):
        return f"number of elements changed from {a[1]} to {b[1]}"
    if len(a) == 3 == len(b) and isinstance(a[2], Ident) and a[:2] == b[:2]:
        return (f"a different {type_name(t)} object (objects without __eq__ are keyed by identity; "
                "define __eq__ and __hash__ to key them by value)")
    if t is decimal.Decimal:
        return f"Python value changed from {_token_value(a)!r} to {_token_value(b)!r}"
    if isinstance(t, type) and len(a) == 2 and isinstance(a[1], tuple) and isinstance(b[1], tuple):
        return f"keys/fields changed from {list(a[1])} to {list(b[1])}"
    if isinstance(t, type) and issubclass(t, VectorBase):
        return "number of components changed"
    return f"Python value changed from {_token_value(a)!r} to {_token_value(b)!r}"


def _token_value(tok):
    """The Python value a :func:`~.values.value_key` token stands for (for diagnostics)."""
    if not (isinstance(tok, tuple) and len(tok) > 1):
        return tok
    t, v = tok[0], tok[1]
    if isinstance(t, type) and issubclass(t, (np.floating, np.complexfloating)) and isinstance(v, bytes):
        return np.frombuffer(v, dtype=t)[0]
    if isinstance(t, type) and issubclass(t, complex) and len(tok) == 3:
        return complex(float_of_bits(tok[1]), float_of_bits(tok[2]))
    if isinstance(t, type) and issubclass(t, float) and isinstance(v, str):
        return float_of_bits(v)
    if t is decimal.Decimal:
        return decimal.Decimal(v)
    return v


def p_is_flags(tok) -> bool:
    return isinstance(tok, tuple) and len(tok) == 2 and tok[0] == "flags"
