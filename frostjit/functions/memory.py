"""Gathers and scatters: ``gather``, ``scatter``, ``scatter_add``, ``scatter_reduce``.

Out-of-bounds indices are safe: a gather outside the source reads 0 and a
scatter outside the target is skipped.  With ``JitFlag.Debug`` set, both raise
``IndexError`` naming the first offending index instead.

Scatters are side effects: they are queued and run, in program order, by the
next evaluation; any later use of the target (reading it, computing with it,
gathering from it) forces that evaluation first.  A scatter into a buffer that
other arrays still refer to first copies it (copy-on-write), so those arrays
keep their values.
"""
from __future__ import annotations

import enum
import operator
import sys

import numpy as np

from ..array.flat import ArrayBase, is_flat, register_item_index, register_item_scatter
from ..array.vector import VectorBase
from ..array import registry
from ..backend import current_backend
from ..errors import IncompatibleArgumentsError, TensorIndexTypeError
from ..tree import LeafError, leaves, node_type, transform, traverse2, vector_from_components, Kind
from ..schedule import memops
from ..schedule.evaluate import evaluate
from ..trace import loops, masks, ops
from ..trace.dtypes import Bool, Int32, Int64, UInt32, UInt64
from ..trace.node import Node
from ..trace.state import state, DEBUG
from .evaluation import width


class ReduceOp(enum.Enum):
    """Reduction applied by :func:`scatter_reduce` (Dr.Jit names)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``ReduceOp.Member``

    Identity = None
    Add = "add"
    Mul = "mul"
    Min = "min"
    Max = "max"
    And = "and"     #: bitwise, integer arrays (Bool: logical, as fj.all)
    Or = "or"       #: bitwise, integer arrays (Bool: logical, as fj.any)


class ReduceMode(enum.Enum):
    """Dr.Jit's strategies for atomic scatter-reductions (its values).  frostjit accepts them in
    ``gather``/``scatter``/``scatter_add``/``scatter_reduce`` and chooses by itself: atomics only
    when threads share a launch, per-thread private copies of small targets (docs/engine.md)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``ReduceMode.Member``

    Auto = 0
    Direct = 1
    Local = 2
    NoConflicts = 3
    Expand = 4
    Permute = 5


def _check_mode(who: str, mode) -> None:
    if mode is not None and not isinstance(mode, ReduceMode):
        raise TypeError(f"{who}(): 'mode' must be a frostjit.ReduceMode, got {mode!r}")


def _index_array(index, backend):
    """``index``, a sequence of ints as a ``UInt32`` array of ``backend`` (Dr.Jit accepts one
    wherever an index array goes, also where the index is scaled: ``gather(Array3f, x, [0, 2])``)."""
    if isinstance(index, (list, tuple, range)):
        return registry.flat_type(backend, UInt32)(index)
    return index


def _index_node(index, backend, who: str) -> Node:
    if type(index) is int and 0 <= index < 2**32:
        # (the common literal index, as the general path below makes it: no conversion to do)
        return ops.stored_literal(UInt32, index)
    index = _index_array(index, backend)
    if isinstance(index, ArrayBase):
        vt = index._vt
        if not vt.is_integral:
            raise TypeError(f"{who}(): the index must be an integer array, got {type(index).__name__}")
        if vt.bits < 32:    # 8-bit indices address as 32-bit ones (kernels index with 32 or 64 bits)
            return ops.cast(index._node, Int32 if vt.is_signed else UInt32)
        return index._node
    if isinstance(index, (int, np.integer)):
        i = int(index)
        if not -2**63 <= i < 2**64:     # would wrap into range (2**64 + 1 read element 1)
            raise IndexError(f"{who}(): index {i} does not fit a 64-bit index")
        return ops.literal(UInt32 if 0 <= i < 2**32 else Int64 if i < 2**63 else UInt64, i)
    raise TypeError(f"{who}(): the index must be an integer array or int, got {type(index).__name__}")


def _active_node(active, backend, who: str) -> Node:
    if isinstance(active, (bool, np.bool_)):
        return ops.literal(Bool, bool(active))
    if isinstance(active, (list, tuple)):           # Dr.Jit accepts a sequence of bools
        active = registry.flat_type(backend, Bool)(active)
    if isinstance(active, ArrayBase) and active._vt is Bool:
        return active._node
    raise TypeError(f"{who}(): 'active' must be a Bool array or bool, got {type(active).__name__}")


def _check_index_width(who: str, index: Node, size: int) -> None:
    """32-bit indices reach 2^31 elements (see codegen); larger arrays need 64-bit indices."""
    if size > 2**31 and index.vt.bits == 32:
        raise ValueError(f"{who}(): an array of {size} elements needs Int64/UInt64 indices "
                         f"(32-bit indices reach 2^31 elements)")


def _check_bounds(who: str, index: Node, active: Node, target: Node) -> None:
    """Debug mode: raise IndexError for the first active out-of-bounds index into ``target``."""
    if loops.is_symbolic((index, active)):
        return      # inside a symbolic loop's body: the indices exist only in its kernel (unchecked)
    evaluate((index, active))
    be = current_backend()

    def values(n):      # a literal is one value for every lane: no array of its full size
        return np.full(1, n.value) if n.op == "literal" else be.to_numpy(n.value, n.size)
    check_bounds(who, values(index), values(active), target.size)
    rec = state.recorder
    if rec is not None:
        rec.on_bounds_check(who, index, active, target)     # a frozen function's replays check too


def check_bounds(who: str, idx: np.ndarray, active: np.ndarray, size: int) -> None:
    """Raise IndexError for the first active index of ``idx`` outside ``[0, size)`` (Debug mode)."""
    if idx.dtype != np.uint64:
        idx = idx.astype(np.int64)
    act = np.broadcast_to(active.astype(bool), idx.shape if idx.shape[0] > 1 else (max(idx.shape[0], active.shape[0]),))
    idx = np.broadcast_to(idx, act.shape)
    bad = act & ((idx < 0) | (idx >= size))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise IndexError(f"{who}(): index {int(idx[k])} (at position {k}) is out of bounds for an array of size {size}")


def gather(dtype, source, index, active=True, mode=None, shape=None):
    """Read ``source[index]`` where ``active`` (0 elsewhere and out of bounds).

    ``mode`` (a :class:`ReduceMode`, for the reverse-mode scatter) is accepted and left to
    frostjit.  ``shape=(n, width)`` with a type of dynamic size (``ArrayXf``) reads ``n``
    consecutive elements per index, ``source[n*index + k]`` as component ``k`` (Dr.Jit's packet
    gather); tensors are not supported (as in Dr.Jit).

    Parameters
    ----------
    dtype : type
        Result type, e.g. ``Float``; a static vector type (``Array3f``) reads
        ``n`` consecutive elements per index (``source[n*index + k]``), or
        component by component from a static vector ``source``; a PyTree type
        (``tuple``, ``dict``, a dataclass, a ``DRJIT_STRUCT`` class, ...) gathers
        every array of a ``source`` of that type (Dr.Jit).
    source : array or PyTree
        What to read from (evaluated first if needed).  In a PyTree, every leaf
        must be a JIT array.
    index : UInt32/Int32/... array or int
    active : Bool array or bool

    Examples
    --------
    >>> fj.gather(Float, Float(10, 20, 30), UInt32(2, 0))
    [30, 10]
    >>> fj.gather(dict, {"p": Array3f(...), "w": Float(...)}, UInt32(2, 0))   # a dict of two gathers
    """
    _check_mode("gather", mode)
    if not isinstance(dtype, type):
        raise TypeError(f"gather(): unsupported dtype {dtype!r}: expected a frostjit array or PyTree type")
    if (not isinstance(source, (ArrayBase, VectorBase)) and getattr(type(source), "IsTensor", False)) or \
            (not issubclass(dtype, (ArrayBase, VectorBase)) and getattr(dtype, "IsTensor", False)):
        raise TensorIndexTypeError("gather(): tensors are not supported (as in Dr.Jit): index the tensor "
                                   "(t[index], t[:, index]) or gather from its flat array t.array")
    if shape is not None or (issubclass(dtype, VectorBase) and dtype._n is None and isinstance(source, ArrayBase)):
        return _gather_packets(dtype, source, index, active, shape)
    if getattr(type(source), "_eager_flat", False):     # the scalar backend's 1-D arrays (ArrayXf)
        return source._fj_gather(dtype, index, active)
    if isinstance(dtype, type) and not issubclass(dtype, (ArrayBase, VectorBase)) \
            and node_type(dtype).kind is not Kind.VALUE:
        return _gather_tree(dtype, source, index, active)
    if isinstance(dtype, type) and issubclass(dtype, VectorBase) and isinstance(source, VectorBase):
        # Dr.Jit: a static vector source gathers component by component (an ArrayXf: all of them).
        if dtype._n is not None and len(source) != dtype._n:
            raise TypeError(f"gather(): cannot gather {dtype.__name__} from {type(source).__name__}")
        evaluate_together(source)
        return vector_from_components(dtype, [gather(dtype._elem, c, index, active) for c in source])
    if isinstance(dtype, type) and issubclass(dtype, VectorBase):
        n = dtype._n
        if n is None:
            raise TypeError(f"gather(): {dtype.__name__} has no static size: gather its components one by one")
        if isinstance(source, ArrayBase):
            _check_gather_type(dtype._leaf, source, dtype.__name__)
            index = _index_array(index, source._backend)
        comps = [gather(dtype._elem, source, index * n + k, active) for k in range(n)]
        return vector_from_components(dtype, comps)      # an AD source makes an AD vector
    if not (isinstance(dtype, type) and issubclass(dtype, ArrayBase)):
        raise TypeError(f"gather(): unsupported dtype: 'dtype' must be a frostjit array type, got {dtype!r}")
    if not isinstance(source, ArrayBase):
        raise TypeError(f"gather(): 'source' must be a 1-D frostjit array, got {type(source).__name__}")
    return gather_flat(dtype, source, index, active)


def _gather_operands(source, index, active) -> tuple:
    """``(source node, index node, mask node, active)`` of a gather from the 1-D array
    ``source``: the source evaluated, the mask combined with an enclosing loop's or branch's
    (``active`` then the combined mask as an array)."""
    src = memops.materialize(source._node)
    if source._node.op != "literal":
        # An evaluated expression is kept (later uses reuse it); a literal stays a literal, as
        # in Dr.Jit: the caller's array does not change kind (a frozen function's layout key).
        source._node = src
    idx = _index_node(index, source._backend, "gather")
    act = _active_node(active, source._backend, "gather")
    if masks.top() is not None:     # inside a loop body or branch: retired lanes read nothing
        act = masks.apply(act, max(idx.size, act.size))
        active = registry.flat_type(source._backend, Bool)._from_node(act)
    return src, idx, act, active


def gather_pair(source, index, active=True):
    """Elements ``index`` and ``index + 1`` of the 32-bit 1-D array ``source`` as one ``UInt64``
    array (element ``index`` in the low 32 bits): 0 where ``active`` is false or
    ``index + 1`` is outside the source.  No derivative (the caller attaches its own).

    The engine's door for reading two neighbours at once: a bilinear texture lookup reads the
    two texels of a row with one 64-bit hardware gather instead of two 32-bit ones, half the
    loads (``texture.py``; lookup kernel alone, AVX-512, one thread: ~0.7x the CPU time).
    """
    if source._vt.itemsize != 4 or source._vt is Bool:
        raise TypeError(f"gather_pair(): 'source' must hold 32-bit elements, got {type(source).__name__}")
    src, idx, act, _ = _gather_operands(source, index, active)
    if idx.vt.bits != 32:
        raise TypeError(f"gather_pair(): the index must be a 32-bit integer array, got {idx.vt.name}")
    _check_index_width("gather_pair", idx, src.size)
    if state.flags & DEBUG:
        _check_bounds("gather_pair", ops.make_binary("add", idx.vt, idx, ops.literal(idx.vt, 1)), act, src)
    node = ops.make("gather", UInt64, (idx, act), extra=src)
    return registry.flat_type(source._backend, UInt64, False)._from_node(node)


def gather_flat(dtype, source, index, active=True):
    """:func:`gather` of a 1-D array type ``dtype`` from the 1-D array ``source``: the door for
    the engine's own callers that know both are (texture lookups: four per bilinear lookup, the
    public function's checks of PyTrees, static vectors and tensors cost a tenth of its trace).
    Checks the index, the mask and that ``dtype`` is ``source``'s type, as :func:`gather` does."""
    _check_gather_type(dtype, source, dtype.__name__)
    src, idx, act, active = _gather_operands(source, index, active)
    cls = registry.flat_type(source._backend, dtype._vt, dtype._is_ad or source._is_ad)
    return _gather_one(cls, source, src, idx, act, index, active)


def gather_entries(source, indices) -> list:
    """``[gather(type(source), source, k) for k in indices]`` for Python ints ``indices``: the
    engine's door for reading many single entries of one 1-D array (each result of size 1).

    The source's evaluation, the mask (and an enclosing loop's or branch's) and the result type
    are settled once, not once per entry: nn's matrix-vector products read every coefficient
    this way, hundreds per product (q_nn: 4224 entries per call, ~12 us each through
    :func:`gather`)."""
    src, _, act, active = _gather_operands(source, 0, True)
    cls = registry.flat_type(source._backend, source._vt, source._is_ad)
    backend = source._backend
    return [_gather_one(cls, source, src, _index_node(k, backend, "gather"), act, k, active) for k in indices]


def _gather_one(cls, source, src: Node, idx: Node, act: Node, index, active):
    """The gather node reading ``src`` (``source``'s evaluated node) at ``idx`` where ``act``, as
    an array of ``cls``: the checks, the node and its derivative (``index`` and ``active`` as
    the caller was given them, for the AD hook)."""
    if src.size == 1:
        # Dr.Jit: a size-1 source broadcasts (drjit-core elides the gather and never reads the
        # index), so a nested source such as Array3f(x, 0, z) gathers its literal component 0
        # at every index; the reverse derivative then sums into that one element.
        idx = ops.literal(idx.vt, 0, idx.size)
        index = registry.flat_type(source._backend, idx.vt)._from_node(idx)
    _check_index_width("gather", idx, src.size)
    if state.flags & DEBUG:
        _check_bounds("gather", idx, act, src)
    out = cls._from_node(ops.make("gather", cls._vt, (idx, act), extra=src))
    if source._ad is not None and state.ad_hook is not None:
        state.ad_hook.on_gather(out, source, index, active)
    return out


def _gather_packets(dtype, source, index, active, shape):
    """``gather(ArrayXf, source, index, shape=(n, width))``: ``n`` consecutive elements per index,
    ``source[n*index + k]`` as component ``k`` (Dr.Jit's packet gather into a type of dynamic
    size; a static type's ``shape`` must agree with it)."""
    if not (issubclass(dtype, VectorBase) and dtype.Depth == 2):
        raise IncompatibleArgumentsError(f"gather(): 'shape' is only supported for a dynamic array of 1-D arrays "
                                         f"such as ArrayXf, got dtype {dtype.__name__}")
    if shape is None:
        raise IncompatibleArgumentsError(f"gather(): the target type {dtype.__name__} has a dynamic size (no static "
                                         f"size); you must specify a 'shape' argument, e.g. shape=(4, width)")
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if len(shape) != 2:
        raise IncompatibleArgumentsError(f"gather(): the 'shape' parameter has an incorrect dimension "
                                         f"({len(shape)} vs 2): expected (packet size, width), got {shape}")
    n = operator.index(shape[0])
    if n < 0 or dtype._n is not None and n != dtype._n:
        raise IncompatibleArgumentsError(f"gather(): shape[0] = {n} does not fit {dtype.__name__}")
    if not isinstance(source, ArrayBase):
        raise TypeError(f"gather(): 'source' must be a 1-D frostjit array, got {type(source).__name__}")
    _check_gather_type(dtype._leaf, source, dtype.__name__)
    index = _index_array(index, source._backend)
    comps = [gather(dtype._elem, source, index * n + k, active) for k in range(n)]
    return vector_from_components(dtype, comps) if comps else dtype()


def evaluate_together(arrays) -> None:
    """Evaluate the unevaluated arrays among ``arrays`` in one evaluation, before code that
    gathers from each of them: a gather evaluates its source on its own, so gathering from
    ``k`` unevaluated arrays one after the other would launch ``k`` kernels, where one
    evaluation runs one kernel per distinct width (as Dr.Jit groups them)."""
    pending = []
    for a in arrays:
        n = a._node if isinstance(a, ArrayBase) else None
        if n is not None and n.op != "data" and n.op != "literal":
            pending.append(n)
    if len(pending) > 1:
        evaluate(tuple(pending))


def _gather_tree(dtype, source, index, active):
    """``gather`` of a PyTree type: each array of ``source`` read with its own type."""
    if type(source) is not dtype:
        raise TypeError(f"gather(): 'dtype' {dtype.__name__} does not match the type of 'source' "
                        f"({type(source).__name__})")

    evaluate_together(leaves(source))

    def one(a):
        return gather(type(a), a, index, active)

    def value(v):
        raise LeafError(f"expected a JIT array, got a Python value of type {type(v).__name__}")
    return transform(source, one, value, who="gather", root="source")


def _check_gather_type(elem, source: ArrayBase, dtype_name: str) -> None:
    """Dr.Jit: the result type must be the source's type; a gather never converts."""
    if elem._vt is not source._vt:
        raise TypeError(f"gather(): 'dtype' {dtype_name} does not match the type of 'source' "
                        f"({type(source).__name__}); convert one of them first, e.g. "
                        f"gather({dtype_name}, {elem.__name__}(source), ...)")


def _prepare_target(target: ArrayBase) -> Node:
    """Evaluate the scatter target, copying it if other arrays share its buffer."""
    node = target._node
    if node.op != "data":
        node = memops.materialize(node)
        target._node = node
    # References we know of: target._node, our local, getrefcount's argument, plus the
    # pending scatters into this node (dirty set + each effect).  Anything more is a sharer.
    spare = sys.getrefcount(node) - 3
    if node in state.dirty:
        # The queued scatters into it, newest first (a backward pass queues many into one
        # gradient buffer), until they account for every other reference: counting the whole
        # queue at every scatter was quadratic in the scatters queued.
        spare -= 1
        for e in reversed(state.side_effects):
            if spare <= 0:
                break
            if e.extra[0] is node:
                spare -= 1
    if spare > 0:
        if node in state.dirty:
            evaluate(())
        node = memops.copy(node)
        target._node = node
    return node


def _scatter(who: str, reduce_op, target, value, index, active) -> None:
    if not isinstance(target, (ArrayBase, VectorBase)) and getattr(type(target), "IsTensor", False):
        raise TypeError(f"{who}(): tensors are not supported (as in Dr.Jit): assign to a slice "
                        "(t[index] = value) or scatter into the tensor's flat array t.array")
    if getattr(type(target), "_eager_flat", False):     # the scalar backend's 1-D arrays (ArrayXf)
        target._fj_scatter(who, reduce_op, value, index, active)
        return
    if not isinstance(target, (ArrayBase, VectorBase)) and node_type(type(target)).kind is not Kind.VALUE:
        _scatter_tree(who, reduce_op, target, value, index, active)
        return
    if isinstance(target, VectorBase):
        # Dr.Jit: a static vector target is written component by component.
        if isinstance(value, VectorBase) and len(value) != len(target):
            raise TypeError(f"{who}(): cannot scatter {type(value).__name__} into {type(target).__name__}")
        for k in range(len(target)):
            _scatter(who, reduce_op, target[k], value[k] if isinstance(value, VectorBase) else value,
                     index, active)
        return
    if not isinstance(target, ArrayBase):
        raise TypeError(f"{who}(): 'target' must be a 1-D frostjit array, got {type(target).__name__}")
    if isinstance(value, (list, tuple)):
        value = type(target)(value)         # a sequence of numbers: the target's type (Dr.Jit)
    if isinstance(value, VectorBase):
        n = len(value)
        index = _index_array(index, target._backend)
        for k in range(n):
            _scatter(who, reduce_op, target, value[k], index * n + k, active)
        return
    vt = target._vt
    if reduce_op is not None and vt is Bool:
        raise TypeError(f"{who}(): reductions into Bool arrays are not supported")
    if reduce_op in ("and", "or") and vt.is_float:
        raise TypeError(f"{who}(): ReduceOp.And/Or are bitwise: they need an integer target, "
                        f"got {type(target).__name__}")
    if isinstance(value, ArrayBase):
        if value._backend is not target._backend:
            raise TypeError(f"{who}(): target and value use different backends")
        if value._vt is not vt:
            # Dr.Jit: no implicit conversion (Float(-1.5) into UInt32 would wrap to 4294967295).
            raise TypeError(f"{who}(): the value type {type(value).__name__} does not match the target type "
                            f"{type(target).__name__}; convert it first, e.g. {type(target).__name__}(value)")
        vnode = value._node
    elif hasattr(value, "__symbolic_size__"):
        vnode = ops.literal(vt, value)
    elif isinstance(value, (bool, int, float, np.number)):
        vnode = ops.literal(vt, ops.convert_scalar(vt, value, f"{who}()"))
    else:
        raise TypeError(f"{who}(): unsupported value type {type(value).__name__}")
    idx = _index_node(index, target._backend, who)
    act = _active_node(active, target._backend, who)
    if masks.top() is not None:     # inside a loop body or branch: retired lanes write nothing
        act = masks.apply(act, max(vnode.size, idx.size, act.size))
        active = registry.flat_type(target._backend, Bool)._from_node(act)
    tnode = _prepare_target(target)
    before = None
    if reduce_op in ("min", "max") and state.ad_hook is not None and target._ad is not None:
        # the values before the reduction: the target keeps its derivative where they win (ad/rules.py)
        before = type(target)._from_node(memops.copy(tnode))
    _check_index_width(who, idx, tnode.size)
    if state.flags & DEBUG:
        _check_bounds(who, idx, act, tnode)
    ops.broadcast_size(who, (vnode, idx, act))
    eff = ops.make("scatter", vt, (vnode, idx, act), extra=(tnode, reduce_op))
    with state.lock:      # atomic with respect to an evaluation taking the queue
        state.side_effects.append(eff)
        state.dirty.add(tnode)
    if state.ad_hook is not None and (target._ad is not None or (isinstance(value, ArrayBase) and value._ad is not None)):
        state.ad_hook.on_scatter(who, reduce_op, target, value, index, active, before=before)


def _scatter_tree(who: str, reduce_op, target, value, index, active) -> None:
    """A scatter into every array of the PyTree ``target`` from the matching part of ``value``
    (a PyTree of the same structure, as in Dr.Jit; its leaves may be arrays or numbers)."""
    pairs = []
    value = _conform(target, value)

    def pair(t, v):
        if not is_flat(t):
            raise LeafError(f"expected a JIT array to write into, got a Python value of type {type(t).__name__}")
        if not isinstance(v, _VALUES) and not hasattr(v, "__symbolic_size__"):
            raise LeafError(f"cannot write a {type(v).__name__} into a {type(t).__name__}")
        pairs.append((t, v))
    # (every leaf checked first; the scalar backend's ArrayXf is a 1-D array to write into, as in
    # Dr.Jit, not a vector of Python numbers)
    traverse2(target, value, pair, who=who, names=("target", "value"), is_leaf=is_flat)
    for t, v in pairs:
        _scatter(who, reduce_op, t, v, index, active)


_VALUES = (ArrayBase, VectorBase, bool, int, float, np.number)    # what a scatter writes


def _conform(target, value):
    """``value`` with each Python list/tuple that stands where ``target`` has a 1-D array
    converted to that array's type (Dr.Jit: ``scatter((x, y), (1, [2, 3]), ...)`` writes
    ``Float([2, 3])`` into ``y``); the rest of ``value`` as it is."""
    if is_flat(target):
        if isinstance(value, (list, tuple)):
            return type(target)(value)
        return value
    if isinstance(target, (list, tuple)) and isinstance(value, (list, tuple)) and len(target) == len(value):
        items = [_conform(t, v) for t, v in zip(target, value)]
        # (a namedtuple takes its fields as arguments, a tuple/list an iterable)
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    if isinstance(target, dict) and isinstance(value, dict):
        return {k: _conform(target[k], v) if k in target else v for k, v in value.items()}
    return value


def scatter(target, value, index, active=True, mode=None) -> None:
    """Write ``target[index] = value`` where ``active`` (in place; out-of-bounds writes are skipped).

    ``target`` is an array or a PyTree of arrays (tuple, dict, dataclass, ...); then
    ``value`` is a PyTree of the same structure (Dr.Jit).  With duplicate indices, which
    write wins is unspecified (as in Dr.Jit).  ``mode`` (a :class:`ReduceMode`) is accepted.
    """
    _check_mode("scatter", mode)
    _scatter("scatter", None, target, value, index, active)


def scatter_add(target, value, index, active=True, mode=None) -> None:
    """Atomically add ``value`` into ``target[index]`` where ``active`` (PyTrees as in :func:`scatter`;
    ``mode``: a :class:`ReduceMode`, accepted, the strategy is frostjit's)."""
    _check_mode("scatter_add", mode)
    _scatter("scatter_add", "add", target, value, index, active)


def scatter_reduce(op, target, value, index, active=True, mode=None) -> None:
    """Atomically combine ``value`` into ``target[index]`` with ``op`` (a :class:`ReduceOp`;
    ``And``/``Or`` are bitwise and need integer targets; PyTrees as in :func:`scatter`;
    ``mode``: a :class:`ReduceMode`, accepted, the strategy is frostjit's)."""
    _check_mode("scatter_reduce", mode)
    if isinstance(op, str):
        op = ReduceOp[op]
    if not isinstance(op, ReduceOp):
        raise TypeError(f"scatter_reduce(): 'op' must be a frostjit.ReduceOp, got {op!r}")
    _scatter("scatter_reduce", op.value, target, value, index, active)


# x[i] = v on a 1-D array is a scatter (the array layer does not import this module).
register_item_scatter(scatter)


class _ItemIndex:
    """``x[s]`` / ``x[s] = v`` for a slice or an integer array ``s`` of a 1-D array: a gather and a
    scatter, as in Dr.Jit 1.5 (``Float(1, 2, 3, 4)[1:3]`` is ``[2, 3]``; ``x[UInt32(3, 0)]``
    gathers).  A slice's positions come from the array's width, which is symbolic inside
    ``fj.freeze`` (its bounds are then guarded: another width records again, never stale);
    negative steps count from the end, as in Python (Dr.Jit fails on them)."""

    @staticmethod
    def _positions(x, index):
        if isinstance(index, ArrayBase):
            return index
        n = width(x)
        pos = np.arange(*index.indices(n))
        vt = UInt32 if n <= 2**32 else Int64
        return registry.flat_type(x._backend, vt)(pos.astype(vt.np_dtype))

    def get(self, x, index):
        return gather(type(x), x, self._positions(x, index))

    def set(self, x, index, value):
        scatter(x, value, self._positions(x, index))


register_item_index(_ItemIndex())
