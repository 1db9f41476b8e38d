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

Other objects are Python values (keyed by ``hash``/``==`` when their class defines ``__eq__``,
else by identity) whose ``__dict__``/``__slots__`` are walked too (so a changed plain attribute
of ``self`` is a key change); a class with ``__fj_opaque__ = True`` is keyed by identity and never
walked (frozen functions themselves are); classes may instead define the traversal protocol
``__fj_traverse__(self) -> dict`` (state to walk), ``__fj_assign__(self, dict)`` (write-back)
and ``__fj_construct__(cls, dict)`` (construction as an output).
"""
from __future__ import annotations

import dataclasses
import decimal
import enum
import functools
import types

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions.evaluation import make_opaque
from .values import Ident, value_key


def value_token(o):
    """A plain object's identity in the key: itself when it compares by value (hashable, with its
    own ``__eq__``), else its (weak) identity (:class:`~.values.Ident`)."""
    if type(o).__eq__ is not object.__eq__:
        try:
            hash(o)
            return o
        except TypeError:
            pass
    return Ident(o)


def keys_token(keys: tuple) -> tuple:
    """Dict keys in the key: ``str`` keys as they are, others by :func:`~.values.value_key`
    (``{1: a}`` and ``{True: a}``, ``{0.0: a}`` and ``{-0.0: a}`` are different inputs)."""
    for k in keys:
        if type(k) is not str:
            return tuple(k if type(k) is str else value_key(k) for k in keys)
    return keys


class Flat:
    """The result of walking one call's inputs (see module docstring)."""

    __slots__ = ("key", "leaves", "nodes", "node_index", "sizes", "size_index", "containers",
                 "numpy", "paths", "pending", "has_jit", "leaf_nodes")

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

    __slots__ = ("f", "memo", "P", "opaque_mask", "force_opaque", "make_opaque")

    def __init__(self, paths: bool, opaque_mask=frozenset(), force_opaque: bool = False):
        self.f = Flat(paths)
        self.memo = {}
        self.P = paths
        self.opaque_mask = opaque_mask
        self.force_opaque = force_opaque
        self.make_opaque = False

    def tok(self, tok, path) -> None:
        self.f.key.append(tok)
        if self.P:
            self.f.paths.append((path, tok))

    def walk(self, o, path) -> None:
        t = type(o)
        h = _HANDLERS.get(t)
        if h is None:
            h = _HANDLERS[t] = _classify(t)
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
        f.has_jit = True
        node = o._node
        op = node.op
        if op == "literal":
            if self.force_opaque or li in self.opaque_mask:
                make_opaque(o)
                node = o._node
                op = node.op
            else:
                v = node.value
                f.leaf_nodes.append(node)
                self.tok((type(o), "L", v.hex() if type(v) is float else v, node.size, o._ad is not None), path)
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
            self.tok(("ref", i), path)
            return False
        self.memo[id(o)] = len(self.memo)
        self.f.containers.append(o)
        self.tok(tok, path)
        return True

    def seq(self, o, path) -> None:
        if self._container(o, path, (type(o), len(o))):
            if self.P:
                for i, v in enumerate(o):
                    self.walk(v, f"{path}[{i}]")
            else:
                self._seq_fast(o)

    def _seq_fast(self, o) -> None:
        """``seq`` without paths, with evaluated array leaves handled inline (the hot loop)."""
        w = self.walk
        at = _ARRAY_TYPES
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
                for k, v in o.items():
                    self.walk(v, f'{path}["{k}"]' if isinstance(k, str) else f"{path}[{k!r}]")
            else:
                w = self.walk
                for v in o.values():
                    w(v, None)

    def fields(self, o, path, names) -> None:
        if self._container(o, path, (type(o), names)):
            for n in names:
                self.walk(getattr(o, n), f"{path}.{n}" if self.P else None)

    def struct(self, o, path) -> None:
        self.fields(o, path, tuple(type(o).DRJIT_STRUCT))

    def dataclass(self, o, path) -> None:
        self.fields(o, path, _dataclass_names(type(o)))

    def custom(self, o, path) -> None:
        state = o.__fj_traverse__()
        if self._container(o, path, (type(o), keys_token(tuple(state)))):
            key_style = getattr(type(o), "__fj_path_style__", None) == "key"
            for n, v in state.items():
                self.walk(v, (f'{path}["{n}"]' if key_style else f"{path}.{n}") if self.P else None)

    def obj(self, o, path) -> None:
        d = getattr(o, "__dict__", None)
        names = tuple(d) if d is not None else ()
        slots = _slot_names(type(o))
        if slots:
            names = names + tuple(n for n in slots if hasattr(o, n))
        # A plain object is a Python value compared by identity (the seed: "changes of
        # non-PyTree Python objects, as detected by mismatching id()"), *and* its attributes
        # are walked, so a changed attribute of the same object is a key change too.
        if self._container(o, path, (type(o), names, value_token(o))):
            for n in names:
                v = d[n] if d is not None and n in d else getattr(o, n)
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
        self.tok(value_key(o), path)

    def sym(self, o, path) -> None:
        if o._live():               # a width inside a recording (outputs): no escape guard
            self.tok(("sym",), path)
        else:
            self.value(o.value, path)

    def none(self, o, path) -> None:
        self.tok(None, path)


_dc_names: dict = {}


def _dataclass_names(t) -> tuple:
    n = _dc_names.get(t)
    if n is None:
        n = _dc_names[t] = tuple(f.name for f in dataclasses.fields(t))
    return n


_slots_cache: dict = {}


def _slot_names(t) -> tuple:
    s = _slots_cache.get(t)
    if s is None:
        names = []
        for k in t.__mro__:
            sl = k.__dict__.get("__slots__", ())
            if isinstance(sl, str):
                sl = (sl,)
            names.extend(n for n in sl if n not in ("__dict__", "__weakref__") and n not in names)
        s = _slots_cache[t] = tuple(names)
    return s


_OPAQUE_TYPES = (int, float, complex, str, bytes, bool, enum.Enum, type, types.ModuleType, types.FunctionType,
                 types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType, functools.partial,
                 np.generic, np.dtype, range, slice, frozenset, set, bytearray, memoryview,
                 types.CodeType, property, staticmethod, classmethod)


_ARRAY_TYPES: set = set()


def _classify(t):
    if issubclass(t, ArrayBase):
        _ARRAY_TYPES.add(t)
        return Walker.array
    if issubclass(t, VectorBase):
        return Walker.vector
    if t is type(None):
        return Walker.none
    if issubclass(t, (list, tuple)):
        return Walker.seq
    if issubclass(t, dict):
        return Walker.dict
    if issubclass(t, np.ndarray):
        return Walker.numpy
    if getattr(t, "__fj_opaque__", False):
        return Walker.value      # keyed by identity/equality, never walked (e.g. frozen functions)
    if hasattr(t, "__fj_traverse__"):
        return Walker.custom
    if hasattr(t, "__symbolic_size__") and hasattr(t, "_live"):
        return Walker.sym
    if issubclass(t, _OPAQUE_TYPES):
        return Walker.value
    if isinstance(getattr(t, "DRJIT_STRUCT", None), dict):
        return Walker.struct
    if dataclasses.is_dataclass(t):
        return Walker.dataclass
    if getattr(t, "__dictoffset__", 0) or _slot_names(t):
        if t.__module__ == "builtins" or t.__module__.startswith(("threading", "_thread", "logging", "io")):
            return Walker.value
        return Walker.obj
    return Walker.value


_HANDLERS: dict = {}


# ---------------------------------------------------------------------------------- entries
def kind_of(o) -> str:
    """Container kind (how its entries are read and written)."""
    h = _HANDLERS.get(type(o)) or _classify(type(o))
    return {Walker.vector: "vector", Walker.seq: "seq", Walker.dict: "dict", Walker.struct: "fields",
            Walker.dataclass: "fields", Walker.custom: "custom", Walker.obj: "obj"}[h]


def entries(o) -> list:
    """``[(key, value)]`` of a container, as the walker visits them."""
    k = kind_of(o)
    if k == "vector":
        return list(enumerate(o._c))
    if k == "seq":
        return list(enumerate(o))
    if k == "dict":
        return list(o.items())
    if k == "custom":
        return list(o.__fj_traverse__().items())
    if k == "fields":
        names = tuple(type(o).DRJIT_STRUCT) if isinstance(getattr(type(o), "DRJIT_STRUCT", None), dict) \
            else _dataclass_names(type(o))
        return [(n, getattr(o, n)) for n in names]
    d = getattr(o, "__dict__", None)
    out = list(d.items()) if d is not None else []
    out += [(n, getattr(o, n)) for n in _slot_names(type(o)) if hasattr(o, n)]
    return out


def set_entry(o, key, value) -> None:
    k = kind_of(o)
    if k == "vector":
        o._c[key] = value
    elif k in ("seq", "dict"):
        o[key] = value
    else:
        try:
            setattr(o, key, value)
        except (AttributeError, dataclasses.FrozenInstanceError):
            object.__setattr__(o, key, value)


def del_entry(o, key) -> None:
    k = kind_of(o)
    if k in ("seq", "dict"):
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
        return f"Python value changed from {float.fromhex(a[1])!r} to {float.fromhex(b[1])!r}"
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
        return complex(float.fromhex(tok[1]), float.fromhex(tok[2]))
    if isinstance(t, type) and issubclass(t, float) and isinstance(v, str):
        return float.fromhex(v)
    if t is decimal.Decimal:
        return decimal.Decimal(v)
    return v


def p_is_flags(tok) -> bool:
    return isinstance(tok, tuple) and len(tok) == 2 and tok[0] == "flags"
