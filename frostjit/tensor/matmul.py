"""``fj.matmul`` / ``@``: the one public matrix product.  Static arrays and matrices
(``Matrix4f @ Array4f``) go to :func:`frostjit.array.matrix.matmul`; tensors get NumPy's semantics: matrix products of the last two
axes, broadcasting of the leading (batch) axes, matrix-vector and inner products for 1-D
operands, and Dr.Jit's ``At`` / ``Bt`` flags (transpose an operand's last two axes on the fly).

Each output element is a sum over ``k`` of products of two gathers: one reads the row of ``A``
(the same element for a run of output lanes: one broadcast load), the other a row of ``B``
(consecutive elements: a vector load).  Up to :data:`_UNROLL` terms are one lazy expression;
longer sums run in chunks of that many terms, one kernel per chunk whose starting position is
an opaque value (so every chunk reuses the same compiled kernel).
"""
from __future__ import annotations

from ..array import matrix as static_matrix
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions.creation import opaque, zeros
from ..functions.evaluation import eval as fj_eval, width
from ..functions.math import fma
from ..functions.memory import gather
from ..trace.dtypes import Bool
from . import registry
from .axes import as_tensor
from .base import size_of
from .broadcast import broadcast_shapes
from .view import c_strides, index_type, offsets

_UNROLL = 32
#: The most batch axes a tensor product may have (Dr.Jit 1.5's ``DRJIT_GEMM_MAX_BDIMS``: it raises
#: ``ValueError`` beyond, and frostjit follows it so that a program behaves the same on both).
MAX_BATCH_RANK = 6


def matmul(A, B, At: bool = False, Bt: bool = False):
    """Matrix product: of static arrays and matrices (Dr.Jit's rules, lane by lane), or of two
    tensors (or 1-D arrays) with NumPy's ``matmul`` rules.

    Parameters
    ----------
    A, B : matrices / static arrays, or tensors / 1-D arrays of one element type (not Bool)
        When either operand is a static array (``Matrix4f``, ``Array4f``, ``Array44f``) the
        product is :func:`frostjit.array.matrix.matmul`'s: matrix-matrix, matrix-vector,
        vector-matrix, inner product, or scaling by a number or 1-D array.
    At, Bt : bool
        Use the transpose of ``A`` / ``B`` (of a tensor: of its last two axes; invalid for a 1-D
        operand).

    Returns
    -------
    tensor or static array
        Tensors: ``(..., m, n)`` for ``(..., m, k) @ (..., k, n)``; a 1-D operand's axis is dropped
        from the result (``(m, k) @ (k,)`` is ``(m,)``, ``(k,) @ (k,)`` a 0-dimensional tensor).

    Raises
    ------
    ValueError
        The inner dimensions differ, the batch shapes do not broadcast, they have more than
        :data:`MAX_BATCH_RANK` (6) axes together (as Dr.Jit 1.5), or an operand is 0-d.
    TypeError
        The element types differ or are Bool.
    """
    if isinstance(A, VectorBase) or isinstance(B, VectorBase):
        return _static_matmul(A, B, At, Bt)
    who = "matmul()"
    a, b = as_tensor(A, who), as_tensor(B, who)
    if type(a._array) is not type(b._array) and type(a._array)._vt is not type(b._array)._vt:
        raise TypeError(f"{who}: the operands must have one element type, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a._array._vt is Bool:
        raise TypeError(f"{who}: not defined for Bool tensors")
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ValueError(f"{who}: the operands must have at least one dimension, got shapes {sa} and {sb}")
    if (At and len(sa) < 2) or (Bt and len(sb) < 2):
        raise ValueError(f"{who}: At/Bt transpose the last two axes and need a 2-D operand")
    # Strides of A as (batch..., m, k) and of B as (batch..., k, n), in elements of each array.
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    sta, stb = c_strides(sa), c_strides(sb)
    if a_vec:
        a_batch, m, k, (sam, sak) = (), 1, sa[0], (0, sta[0])
    else:
        a_batch = sa[:-2]
        m, k = (sa[-1], sa[-2]) if At else (sa[-2], sa[-1])
        sam, sak = (sta[-1], sta[-2]) if At else (sta[-2], sta[-1])
    if b_vec:
        b_batch, k2, n, (sbk, sbn) = (), sb[0], 1, (stb[0], 0)
    else:
        b_batch = sb[:-2]
        k2, n = (sb[-1], sb[-2]) if Bt else (sb[-2], sb[-1])
        sbk, sbn = (stb[-1], stb[-2]) if Bt else (stb[-2], stb[-1])
    if k != k2:
        raise ValueError(f"{who}: the inner dimensions differ: {sa}{'ᵀ' if At else ''} @ {sb}"
                         f"{'ᵀ' if Bt else ''} ({k} vs {k2})")
    batch = broadcast_shapes(who, a_batch, b_batch)
    if len(batch) > MAX_BATCH_RANK:
        raise ValueError(f"{who}: tensor matmul: batch rank {len(batch)} exceeds the maximum of "
                         f"{MAX_BATCH_RANK} (shapes {sa} and {sb})")
    out_full = batch + (m, n)
    a_strides = _batch_strides(a_batch, batch, sta) + (sam, 0)
    b_strides = _batch_strides(b_batch, batch, stb) + (0, sbn)
    backend = a._array._backend
    limit = max(width(a._array), width(b._array), size_of(out_full))
    a_base = offsets(backend, out_full, a_strides, 0, limit)
    b_base = offsets(backend, out_full, b_strides, 0, limit)
    array = _sum_products(a._array, b._array, a_base, b_base, sak, sbk, k, size_of(out_full), backend, limit)
    out_shape = batch + (() if a_vec else (m,)) + (() if b_vec else (n,))
    return registry.tensor_of(type(array))._from_array(array, out_shape)


def _static_matmul(A, B, At: bool, Bt: bool):
    """``A @ B`` when an operand is a static array (a tensor with it is refused)."""
    for name, x in (("A", A), ("B", B)):
        if not isinstance(x, VectorBase) and getattr(x, "IsTensor", False):
            raise TypeError(f"matmul(): cannot multiply a tensor and a static array ({type(A).__name__} @ "
                            f"{type(B).__name__}); '{name}' is the tensor")
    if At:
        A = static_matrix.transpose(A)
    if Bt:
        B = static_matrix.transpose(B)
    return static_matrix.matmul(A, B)


def _batch_strides(own: tuple, batch: tuple, strides: tuple) -> tuple:
    """An operand's strides for the broadcast batch axes (0 where it has no axis or length 1)."""
    pad = len(batch) - len(own)
    out = []
    for j, d in enumerate(batch):
        i = j - pad
        out.append(0 if i < 0 or own[i] == 1 else strides[i])
    return tuple(out)


def _sum_products(A: ArrayBase, B: ArrayBase, a_base, b_base, sak, sbk, k, total, backend, limit):
    at = type(A)
    if k == 0:
        return zeros(at, total)
    if k <= 2 * _UNROLL:
        return _terms(A, B, a_base, b_base, sak, sbk, 0, k)
    acc = None
    itype = index_type(backend, limit)
    for p0 in range(0, k, _UNROLL):
        count = min(_UNROLL, k - p0)
        start = opaque(itype, p0)           # the chunk's position: data, so one kernel serves all
        part = _terms(A, B, a_base + start * sak, b_base + start * sbk, sak, sbk, 0, count)
        acc = part if acc is None else acc + part
        fj_eval(acc)
    return acc


def _terms(A, B, a_base, b_base, sak, sbk, p0: int, count: int):
    """``sum_{p0 <= p < p0 + count} A[a_base + p sak] * B[b_base + p sbk]`` (fma chain)."""
    at = type(A)
    acc = None
    for p in range(p0, p0 + count):
        x = gather(at, A, a_base if p == 0 else a_base + p * sak)
        y = gather(type(B), B, b_base if p == 0 else b_base + p * sbk)
        acc = x * y if acc is None else fma(x, y, acc)
    return acc
