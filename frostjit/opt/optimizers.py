"""Gradient-based optimizers with Dr.Jit's dict-like interface: ``SGD`` and ``Adam``.

>>> opt = fj.opt.Adam(lr=1e-2)
>>> opt["x"] = x                      # stores a grad-enabled copy
>>> for i in range(100):
...     loss = f(opt["x"])
...     fj.backward(loss)
...     opt.step()                    # a few kernels: reads grads, updates state, new params

All state (parameters, moments, the learning rate, Adam's step count) lives in
JIT arrays, and ``step()`` evaluates it at the end.  Nothing is folded into a
kernel as a Python constant that changes from step to step, so a step compiles
once, and a frozen step updates the state correctly on every replay.
"""
from __future__ import annotations

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions import math as fm
from ..functions.evaluation import eval as _eval, schedule as _schedule, make_opaque
from ..trace.dtypes import Float64
from ..ad import api as ad


def _check_param(who: str, key, value):
    comps = value._c if isinstance(value, VectorBase) else [value] if isinstance(value, ArrayBase) else None
    if not comps or not all(c._is_ad and c._vt.is_float for c in comps):
        raise TypeError(f"{who}[{key!r}] = ...: expected a differentiable floating point array "
                        f"(a type from frostjit.llvm.ad), got {type(value).__name__}")
    return comps[0]


def _width(value) -> int:
    comps = value._c if isinstance(value, VectorBase) else [value]
    return max(c._node.size for c in comps)


def _scalar_array(like, value):
    """An opaque size-1 Float64 array (a value kept in memory, never folded into kernels)."""
    cls = registry.flat_type(like._backend, Float64, False)
    a = cls(float(value))
    make_opaque(a)
    return a


class Optimizer:
    """Base class: a dictionary of parameters plus per-parameter state.

    Parameters
    ----------
    lr : float
        Learning rate (``set_learning_rate`` changes it without recompiling).
    params : dict, optional
        Initial parameters (``{name: array}``).
    """

    def __init__(self, lr: float, params: dict | None = None):
        if not lr >= 0:
            raise ValueError(f"{type(self).__name__}(): the learning rate must be >= 0, got {lr}")
        self.lr = float(lr)
        self._lr = None                # opaque array holding lr (created with the first parameter)
        # key -> [parameter (grad-enabled leaf), state tuple]
        self.state: dict = {}
        if params:
            for k, v in params.items():
                self[k] = v

    # -- the dict interface ----------------------------------------------
    def __setitem__(self, key, value) -> None:
        first = _check_param(f"{type(self).__name__}", key, value)
        param = ad.detach(value)
        if isinstance(param, VectorBase):
            param = type(param)._from_components([type(c)._from_node(c._node) for c in param._c])
        ad.enable_grad(param)
        if self._lr is None:
            self._lr = _scalar_array(first, self.lr)
        old = self.state.get(key)
        if old is not None and type(old[0]) is type(param) and _width(old[0]) == _width(param):
            self.state[key] = [param, old[1]]
        else:
            self.state[key] = [param, self._init_state(param)]

    def __getitem__(self, key):
        return self.state[key][0]

    def __delitem__(self, key) -> None:
        del self.state[key]

    def __contains__(self, key) -> bool:
        return key in self.state

    def __len__(self) -> int:
        return len(self.state)

    def __iter__(self):
        return iter(self.state)

    def keys(self):
        return self.state.keys()

    def values(self):
        return [v[0] for v in self.state.values()]

    def items(self):
        return [(k, v[0]) for k, v in self.state.items()]

    def update(self, params: dict | None = None, **kwargs) -> None:
        """Set several parameters at once."""
        for k, v in dict(params or {}, **kwargs).items():
            self[k] = v

    def reset(self, key=None) -> None:
        """Forget the optimizer state (moments, step count) of ``key``, or of every parameter."""
        for k in ([key] if key is not None else list(self.state)):
            p = self.state[k][0]
            self.state[k][1] = self._init_state(p)

    def set_learning_rate(self, lr: float) -> None:
        """Change the learning rate (stored in memory, so no kernel is recompiled)."""
        self.lr = float(lr)
        if self._lr is not None:
            self._lr = _scalar_array(self._lr, self.lr)

    def learning_rate(self) -> float:
        return self.lr

    # -- the step -----------------------------------------------------------
    def step(self, eval: bool = True) -> None:  # noqa: A002  (Dr.Jit's name)
        """Take one step using the current gradients of the parameters.

        Gradients are read and cleared; each parameter becomes a new
        grad-enabled leaf holding the updated value.  With ``eval=True`` (the
        default) the new parameters and state are evaluated, in a few kernels.
        """
        touched = []
        for key, entry in self.state.items():
            p, st = entry
            g = ad.grad(p)
            value = ad.detach(p)
            new_value, new_state = self._step(value, g, st)
            ad.enable_grad(new_value)
            entry[0], entry[1] = new_value, new_state
            touched.append((new_value, new_state))
        if eval and touched:
            _schedule(touched)
            _eval()

    def _init_state(self, param):
        raise NotImplementedError

    def _step(self, value, g, state):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lr={self.lr}, params={list(self.state)})"

    # Frozen functions traverse these (parameters and state are JIT arrays).
    def _traverse(self):
        return {"lr": self._lr, "state": self.state}


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum.

    ``v = momentum * v + g``, ``p = p - lr * v`` (with ``nesterov``:
    ``p = p - lr * (g + momentum * v)``).  With ``momentum=0`` simply
    ``p = p - lr * g``.
    """

    def __init__(self, lr: float, momentum: float = 0.0, nesterov: bool = False, params: dict | None = None):
        if not 0 <= momentum < 1:
            raise ValueError(f"SGD(): momentum must be in [0, 1), got {momentum}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        super().__init__(lr, params)

    def _init_state(self, param):
        if self.momentum == 0:
            return ()
        return (_zeros_like(param),)

    def _step(self, value, g, state):
        lr = _lr_as(self._lr, value)
        if self.momentum == 0:
            return value - lr * g, ()
        v = state[0] * self.momentum + g
        step = g + v * self.momentum if self.nesterov else v
        return value - lr * step, (v,)


class Adam(Optimizer):
    """Adam (Kingma and Ba), as in Dr.Jit.

    ``m = beta_1 m + (1 - beta_1) g``, ``v = beta_2 v + (1 - beta_2) g^2``,
    ``lr_t = lr sqrt(1 - beta_2^t) / (1 - beta_1^t)``,
    ``p = p - lr_t m / (sqrt(v) + epsilon)``.

    The bias correction uses ``beta_1^t`` and ``beta_2^t``, kept as JIT arrays
    (multiplied by ``beta`` each step), so it is computed in the kernel, never
    folded in as a constant that changes from step to step.
    """

    def __init__(self, lr: float, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-8,
                 mask_updates: bool = False, params: dict | None = None):
        if not (0 <= beta_1 < 1 and 0 <= beta_2 < 1):
            raise ValueError(f"Adam(): beta_1 and beta_2 must be in [0, 1), got {beta_1} and {beta_2}")
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.mask_updates = bool(mask_updates)
        super().__init__(lr, params)

    def _init_state(self, param):
        first = param._c[0] if isinstance(param, VectorBase) else param
        # (beta_1^t, beta_2^t) at t = 0, first and second moments
        return (_scalar_array(first, 1), _scalar_array(first, 1), _zeros_like(param), _zeros_like(param))

    def _step(self, value, g, state):
        b1_t, b2_t, m, v = state
        b1, b2 = self.beta_1, self.beta_2
        b1_t, b2_t = b1_t * b1, b2_t * b2
        lr_t = self._lr * fm.sqrt(1 - b2_t) / (1 - b1_t)
        m_new = m * b1 + g * (1 - b1)
        v_new = v * b2 + (g * g) * (1 - b2)
        new_value = value - _lr_as(lr_t, value) * m_new / (fm.sqrt(v_new) + self.epsilon)
        if self.mask_updates:
            nz = g != 0
            m_new = fm.select(nz, m_new, m)
            v_new = fm.select(nz, v_new, v)
            new_value = fm.select(nz, new_value, value)
        return new_value, (b1_t, b2_t, m_new, v_new)


def _zeros_like(param):
    from ..functions.creation import zeros
    comps = param._c if isinstance(param, VectorBase) else [param]
    # The parameter's (AD) type, never grad-enabled: the state keeps one type across steps.
    out = [zeros(type(c), c._node.size) for c in comps]
    for o in out:
        make_opaque(o)
    if isinstance(param, VectorBase):
        return type(param)._from_components(out)
    return out[0]


def _lr_as(lr, value):
    """The size-1 Float64 learning-rate array converted to the parameter's element type."""
    first = value._c[0] if isinstance(value, VectorBase) else value
    return registry.flat_type(first._backend, first._vt, False)(lr)
