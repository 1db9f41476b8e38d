"""The update rules: :class:`SGD` (momentum, Nesterov), :class:`RMSProp`, :class:`Adam`
(AMSGrad, UniformAdam), :class:`AdamW` (Dr.Jit 1.5's ``drjit.opt``).

Each rule is written with the same operations, in the same order, as Dr.Jit's (fused
multiply-adds, ``lerp`` for the moving averages, ``rsqrt`` when epsilon is tiny), so that a
trajectory matches Dr.Jit's to float32 round-off (tests/opt/test_trajectories.py compares
100 steps of each against trajectories recorded with Dr.Jit).
"""
from __future__ import annotations

from ..array import registry
from ..functions import math as fm
from ..functions.evaluation import make_opaque, schedule
from ..functions.reduce import max as _hmax
from ..trace.dtypes import Float64, UInt32
from .base import Optimizer, first, scale_factor, zeros_like, LearningRate, _REPLAYABLE
from ..errors import OptimizerArgumentError


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum (as ``torch.optim.SGD``).

    ``v = momentum * v + g`` and ``p = p - lr * v`` (Nesterov: ``p = p - lr * (g + momentum *
    v)``); with ``momentum=0`` simply ``p = p - lr * g``.

    Parameters
    ----------
    lr : float or array
        Learning rate.
    params : dict, optional
        Initial parameters.
    momentum : float
        ``>= 0`` (as Dr.Jit and PyTorch; values below 1 are the useful ones); 0 keeps no state.
    nesterov : bool
        Nesterov's variant (needs ``momentum > 0``).
    mask_updates, promote_fp16 : bool
        See :class:`Optimizer`.
    """

    def __init__(self, lr: LearningRate, params=None, *, momentum: float = 0.0, nesterov: bool = False,
                 mask_updates: bool = False, promote_fp16: bool = True):
        if not momentum >= 0:
            raise OptimizerArgumentError(f"SGD(): momentum must be >= 0, got {momentum}")
        if nesterov and momentum == 0:
            # (Dr.Jit's check: Nesterov's look-ahead is the momentum term)
            raise OptimizerArgumentError("SGD(): Nesterov acceleration assumes momentum > 0")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        super().__init__(lr, params, mask_updates=mask_updates, promote_fp16=promote_fp16)

    __fj_traverse_attrs__ = ("momentum", "nesterov") + Optimizer.__fj_traverse_attrs__

    def _reset(self, value):
        return None if self.momentum == 0 else zeros_like(value)

    def _step(self, value, g, lr, v):
        if self.momentum == 0:
            v_next, step = None, g
        else:
            v_next = fm.fma(self.momentum, v, g)
            step = fm.fma(self.momentum, v_next, g) if self.nesterov else v_next
        return fm.fma(step, scale_factor(value, lr, -1.0), value), v_next

    def _describe(self) -> list:
        return [("momentum", f"{self.momentum:g}"), ("nesterov", str(self.nesterov))]


class RMSProp(Optimizer):
    """RMSProp (Hinton's lecture notes; as ``torch.optim.RMSprop``).

    ``m = alpha m + (1 - alpha) g^2``, ``p = p - lr g / (sqrt(m) + epsilon)`` (for ``epsilon
    <= 1e-6``, Dr.Jit's ``p = p - lr g rsqrt(m + epsilon^2)``).

    Parameters
    ----------
    lr : float or array
        Learning rate.
    params : dict, optional
        Initial parameters.
    alpha : float
        Weight of the second-moment moving average.
    epsilon : float
        Avoids division by zero.
    mask_updates, promote_fp16 : bool
        See :class:`Optimizer`.
    """

    def __init__(self, lr: LearningRate, params=None, *, alpha: float = 0.99, epsilon: float = 1e-8,
                 mask_updates: bool = False, promote_fp16: bool = True):
        if not 0 <= alpha < 1:
            raise OptimizerArgumentError(f"RMSProp(): alpha must be in [0, 1), got {alpha}")
        if epsilon < 0:
            raise OptimizerArgumentError(f"RMSProp(): epsilon must be >= 0, got {epsilon}")
        self.alpha, self.epsilon = float(alpha), float(epsilon)
        super().__init__(lr, params, mask_updates=mask_updates, promote_fp16=promote_fp16)

    __fj_traverse_attrs__ = ("alpha", "epsilon") + Optimizer.__fj_traverse_attrs__

    def _reset(self, value):
        return zeros_like(value)

    def _step(self, value, g, lr, m):
        m_t = fm.lerp(fm.square(g), m, self.alpha)
        step = _normalized(g, m_t, self.epsilon)
        return fm.fma(step, scale_factor(value, lr, -1.0), value), m_t

    def _describe(self) -> list:
        return [("alpha", f"{self.alpha:g}"), ("epsilon", f"{self.epsilon:g}")]


def _normalized(num, second_moment, epsilon: float):
    """``num / (sqrt(second_moment) + epsilon)``; for a tiny epsilon Dr.Jit's faster
    ``num * rsqrt(second_moment + epsilon^2)``."""
    if epsilon <= 1e-6:
        return num * fm.rsqrt(second_moment + epsilon ** 2)
    return num / (fm.sqrt(second_moment) + epsilon)


class Adam(Optimizer):
    """Adam (Kingma and Ba), with Dr.Jit's AMSGrad and UniformAdam variants.

    ``m = beta_1 m + (1 - beta_1) g``, ``v = beta_2 v + (1 - beta_2) g^2``,
    ``p = p - lr sqrt(1 - beta_2^t) / (1 - beta_1^t) m / (sqrt(v) + epsilon)`` (for ``epsilon
    <= 1e-6``: ``m rsqrt(v + epsilon^2)``).  The state is Dr.Jit's ``(t, m, v, v_max)``: the step
    count ``t`` is a ``UInt32`` array and the bias correction is computed from it in double
    precision inside the kernel, never folded in as a constant that changes every step.

    Parameters
    ----------
    lr : float or array
        Learning rate.
    params : dict, optional
        Initial parameters.
    beta_1, beta_2 : float
        Weights of the first- and second-moment moving averages, in ``[0, 1)``.
    epsilon : float
        Avoids division by zero.
    mask_updates, promote_fp16 : bool
        See :class:`Optimizer` (the step count advances even where updates are masked).
    uniform : bool
        UniformAdam (Nicolet et al. 2021): normalize by the largest second moment of the
        parameter instead of each element's (``fj.max``, as Dr.Jit: for a static vector, the
        largest component of each element).
    amsgrad : bool
        AMSGrad (Reddi et al. 2018): normalize by the largest second moment seen so far.
    """

    def __init__(self, lr: LearningRate, params=None, *, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-8, mask_updates: bool = False, promote_fp16: bool = True,
                 uniform: bool = False, amsgrad: bool = False):
        if not (0 <= beta_1 < 1 and 0 <= beta_2 < 1):
            raise OptimizerArgumentError(f"{type(self).__name__}(): beta_1 and beta_2 must be in [0, 1), got {beta_1} and {beta_2}")
        if epsilon < 0:
            raise OptimizerArgumentError(f"{type(self).__name__}(): epsilon must be >= 0, got {epsilon}")
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.uniform, self.amsgrad = bool(uniform), bool(amsgrad)
        super().__init__(lr, params, mask_updates=mask_updates, promote_fp16=promote_fp16)

    __fj_traverse_attrs__ = ("beta_1", "beta_2", "epsilon", "uniform", "amsgrad") + Optimizer.__fj_traverse_attrs__

    def _reset(self, value):
        f = first(value)
        t = registry.flat_type(f._backend, UInt32, False)(0)
        make_opaque(t)
        v_max = zeros_like(value) if self.amsgrad else None
        return (t, zeros_like(value), zeros_like(value), v_max)

    def _bias_correction(self, value, t):
        """``-sqrt(1 - beta_2^t) / (1 - beta_1^t)`` in double precision, as the parameter's type."""
        f = first(value)
        f64 = registry.flat_type(f._backend, Float64, False)
        tt = f64(t)
        ema = -fm.sqrt(1 - f64(self.beta_2) ** tt) / (1 - f64(self.beta_1) ** tt)
        return registry.flat_type(f._backend, f._vt, False)(ema)

    def _step(self, value, g, lr, extra):
        t_p, m_p, v_p, v_max_p = extra
        t = t_p + 1
        m_t = fm.lerp(g, m_p, self.beta_1)
        v_t = fm.lerp(fm.square(g), v_p, self.beta_2)
        scale = scale_factor(value, lr) * self._bias_correction(value, t)
        # One value for every element: computed once in a size-1 kernel, read by the update
        # (unscheduled, the fused update would compute the double-precision powers per element).
        schedule(scale)
        v_max = None
        if self.amsgrad:
            v_max = fm.maximum(v_max_p, v_t)
            v_norm = v_max
        elif self.uniform:
            v_norm = _hmax(v_t)        # fj.max's default axis, as Dr.Jit: a static vector's largest component
        else:
            v_norm = v_t
        step = _normalized(m_t, v_norm, self.epsilon)
        return fm.fma(step, scale, value), (t, m_t, v_t, v_max)

    def _select(self, mask, extra, new_extra):
        # The step count is not masked (Dr.Jit: it is only relevant for mixed-precision training).
        return (new_extra[0],) + tuple(fm.select(mask, old, new) for old, new in zip(extra[1:], new_extra[1:]))

    def _describe(self) -> list:
        return [("beta", f"({self.beta_1:g}, {self.beta_2:g})"), ("epsilon", f"{self.epsilon:g}")]


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter): Adam with decoupled weight decay.

    The Adam update, then ``p = p - lr * weight_decay * p_old`` (from the value before the
    step), computed as Dr.Jit does: ``fma(p_old, -lr * weight_decay, p_adam)``.

    Parameters
    ----------
    weight_decay : float
        The decay coefficient (>= 0).
    others
        As :class:`Adam`.
    """

    def __init__(self, lr: LearningRate, params=None, *, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-8, weight_decay: float = 0.01, mask_updates: bool = False,
                 promote_fp16: bool = True, uniform: bool = False, amsgrad: bool = False):
        if weight_decay < 0:
            raise OptimizerArgumentError(f"AdamW(): weight_decay must be >= 0, got {weight_decay}")
        self.weight_decay = float(weight_decay)
        super().__init__(lr, params, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, mask_updates=mask_updates,
                         promote_fp16=promote_fp16, uniform=uniform, amsgrad=amsgrad)

    __fj_traverse_attrs__ = ("weight_decay",) + Adam.__fj_traverse_attrs__

    def _step(self, value, g, lr, extra):
        new_value, new_extra = super()._step(value, g, lr, extra)
        return fm.fma(value, scale_factor(value, lr, -self.weight_decay), new_value), new_extra

    def _describe(self) -> list:
        return super()._describe() + [("weight_decay", f"{self.weight_decay:g}")]


_REPLAYABLE.update((SGD, RMSProp, Adam, AdamW))

__all__ = ["SGD", "RMSProp", "Adam", "AdamW"]
