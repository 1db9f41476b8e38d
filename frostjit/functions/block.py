"""Block reductions: ``block_reduce``, ``block_sum``, ``block_prefix_reduce``, ``block_prefix_sum``.

Each reduces runs of ``block_size`` consecutive elements of a 1-D array (Dr.Jit 1.5's API): one
output per run, or the running reduction within each run.  The evaluated strategy (the default)
is a memory-level operation of the backend (``schedule.memops.block_reduce``: the LLVM backend
shares the runs of a large input among its threads), recorded by frozen functions (replayed
at new widths) and differentiated by AD (``ad/rules.py``: the adjoint of a block sum repeats
each output gradient over its block).  ``mode="symbolic"`` is a ``scatter_reduce`` into the
output instead, nothing evaluated first.
"""
from __future__ import annotations

import operator

from ..array import registry
from ..array.flat import ArrayBase
from ..backend.base import BlockReduction, OpenAxisReduction
from ..errors import ReductionTypeError
from ..schedule import memops
from ..trace.dtypes import Bool, UInt32
from ..trace.state import state
from ..tree import transform
from .creation import arange, full
from .memory import ReduceOp, scatter_reduce
from .scan import identity

_OPS = ("add", "mul", "min", "max", "and", "or")


def _op_name(op, who: str) -> str:
    """``op`` (a ``ReduceOp``, or its name or value as a string) as the backend's op name."""
    name = getattr(op, "value", op)
    if isinstance(name, str) and name.lower() in _OPS:
        return name.lower()
    raise ValueError(f"frostjit.{who}(): unsupported reduction {op!r} (one of Add, Mul, Min, Max, And, Or)")


def _block_size(block_size, who: str) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, int):
        raise TypeError(f"frostjit.{who}(): 'block_size' must be an int, got {type(block_size).__name__}")
    # (a frozen function's symbolic width, fj.width(x) // 4: its value, guarded; the recorded
    # block reduction has a fixed block size)
    block_size = operator.index(block_size)
    if block_size < 1:
        raise ValueError(f"frostjit.{who}(): 'block_size' must be at least 1, got {block_size}")
    return block_size


def _apply(x: ArrayBase, block: BlockReduction, who: str):
    """One array: the memory operation, and the AD edge when ``x`` carries a gradient."""
    if block.op in ("and", "or") and x._vt.is_float:
        raise ReductionTypeError(f"frostjit.{who}(): ReduceOp.{block.op.capitalize()} needs an integer or "
                                 f"Bool array, got {type(x).__name__}")
    if x._vt is Bool and block.op not in ("and", "or"):     # (as fj.sum: count() sums masks)
        raise ReductionTypeError(f"frostjit.{who}(): ReduceOp.{block.op.capitalize()} of a Bool array; "
                                 f"convert it to an integer type first")
    out = type(x)._from_node(memops.block_reduce(block, x._node))
    if x._ad is not None and state.ad_hook is not None:
        state.ad_hook.on_op("block_prefix_reduce" if block.prefix else "block_reduce", out, (x, block))
    return out


def axis_reduce(x: ArrayBase, red):
    """The middle axis of ``x`` seen as ``(outer, red.size, red.inner)`` reduced as the backend's
    :class:`~frostjit.backend.base.AxisReduction` ``red`` (``Backend.axis_reduction`` chose it;
    fused into the kernel computing a pending ``x``), and the AD edge when ``x`` carries a
    gradient (``ad/rules.py``: the adjoint spreads each output gradient over its row).  An
    :class:`~frostjit.backend.base.OpenAxisReduction` (a frozen function's axis that follows the
    batch size) is a block reduction that the backend resolves for each call's length (a
    prefix reduction over the last axis where ``red.prefix``: its AD rule is the block prefix
    reduction's)."""
    if red.prefix:      # (an open prefix reduction: the checks and the AD rule of block_prefix_reduce)
        return _apply(x, red, "block_prefix_reduce")
    node = memops.block_reduce(red, x._node) if isinstance(red, OpenAxisReduction) else memops.axis_reduce(red, x._node)
    out = type(x)._from_node(node)
    if x._ad is not None and state.ad_hook is not None:
        state.ad_hook.on_op("axis_reduce", out, (x, red))
    return out


def _symbolic(x: ArrayBase, block: BlockReduction, who: str):
    """``mode="symbolic"``: ``scatter_reduce`` of every element into its block's output (a Bool
    array, which scatter-reductions do not take, is reduced as in ``mode="evaluated"``)."""
    if x._vt is Bool or block.op in ("and", "or") and x._vt.is_float:
        return _apply(x, block, who)        # (the checks and messages of the evaluated form)
    n = x._node.size
    out = full(type(x), identity(block.op, x._vt), block.out_size(n))
    if n:
        idx = arange(registry.flat_type(x._backend, UInt32), n) // block.size
        scatter_reduce(ReduceOp(block.op), out, x, idx)
    return out


def block_reduce(op, value, block_size: int, mode=None):
    """Reduce each run of ``block_size`` consecutive elements with ``op``.

    ``[a, b, c, d, e]`` with ``block_size=2`` and ``ReduceOp.Add`` gives ``[a+b, c+d, e]`` (the
    last run may be shorter, as in Dr.Jit 1.5).  Threads through static vectors and PyTrees;
    Python values are returned unchanged.

    Parameters
    ----------
    op : ReduceOp or str
        ``Add``, ``Mul``, ``Min``, ``Max`` (floats ignore NaN), ``And``, ``Or`` (bitwise on
        integers, logical on ``Bool``).
    value : array or PyTree
    block_size : int
        At least 1.
    mode : None, "evaluated" or "symbolic"
        ``None``/``"evaluated"``: a memory-level operation on the evaluated input (in parallel
        for large inputs; frozen functions replay it at new widths).  ``"symbolic"``: a
        ``scatter_reduce`` into the output.

    Returns
    -------
    The same structure with arrays of ``ceil(len / block_size)`` elements.

    Examples
    --------
    >>> fj.block_reduce(fj.ReduceOp.Max, Float([1, 5, 2, 3, 4, 0]), 3)
    [5, 4]
    """
    who = "block_reduce"
    block = BlockReduction(_op_name(op, who), _block_size(block_size, who))
    if mode not in (None, "evaluated", "symbolic"):
        raise ValueError(f"frostjit.{who}(): 'mode' must be None, 'evaluated' or 'symbolic', got {mode!r}")
    if getattr(type(value), "_eager_flat", False):      # the scalar backend's 1-D arrays (ArrayXf)
        return value._fj_block(block)
    leaf = (lambda x: _symbolic(x, block, who)) if mode == "symbolic" else (lambda x: _apply(x, block, who))
    return transform(value, leaf, who=who, root="value")


def block_sum(value, block_size: int, mode=None):
    """Sum each run of ``block_size`` consecutive elements: :func:`block_reduce` with ``Add``.

    >>> fj.block_sum(Float([1, 2, 3, 4, 5, 6]), 2)
    [3, 7, 11]
    """
    return block_reduce("add", value, block_size, mode)


def block_prefix_reduce(op, value, block_size: int, exclusive: bool = True, reverse: bool = False):
    """Prefix reduction with ``op`` within each run of ``block_size`` consecutive elements.

    An exclusive sum over blocks of 3 of ``[1, 2, 3, 4, 5, 6]`` is ``[0, 1, 3, 0, 4, 9]``; each
    run starts from the identity (``-inf`` for a float ``Max``).  ``reverse`` accumulates from the
    end of each run.  The output has the input's size and type; threads through PyTrees.

    Parameters
    ----------
    op : ReduceOp or str
    value : array or PyTree
    block_size : int
    exclusive : bool
        ``True`` (default): entry ``i`` combines the entries before it in its run.
    reverse : bool
        Combine the entries after ``i`` instead.
    """
    who = "block_prefix_reduce"
    block = BlockReduction(_op_name(op, who), _block_size(block_size, who), True, bool(exclusive), bool(reverse))
    if getattr(type(value), "_eager_flat", False):      # the scalar backend's 1-D arrays (ArrayXf)
        return value._fj_block(block)
    return transform(value, lambda x: _apply(x, block, who), who=who, root="value")


def block_prefix_sum(value, block_size: int, exclusive: bool = True, reverse: bool = False):
    """Prefix sum within each run of ``block_size`` elements: :func:`block_prefix_reduce` with ``Add``.

    >>> fj.block_prefix_sum(Float([1, 2, 3, 4, 5, 6]), 3, exclusive=False)
    [1, 3, 6, 4, 9, 15]
    """
    return block_prefix_reduce("add", value, block_size, exclusive, reverse)
