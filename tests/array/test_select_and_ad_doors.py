"""``apply``'s select door (frostjit/array/flat.py ``apply_select``) and its same-type door on
grad-enabled operands (``_apply_same_type``, which calls the AD hook as the general path does)
against the general path: same class, type, values and gradients (reverse and forward), or the
same exception, for conditions and operands of several types, sizes (a size-1 array broadcasts,
others raise) and Python numbers at the bounds of integer types."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as TA
from frostjit.array import flat
from frostjit.functions import math as fj_math
from test_apply_same_type_door import _outcome     # (class, dtype, value bytes) or the exception class


def _closed_select(monkeypatch):
    """The select door closed: in ``apply`` and in ``fj.select``'s shortcut to it."""
    monkeypatch.setattr(flat, "apply_select", lambda *operands: None)
    monkeypatch.setattr(fj_math, "apply_select", lambda *operands: None)


def _operand(kind, n, rng):
    """An operand of ``kind``: an array class (values of ``n`` lanes) or a Python number as is."""
    if not isinstance(kind, type):
        return kind
    if kind in (T.Bool,):
        return kind(rng.integers(0, 2, n).astype(bool).tolist())
    if kind in (T.Float, T.Float64, T.Float16, TA.Float):
        return kind(rng.normal(size=n).tolist())
    return kind(rng.integers(0, 50, n).astype(np.int64).tolist())


KINDS = [T.Float, T.Float64, T.Float16, T.Int, T.UInt, T.Int64, T.UInt64, T.Bool, TA.Float,
         0, 1, -1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 64, -(2 ** 63) - 1, 0.5, -0.0, True, False]


@settings(max_examples=80, deadline=None)
@given(a=st.sampled_from(KINDS), b=st.sampled_from(KINDS), sizes=st.sampled_from([(3, 3, 3), (1, 3, 3),
       (3, 1, 3), (3, 3, 1), (1, 1, 1), (2, 3, 3), (3, 3, 4), (0, 3, 3)]), seed=st.integers(0, 3))
def test_select_door_matches_the_general_path(a, b, sizes, seed):
    rng = np.random.default_rng(seed)
    c = T.Bool(rng.integers(0, 2, sizes[0]).astype(bool).tolist())
    x, y = _operand(a, sizes[1], rng), _operand(b, sizes[2], rng)
    fast = _outcome(lambda: fj.select(c, x, y))
    with pytest.MonkeyPatch.context() as mp:
        _closed_select(mp)
        general = _outcome(lambda: fj.select(c, x, y))
    assert fast == general


def _grads(fn, closed: bool, mode: str):
    """Value and gradient (``mode``: reverse or forward) of ``fn`` of two grad-enabled arrays,
    with the doors open or closed."""
    with pytest.MonkeyPatch.context() as mp:
        if closed:
            _closed_select(mp)
            mp.setattr(flat, "_apply_same_type", lambda rule, cls, operands: None)
        x = TA.Float(0.5, -1.25, 2.0, 3.5)
        w = TA.Float(1.5, 0.25, -2.0, 0.75)
        fj.enable_grad(x, w)
        y = fn(x, w)
        if mode == "reverse":
            fj.backward(fj.sum(y))
            g = (fj.grad(x), fj.grad(w))
        else:
            fj.set_grad(x, TA.Float(1, 2, 3, 4))
            fj.set_grad(w, TA.Float(-1, 0.5, 1, 2))
            fj.forward_to(y)
            g = (fj.grad(y),)
        return tuple(np.asarray(v.numpy()).tobytes() for v in (y,) + g)


PROGRAMS = [
    lambda x, w: x * w + 2.0,
    lambda x, w: fj.fma(x, w, x) - w / 3,
    lambda x, w: fj.select(x > w, x * x, w),
    lambda x, w: fj.select(x > 0, 1.0, w * x),
    lambda x, w: fj.maximum(x, w) * fj.minimum(x, 1),
    lambda x, w: fj.sqrt(fj.abs(x)) + fj.floor(w) * x,
    lambda x, w: fj.select(w < 0, x, 0) / (w + 5),
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_grad_enabled_operands_differentiate_as_the_general_path(k, mode):
    assert _grads(PROGRAMS[k], False, mode) == _grads(PROGRAMS[k], True, mode)
