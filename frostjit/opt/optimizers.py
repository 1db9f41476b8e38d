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

from collections.abc import Mapping

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions import math as fm
from ..functions.creation import zeros
from ..functions.evaluation import eval as _eval, schedule as _schedule, make_opaque
from ..trace.dtypes import Float64
from ..tree import leaves, transform
from ..ad import api as ad


def _check_param(who: str, key, value):
    """The first array of a parameter: a differentiable float array or static vector (as in
    Dr.Jit, a PyTree is not a parameter: register its arrays one by one)."""
    comps = leaves(value) if isinstance(value, (ArrayBase, VectorBase)) or getattr(type(value), "IsTensor", False) \
        else None
    if not comps or not all(c._is_ad and c._vt.is_float for c in comps):
        raise TypeError(f"{who}[{key!r}] = ...: expected a differentiable floating point array "
                        f"(a type from frostjit.llvm.ad), got {type(value).__name__}")
    return comps[0]


def _width(value) -> int:
    return max(c._node.size for c in leaves(value))


def _first(value):
    """The first 1-D array of a parameter (its backend and element type are the parameter's)."""
    return leaves(value)[0]


def _scalar_array(like, value):
    """An opaque size-1 Float64 array (a value kept in memory, never folded into kernels)."""
    cls = registry.flat_type(like._backend, Float64, False)
    a = cls(float(value))
    make_opaque(a)
    return a


def _check_rate(who: str, value):
    """A learning rate: a real number or a 1-D JIT array (size 1, or one rate per element)."""
    if isinstance(value, ArrayBase) and value._vt.is_float:
        return value
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    raise TypeError(f"{who}: a learning rate must be a real number or a floating point JIT array, "
                    f"got {type(value).__name__}")


def _rate_array(backend, value):
    """The learning rate ``value`` as an evaluated (opaque) Float64 array of ``backend``.

    A new array every time the rate changes: a frozen function sees the same layout (one
    evaluated array) and reads the new value at its next replay, and no kernel folds it in.
    """
    cls = registry.flat_type(backend, Float64, False)
    a = cls(value) if isinstance(value, ArrayBase) else cls(float(value))   # detached copy
    make_opaque(a)
    return a


class Optimizer:
    """Base class: a dictionary of parameters plus per-parameter state (Dr.Jit's ``drjit.opt``).

    Parameters
    ----------
    lr : float or array
        Default learning rate (> 0).  :meth:`set_learning_rate` changes it, or sets
        one for a specific parameter, without recompiling a kernel or re-tracing a
        frozen function.
    params : dict, optional
        Initial parameters (``{name: array}``).
    mask_updates : bool
        Leave the entries whose gradient is exactly zero (and their optimizer
        state) unchanged, as if they had not been observed this step.
    """

    def __init__(self, lr, params: dict | None = None, *, mask_updates: bool = False):
        lr = _check_rate(f"{type(self).__name__}()", lr)
        if not (isinstance(lr, ArrayBase) or lr > 0):
            raise ValueError(f"{type(self).__name__}(): the learning rate 'lr' must be > 0, got {lr}")
        self.mask_updates = bool(mask_updates)
        self._lr_value = lr            # as given (learning_rate() returns it)
        self._lr_values: dict = {}     # per-parameter rates, as given
        self._lr = None                # opaque array of the default rate (made with the first parameter)
        self._lrs: dict = {}           # key -> opaque array of its own rate
        # key -> [parameter (grad-enabled leaf), state tuple]
        self.state: dict = {}
        if params:
            for k, v in params.items():
                self[k] = v

    # -- the dict interface ----------------------------------------------
    def __setitem__(self, key, value) -> None:
        first = _check_param(f"{type(self).__name__}", key, value)
        param = ad.detach(value)        # new array objects: the caller's arrays stay as they are
        ad.enable_grad(param)
        if self._lr is None:
            self._lr = _rate_array(first._backend, self._lr_value)
        old = self.state.get(key)
        if old is not None and type(old[0]) is type(param) and _width(old[0]) == _width(param):
            self.state[key] = [param, old[1]]
        else:
            self.state[key] = [param, self._init_state(param)]


    def __getitem__(self, key):
        return self.state[key][0]

    def __delitem__(self, key) -> None:
        del self.state[key]
        self._lr_values.pop(key, None)
        self._lrs.pop(key, None)

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

    # -- learning rates ------------------------------------------------------
    def set_learning_rate(self, value=None, /, **kwargs) -> None:
        """Set the default learning rate, or the rates of specific parameters (Dr.Jit's forms).

        >>> opt.set_learning_rate(1e-4)               # the default rate
        >>> opt.set_learning_rate({"y": 1e-4})        # parameter 'y' only
        >>> opt.set_learning_rate(y=1e-4)             # the same
        >>> opt.set_learning_rate(y=None)             # 'y' follows the default again

        A parameter's own rate always takes precedence over the default.  Rates
        are real numbers or JIT arrays (size 1, or one rate per element).  They
        are held in evaluated arrays, so changing one recompiles no kernel and
        does not re-trace a frozen function.  Raises ``KeyError`` for an unknown
        parameter name.
        """
        per_key = {}
        if isinstance(value, Mapping):
            per_key.update(value)
        elif value is not None:
            self._lr_value = _check_rate("set_learning_rate()", value)
            if self._lr is not None:
                self._lr = _rate_array(self._lr._backend, value)
        per_key.update(kwargs)
        for key, rate in per_key.items():
            if key not in self.state:
                raise KeyError(f"set_learning_rate(): the optimizer has no parameter {key!r}")
            if rate is None:
                self._lr_values.pop(key, None)
                self._lrs.pop(key, None)
            else:
                self._lr_values[key] = _check_rate(f"set_learning_rate({key}=...)", rate)
                self._lrs[key] = _rate_array(_backend_of(self.state[key][0]), rate)

    def learning_rate(self, key=None):
        """The default learning rate (as set), or the own rate of parameter ``key`` (None if it has none)."""
        if key is None:
            return self._lr_value
        if key not in self.state:
            raise KeyError(f"learning_rate(): the optimizer has no parameter {key!r}")
        return self._lr_values.get(key)

    @property
    def lr(self):
        """The default learning rate (assigning it calls :meth:`set_learning_rate`)."""
        return self._lr_value

    @lr.setter
    def lr(self, value) -> None:
        self.set_learning_rate(value)

    def _rate(self, key):
        """The opaque learning-rate array used for parameter ``key``."""
        return self._lrs.get(key, self._lr)

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
            new_value, new_state = self._step(value, g, st, self._rate(key))
            ad.enable_grad(new_value)
            entry[0], entry[1] = new_value, new_state
            touched.append((new_value, new_state))
        if eval and touched:
            _schedule(touched)
            _eval()

    def _init_state(self, param):
        raise NotImplementedError

    def _step(self, value, g, state, lr):
        raise NotImplementedError

    def __repr__(self) -> str:
        rates = {"default": self._lr_value, **self._lr_values}
        return f"{type(self).__name__}(lr={rates}, params={list(self.state)})"

    # An optimizer is a PyTree (frostjit.tree's traversal protocol) of exactly these attributes,
    # for fj.eval, AD and frozen functions alike: the hyper-parameters folded into the kernels
    # are Python values (a change re-traces, as it must), the learning rates evaluated arrays
    # (inputs like the parameters, so a new rate never re-traces).  The Python copies of the
    # rates (``_lr_value``, ``_lr_values``) are not walked.  Subclasses add their own
    # hyper-parameters in front.  (``__fj_traverse__`` says the same for freeze's walker, which
    # recognises the protocol by it.)
    __fj_traverse_attrs__ = ("mask_updates", "_lr", "_lrs", "state")

    def __fj_traverse__(self) -> dict:
        return {n: getattr(self, n) for n in type(self).__fj_traverse_attrs__}

    def __fj_assign__(self, values: dict) -> None:
        for n, v in values.items():
            setattr(self, n, v)


    def _observed(self, g, new, old):
        """With ``mask_updates``: ``new`` where the gradient is nonzero, ``old`` elsewhere."""
        if not self.mask_updates:
            return new
        return fm.select(g != 0, new, old)


def _backend_of(param):
    return _first(param)._backend


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum.

    ``v = momentum * v + g``, ``p = p - lr * v`` (with ``nesterov``:
    ``p = p - lr * (g + momentum * v)``).  With ``momentum=0`` simply
    ``p = p - lr * g``.  Arguments as Dr.Jit's: ``SGD(lr, params=None, *,
    momentum=0, nesterov=False, mask_updates=False)``.
    """

    def __init__(self, lr, params: dict | None = None, *, momentum: float = 0.0, nesterov: bool = False,
                 mask_updates: bool = False):
        if not 0 <= momentum < 1:
            raise ValueError(f"SGD(): momentum must be in [0, 1), got {momentum}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        super().__init__(lr, params, mask_updates=mask_updates)

    __fj_traverse_attrs__ = ("momentum", "nesterov") + Optimizer.__fj_traverse_attrs__

    def _init_state(self, param):
        if self.momentum == 0:
            return ()
        return (_zeros_like(param),)

    def _step(self, value, g, state, lr):
        lr = _lr_as(lr, value)
        if self.momentum == 0:
            return self._observed(g, value - lr * g, value), ()
        v = state[0] * self.momentum + g
        step = g + v * self.momentum if self.nesterov else v
        return self._observed(g, value - lr * step, value), (self._observed(g, v, state[0]),)

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", momentum={self.momentum}, nesterov={self.nesterov})"


class Adam(Optimizer):
    """Adam (Kingma and Ba), as in Dr.Jit.

    ``m = beta_1 m + (1 - beta_1) g``, ``v = beta_2 v + (1 - beta_2) g^2``,
    ``lr_t = lr sqrt(1 - beta_2^t) / (1 - beta_1^t)``,
    ``p = p - lr_t m / (sqrt(v) + epsilon)``.

    The bias correction uses ``beta_1^t`` and ``beta_2^t``, kept as JIT arrays
    (multiplied by ``beta`` each step), so it is computed in the kernel, never
    folded in as a constant that changes from step to step.
    """

    def __init__(self, lr, params: dict | None = None, *, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-8, mask_updates: bool = False):
        if not (0 <= beta_1 < 1 and 0 <= beta_2 < 1):
            raise ValueError(f"Adam(): beta_1 and beta_2 must be in [0, 1), got {beta_1} and {beta_2}")
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(lr, params, mask_updates=mask_updates)

    __fj_traverse_attrs__ = ("beta_1", "beta_2", "epsilon") + Optimizer.__fj_traverse_attrs__

    def _init_state(self, param):
        first = _first(param)
        # (beta_1^t, beta_2^t) at t = 0, first and second moments
        return (_scalar_array(first, 1), _scalar_array(first, 1), _zeros_like(param), _zeros_like(param))

    def _step(self, value, g, state, lr):
        b1_t, b2_t, m, v = state
        b1, b2 = self.beta_1, self.beta_2
        b1_t, b2_t = b1_t * b1, b2_t * b2
        lr_t = lr * fm.sqrt(1 - b2_t) / (1 - b1_t)
        m_new = m * b1 + g * (1 - b1)
        v_new = v * b2 + (g * g) * (1 - b2)
        new_value = value - _lr_as(lr_t, value) * m_new / (fm.sqrt(v_new) + self.epsilon)
        # mask_updates: unobserved entries keep value and moments (the step count advances)
        return self._observed(g, new_value, value), (b1_t, b2_t, self._observed(g, m_new, m),
                                                     self._observed(g, v_new, v))

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", beta=({self.beta_1}, {self.beta_2}), epsilon={self.epsilon})"


def _zeros_like(param):
    # The parameter's (AD) type, never grad-enabled: the state keeps one type across steps.
    out = transform(param, lambda c: zeros(type(c), c._node.size))
    make_opaque(out)
    return out


def _lr_as(lr, value):
    """The size-1 Float64 learning-rate array converted to the parameter's element type."""
    first = _first(value)
    return registry.flat_type(first._backend, first._vt, False)(lr)
