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

Descriptors are the named records of :mod:`.records` (``OutputDesc``): :class:`ArrayOut` (a
fresh array around a node-table entry; grad-enabled: a new AD leaf with its gradient, or a slot
of the replay's hub, :mod:`.through`), :class:`InputArray` / :class:`InputContainer` (passed
through), :class:`VectorOut`, :class:`SequenceOut` (an exact tuple or list), :class:`DictOut`
(an exact dict), :class:`ObjectOut` (instance state, no constructor), :class:`ContainerOut` (a
tuple/list/dict subclass: items, a defaultdict's ``default_factory``, instance state),
:class:`ReduceOut` (the copy protocol: deques, partials, methods), :class:`ConstructedOut`
(``cls.__fj_construct__(dict)``), :class:`FunctionOut` (a closure made again),
:class:`CellOut`, :class:`PythonValue`, :class:`WidthOut` (a recomputed width),
:class:`SharedOut` / :class:`SharedRef` (an object reached twice, built once).  Write-backs
into the inputs are the records ``WriteBack`` (:class:`SetNode`, :class:`SetEntry`,
:class:`DelEntry`, :class:`SetItems`, :class:`AssignAll`).

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
from .layout import _NO_SLOT, ValueNode, Walker, entries, handler_of, instance_dict, node_of, slot_value
from .symbolic import Sym
from .records import SlotOrigin, BufferEntry, LiteralEntry, InputEntry, CapturedEntry
from .records import (ArrayOut, InputArray, InputAlias, InputContainer, PythonValue, WidthOut, SharedOut, SharedRef, VectorOut,
                      SequenceOut, DictOut, ObjectOut, ContainerOut, ReduceOut, ConstructedOut, FunctionOut, CellOut,
                      SetNode, SetEntry, SetDictItem, DelEntry, SetItems, AssignAll)
from ..ad import frozen as _ad
from ..ad.graph import Vertex, assign_grad, leaf_vertex

_SCALAR_TYPES = (int, float, str, bool, type(None), Sym)
# values a rebuilt function may keep as they are (types, modules and functions included)
_ATOMS = (int, float, complex, str, bytes, bool, type(None), type, types.ModuleType, types.BuiltinFunctionType,
          np.generic, Sym)


def instance_state(o) -> tuple:
    """``(names, values, slot names, slot values)`` of an object's instance state (read as the
    walk reads it: past a user ``__getattr__``, which may raise anything)."""
    d = instance_dict(o)
    names = tuple(d) if d is not None else ()
    values = [d[n] for n in names]
    svalues = [(n, slot_value(o, n)) for n in slot_names(type(o)) if d is None or n not in d]
    svalues = [(n, v) for n, v in svalues if v is not _NO_SLOT]
    return names, values, tuple(n for n, _ in svalues), [v for _, v in svalues]


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
        self._input_vertices = None
        self._alias_of = None
        self.through = []         # grad-enabled outputs connected to the inputs (hub slot k: through[k])

    def input_vertices(self) -> set:
        """``id`` of the AD vertex of every grad-enabled input (computed once)."""
        iv = self._input_vertices
        if iv is None:
            iv = self._input_vertices = {id(a._ad) for a in self.flat.leaves if a._ad is not None}
        return iv

    def input_alias(self, v) -> int | None:
        """The index of the input array whose variable (node and AD vertex) the grad-enabled ``v``
        shares, if that input was not changed by the call; else None."""
        m = self._alias_of
        if m is None:
            m = self._alias_of = {}
            for i, (a, n) in enumerate(zip(self.flat.leaves, self.flat.leaf_nodes)):
                if a._ad is not None and a._node is n:
                    m.setdefault(id(a._ad), i)
        i = m.get(id(v._ad))
        if i is not None and self.flat.leaves[i]._node is v._node:
            return i
        return None

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
        """The descriptor of ``v`` (a :data:`.records.OutputDesc`)."""
        i = self.shared.get(id(v))
        if i is not None:
            return SharedRef(i)
        d = self._describe(v)
        if self.counts.get(id(v), 0) > 1 and type(d) not in _UNSHARED:
            i = self.shared[id(v)] = len(self.shared)
            self.shared_objs[i] = v
            return SharedOut(i, d)
        return d

    def _describes(self, values) -> tuple:
        return tuple(self.describe(x) for x in values)

    def _describe(self, v):
        if isinstance(v, ArrayBase):
            i = self.leaf_index.get(id(v))
            if i is not None:
                return InputArray(i)
            if v._ad is not None:     # grad-enabled: a fresh AD leaf at every replay, with its gradient
                i = self.input_alias(v)
                if i is not None:       # another object on an input's variable: the replay's input's
                    return InputAlias(i, type(v))
                node = self.node(v._node)       # (numbered before the gradient's node)
                g = v._ad.grad
                grad = None if g is None else self.describe(g)
                slot = None
                if _ad.output_reason(v) is not None or id(v._ad) in self.input_vertices():
                    # depends on the inputs through the AD graph, or is an input's variable in
                    # another array object (``Float(x)``, a vector's component): slot k of the
                    # replay's hub (freeze/through.py; frozen.py decides whether the recording
                    # can have one).  A new leaf would lose the gradient.
                    self.through.append(v)
                    slot = len(self.through) - 1
                return ArrayOut(type(v), node, True, grad, slot)
            return ArrayOut(type(v), self.node(v._node))
        ci = self.cont_index.get(id(v))
        if ci is not None and type(v) is not tuple:
            return InputContainer(ci)
        if type(v) is Sym:
            if v.is_const or not v._live():
                return PythonValue(v.value)
            self.sym_outputs.append(v)
            return WidthOut(len(self.sym_outputs) - 1)
        if isinstance(v, VectorBase):
            return VectorOut(type(v), self._describes(v._c))
        k = _kind(v)
        if k == "seq":
            return SequenceOut(type(v), self._describes(v))
        if k == "function":
            return FunctionOut(v, self._describes(v.__defaults__ or ()),
                               self._describes((v.__kwdefaults__ or {}).values()), self._describes(v.__closure__ or ()))
        if k == "cell":
            try:
                return CellOut(self.describe(v.cell_contents))
            except ValueError:
                return CellOut()
        if k == "generator" and self.rec.data_dependent is None:
            self.rec.data_dependent = (f"returns a {type(v).__name__} (its frame is state a replay cannot "
                                       "rebuild)")
        if k == "dict":
            return DictOut(tuple(v.keys()), self._describes(v.values()))
        if k == "object":
            names, values, slots, svalues = instance_state(v)
            return ObjectOut(type(v), names, self._describes(values), slots, self._describes(svalues))
        if k == "custom":
            es = entries(v)
            return ConstructedOut(type(v), tuple(n for n, _ in es), self._describes(x for _, x in es))
        if k == "container":
            keys, items, factory, names, values, slots, svalues = container_state(v)
            return ContainerOut(type(v), keys, self._describes(items), None if factory is None else self.describe(factory),
                                names, self._describes(values), slots, self._describes(svalues))
        if k == "reduce":
            p = self.parts(v)
            if p is not None:
                func, args, state, items, pairs = p
                return ReduceOut(func, self._describes(args), None if state is None else self.describe(state),
                                 None if items is None else self._describes(items),
                                 None if pairs is None else tuple(k for k, _ in pairs),
                                 None if pairs is None else self._describes(x for _, x in pairs))
        return PythonValue(v)


# descriptors never turned into a shared object (they are the same object at every reference)
_UNSHARED = (InputArray, InputContainer, PythonValue, WidthOut)


# ------------------------------------------------------------------------------ the first call
def build(d, flat, nodes, syms, memo):
    """Interpret descriptor ``d`` for the recorded call (``nodes``: the recorded nodes)."""
    def rec(x):
        return build(x, flat, nodes, syms, memo)

    def named(names, values) -> dict:
        return {n: rec(x) for n, x in zip(names, values)}

    t = type(d)
    if t is ArrayOut:
        cls = d.cls
        out = cls.__new__(cls)
        out._node = nodes[d.node]
        out._ad = None
        if d.grad_enabled:      # grad-enabled when recorded: a new AD leaf, with the gradient it had
            _ad.new_leaf(out)
            if d.grad is not None:
                out._ad.grad = rec(d.grad)
        return out
    if t is InputArray:
        return flat.leaves[d.index]
    if t is InputAlias:
        src = flat.leaves[d.index]
        out = d.cls.__new__(d.cls)
        out._node, out._ad = src._node, src._ad
        return out
    if t is InputContainer:
        return flat.containers[d.index]
    if t is PythonValue:
        return d.value
    if t is WidthOut:
        return syms[d.index]
    if t is SharedOut:
        v = memo[d.index] = rec(d.desc)
        return v
    if t is SharedRef:
        return memo[d.index]
    if t is SequenceOut:
        b = [rec(x) for x in d.items]
        return tuple(b) if d.cls is tuple else b
    if t is VectorOut:
        return d.cls._from_components([rec(x) for x in d.items])
    if t is DictOut:
        return dict(zip(d.keys, [rec(x) for x in d.items]))
    if t is ObjectOut:
        return new_object(d.cls, named(d.names, d.values), named(d.slots, d.slot_values))
    if t is ConstructedOut:
        return d.cls.__fj_construct__(named(d.names, d.values))
    if t is ContainerOut:
        return new_container(d.cls, d.keys, [rec(x) for x in d.items], None if d.factory is None else rec(d.factory),
                             named(d.names, d.values), named(d.slots, d.slot_values))
    if t is FunctionOut:
        return new_function(d.fn, [rec(x) for x in d.defaults], [rec(x) for x in d.kwdefaults],
                            [rec(x) for x in d.cells])
    if t is CellOut:
        return types.CellType() if d.contents is None else types.CellType(rec(d.contents))
    if t is ReduceOut:
        return reconstruct(d.func, [rec(x) for x in d.args], None if d.state is None else rec(d.state),
                           None if d.items is None else [rec(x) for x in d.items],
                           None if d.keys is None else list(zip(d.keys, [rec(x) for x in d.values])))
    raise AssertionError(d)  # pragma: no cover


# ------------------------------------------------------------------------------ every replay
def generate_finish(actions, out_desc, ns, through=None):
    """The write-backs and the output build of one recording, as straight-line code over the
    replay's nodes ``node_0, node_1, ...``, symbolic outputs ``width_0, ...``, the input arrays
    ``leaves`` and input containers ``containers`` (what :func:`build` interprets).  Returns
    ``(lines, output expression)``; constants go into ``ns`` (``const_<k>``).  ``through``
    (a :class:`.through.ThroughInfo`, or None): the recording's outputs are children of a hub
    that ``new_through`` (in ``ns``) makes, one per replay."""
    ns.update({"new_instance": object.__new__, "ad_vertex": leaf_vertex, "assign_grad": assign_grad,
               "VERTEX": Vertex, "new_object": new_object,
               "reconstruct": reconstruct, "new_container": new_container, "set_entry": layout.set_entry,
               "del_entry": layout.del_entry, "assign_items": layout.assign_items, "new_function": new_function,
               "new_cell": types.CellType})
    L = []
    n = [0]
    nc = [0]
    if through is not None:
        ns["through_info"] = through
        L.append("through = new_through(through_info, flat)")

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
        t = type(d)
        if t is ArrayOut:
            v = tmp()
            head = f"{v} = new_instance({const(d.cls)}); {v}._node = node_{d.node}; {v}._ad = "
            if d.hub_slot is not None and through is not None:
                L.append(head + f"through.output({d.hub_slot}, {const(d.cls)}, node_{d.node})")
                if d.grad is not None:
                    L.append(f"{v}._ad.grad = {expr(d.grad)}")
            elif d.grad_enabled:
                L.append(head + f"ad_vertex({const(d.cls)}, node_{d.node})")
                if d.grad is not None:
                    L.append(f"{v}._ad.grad = {expr(d.grad)}")
            else:
                L.append(head + "None")
            return v
        if t is InputArray:
            return f"leaves[{d.index}]"
        if t is InputAlias:
            v = tmp()
            L.append(f"{v} = new_instance({const(d.cls)}); {v}._node = leaves[{d.index}]._node; "
                     f"{v}._ad = leaves[{d.index}]._ad")
            return v
        if t is InputContainer:
            return f"containers[{d.index}]"
        if t is PythonValue:
            return const(d.value)
        if t is WidthOut:
            return f"width_{d.index}"
        if t is SharedRef:
            return f"shared_{d.index}"
        if t is SharedOut:
            L.append(f"shared_{d.index} = {expr(d.desc)}")
            return f"shared_{d.index}"
        if t is SequenceOut:
            return f"({items(d.items)})" if d.cls is tuple else f"[{items(d.items)}]"
        if t is VectorOut:
            return f"{const(d.cls)}._from_components([{items(d.items)}])"
        if t is DictOut:
            return mapping(d.keys, [expr(x) for x in d.items])
        if t is ObjectOut:
            v = tmp()
            state = mapping(d.names, [expr(x) for x in d.values])
            slots = mapping(d.slots, [expr(x) for x in d.slot_values])
            L.append(f"{v} = new_object({const(d.cls)}, {state}, {slots})")
            return v
        if t is ConstructedOut:
            return f"{const(d.cls)}.__fj_construct__({mapping(d.names, [expr(x) for x in d.values])})"
        if t is ContainerOut:
            v = tmp()
            fac = "None" if d.factory is None else expr(d.factory)
            state = mapping(d.names, [expr(x) for x in d.values])
            sl = mapping(d.slots, [expr(x) for x in d.slot_values])
            L.append(f"{v} = new_container({const(d.cls)}, {const(d.keys)}, [{items(d.items)}], {fac}, {state}, {sl})")
            return v
        if t is FunctionOut:
            return f"new_function({const(d.fn)}, [{items(d.defaults)}], [{items(d.kwdefaults)}], [{items(d.cells)}])"
        if t is CellOut:
            return "new_cell()" if d.contents is None else f"new_cell({expr(d.contents)})"
        if t is ReduceOut:
            v = tmp()
            st = "None" if d.state is None else expr(d.state)
            lst = "None" if d.items is None else f"[{items(d.items)}]"
            pairs = "None" if d.keys is None else f"list(zip({const(d.keys)}, ({items(d.values)})))"
            L.append(f"{v} = reconstruct({const(d.func)}, ({items(d.args)}), {st}, {lst}, {pairs})")
            return v
        raise AssertionError(d)  # pragma: no cover

    for act in actions:
        t = type(act)
        if t is SetNode:
            L.append(f"leaves[{act.leaf}]._node = node_{act.node}")
        elif t is SetEntry:
            v = expr(act.value)
            L.append(f"set_entry(containers[{act.container}], {const(act.key)}, {v})")
        elif t is SetDictItem:
            v = expr(act.value)
            L.append(f"containers[{act.container}][{const(act.key)}] = {v}")
        elif t is DelEntry:
            L.append(f"del_entry(containers[{act.container}], {const(act.key)})")
        elif t is SetItems:
            L.append(f"assign_items(containers[{act.container}], [{items(act.items)}])")
        elif t is AssignAll:
            vals = [expr(x) for x in act.values]
            if act.names == ("grad",):
                # (an input's AD vertex given its gradient, the usual write-back of a backward
                # pass: one function call; the key fixes the container's type, checked anyway)
                L.append(f"assigned = containers[{act.container}]")
                L.append(f"assign_grad(assigned, {vals[0]}) if type(assigned) is VERTEX "
                         f"else assigned.__fj_assign__({mapping(act.names, vals)})")
            else:
                L.append(f"containers[{act.container}].__fj_assign__({mapping(act.names, vals)})")
        else:  # pragma: no cover
            raise AssertionError(act)
    out = expr(out_desc)
    return L, out
