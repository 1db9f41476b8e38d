"""A recording's outputs and write-backs: described once when recorded, rebuilt by every replay.

:class:`Describer` turns what the function returned (and what it stored into its inputs) into
*descriptors*; :func:`generate_finish` turns descriptors into straight-line replay code, and
:func:`build` interprets them for the recorded call itself, so both calls return the same
structure.

Outputs are rebuilt as the plain call left them, **without running user constructors**: a
dataclass with a ``__post_init__`` that transforms a field, a ``DRJIT_STRUCT`` whose ``__init__``
needs arguments, or an object whose ``__init__`` has side effects is rebuilt by
``cls.__new__(cls)`` and its recorded instance state (``__dict__`` and slots), never by calling
``cls(...)``.  Subclasses of ``list``, ``tuple`` and ``dict`` (``defaultdict``, ``OrderedDict``,
``namedtuple``, user subclasses with attributes or a constructor that needs arguments) are made
as :func:`frostjit.tree.kinds.make_container` makes them (the PyTree rebuild, which runs no
constructor) and given their recorded instance state and ``default_factory``; a protocol class
with ``__fj_construct__`` is built by it.  What each object is comes from the one PyTree
definition (:func:`frostjit.tree.node_type`, through :func:`.layout.node_of`); freeze describes
more than the tree's children (the whole instance state), because the replay must return what
the plain call returns, not only its arrays.  Deques, partials and bound methods are rebuilt
through their copy protocol (``__reduce_ex__``, as ``copy.copy`` does).

Descriptors::

    ("arr", cls, n)               a fresh array around node-table entry n
    ("arr", cls, n, True, g)      the same, grad-enabled (a new AD leaf) with gradient g (or None)
    ("leaf", i)  ("obj", ci)      the live input array i / input container ci (passed through)
    ("vec", cls, [d])             a static vector
    ("seq", cls, [d])             an exact tuple or list
    ("dict", keys, [d])           an exact dict
    ("object", cls, names, [d], slots, [d])           instance state, no constructor
    ("container", cls, keys, [d], factory, names, [d], slots, [d])
                                  a tuple/list/dict subclass: items (at keys), a defaultdict's
                                  default_factory (a descriptor or None), instance state
    ("reduce", func, [d], state, [d], keys, [d])      the copy protocol (deques, partials, methods)
    ("custom", cls, names, [d])   ``cls.__fj_construct__(dict)``
    ("function", fn, [d], [d], [d])   a closure made again: defaults, keyword defaults, cells
    ("cell", d) / ("cell",)       a closure cell (with contents / empty)
    ("py", value)  ("sym", j)  ("share", k, d)  ("ref", k)

A function whose closure cells or defaults hold arrays or containers is rebuilt around
described cells (``types.FunctionType``), so a returned closure sees this replay's arrays; a
generator or coroutine cannot be rebuilt (its frame is state), so returning one makes the
recording a fallback.
"""
from __future__ import annotations

import collections
import types

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..tree.kinds import PROTOCOL, make_container, slot_names
from . import layout
from .layout import ValueNode, Walker, entries, handler_of, node_of
from .symbolic import Sym
from .records import SlotOrigin, BufferEntry, LiteralEntry, InputEntry, CapturedEntry
from ..ad import frozen as _ad
from ..ad.frozen import Vertex

_SCALAR_TYPES = (int, float, str, bool, type(None), Sym)
# values a rebuilt function may keep as they are (types, modules and functions included)
_ATOMS = (int, float, complex, str, bytes, bool, type(None), type, types.ModuleType, types.BuiltinFunctionType,
          np.generic, Sym)


def instance_state(o) -> tuple:
    """``(names, values, slot names, slot values)`` of an object's instance state."""
    d = getattr(o, "__dict__", None)
    names = tuple(d) if d is not None else ()
    values = [d[n] for n in names]
    slots = tuple(n for n in slot_names(type(o)) if (d is None or n not in d) and hasattr(o, n))
    return names, values, slots, [getattr(o, n) for n in slots]


def container_state(o) -> tuple:
    """``(keys, items, default_factory, names, values, slot names, slot values)`` of a tuple, list
    or dict subclass instance (``keys`` None for a sequence; ``default_factory`` None unless a
    ``defaultdict``)."""
    if isinstance(o, dict):
        keys = tuple(o.keys())
        items = list(o.values())
    else:
        keys = None
        items = list(o)
    factory = o.default_factory if isinstance(o, collections.defaultdict) else None
    return (keys, items, factory) + instance_state(o)


def new_container(cls, keys, items, factory, state: dict, slots: dict):
    """A ``cls`` (tuple, list or dict subclass) with these items and exactly this instance state,
    made without calling a constructor (``cls.__new__``/``__init__`` do not run)."""
    o = make_container(cls, keys, items)
    if factory is not None:
        o.default_factory = factory
    if state:
        o.__dict__.update(state)
    for n, v in slots.items():
        object.__setattr__(o, n, v)
    return o


def new_object(cls, state: dict, slots: dict):
    """An instance of ``cls`` with exactly this state, without calling ``__init__`` (nor
    ``__post_init__``, nor a frozen dataclass's ``__setattr__``)."""
    o = cls.__new__(cls)
    if state:
        o.__dict__.update(state)
    for n, v in slots.items():
        object.__setattr__(o, n, v)
    return o


def reconstruct(func, args, state, items, pairs):
    """Rebuild an object from its copy protocol parts (``copy._reconstruct``, shallow)."""
    y = func(*args)
    if state is not None:
        if hasattr(y, "__setstate__"):
            y.__setstate__(state)
        else:
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                y.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(y, k, v)
    if items:
        for x in items:
            y.append(x)
    if pairs:
        for k, v in pairs:
            y[k] = v
    return y


def new_function(fn, defaults, kwdefaults, cells):
    """A copy of function ``fn`` with these defaults and closure cells (a returned closure)."""
    g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, tuple(defaults) if defaults else None,
                           tuple(cells) if cells else None)
    g.__qualname__ = fn.__qualname__
    g.__module__ = fn.__module__
    g.__doc__ = fn.__doc__
    if fn.__kwdefaults__:
        g.__kwdefaults__ = dict(zip(fn.__kwdefaults__, kwdefaults))
    if fn.__dict__:
        g.__dict__.update(fn.__dict__)
    return g


def _reduce_parts(v):
    """The copy protocol of ``v``: ``(func, args, state, items, pairs)``, or None (not usable)."""
    try:
        rv = v.__reduce_ex__(4)
    except TypeError:       # "cannot pickle ...": an object that cannot be copied is returned as is
        return None
    if not isinstance(rv, tuple) or len(rv) < 2:
        return None
    rv = tuple(rv) + (None,) * (5 - len(rv))
    func, args, state, items, pairs = rv[:5]
    return func, tuple(args), state, list(items) if items is not None else None, \
        list(pairs) if pairs is not None else None


_GENERATORS = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def _function_state(fn) -> list:
    """The values a function carries: defaults, keyword defaults, closure cell contents."""
    out = list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    for c in fn.__closure__ or ():
        try:
            out.append(c.cell_contents)
        except ValueError:
            pass
    return out


def _kind(v) -> str:
    """How an output object is described (see module docstring)."""
    t = type(v)
    if t is types.FunctionType:
        return "function" if any(not isinstance(x, _ATOMS) for x in _function_state(v)) else "py"
    if t is types.CellType:
        return "cell"
    if t in _GENERATORS:
        return "generator"
    h = handler_of(t)
    node = node_of(t)
    if type(node) is ValueNode:         # a Python value freeze looks inside
        return "object" if node.what == "object" else "reduce"  # deques, partials, bound methods
    if h is Walker.seq:
        return "seq" if t is tuple or t is list else "container"
    if h is Walker.dict:
        return "dict" if t is dict else "container"
    if node is not None and node.kind is PROTOCOL:
        if hasattr(t, "__fj_construct__"):
            return "custom"
        # (a protocol class based on tuple/list/dict keeps its items too)
        return "container" if isinstance(v, (tuple, list, dict)) else "object"
    if h is Walker.fields:
        return "object"                 # DRJIT_STRUCT classes and dataclasses: all instance state
    return "py"


class Describer:
    """Turns the objects a recording returns or writes back into descriptors (module docstring)."""

    def __init__(self, rec, flat, leaf_index, cont_index):
        self.rec = rec
        self.flat = flat
        self.leaf_index = leaf_index
        self.cont_index = cont_index
        self.table = []           # node table entries (records.NodeEntry), the replay's node_<k>
        self.real_nodes = []      # the recorded nodes themselves (to build the first call's output)
        self.node_ids = {}
        self.sym_outputs = []
        self.counts = collections.Counter()
        self.shared = {}
        self.shared_objs = {}     # share index -> the object described (for the recorded call)
        self._parts = {}          # id(object) -> its copy protocol parts (computed once)
        self.pending = []         # unevaluated nodes of the arrays reached (count() collects them)
        self.numpy = []           # NumPy arrays reached
        self.seen = {}            # id -> object counted (held: ids stay unique while describing)

    def children(self, v) -> list:
        """The values inside an output object (what :meth:`describe` describes)."""
        if isinstance(v, ArrayBase):
            g = v._ad.grad if v._ad is not None else None
            return [g] if g is not None else []
        if isinstance(v, VectorBase):
            return list(v._c)
        k = _kind(v)
        if k == "seq":
            return list(v)
        if k == "function":
            return list(v.__defaults__ or ()) + list((v.__kwdefaults__ or {}).values()) + list(v.__closure__ or ())
        if k == "cell":
            try:
                return [v.cell_contents]
            except ValueError:
                return []
        if k == "dict":
            return list(v.values())
        if k == "object":
            _, values, _, svalues = instance_state(v)
            return values + svalues
        if k == "custom":
            return [x for _, x in entries(v)]
        if k == "container":
            _, items, factory, _, values, _, svalues = container_state(v)
            return items + [factory] + values + svalues
        if k == "reduce":
            p = self.parts(v)
            if p is None:
                return []
            _, args, state, items, pairs = p
            return list(args) + [state] + (items or []) + [x for _, x in pairs or ()]
        return []

    def parts(self, v):
        p = self._parts.get(id(v), False)
        if p is False:
            p = self._parts[id(v)] = (v, _reduce_parts(v))
        return p[1]

    def count(self, v) -> None:
        """Count references to every object, so that objects reached twice are rebuilt once."""
        if isinstance(v, _SCALAR_TYPES):
            return
        self.counts[id(v)] += 1
        i = id(v)
        if i in self.seen or i in self.leaf_index or i in self.cont_index:
            return
        # Held, not only marked: a protocol getter can hand out a fresh object, which would be
        # freed after its visit and its address reused by a later object (wrongly skipped).
        self.seen[i] = v
        if isinstance(v, ArrayBase) and v._node.op not in ("data", "literal"):
            self.pending.append(v._node)
        elif isinstance(v, np.ndarray):
            self.numpy.append(v)
        for x in self.children(v):
            self.count(x)

    def node(self, n) -> int:
        k = self.node_ids.get(id(n))
        if k is not None:
            return k
        rec = self.rec
        if n.op == "literal":
            entry = LiteralEntry(n.vt, n.value, rec.sym_of(n))
        elif n.op == "data":
            slot = rec.slot_of.get(id(n.value))
            if slot is None:
                slot = rec.slot_for(n)
            source = rec.slot_kind[slot]
            if source.origin is SlotOrigin.INPUT:
                entry = InputEntry(source.index)
            elif source.origin is SlotOrigin.CAPTURED:
                entry = CapturedEntry(source.index)
            else:
                entry = BufferEntry(slot, n.vt, rec.slot_size[slot])
        else:  # pragma: no cover - everything was evaluated
            raise RuntimeError("frostjit.freeze: an output was not evaluated")
        k = self.node_ids[id(n)] = len(self.table)
        self.table.append(entry)
        self.real_nodes.append(n)
        return k

    def describe(self, v):
        i = self.shared.get(id(v))
        if i is not None:
            return ("ref", i)
        d = self._describe(v)
        if self.counts.get(id(v), 0) > 1 and d[0] not in ("leaf", "obj", "py", "sym"):
            i = self.shared[id(v)] = len(self.shared)
            self.shared_objs[i] = v
            return ("share", i, d)
        return d

    def _describe(self, v):
        if isinstance(v, ArrayBase):
            i = self.leaf_index.get(id(v))
            if i is not None:
                return ("leaf", i)
            if v._ad is not None:     # grad-enabled: a fresh AD leaf at every replay, with its gradient
                reason = _ad.output_reason(v)
                if reason is not None and self.rec.data_dependent is None:
                    self.rec.data_dependent = reason
                g = v._ad.grad
                return ("arr", type(v), self.node(v._node), True, None if g is None else self.describe(g))
            return ("arr", type(v), self.node(v._node))
        ci = self.cont_index.get(id(v))
        if ci is not None and type(v) is not tuple:
            return ("obj", ci)
        if type(v) is Sym:
            if v.is_const or not v._live():
                return ("py", v.value)
            self.sym_outputs.append(v)
            return ("sym", len(self.sym_outputs) - 1)
        if isinstance(v, VectorBase):
            return ("vec", type(v), [self.describe(c) for c in v._c])
        k = _kind(v)
        if k == "seq":
            return ("seq", type(v), [self.describe(x) for x in v])
        if k == "function":
            return ("function", v, [self.describe(x) for x in v.__defaults__ or ()],
                    [self.describe(x) for x in (v.__kwdefaults__ or {}).values()],
                    [self.describe(c) for c in v.__closure__ or ()])
        if k == "cell":
            try:
                return ("cell", self.describe(v.cell_contents))
            except ValueError:
                return ("cell",)
        if k == "generator" and self.rec.data_dependent is None:
            self.rec.data_dependent = (f"returns a {type(v).__name__} (its frame is state a replay cannot "
                                       "rebuild)")
        if k == "dict":
            return ("dict", tuple(v.keys()), [self.describe(x) for x in v.values()])
        if k == "object":
            names, values, slots, svalues = instance_state(v)
            return ("object", type(v), names, [self.describe(x) for x in values], slots,
                    [self.describe(x) for x in svalues])
        if k == "custom":
            es = entries(v)
            return ("custom", type(v), tuple(n for n, _ in es), [self.describe(x) for _, x in es])
        if k == "container":
            keys, items, factory, names, values, slots, svalues = container_state(v)
            return ("container", type(v), keys, [self.describe(x) for x in items],
                    None if factory is None else self.describe(factory), names,
                    [self.describe(x) for x in values], slots, [self.describe(x) for x in svalues])
        if k == "reduce":
            p = self.parts(v)
            if p is not None:
                func, args, state, items, pairs = p
                return ("reduce", func, [self.describe(x) for x in args],
                        None if state is None else self.describe(state),
                        None if items is None else [self.describe(x) for x in items],
                        None if pairs is None else tuple(k for k, _ in pairs),
                        None if pairs is None else [self.describe(x) for _, x in pairs])
        return ("py", v)


# ------------------------------------------------------------------------------ the first call
def build(d, flat, nodes, syms, memo):
    """Interpret descriptor ``d`` for the recorded call (``nodes``: the recorded nodes)."""
    tag = d[0]
    if tag == "arr":
        cls = d[1]
        out = cls.__new__(cls)
        out._node = nodes[d[2]]
        out._ad = None
        if len(d) > 3:      # grad-enabled when recorded: a new AD leaf, with the gradient it had
            _ad.new_leaf(out)
            if d[4] is not None:
                out._ad.grad = build(d[4], flat, nodes, syms, memo)
        return out
    if tag == "leaf":
        return flat.leaves[d[1]]
    if tag == "obj":
        return flat.containers[d[1]]
    if tag == "py":
        return d[1]
    if tag == "sym":
        return syms[d[1]]
    if tag == "share":
        v = memo[d[1]] = build(d[2], flat, nodes, syms, memo)
        return v
    if tag == "ref":
        return memo[d[1]]
    b = [build(x, flat, nodes, syms, memo) for x in d[2]] if tag in ("seq", "vec", "dict") else None
    if tag == "seq":
        return tuple(b) if d[1] is tuple else b
    if tag == "vec":
        return d[1]._from_components(b)
    if tag == "dict":
        return dict(zip(d[1], b))
    if tag == "object":
        return new_object(d[1], {n: build(x, flat, nodes, syms, memo) for n, x in zip(d[2], d[3])},
                          {n: build(x, flat, nodes, syms, memo) for n, x in zip(d[4], d[5])})
    if tag == "custom":
        return d[1].__fj_construct__({n: build(x, flat, nodes, syms, memo) for n, x in zip(d[2], d[3])})
    if tag == "container":
        _, cls, keys, items, factory, names, values, slots, svalues = d
        return new_container(cls, keys, [build(x, flat, nodes, syms, memo) for x in items],
                             None if factory is None else build(factory, flat, nodes, syms, memo),
                             {n: build(x, flat, nodes, syms, memo) for n, x in zip(names, values)},
                             {n: build(x, flat, nodes, syms, memo) for n, x in zip(slots, svalues)})
    if tag == "function":
        return new_function(d[1], [build(x, flat, nodes, syms, memo) for x in d[2]],
                            [build(x, flat, nodes, syms, memo) for x in d[3]],
                            [build(x, flat, nodes, syms, memo) for x in d[4]])
    if tag == "cell":
        return types.CellType(build(d[1], flat, nodes, syms, memo)) if len(d) > 1 else types.CellType()
    if tag == "reduce":
        _, func, args, state, items, keys, vals = d
        return reconstruct(func, [build(x, flat, nodes, syms, memo) for x in args],
                           None if state is None else build(state, flat, nodes, syms, memo),
                           None if items is None else [build(x, flat, nodes, syms, memo) for x in items],
                           None if keys is None else list(zip(keys, [build(x, flat, nodes, syms, memo)
                                                                      for x in vals])))
    raise AssertionError(tag)  # pragma: no cover


# ------------------------------------------------------------------------------ every replay
def generate_finish(actions, out_desc, ns):
    """The write-backs and the output build of one recording, as straight-line code over the
    replay's nodes ``node_0, node_1, ...``, symbolic outputs ``width_0, ...``, the input arrays
    ``leaves`` and input containers ``containers`` (what :func:`build` interprets).  Returns
    ``(lines, output expression)``; constants go into ``ns`` (``const_<k>``)."""
    ns.update({"new_instance": object.__new__, "ad_vertex": Vertex, "new_object": new_object,
               "reconstruct": reconstruct, "new_container": new_container, "set_entry": layout.set_entry,
               "del_entry": layout.del_entry, "assign_items": layout.assign_items, "new_function": new_function,
               "new_cell": types.CellType})
    L = []
    n = [0]
    nc = [0]

    def mapping(keys, vals) -> str:
        """A dict display when every key is a str or int literal, else ``dict(zip(...))``."""
        if all(type(k) in (str, int) for k in keys) and len(set(keys)) == len(keys):
            return "{" + "".join(f"{k!r}: {v}, " for k, v in zip(keys, vals)) + "}"
        return f"dict(zip({const(tuple(keys))}, ({''.join(v + ', ' for v in vals)})))"

    def const(v):
        nc[0] += 1
        name = f"const_{nc[0]}"
        ns[name] = v
        return name

    def tmp():
        n[0] += 1
        return f"value_{n[0]}"

    def items(ds) -> str:
        return "".join(expr(x) + ", " for x in ds)

    def expr(d) -> str:
        tag = d[0]
        if tag == "arr":
            t = tmp()
            L.append(f"{t} = new_instance({const(d[1])}); {t}._node = node_{d[2]}; {t}._ad = None")
            if len(d) > 3:
                L.append(f"{t}._ad = ad_vertex({const(d[1])}, node_{d[2]}.size, (), node_{d[2]})")
                if d[4] is not None:
                    L.append(f"{t}._ad.grad = {expr(d[4])}")
            return t
        if tag == "leaf":
            return f"leaves[{d[1]}]"
        if tag == "obj":
            return f"containers[{d[1]}]"
        if tag == "py":
            return const(d[1])
        if tag == "sym":
            return f"width_{d[1]}"
        if tag == "ref":
            return f"shared_{d[1]}"
        if tag == "share":
            L.append(f"shared_{d[1]} = {expr(d[2])}")
            return f"shared_{d[1]}"
        if tag == "seq":
            return f"({items(d[2])})" if d[1] is tuple else f"[{items(d[2])}]"
        if tag == "vec":
            return f"{const(d[1])}._from_components([{items(d[2])}])"
        if tag == "dict":
            return mapping(d[1], [expr(x) for x in d[2]])
        if tag == "object":
            t = tmp()
            state = mapping(d[2], [expr(x) for x in d[3]])
            slots = mapping(d[4], [expr(x) for x in d[5]])
            L.append(f"{t} = new_object({const(d[1])}, {state}, {slots})")
            return t
        if tag == "custom":
            return f"{const(d[1])}.__fj_construct__({mapping(d[2], [expr(x) for x in d[3]])})"
        if tag == "container":
            _, cls, keys, its, factory, names, values, slots, svalues = d
            t = tmp()
            fac = "None" if factory is None else expr(factory)
            state = mapping(names, [expr(x) for x in values])
            sl = mapping(slots, [expr(x) for x in svalues])
            L.append(f"{t} = new_container({const(cls)}, {const(keys)}, [{items(its)}], {fac}, {state}, {sl})")
            return t
        if tag == "function":
            return f"new_function({const(d[1])}, [{items(d[2])}], [{items(d[3])}], [{items(d[4])}])"
        if tag == "cell":
            return f"new_cell({expr(d[1])})" if len(d) > 1 else "new_cell()"
        if tag == "reduce":
            _, func, args, state, its, keys, vals = d
            t = tmp()
            st = "None" if state is None else expr(state)
            lst = "None" if its is None else f"[{items(its)}]"
            pairs = "None" if keys is None else f"list(zip({const(keys)}, ({items(vals)})))"
            L.append(f"{t} = reconstruct({const(func)}, ({items(args)}), {st}, {lst}, {pairs})")
            return t
        raise AssertionError(tag)  # pragma: no cover

    for act in actions:
        tag = act[0]
        if tag == "node":
            L.append(f"leaves[{act[1]}]._node = node_{act[2]}")
        elif tag == "set":
            v = expr(act[3])
            L.append(f"set_entry(containers[{act[1]}], {const(act[2])}, {v})")
        elif tag == "del":
            L.append(f"del_entry(containers[{act[1]}], {const(act[2])})")
        elif tag == "setlist":
            L.append(f"assign_items(containers[{act[1]}], [{items(act[2])}])")
        elif tag == "assign":
            vals = [expr(x) for x in act[2].values()]
            L.append(f"containers[{act[1]}].__fj_assign__({mapping(tuple(act[2]), vals)})")
        else:  # pragma: no cover
            raise AssertionError(tag)
    out = expr(out_desc)
    return L, out
