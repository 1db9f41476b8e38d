"""One definition of a PyTree: what it is, how to walk it, how to rebuild it.

A *PyTree* is a nest of Python containers with JIT arrays at the leaves.  Every
frostjit function that accepts "arrays or PyTrees of them" (``fj.eval``,
``fj.schedule``, ``fj.make_opaque``, ``fj.width``, the AD functions, ``gather``
and ``scatter``, ``select``, ``tile``/``repeat``, the optimizers) walks it with
the functions of this module, so they all agree on what is inside.

What each object is, decided once per type (:func:`node_type`), in this order:

1. a 1-D JIT array (``Float``, ``UInt32``, ...): a **leaf**;
2. a static vector (``Array3f``, ...): a node whose children are its components;
3. a class with ``__fj_opaque__ = True``: a Python value (never walked);
4. the **traversal protocol** (frostjit's counterpart of Dr.Jit's traversal
   callbacks): a class with ``__fj_traverse_attrs__ = ("a", "b")`` (its children
   are exactly these attributes) and/or ``__fj_traverse__(self) -> dict`` (its
   children, by name); ``__fj_assign__(self, dict)`` writes new children into the
   object, the classmethod ``__fj_construct__(cls, dict)`` builds a new one;
5. ``tuple`` and ``list``, and their subclasses (``namedtuple``);
6. ``dict`` and its subclasses (``OrderedDict``, ``defaultdict``, ``Counter``);
7. a class with a ``DRJIT_STRUCT = {"field": Type, ...}`` dict: its fields;
8. a dataclass (frozen ones too): its fields;
9. anything else (``None``, numbers, strings, NumPy arrays, other objects): a
   **Python value**, a leaf that is not a JIT array.

There is no registration function: as in Dr.Jit, a user type becomes a PyTree
by declaring ``DRJIT_STRUCT``, by being a dataclass, or through the traversal
protocol (which may be set on an existing class).

Rebuilding (:func:`transform`, :func:`unflatten`, :func:`map2`) makes a new
container of the same type without running user constructors: tuples and lists
through the built-in constructors, dict subclasses through their base class
(``defaultdict`` keeps its ``default_factory``), dataclasses and ``DRJIT_STRUCT``
objects as a shallow copy whose fields are replaced (``__init__`` and
``__post_init__`` do not run again; other attributes are kept), protocol objects
with ``__fj_construct__`` or else as a shallow copy given ``__fj_assign__`` (without it,
the children are set as attributes by name; a protocol class based on ``tuple``, ``list`` or
``dict`` keeps its items).  :func:`kinds.make_container` makes a tuple, list or dict subclass
without running its constructor (frozen functions rebuild their outputs with it too).

A container reached twice is walked twice (a PyTree is a tree: shared subtrees
count at each place).  A reference cycle is skipped by the read-only walks
(:func:`traverse`, :func:`leaves`) and is an error for the walks that rebuild.  (Cycles are
found by the ids of the containers on the path from the root, which the walk's frames hold:
a child a protocol getter makes afresh cannot be freed, and its address reused, while its
id is marked.)

>>> import frostjit as fj
>>> from frostjit.llvm import Float
>>> leaves, treedef = fj.tree.flatten({"x": Float(1, 2), "n": 3, "v": [Float(4)]})
>>> len(leaves)
2
>>> fj.tree.unflatten(treedef, [a * 2 for a in leaves])["n"]
3
"""
from __future__ import annotations

from .kinds import Kind, LeafError, NodeType, is_pytree, node_type, vector_from_components
from .pairs import map2, traverse2
from .walk import TreeDef, flatten, leaves, transform, traverse, unflatten

__all__ = ["Kind", "NodeType", "TreeDef", "LeafError", "node_type", "is_pytree", "traverse", "leaves",
           "transform", "flatten", "unflatten", "map2", "traverse2", "vector_from_components"]
