"""The matrix-vector product behind :func:`frostjit.nn.matvec`, as one custom AD operation.

Why a custom operation: written with plain gathers, each coefficient's reverse derivative is a
scatter-add of its own (frostjit's AD accumulates each into the buffer's gradient separately,
one kernel per coefficient, and a kernel with many conflicting scatter-adds compiles slowly).
Here the reverse pass produces the whole weight gradient with one scatter-add over
``coefficients x lanes`` entries whose indices are computed in the kernel (so its size does not
grow the code), and the input gradient is the transposed product.

The geometry of a product is a :class:`Geometry` (plain Python values, part of the operation).
"""
from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass

from .. import traits
from ..ad import CustomOp
from ..functions.creation import arange, zeros
from ..functions.evaluation import eval as fj_eval, width
from ..functions.math import fma
from ..functions.memory import gather, gather_entries, scatter_add
from ..tensor import concat
from ..trace.loops import is_symbolic
from ..trace.state import state as trace_state

# Rows of the weight gradient per scatter-add, bounded so ``rows * columns * lanes`` indices fit
# a UInt32 comfortably.
_MAX_ENTRIES = 1 << 30


@dataclass(frozen=True)
class Geometry:
    """Where ``A`` (and ``b``) sit in their buffers.

    ``n_out x n_in`` is the product's shape; coefficient ``(i, j)`` of the product is buffer entry
    ``offset + j * stride + i`` when ``flip`` (a transposed view) else ``offset + i * stride + j``;
    bias entry ``i`` is ``b_offset + i * b_step`` (``b_offset`` None: no bias; ``b_same``: the bias
    lives in ``A``'s buffer).  ``trained``: some coefficient buffer is grad-enabled (else the
    reverse pass skips the weight gradient, e.g. when only the inputs are differentiated).
    """

    n_out: int
    n_in: int
    offset: int
    stride: int
    flip: bool
    b_offset: int | None = None
    b_step: int = 1
    b_same: bool = True
    trained: bool = True        # whether the coefficient buffer(s) want gradients

    __fj_opaque__ = True        # (a Python value for the PyTree walkers, never traversed)

    def index(self, i: int, j: int) -> int:
        return self.offset + (j * self.stride + i if self.flip else i * self.stride + j)


def product(buffer, xs: list, bias_buffer, g: Geometry, transpose: bool = False) -> list:
    """``A @ x + b`` (or ``A^T @ x`` without bias when ``transpose``) from the coefficients in
    ``buffer``: fused multiply-adds in column order, the bias as the starting value."""
    buf_t = type(buffer)
    n_out, n_in = (g.n_in, g.n_out) if transpose else (g.n_out, g.n_in)
    # (every coefficient read in one call: the source, mask and type settled once, not per entry)
    w = gather_entries(buffer, [g.index(j, i) if transpose else g.index(i, j)
                                for i in range(n_out) for j in range(n_in)])
    bias = None
    if g.b_offset is not None and not transpose and bias_buffer is not None:
        bias = gather_entries(bias_buffer, [g.b_offset + i * g.b_step for i in range(n_out)])
    out = []
    for i in range(n_out):
        acc = None if bias is None else bias[i]
        row = w[i * n_in:(i + 1) * n_in]
        for j in range(n_in):
            acc = row[j] * xs[j] if acc is None else fma(row[j], xs[j], acc)
        out.append(acc if acc is not None else buf_t(0))
    return out


def _lanes(arrays: list):
    """The common width of ``arrays`` and the arrays broadcast to it (width-1 ones widened)."""
    n = max(width(a) for a in arrays)
    return n, [a if width(a) == n else a + zeros(type(a), n) for a in arrays]


def weight_gradient(buffer, dys: list, xs: list, g: Geometry, also: list = ()):
    """The gradient of ``buffer`` for the coefficients of ``A``: ``sum over lanes dy_i x_j`` at
    each coefficient's buffer entry (a full-size array, zero elsewhere).  ``also``: arrays to
    evaluate in the same kernel as ``dys`` and ``xs`` (:func:`_pending_inputs`)."""
    buf_t = type(buffer)
    index_t = traits.uint32_array_t(traits.detached_t(buf_t))
    grad = zeros(buf_t, width(buffer))
    lanes, both = _lanes(list(dys) + list(xs))
    fj_eval(both, list(also))   # (one kernel for all parts; concat would evaluate them one by one)
    dy_all, x_all = concat(both[:g.n_out]), concat(both[g.n_out:])
    rows = max(1, min(g.n_out, _MAX_ENTRIES // max(1, g.n_in * lanes)))
    for r0 in range(0, g.n_out, rows):
        count = min(rows, g.n_out - r0) * g.n_in
        t = arange(index_t, count * lanes)
        c = t // lanes                      # the coefficient (i - r0, j) of each entry
        n = t - c * lanes                   # its lane
        i = c // g.n_in + r0
        j = c - (c // g.n_in) * g.n_in
        value = gather(buf_t, dy_all, i * lanes + n) * gather(buf_t, x_all, j * lanes + n)
        entry = (j * g.stride + i if g.flip else i * g.stride + j) + g.offset
        scatter_add(grad, value, entry)
    return grad


def bias_gradient(bias_buffer, dys: list, g: Geometry):
    """The gradient of ``bias_buffer`` for the bias entries: ``sum over lanes dy_i``."""
    buf_t = type(bias_buffer)
    index_t = traits.uint32_array_t(traits.detached_t(buf_t))
    lanes, wide = _lanes(list(dys))
    fj_eval(wide)
    t = arange(index_t, g.n_out * lanes)
    grad = zeros(buf_t, width(bias_buffer))
    scatter_add(grad, concat(wide), (t // lanes) * g.b_step + g.b_offset)
    return grad


# Products with trained weights whose reverse pass has not run yet (see _pending_inputs), in the
# order they were traced: a kernel's outputs follow this order, and a set's order (addresses)
# would give each pass other kernels to compile.
_PENDING: "weakref.WeakValueDictionary[int, MatVecOp]" = weakref.WeakValueDictionary()
_pending_keys = itertools.count()


def _pending_inputs() -> list:
    """The unevaluated inputs and results of the products in ``_PENDING`` (the other layers of
    the network whose weight gradient is being computed), to evaluate with this layer's.

    A layer's weight gradient evaluates its inputs and output gradients (:func:`weight_gradient`).
    The layers' inputs are one forward pass's activations: evaluated layer by layer, each
    evaluation recomputed the forward pass up to its layer, so the nn guide's 4-layer network
    compiled the forward pass ~4 times over in its reverse pass (kernels of 4,000-5,400
    instructions each at width 16).  Evaluated with the first layer's, they are computed once;
    the results too, which the activations' derivatives (``LeakyReLU``'s) read.
    Inputs that depend on a symbolic loop's or ``@fj.func`` body's variables have no value
    outside their kernel: they stay as they are; so do those of products traced outside the
    frozen function being recorded (or inside another one): a recording evaluates only its own.
    """
    rec = trace_state.recorder
    arrays = [x for op in list(_PENDING.values()) if op.recorder is rec for x in op.xs + op.out
              if traits.is_jit_v(type(x)) and x._node.op not in ("data", "literal")]
    if not arrays or is_symbolic([x._node for x in arrays]):
        return []
    return arrays


class MatVecOp(CustomOp):
    """``A @ x + b`` with derivatives into the coefficient buffer(s) and the input components."""

    _fj_wrap_eval_errors = False      # (custom(): its errors pass through as they are)

    def eval(self, buffer, xs, bias_buffer, g):
        self.buffer, self.xs, self.bias_buffer, self.g = buffer, list(xs), bias_buffer, g
        if g.trained:
            self.recorder = trace_state.recorder
            self.pending_key = next(_pending_keys)
            _PENDING[self.pending_key] = self
        bias = buffer if g.b_same else bias_buffer
        self.out = product(buffer, self.xs, bias, g)
        return self.out

    def forward(self):
        g = self.g
        d_buffer, d_xs = self.grad_in("buffer"), list(self.grad_in("xs"))
        d_bias = d_buffer if g.b_same else self.grad_in("bias_buffer")
        out = product(d_buffer, self.xs, d_bias, g)
        out = [a + b for a, b in zip(out, product(self.buffer, d_xs, None, Geometry(
            g.n_out, g.n_in, g.offset, g.stride, g.flip)))]
        self.set_grad_out(out)

    def backward(self):
        g = self.g
        dys = list(self.grad_out())
        self.set_grad_in("xs", product(self.buffer, dys, None, g, transpose=True))
        if not g.trained:
            return
        _PENDING.pop(self.pending_key, None)
        d_buffer = weight_gradient(self.buffer, dys, self.xs, g, _pending_inputs())
        if g.b_offset is not None:
            d_bias = bias_gradient(self.buffer if g.b_same else self.bias_buffer, dys, g)
            if g.b_same:
                d_buffer = d_buffer + d_bias
            else:
                self.set_grad_in("bias_buffer", d_bias)
        self.set_grad_in("buffer", d_buffer)

    def name(self) -> str:
        return f"matvec[{self.g.n_out}x{self.g.n_in}]"
