"""Muon: momentum orthogonalized by Newton-Schulz (Dr.Jit 1.5's ``drjit.opt.Muon``).

Keller Jordan, "Muon: An optimizer for hidden layers in neural networks" (2024).  For 2-D
parameters (tensors of shape ``(m, n)``), an SGD step whose update is replaced by
(approximately) the nearest orthogonal matrix: a quintic Newton-Schulz iteration whose
coefficients maximize the slope at zero.  Other parameters (biases, embeddings, scalars)
belong to another optimizer such as :class:`~.optimizers.AdamW`.
"""
from __future__ import annotations

from ..functions import math as fm
from ..functions.creation import zeros
from ..functions.evaluation import make_opaque
from ..functions.reduce import sum as _sum
from ..tensor.matmul import matmul
from ..tensor.axes import transpose
from .base import Optimizer, LearningRate, scale_factor
from ..errors import OptimizerArgumentError

#: The quintic iteration's coefficients (Jordan et al.): X <- a X + (b A + c A A) X, A = X X^T.
NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def orthogonalize(G, steps: int):
    """The Newton-Schulz approximation of the orthogonal factor of the 2-D tensor ``G``.

    ``G`` is scaled to unit Frobenius norm (plus 1e-7), a tall matrix is transposed first
    (the iteration's products are then the small ones), and ``steps`` iterations run.
    """
    a, b, c = NS_COEFFICIENTS
    tall = G.shape[0] > G.shape[1]
    X = transpose(G) if tall else G
    X = X / (fm.sqrt(_sum(fm.square(X.array))) + 1e-7)
    for _ in range(steps):
        A = matmul(X, X, Bt=True)
        B = fm.fma(A, b, matmul(A, A) * c)
        X = fm.fma(X, a, matmul(B, X))
    return transpose(X) if tall else X


class Muon(Optimizer):
    """Muon: SGD with momentum whose update is orthogonalized (Newton-Schulz) per 2-D parameter.

    ``v = momentum v + g``; the update ``u`` is ``g + momentum v`` (Nesterov) or ``v``;
    ``p = p (1 - lr weight_decay) - lr sqrt(max(1, m / n)) orthogonalize(u)`` for a parameter
    of shape ``(m, n)``.  The learning rate is the spectral norm of each update.  The state
    is Dr.Jit's ``(momentum buffer as a flat array, shape)``.

    Parameters
    ----------
    lr : float or array
        Learning rate (> 0).
    params : dict, optional
        Initial parameters, each a 2-D tensor (``TensorXf``, ``TensorXf64``).
    momentum : float
        Weight of the momentum buffer, in ``[0, 1)``.
    nesterov : bool
        Orthogonalize the Nesterov mix ``g + momentum v`` instead of ``v``.
    ns_steps : int
        Newton-Schulz iterations (5 suffice in practice).
    weight_decay : float
        Decoupled (AdamW-style) weight decay: ``-lr weight_decay p`` per step.
    mask_updates, promote_fp16 : bool
        See :class:`~.base.Optimizer`.

    Raises
    ------
    ValueError
        ``momentum`` outside ``[0, 1)``, a negative ``ns_steps``, ``lr <= 0``, or (on
        assignment) a parameter that is not 2-D, naming its shape.

    Examples
    --------
    >>> opt = fj.opt.Muon(lr=0.02)
    >>> opt["W"] = TensorXf(np.random.rand(64, 32).astype(np.float32))
    >>> fj.backward(loss(opt["W"])); opt.step()
    """

    def __init__(self, lr: LearningRate, params=None, *, momentum: float = 0.95, nesterov: bool = True,
                 ns_steps: int = 5, weight_decay: float = 0.0, mask_updates: bool = False,
                 promote_fp16: bool = True):
        if not 0 <= momentum < 1:
            raise OptimizerArgumentError(f"Muon(): momentum must be in [0, 1), got {momentum}")
        if int(ns_steps) != ns_steps or ns_steps < 0:
            raise OptimizerArgumentError(f"Muon(): ns_steps must be a non-negative integer, got {ns_steps}")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)
        self.ns_steps, self.weight_decay = int(ns_steps), float(weight_decay)
        super().__init__(lr, params, mask_updates=mask_updates, promote_fp16=promote_fp16)

    __fj_traverse_attrs__ = ("momentum", "nesterov", "ns_steps", "weight_decay") + Optimizer.__fj_traverse_attrs__

    def __setitem__(self, key: str, value) -> None:
        shape = getattr(value, "shape", None) if getattr(type(value), "IsTensor", False) else None
        if shape is None or len(shape) != 2:
            got = f"shape {tuple(shape)}" if shape is not None else f"a {type(value).__name__}"
            raise OptimizerArgumentError(f"Muon[{key!r}] = ...: Muon requires 2-D parameters (tensors of shape (m, n)); "
                             f"got {got}")
        super().__setitem__(key, value)

    def _reset(self, value):
        arr = value.array
        buf = zeros(type(arr), arr._node.size)     # (the type the step's result has: no re-trace)
        make_opaque(buf)
        return (buf, tuple(value.shape))

    def _step(self, value, g, lr, extra):
        buf_p, shape = extra
        tcls = type(value)
        g = g.array
        buf = fm.fma(self.momentum, buf_p, g)
        u = fm.fma(self.momentum, buf, g) if self.nesterov else buf
        ortho = orthogonalize(tcls(u, shape), self.ns_steps)
        m, n = shape
        step = scale_factor(value, lr, -max(1.0, m / n) ** 0.5)
        v = value.array
        if self.weight_decay != 0:
            v = fm.fma(v, scale_factor(value, lr, -self.weight_decay), v)
        return tcls(fm.fma(ortho.array, step, v), shape), (buf, shape)

    def _select(self, mask, extra, new_extra):
        m = mask.array if getattr(type(mask), "IsTensor", False) else mask
        return (fm.select(m, extra[0], new_extra[0]), new_extra[1])

    def _describe(self) -> list:
        return [("momentum", f"{self.momentum:g}"), ("nesterov", str(self.nesterov)),
                ("ns_steps", str(self.ns_steps)), ("weight_decay", f"{self.weight_decay:g}")]


__all__ = ["Muon", "orthogonalize", "NS_COEFFICIENTS"]
