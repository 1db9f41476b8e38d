"""Generated input binders: the frozen call's cache lookup without building a key.

A full lookup walks every input into a layout key (:mod:`.layout`), hashes it and looks it up.
Once a key has been replayed, :func:`generate` writes a Python function (a *binder*, as in
Triton's launcher binder) specialised to that key's input structure: straight-line code that
checks the new call's inputs against the structure (type identity, container lengths and keys,
Python values, literal values, grad-enabled status, which inputs share a node or a size,
aliasing, JIT flags) and extracts what the replay needs (the distinct input nodes, the size of
each size class, the array leaves and the containers, in walk order).  It returns ``None`` as soon
as anything differs: the caller then does the full walk, so a binder never decides a lookup the
walk would decide differently, it only skips the work when the answer is known.

A long list or tuple of evaluated arrays of one type and one size class is checked in a few
C-level passes (``map``/``set``) instead of per element.  (Not the arrays of short or mixed
structures: a ``map`` over an ``attrgetter`` costs ~30-40 ns per item, more than the specialized
inline checks.)

Structures a binder does not cover (NumPy inputs, symbolic widths) raise :class:`Unsupported`:
those keys always take the full walk.
"""
from __future__ import annotations

import enum
import operator

import numpy as np

from ..trace.state import state
from ..ad import graph as ad_graph
from ..array.vector import VectorBase
from ..ad.frozen import scope_token, scopes as ad_scopes
from ..tree.kinds import declaration, slot_names
from .layout import NP_PARAM_NUMBERS, Walker, _HANDLERS, _NO_SLOT, handler_of, instance_dict, node_of, slot_value, value_token, \
    keys_token
from .values import _HEAPTYPE, Ident, attribute_snaps, eq_differs, float_bits, user_eq, value_key, needs_key, is_torch_tensor

VECTORIZE_MIN = 8            # a homogeneous sequence of arrays at least this long is checked in bulk
PAIRWISE_MAX = 10            # containers of one type compared pairwise (45 `is` tests) up to this many


# the container types whose parts a binder reads without running user code (exact types; see
# _Gen.distinct_containers), and the static vectors' component list (a slot, unless overridden)
_PLAIN_PARTS = frozenset({tuple, list, dict, ad_graph.Vertex})
_VECTOR_C = VectorBase.__dict__["_c"]


class Unsupported(Exception):
    """The input structure has something a binder does not handle (the full walk does)."""


class Bound:
    """What a binder extracts: the same fields a :class:`~.layout.Flat` has for a replay (and
    ``kept``, set only on a backward derivative's inputs bound by :mod:`.through`: the forward
    replay's kept intermediates, :mod:`.kept`; ``through``: the hub handler a replay made for
    these inputs, until the call claims it, :func:`.through.claim`; ``leaf_ads``: the leaves'
    ``_ad`` in order, read by the checks anyway, where a recording of the key differentiates
    through its result (the hub's snapshot of the inputs, :class:`.through.Through`), else None)."""

    __slots__ = ("nodes", "sizes", "leaves", "containers", "numpy", "params", "kept", "leaf_nodes", "through",
                 "leaf_ads")


_MISS = object()


def _lit(v):
    return float_bits(v) if type(v) is float else v


def _floating(t) -> bool:
    """Whether parameters of number type ``t`` can be NaN (a float, a NumPy floating scalar)."""
    return t is float or issubclass(t, np.floating)


def _cell_full(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (reading an empty cell raises ValueError)
    except ValueError:
        return False
    return True


class _Gen:
    def __init__(self, opaque_mask, force_opaque: bool, param_mask=frozenset()):
        self.mask = opaque_mask
        self.force = force_opaque
        self.param_mask = param_mask
        self.n_numbers = 0          # Python numbers in walk order (layout.Walker.value)
        self.params = []            # variables holding the parameters
        self.L = []
        self.ns = {"st": state, "MISS": _MISS, "LIT": _lit, "CELLFULL": _cell_full, "BOUND": Bound,
                   "NEW": object.__new__, "GN": operator.attrgetter("_node"), "GOP": operator.attrgetter("op"),
                   "GAD": operator.attrgetter("_ad"), "GS": operator.attrgetter("size"), "DATA": {"data"},
                   "ONE": {1}}
        self.consts = {}
        self.n = 0
        self.memo = {}           # id(obj) -> expression of the first visit
        self.keep = []           # keeps visited objects alive while generating (ids stay unique)
        self.cont_vars = []      # memoized containers that must stay distinct objects
        self.cont_types = []     # their types (each checked exactly: `type(v) is not K`)
        self.nodes = []          # list-display items of the distinct nodes (``n3`` or ``*v7``)
        self.n_nodes = 0
        self.node_of = {}        # id(node) -> (expression, [array expressions with this node])
        self.classes = {}        # size -> variable holding it
        self.class_vars = []
        self.leaves = []         # list-display items of the array leaves
        self.ads = []            # list-display items of their ``_ad`` (a vertex variable or None)
        self.n_leaves = 0
        self.containers = []
        # Containers whose distinctness the distinct-nodes check implies (distinct_containers):
        # ``open`` holds the containers being emitted (innermost last; None where the walk
        # goes through a part that is read by user code), ``holds`` those with a new data node
        # below them, ``aliased`` whether the key reaches any object or node twice.
        self.open = []
        self.holds = set()
        self.aliased = False
        self.structs = set()     # DRJIT_STRUCT classes whose field names are checked

    # -- helpers -------------------------------------------------------------------------
    def var(self, p="v") -> str:
        self.n += 1
        return f"{p}{self.n}"

    def const(self, obj) -> str:
        k = id(obj)
        name = self.consts.get(k)
        if name is None:
            name = self.consts[k] = f"K{len(self.consts)}"
            self.ns[name] = obj
            self.keep.append(obj)
        return name

    def line(self, s: str) -> None:
        self.L.append("        " + s)

    def fail_if(self, cond: str) -> None:
        self.L.append(f"        if {cond}: return None")

    def ref(self, o, var) -> bool:
        """A second visit of a memoized object: check it is the same object again."""
        e = self.memo.get(id(o))
        if e is None:
            return False
        self.aliased = True
        self.fail_if(f"{var} is not {e}")
        return True

    def container(self, o, var, distinct: bool = True, extra: str = "") -> bool:
        if self.ref(o, var):
            return False
        self.memo[id(o)] = var
        self.keep.append(o)
        self.containers.append(var)
        if distinct:
            self.cont_vars.append(var)
            self.cont_types.append(type(o))
        self.fail_if(f"type({var}) is not {self.const(type(o))}{extra}")
        return True

    def distinct_containers(self) -> None:
        """The check that the memoized containers are distinct objects.  Each one's exact type was
        checked where it was reached, so only containers of one type can be the same object: a
        few are compared pairwise with ``is`` (a set of ``id()`` allocates an int per container,
        ~300 instructions each; callgrind), more through such a set.

        Two containers that each hold a data-node leaf (:meth:`implied`) are not compared: when
        the key reaches no object and no node twice, the distinct-nodes check refuses them
        being one object.  Why: the binder checks every object it reaches against the key,
        exact type included, and descends into every item of a tuple, list, dict, static
        vector and vertex it reaches (nothing stops at an identity test: none in such a key),
        the same way for the same type.  So if containers ``c1`` (at path ``P1``) and ``c2``
        (at ``P2 != P1``) were one object, the leaf array below ``c1`` at relative path ``r``
        would be read again at ``P2 + r``, a different position of the key, and its node
        would be in the binder's node list twice (the key has one new node per leaf: no node
        reached twice), which ``len({*nodes}) != n`` refuses.  Only steps that run no user code
        count as "below" (tuple/list items, dict values, a static vector's components, a
        vertex's ``grad``): a container read through an attribute getter or
        ``__fj_traverse__`` (which could answer differently the second time) is compared as
        before.  (r16: 34 of the 36 + 6 pairs of a training step's binders.)"""
        implied = self.holds if not self.aliased and self.n_nodes > 1 else ()
        groups = {}
        for var, t in zip(self.cont_vars, self.cont_types):
            groups.setdefault(t, []).append(var)
        for vs in groups.values():
            if len(vs) <= 1:
                continue
            pairs = [f"{a} is {b}" for i, a in enumerate(vs) for b in vs[i + 1:]
                     if a not in implied or b not in implied]
            if not pairs:
                continue
            if len(vs) <= PAIRWISE_MAX:
                self.fail_if(" or ".join(pairs))
            else:
                self.fail_if(f"len({{{', '.join(f'id({c})' for c in vs)}}}) != {len(vs)}")

    def leaf_below(self) -> None:
        """A new data node was reached: the open containers up to the innermost part read by
        user code hold a leaf (:meth:`distinct_containers`)."""
        for var in reversed(self.open):
            if var is None:
                break
            self.holds.add(var)

    def unpack(self, src: str, n: int) -> list:
        vs = [self.var() for _ in range(n)]
        if n:
            self.line(f"{', '.join(vs)}, = {src}")
        return vs

    # -- the walk --------------------------------------------------------------------------
    def emit(self, o, var) -> None:
        t = type(o)
        h = _HANDLERS.get(t)
        if h is None:
            h = handler_of(t)
        if h is Walker.array:
            self.array(o, var)      # (not a container: its vertex is read from a slot)
            return
        # (what is read below a tuple, list, dict, static vector or vertex runs no user code)
        self.open.append(var if t in _PLAIN_PARTS or (h is Walker.vector and getattr(t, "_c", None) is _VECTOR_C)
                         else None)
        try:
            self.emit_part(o, var, h, t)
        finally:
            self.open.pop()

    def emit_part(self, o, var, h, t) -> None:
        if h is Walker.seq:
            self.seq(o, var)
        elif h is Walker.dict:
            self.dict(o, var)
        elif h is Walker.vector:
            if self.container(o, var):
                c = self.var()
                self.line(f"{c} = {var}._c")
                self.fail_if(f"len({c}) != {len(o._c)}")
                for v, x in zip(self.unpack(c, len(o._c)), o._c):
                    self.emit(x, v)
        elif h is Walker.fields:
            if self.container(o, var):
                node = node_of(t)
                if node.struct is not None and t not in self.structs:
                    # the class's DRJIT_STRUCT / __fj_traverse_attrs__ names, as the walk reads
                    # them (reassigned or changed in place: r16; frostjit's own classes are
                    # taken as constant)
                    self.structs.add(t)
                    self.fail_if(f"tuple({self.const(t)}.{declaration(node.kind)}) != {self.const(node.fields)}")
                self.fields(o, var, node.fields)
        elif h is Walker.custom:
            self.custom(o, var)
        elif h is Walker.obj:
            self.obj(o, var)
        elif h is Walker.value:
            self.value(o, var)
        elif h is Walker.none:
            self.fail_if(f"{var} is not None")
        else:   # numpy, sym
            raise Unsupported(h.__name__)

    def fields(self, o, var, names) -> None:
        for n in names:
            v = self.var()
            self.line(f"{v} = {var}.{n}" if n.isidentifier() else f"{v} = getattr({var}, {n!r})")
            self.emit(getattr(o, n), v)

    def array(self, o, var) -> None:
        if self.ref(o, var):
            return
        self.memo[id(o)] = var
        self.keep.append(o)
        li = self.n_leaves
        self.leaves.append(var)
        self.n_leaves += 1
        node = o._node
        nv = self.var("n")
        # one condition per leaf: type, node kind, (literal value / size), grad-enabled status
        conds = [f"type({var}) is not {self.const(type(o))}"]
        after = []
        if node.op == "literal":
            if self.force or li in self.mask:       # pragma: no cover - the walk made it opaque
                raise Unsupported("literal input made opaque")
            conds += [f"({nv} := {var}._node).op != 'literal'", f"{nv}.size != {node.size}",
                      f"LIT({nv}.value) != {self.const(_lit(node.value))}"]
        elif node.op == "data":
            conds.append(f"({nv} := {var}._node).op != 'data'")
            known = self.node_of.get(id(node))
            if known is not None:
                self.aliased = True
                conds.append(f"{nv} is not {known[0]}")
                conds += [f"{var} is {a}" for a in known[1]]
                known[1].append(var)
            else:
                self.keep.append(node)
                self.node_of[id(node)] = (nv, [var])
                self.nodes.append(nv)
                self.n_nodes += 1
                self.leaf_below()
                c = self.size_class(node.size, f"{nv}.size")
                if c is not None:
                    conds.append(c)
                else:
                    after = self.L[-2:]
                    del self.L[-2:]
        else:
            raise Unsupported("pending input")     # pragma: no cover - the walk evaluated it
        grad = o._ad is not None
        conds.append(f"{var}._ad is None" if grad else f"{var}._ad is not None")
        self.fail_if(" or ".join(conds))
        self.L.extend(after)
        if grad:
            av = self.var()
            self.ads.append(av)
            self.line(f"{av} = {var}._ad")
            self.emit(o._ad, av)
        else:
            self.ads.append("None")

    def size_class(self, size: int, expr: str):
        """The check that ``expr`` is in the size class of ``size``: a condition, or ``None`` when
        it opens a new class (then two lines were emitted: the class variable and its check)."""
        if size == 1:
            return f"{expr} != 1"
        sv = self.classes.get(size)
        if sv is None:
            sv = self.classes[size] = self.var("s")
            self.class_vars.append(sv)
            self.line(f"{sv} = {expr}")
            self.fail_if(f"{sv} == 1")
            return None
        return f"{expr} != {sv}"

    def seq(self, o, var, distinct: bool = True) -> None:
        n = len(o)
        bulk = n >= VECTORIZE_MIN and id(o) not in self.memo and self.vectorizable(o)
        # (unpacking all n items checks the length: ValueError, caught, is a miss)
        if not self.container(o, var, distinct, f" or len({var}) != {n}" if bulk or not n else ""):
            return
        if bulk:
            self.vector_of_arrays(o, var)
            return
        for v, x in zip(self.unpack(var, n), o):
            self.emit(x, v)

    def vectorizable(self, o) -> bool:
        t = type(o[0])
        if handler_of(t) is not Walker.array:
            return False
        sizes = set()
        seen = set()
        for x in o:
            if type(x) is not t or id(x) in self.memo or x._ad is not None:
                return False
            node = x._node
            if node.op != "data" or id(node) in self.node_of or id(node) in seen:
                return False
            seen.add(id(node))
            sizes.add(node.size)
        return len(sizes) == 1

    def vector_of_arrays(self, o, var) -> None:
        """A sequence of distinct evaluated arrays of one type and size class: a few bulk passes."""
        T = self.const({type(o[0])})
        nl = self.var("nl")
        self.fail_if(f"{{*map(type, {var})}} != {T}")
        self.line(f"{nl} = [*map(GN, {var})]")
        self.fail_if(f"{{*map(GOP, {nl})}} != DATA")
        self.fail_if(f"any(map(GAD, {var}))")
        size = o[0]._node.size
        sz = self.var("z")
        self.line(f"{sz} = {{*map(GS, {nl})}}")
        if size == 1:
            self.fail_if(f"{sz} != ONE")
        else:
            sv = self.classes.get(size)
            if sv is None:
                self.fail_if(f"len({sz}) != 1")
                sv = self.classes[size] = self.var("s")
                self.class_vars.append(sv)
                self.line(f"{sv}, = {sz}")
                self.fail_if(f"{sv} == 1")
            else:
                self.fail_if(f"{sz} != {{{sv}}}")
        for i, x in enumerate(o):
            self.memo[id(x)] = f"{var}[{i}]"
            self.keep.append(x)
            self.keep.append(x._node)
            self.node_of[id(x._node)] = (f"{nl}[{i}]", [f"{var}[{i}]"])
        self.nodes.append(f"*{nl}")
        self.n_nodes += len(o)
        self.leaf_below()
        self.leaves.append(f"*{var}")
        self.n_leaves += len(o)
        self.ads.append(f"*{self.const((None,) * len(o))}")      # (checked: none grad-enabled)

    def dict(self, o, var, distinct: bool = True) -> None:
        try:
            keys = tuple(o)
        except TypeError:           # pragma: no cover - a dict subclass that cannot iterate
            raise Unsupported("dict without keys") from None
        if not self.container(o, var, distinct):
            return
        if not keys:
            self.fail_if(f"{var}")
            return
        self.fail_if(self.keys_differ(f"tuple({var})", keys))
        for v, x in zip(self.unpack(f"{var}.values()", len(keys)), o.values()):
            self.emit(x, v)

    def custom(self, o, var) -> None:
        # a protocol object without __fj_traverse_attrs__ (with them it is a "fields" node)
        keys, values = node_of(type(o)).children(o)
        if not self.container(o, var):
            return
        d = self.var("d")
        self.line(f"{d} = {var}.__fj_traverse__()")
        self.fail_if(self.keys_differ(f"tuple({d})", keys))
        for v, x in zip(self.unpack(f"{d}.values()", len(keys)), values):
            self.emit(x, v)

    def obj(self, o, var) -> None:
        if not self.container(o, var):
            return
        # plain objects are Python values (layout.value_token): by == when they define it, else identity
        tok = value_token(o)
        if isinstance(tok, Ident):
            self.fail_if(f"{var} is not {self.weak(tok)}()")
        elif is_torch_tensor(type(o)):
            # (the walk's token: identity, since a tensor hashes by it, and the version counter,
            # which changes in place: values.exact_state)
            self.fail_if(f"{var} is not {self.const(o)} or {var}._version != {o._version!r}")
        elif type(tok) is tuple:
            # (the walk's token: the object's == made safe, plus its C state where == is coarse)
            c = self.const(o)
            self.ns["VTOK"] = value_token
            self.fail_if(f"{var} is not {c} and VTOK({var}) != {self.const(tok)}")
        else:
            c = self.const(o)
            self.ns["EQ_DIFFERS"] = eq_differs
            self.fail_if(f"{var} is not {c} and EQ_DIFFERS({var}, {c})")
        t = type(o)
        # A user __getattr__ answers for an unset slot (it may raise anything, or answer), a
        # __getattribute__ override for everything: such a class's dict and slots are read as the
        # walk reads them (layout.instance_dict, slot_value), others by plain attribute access.
        plain = getattr(t, "__getattr__", None) is None and t.__getattribute__ is object.__getattribute__
        if not plain:
            self.ns["SLOT"], self.ns["NO_SLOT"], self.ns["IDICT"] = slot_value, _NO_SLOT, instance_dict
        d = instance_dict(o)
        if d is not None:
            dv = self.var("d")
            self.line(f"{dv} = {var}.__dict__" if plain else f"{dv} = IDICT({var})")
            names = tuple(d)
            if names:
                self.fail_if(f"tuple({dv}) != {self.const(names)}")
                for v, x in zip(self.unpack(f"{dv}.values()", len(names)), d.values()):
                    self.emit(x, v)
            else:
                self.fail_if(dv)
        for n in slot_names(t):
            if d is not None and n in d:        # pragma: no cover - a slot shadowed by the dict
                raise Unsupported("slot and __dict__ entry with one name")
            x = slot_value(o, n)
            if x is not _NO_SLOT:
                v = self.var()
                self.line(f"{v} = getattr({var}, {n!r}, MISS)" if plain else f"{v} = SLOT({var}, {n!r})")
                self.emit(x, v)
            else:
                self.fail_if(f"hasattr({var}, {n!r})" if plain else f"SLOT({var}, {n!r}) is not NO_SLOT")

    def value(self, o, var) -> None:
        t = type(o)
        if t is float or t is int or t in NP_PARAM_NUMBERS:
            i = self.n_numbers
            self.n_numbers = i + 1
            if i in self.param_mask and o == o:     # a parameter: any value of this type but a NaN
                tn = t.__name__ if t is float or t is int else self.const(t)
                self.fail_if(f"type({var}) is not {tn}" if t is int or not _floating(t)
                             else f"type({var}) is not {tn} or {var} != {var}")
                self.params.append(var)
                return
        # (the same object first: the usual case, one test; it has the type too)
        if t is bool:           # (two objects: equal is identical)
            self.fail_if(f"{var} is not {self.const(o)}")
            return
        if t is float:
            c = self.const(o)
            # (a NaN: by sign and payload too, which ``hex`` leaves out)
            self.ns["FBITS"] = float_bits
            h = f"FBITS({var})" if o != o else f"{var}.hex()"
            self.fail_if(f"{var} is not {c} and (type({var}) is not float or {h} != {self.const(float_bits(o))})")
            return
        key = value_key(o)
        if len(key) == 2 and type(key[1]) is Ident:           # by identity, held weakly
            self.fail_if(f"{var} is not {self.weak(key[1])}()")
            return
        heap = t.__flags__ & _HEAPTYPE
        if needs_key(t) or (heap and user_eq(t)):
            # == is not exact for these (-0.0 == 0.0, nan != nan), or may lie (r14: an Enum
            # whose == says True): the key
            self.ns["KEY"] = value_key
            self.fail_if(f"KEY({var}) != {self.const(key)}")
            return
        c = self.const(o)
        test = f"{var} is not {c} and (type({var}) is not {self.const(t)} or not ({var} == {c}))"
        if heap and not isinstance(o, enum.Enum):
            # a Python subclass (``class Tag(str)``): its attributes are in the key too (r14:
            # ``s.scale`` of such an argument replayed the first call's scale)
            snaps = attribute_snaps(o)
            if snaps or slot_names(t):
                self.ns["SNAPS"] = attribute_snaps
                test = f"({test}) or SNAPS({var}) != {self.const(snaps)}"
            else:               # (the usual case: none; an empty __dict__ is falsy)
                self.ns["IDICT"] = instance_dict
                test = f"({test}) or IDICT({var})"
        self.fail_if(test)

    def keys_differ(self, expr: str, keys: tuple) -> str:
        """The condition that the dict keys ``expr`` are not ``keys`` (as layout.keys_token
        compares them: non-str keys by value_key)."""
        tok = keys_token(keys)
        if tok is keys:
            return f"{expr} != {self.const(keys)}"
        self.ns["KEYS"] = keys_token
        return f"KEYS({expr}) != {self.const(tok)}"

    def weak(self, ident) -> str:
        """A name for a callable returning the object of ``ident`` (``None`` once it died): the
        binder must not keep identity-keyed objects alive."""
        ref = ident.ref if ident.ref is not None else (lambda o=ident.strong: o)
        return self.const(ref)


def generate(ff, args, kwargs, flat, views, leaf_ads: bool = False):
    """A binder for the structure of this call's inputs (``flat`` is their full walk).

    ``views`` are the frozen function's globals and closure views (or ``None``), the objects the
    replay writes ``global``/``nonlocal`` rebindings through.  ``leaf_ads``: the binder also
    gives the leaves' ``_ad`` (``Bound.leaf_ads``; else None there).  Returns the binder, a
    function ``bind(args, kwargs) -> Bound | None``; raises :class:`Unsupported`.
    """
    if flat.numpy:
        raise Unsupported("NumPy inputs")
    g = _Gen(ff._opaque_mask, not ff.auto_opaque, ff._param_mask)
    g.ns["FLAGS"] = int(state.flags)
    g.ns["SC"] = ad_scopes
    g.ns["ADG"] = ad_graph
    scope = scope_token(flat.leaves)
    if scope is None:       # the common case: no AD scope open, checked in one line
        # (ADG.open_scopes: no scope open in any thread, so none in this one; a plain global)
        g.line("if st.side_effects or st.flags != FLAGS or (ADG.open_scopes and (SC.enable or SC.isolate)): "
               "return None")
    else:
        g.line("if st.side_effects or st.flags != FLAGS: return None")
    # args: a fresh tuple (never aliased), then kwargs: a fresh dict
    g.memo[id(args)] = "args"
    g.containers.append("args")
    g.fail_if(f"len(args) != {len(args)}")
    for v, x in zip(g.unpack("args", len(args)), args):
        g.emit(x, v)
    if kwargs:
        g.dict(kwargs, "kwargs", distinct=False)
    else:
        g.containers.append("kwargs")
        g.fail_if("kwargs")
    gview, cview, self_obj = views
    if gview is not None:
        g.ns["GV"] = gview
        g.ns["G"] = gview.g
        g.containers.append("GV")
        for n in gview.names:
            if n in gview.g:
                v = g.var()
                g.line(f"{v} = G.get({n!r}, MISS)")
                g.emit(gview.g[n], v)
            else:
                g.fail_if(f"{n!r} in G")
    if cview is not None:
        g.ns["CV"] = cview
        g.containers.append("CV")
        for i, (n, cell) in enumerate(zip(cview.names, cview.cells)):
            g.ns[f"CELL{i}"] = cell
            try:
                x = cell.cell_contents
            except ValueError:
                g.fail_if(f"CELLFULL(CELL{i})")
                continue
            v = g.var()
            g.line(f"{v} = CELL{i}.cell_contents")
            g.emit(x, v)
    if self_obj is not None:
        g.ns["SELF"] = self_obj
        g.line("vself = SELF")
        g.emit(self_obj, "vself")
    if ff.state_fn is not None:
        g.ns["SF"] = ff.state_fn
        g.line("sf = SF(*args, **kwargs)")
        g.emit(ff.state_fn(*args, **kwargs), "sf")
    # every node and container reached for the first time is a distinct object, sizes distinct
    nodes = f"[{', '.join(g.nodes)}]"
    if g.n_nodes > 1:
        g.line(f"nodes = {nodes}")
        g.fail_if(f"len({{*nodes}}) != {g.n_nodes}")
        nodes = "nodes"
    g.distinct_containers()
    if len(g.class_vars) > 1:
        g.fail_if(f"len({{{', '.join(g.class_vars)}}}) != {len(g.class_vars)}")
    g.line("b = NEW(BOUND)")
    g.line(f"b.nodes = {nodes}")
    g.line(f"b.sizes = [{', '.join(g.class_vars)}]")
    g.line(f"b.leaves = [{', '.join(g.leaves)}]")
    # Every leaf its own data node: the nodes are the leaves' nodes, in the same order (array()
    # and the vector path append a leaf and its node together, and no node without a leaf).
    g.line("b.leaf_nodes = b.nodes" if g.n_nodes == g.n_leaves else "b.leaf_nodes = None")
    # (a list display of variables the checks read: ~600 instructions for 22 leaves, where
    # list(map(attrgetter("_ad"), leaves)) over arrays of several types costs ~9,700)
    g.line(f"b.leaf_ads = [{', '.join(g.ads)}]" if leaf_ads else "b.leaf_ads = None")
    if scope is not None:
        g.ns["SCOPE"] = scope_token
        g.fail_if(f"SCOPE(b.leaves) != {g.const(scope)}")
    g.line(f"b.containers = [{', '.join(g.containers)}]")
    g.line("b.numpy = ()")
    g.line(f"b.params = [{', '.join(g.params)}]")
    g.line("return b")
    src = "def bind(args, kwargs):\n    try:\n" + "\n".join(g.L) + "\n    except Exception:\n        return None\n"
    code = compile(src, f"<frostjit.freeze binder {ff.name}>", "exec")
    ns = g.ns
    exec(code, ns)
    bind = ns["bind"]
    bind.source = src
    # self-check: on the inputs it was generated from, it extracts what the walk found
    b = bind(args, kwargs)
    if b is None or not (_same(b.nodes, flat.nodes) and _same(b.leaves, flat.leaves)
                         and b.sizes == flat.sizes and _same(b.containers, flat.containers)
                         and _same(b.params, flat.params)
                         and (b.leaf_ads is None or _same(b.leaf_ads, [a._ad for a in flat.leaves]))):
        raise Unsupported("self-check failed")      # pragma: no cover - a binder bug, never used
    return bind


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))
