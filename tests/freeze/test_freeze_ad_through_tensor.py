"""Gradients *through* a frozen function that returns a tensor (freeze/through.py): the tensor
is a protocol object rebuilt by ``__fj_construct__`` (a ``ConstructedOut``), whose grad-enabled
array the hub must find again.  Before r10 such calls ran the plain function with a
``FreezeWarning`` (every tensor reduction with an axis returns a tensor); now they replay, and
the gradients equal the plain call's (checking mode is on in this folder)."""
import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import TensorXf

BODIES = {
    "sum_axis1": lambda t: fj.sum(t * t, axis=1),
    "sum_axis0": lambda t: fj.sum(t * t, axis=0),
    "sum_all": lambda t: fj.sum(t * t, axis=None),
    "prod_axis1": lambda t: fj.prod(t * 0.5, axis=1),
    "mean_axis1": lambda t: fj.mean(fj.sin(t), axis=1),
    "max_axis1": lambda t: fj.max(t * t, axis=1),
    "elementwise": lambda t: t * t + 1,
    "pair": lambda t: (fj.sum(t, axis=1), t * 2),
}


def _grads(fn, a):
    t = TensorXf(a)
    fj.enable_grad(t)
    out = fn(t)
    fj.backward(out[0] if isinstance(out, tuple) else out)
    return fj.grad(t).numpy()


@pytest.mark.parametrize("shape", [(3, 4), (5, 19)])
@pytest.mark.parametrize("name", list(BODIES))
def test_gradients_through_a_returned_tensor_replay(name, shape):
    fn = BODIES[name]
    frozen = fj.freeze(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)        # no fallback to plain calls
        for i in range(3):
            a = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 7 - 2 + i).astype(np.float32)
            got, want = _grads(frozen, a), _grads(fn, a)
            assert np.array_equal(got, want, equal_nan=True), (name, shape, i)
    assert frozen.n_recordings == 1
