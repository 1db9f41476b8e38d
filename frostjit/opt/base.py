"""The optimizer base class (Dr.Jit's ``drjit.opt.Optimizer``): a dictionary of parameters,
per-parameter state, learning rates, the step loop, and saving/restoring the state.

>>> opt = fj.opt.Adam(lr=1e-2)
>>> opt["x"] = x                      # stores a grad-enabled copy
>>> for i in range(100):
...     loss = f(opt["x"])
...     fj.backward(loss)
...     opt.step()                    # a few kernels: reads grads, updates state, new params

``opt.state[key]`` is Dr.Jit's tuple ``(value, promoted, lr, extra)``: the parameter (a
grad-enabled leaf), whether it was promoted from half precision (``promote_fp16``: the state
holds a ``Float32`` copy of a ``Float16`` parameter and ``opt[key]`` converts it back, so the
small updates of the steps are not rounded away), its own learning rate (``None``, or the rate
as an opaque ``Float64`` array) and the optimizer-specific state (moments, step count).

All state lives in JIT arrays, and nothing that changes from step to step is folded into a
kernel as a Python constant (learning rates are opaque arrays, Adam's step count an array),
so a step compiles once, and a frozen step (``fj.freeze``) replays correctly when the
learning rate changes, without re-tracing.
"""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Union

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..functions import math as fm
from ..functions.creation import zeros
from ..functions.evaluation import eval as _eval, schedule as _schedule, make_opaque
from ..trace.dtypes import Float16, Float64
from ..traits import float16_array_t, float32_array_t
from ..tree import leaves, transform
from ..ad import api as ad
from ..ad.graph import scopes as ad_scopes
from ..trace.state import state as jit_state
from ..errors import OptimizerArgumentError

#: A learning rate: a number or a JIT array (size 1, or one rate per element) (Dr.Jit's alias).
LearningRate = Union[float, ArrayBase]


def check_param(who: str, key, value):
    """The first 1-D array of a parameter: a differentiable float array or static vector (as in
    Dr.Jit, a PyTree is not a parameter: register its arrays one by one)."""
    comps = leaves(value) if isinstance(value, (ArrayBase, VectorBase)) or getattr(type(value), "IsTensor", False) \
        else None
    if not comps or not all(c._is_ad and c._vt.is_float for c in comps):
        # (the first sentence is Dr.Jit's, which ported programs match)
        raise TypeError(f'{who}[{key!r}] = ...: cannot register parameter "{key}" of type '
                        f'"{type(value).__name__}": expected a differentiable floating point array '
                        "(a type from frostjit.llvm.ad)")
    return comps[0]


def width(value) -> int:
    """The number of elements of a parameter (its widest component)."""
    return max(c._node.size for c in leaves(value))


def shape(value) -> tuple:
    """What must stay equal for a re-assigned parameter to keep its state: type and width, and
    a tensor's shape (a (2, 3) and a (3, 2) tensor have the same width, not the same state)."""
    if getattr(type(value), "IsTensor", False):
        return type(value), width(value), tuple(value.shape)
    return type(value), width(value)


def first(value):
    """The first 1-D array of a parameter (its backend and element type are the parameter's)."""
    return leaves(value)[0]


def check_rate(who: str, value):
    """A learning rate: a real number or a 1-D floating point JIT array."""
    if isinstance(value, ArrayBase) and value._vt.is_float:
        return value
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    raise TypeError(f"{who}: a learning rate must be a real number or a floating point JIT array, "
                    f"got {type(value).__name__}")


def rate_array(backend, value):
    """The learning rate ``value`` as an evaluated (opaque) ``Float64`` array of ``backend``.

    A new array every time the rate changes: a frozen function sees the same layout (one
    evaluated array) and reads the new value at its next replay, and no kernel folds it in.
    """
    cls = registry.flat_type(backend, Float64, False)
    a = cls(value) if isinstance(value, ArrayBase) else cls(float(value))   # detached copy
    make_opaque(a)
    return a


def zeros_like(param):
    """Opaque zeros of the parameter's (AD) type, not grad-enabled: optimizer state."""
    out = transform(param, lambda c: zeros(type(c), c._node.size))
    make_opaque(out)
    return out


def scale_factor(value, rate, constant: float = 1.0):
    """The step's scale ``rate * constant`` as a 1-D array of the parameter's element type.

    Computed in double precision from the opaque ``Float64`` rate and rounded once (Dr.Jit
    multiplies a Python learning rate by the optimizer's constants in double precision before
    making it an opaque array of the parameter's type); ``constant`` (a hyper-parameter such
    as ``-1`` or ``-weight_decay``) is folded into the kernel.
    """
    f = first(value)
    cls = registry.flat_type(f._backend, f._vt, False)
    return cls(rate * constant if constant != 1.0 else rate)


def elementwise(value):
    """A complex number, quaternion or matrix as the plain static array of its components
    (Dr.Jit's ``.array``): the optimizers update parameters component by component, so their
    moments must not multiply as complex numbers or matrices (``g * g`` of a ``Complex2f`` is a
    complex square).  Other parameters as they are."""
    if isinstance(value, VectorBase) and (value.IsComplex or value.IsQuaternion or value.IsMatrix):
        return value.array
    return value


def _demoted(value):
    """A promoted (``Float32``) parameter as the ``Float16`` type it was registered with; the
    conversion is differentiable, so gradients reach the ``Float32`` leaf."""
    return float16_array_t(type(value))(value)


class Optimizer(MutableMapping):
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
    promote_fp16 : bool
        Keep a ``Float16`` parameter and its optimizer state in ``Float32`` (Dr.Jit):
        ``opt[key]`` is then a ``Float16`` conversion of it, through which gradients flow
        back.  Without it, updates smaller than half an ULP of the parameter are lost.
    """

    def __init__(self, lr: LearningRate, params: Mapping | None = None, *, mask_updates: bool = False,
                 promote_fp16: bool = True):
        lr = check_rate(f"{type(self).__name__}()", lr)
        if not (isinstance(lr, ArrayBase) or lr > 0):
            raise OptimizerArgumentError(f"{type(self).__name__}(): the learning rate 'lr' must be > 0, got {lr}")
        self.mask_updates = bool(mask_updates)
        self.promote_fp16 = bool(promote_fp16)
        self._lr_value = lr            # as given (learning_rate() returns it)
        self._lr_values: dict = {}     # per-parameter rates, as given
        self._lr = None                # opaque array of the default rate (made with the first parameter)
        self.state: dict = {}          # key -> (value, promoted, own rate array or None, extra)
        if params:
            self.update(params)

    # -- the dict interface ----------------------------------------------
    def __setitem__(self, key: str, value) -> None:
        """Register parameter ``key`` (a copy of ``value``), or overwrite it.

        Re-setting a parameter of the same type and width keeps its optimizer state and
        learning rate; another shape resets them (Dr.Jit).  Raises ``TypeError`` for a value
        that is not a differentiable floating point array, ``RuntimeError`` for an empty one.
        """
        f = check_param(type(self).__name__, key, value)
        if width(value) == 0:
            raise RuntimeError(f'{type(self).__name__}[{key!r}] = ...: parameter "{key}" is empty')
        param = ad.detach(value)        # new array objects: the caller's arrays stay as they are
        promoted = self.promote_fp16 and f._vt is Float16
        if promoted:
            param = float32_array_t(type(param))(param)
        make_opaque(param)
        ad.enable_grad(param)
        if self._lr is None:
            self._lr = rate_array(f._backend, self._lr_value)
        prev = self.state.get(key)
        if prev is not None and shape(prev[0]) == shape(param):
            self.state[key] = (param,) + tuple(prev[1:])
        else:
            self._forget_rate(key)
            self.state[key] = (param, promoted, None, self._reset(elementwise(param)))

    def __getitem__(self, key: str):
        value, promoted = self.state[key][:2]
        return _demoted(value) if promoted else value

    def __delitem__(self, key: str) -> None:
        del self.state[key]
        self._lr_values.pop(key, None)

    def __contains__(self, key) -> bool:
        return key in self.state

    def __len__(self) -> int:
        return len(self.state)

    def __iter__(self):
        return iter(self.state)

    def keys(self):
        return self.state.keys()

    def values(self):
        return [self[k] for k in self.state]

    def items(self):
        return [(k, self[k]) for k in self.state]

    # Two optimizers are the same object or different ones (Mapping would compare the arrays).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def update(self, params: Mapping | None = None, **kwargs) -> None:
        """Set several parameters at once (``update({"a": a})`` or ``update(a=a)``)."""
        for k, v in dict(params or {}, **kwargs).items():
            self[k] = v

    def reset(self, key: str | None = None) -> None:
        """Forget the optimizer state (moments, step count) and the own learning rate of
        ``key``, or of every parameter (Dr.Jit)."""
        for k in ([key] if key is not None else list(self.state)):
            value, promoted = self.state[k][:2]
            self._forget_rate(k)
            self.state[k] = (value, promoted, None, self._reset(elementwise(value)))

    def _forget_rate(self, key) -> None:
        self._lr_values.pop(key, None)

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
        parameter name, ``TypeError`` for a rate that is not a number or array.
        """
        per_key = {}
        if isinstance(value, Mapping):
            per_key.update(value)
        elif value is not None:
            self._lr_value = check_rate("set_learning_rate()", value)
            if self._lr is not None:
                self._lr = rate_array(self._lr._backend, value)
        per_key.update(kwargs)
        for key, rate in per_key.items():
            if key not in self.state:
                raise KeyError(f"set_learning_rate(): the optimizer has no parameter {key!r}")
            value_, promoted, _old, extra = self.state[key]
            if rate is None:
                self._lr_values.pop(key, None)
                self.state[key] = (value_, promoted, None, extra)
            else:
                self._lr_values[key] = check_rate(f"set_learning_rate({key}=...)", rate)
                self.state[key] = (value_, promoted, rate_array(first(value_)._backend, rate), extra)

    def learning_rate(self, key: str | None = None):
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

    # -- the step -----------------------------------------------------------
    def step(self, *, eval: bool = True, grad_scale=None, active=None) -> None:  # noqa: A002  (Dr.Jit's name)
        """Take one step using the current gradients of the parameters.

        Each parameter's gradient is read (and multiplied by ``grad_scale``), the
        optimizer's rule computes the new value and state, and the parameter becomes a
        new grad-enabled leaf (gradient cleared).

        A step of one of the optimizers of :mod:`frostjit.opt` (not a subclass) that follows a
        backward pass through a frozen function's result (its recorded derivative replayed:
        the training loop ``loss = frozen_forward(params); fj.backward(loss); opt.step()``) is
        itself replayed from a recording (:func:`frostjit.freeze`, one per layout of the
        optimizer: its parameters' types and widths, hyper-parameters and state), instead of
        traced again: the same kernels on the same inputs, without Python per operation
        (a difference from Dr.Jit, whose frozen outputs carry no gradients).  Only with
        ``eval=True``, no ``grad_scale`` or ``active``, and nothing scheduled or queued
        outside the optimizer (which the step would evaluate with its own work).

        Parameters
        ----------
        eval : bool
            Evaluate the new parameters and state now (a few kernels); ``False`` leaves
            them pending, to fuse with later work.
        grad_scale : float or array, optional
            Multiply every gradient by this (automatic mixed precision: :class:`GradScaler`).
        active : Bool array, optional
            A one-element mask: ``Bool(False)`` leaves the parameters and their state as
            they are (the step count of Adam still advances, as in Dr.Jit).
        """
        if ad_scopes.replayed_backward:
            ad_scopes.replayed_backward = False
            if eval and grad_scale is None and active is None and type(self) in _REPLAYABLE and self.state \
                    and not jit_state.scheduled and not jit_state.side_effects:
                _replayed_step()(self)
                return
        self._update(grad_scale, active)
        if eval and self.state:
            _eval()

    def _update(self, grad_scale, active) -> None:
        """The step (:meth:`step`) with its results scheduled, not evaluated."""
        if self._lr is None and self.state:
            # (the state was assigned as a whole, e.g. restored from a copy: no parameter was
            # registered through __setitem__, which makes the default rate's array)
            self._lr = rate_array(first(next(iter(self.state.values()))[0])._backend, self._lr_value)
        for key, (value, promoted, lr, extra) in list(self.state.items()):
            g = elementwise(ad.grad(value))
            if grad_scale is not None:
                g = g * grad_scale
            detached = elementwise(ad.detach(value))
            new_value, new_extra = self._step(detached, g, self._lr if lr is None else lr, extra)
            mask = None
            if self.mask_updates:
                mask = g == 0
            if active is not None:
                mask = ~active if mask is None else mask | ~active
            if mask is not None:
                new_value = fm.select(mask, detached, new_value)
                new_extra = self._select(mask, extra, new_extra)
            if type(new_value) is not type(value):
                new_value = type(value)(new_value)
            ad.enable_grad(new_value)
            entry = (new_value, promoted, lr, new_extra)
            _schedule(entry)
            self.state[key] = entry

    # -- to be provided by subclasses ---------------------------------------
    def _step(self, value, g, lr, extra):
        """``(new value, new extra)`` from the detached ``value``, gradient ``g``, the opaque
        ``Float64`` learning-rate array ``lr`` and the state ``extra``."""
        raise NotImplementedError

    def _reset(self, value):
        """The initial optimizer-specific state of parameter ``value``."""
        raise NotImplementedError

    def _select(self, mask, extra, new_extra):
        """The state where ``mask`` holds: the old one (an update that did not happen)."""
        return fm.select(mask, extra, new_extra)

    # -- printing -------------------------------------------------------------
    def _describe(self) -> list:
        """``(name, formatted value)`` of the hyper-parameters shown by ``repr``."""
        return []

    def __repr__(self) -> str:
        rates = {"default": self._lr_value, **self._lr_values}
        count = sum(width(v[0]) * (len(v[0]) if isinstance(v[0], VectorBase) else 1) for v in self.state.values())
        lines = [f"  parameters = {list(self.state)}", f"  total_count = {count}", f"  lr = {rates}"]
        lines += [f"  {name} = {text}" for name, text in self._describe()]
        return f"{type(self).__name__}[\n" + ",\n".join(lines) + "\n]"

    # -- saving and restoring -------------------------------------------------
    def __getstate__(self) -> dict:
        """The optimizer as plain Python and NumPy values (``pickle``, ``copy.deepcopy``).

        Arrays become ``(type, NumPy copy)`` records; :meth:`__setstate__` rebuilds them,
        parameters as new grad-enabled leaves.
        """
        return {k: _storable(v) for k, v in self.__dict__.items()}

    def __setstate__(self, stored: dict) -> None:
        self.__dict__.update({k: _restored(v) for k, v in stored.items()})
        for value, *_ in self.state.values():
            ad.enable_grad(value)

    # An optimizer is a PyTree (frostjit.tree's traversal protocol) of exactly these attributes,
    # for fj.eval, AD and frozen functions alike: the hyper-parameters folded into the kernels
    # are Python values (a change re-traces, as it must), the learning rates evaluated arrays
    # (inputs like the parameters, so a new rate never re-traces).  The Python copies of the
    # rates (``_lr_value``, ``_lr_values``) are not walked.  Subclasses add their own
    # hyper-parameters in front.  (Both the tree's walkers and freeze read and write the declared
    # attributes themselves.)
    __fj_traverse_attrs__ = ("mask_updates", "_lr", "state")


class _Stored:
    """An array or static vector saved as NumPy data (see :meth:`Optimizer.__getstate__`)."""

    __slots__ = ("cls", "data")

    def __init__(self, cls, data):
        self.cls, self.data = cls, data

    def __getstate__(self):
        return (self.cls, self.data)

    def __setstate__(self, s):
        self.cls, self.data = s


def _storable(o):
    if getattr(type(o), "IsTensor", False):
        return _Stored(type(o), o.numpy())         # (its shape is the NumPy array's)
    if isinstance(o, ArrayBase):
        return _Stored(type(o), o.numpy())
    if isinstance(o, VectorBase):
        return _Stored(type(o), [c.numpy() for c in o])
    if type(o) in (tuple, list):
        return type(o)(_storable(v) for v in o)
    if type(o) is dict:
        return {k: _storable(v) for k, v in o.items()}
    return o


def _restored(o):
    if isinstance(o, _Stored):
        if issubclass(o.cls, VectorBase):
            return o.cls._from_components([o.cls._elem(d) for d in o.data])
        return o.cls(o.data)
    if type(o) in (tuple, list):
        return type(o)(_restored(v) for v in o)
    if type(o) is dict:
        return {k: _restored(v) for k, v in o.items()}
    return o


# The optimizers whose step is replayed after a replayed backward pass (Optimizer.step): their
# rules are JIT operations only (a subclass may keep Python state that a replay would not update).
_REPLAYABLE: set = set()
_replayed = []


def _step_body(opt) -> None:
    """What a replayed step records: ``opt.step()`` itself."""
    opt._update(None, None)
    _eval()


def _replayed_step():
    """The frozen function of :func:`_step_body` (made on first use; one for every optimizer: its
    layout key holds the optimizer's type, hyper-parameters, parameters and state)."""
    if not _replayed:
        from ..freeze import freeze
        # (bounded: a program with many optimizers keeps the recordings of the recent layouts;
        # no warning about re-tracing, which the user did not ask for)
        _replayed.append(freeze(_step_body, limit=32, warn_after=1 << 30))
    return _replayed[0]
