"""A literal input whose value changes on every call (a learning rate passed as ``Float(lr)``,
wherever it sits in the inputs) is made opaque after its first change: at most one re-trace,
then replays for every value, with the results of plain calls."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, Float64, Array3f
from frostjit.llvm.ad import Float as FloatAD

from freeze_helpers import ramp, same


class State:
    pass


def lr_at(i):
    return 0.1 * 0.99 ** i


LR = None


def _global_lr(x):
    return x - LR * x


@pytest.mark.parametrize("where", ["arg", "kwarg", "dict", "list", "attr", "global", "closure", "vector",
                                   "float64", "sized"])
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_changing_literal_learning_rate_stops_retracing(where, n):
    global LR
    cell = [None]

    def closure(x):
        return x - cell[0] * x

    fns = {
        "arg": (lambda x, lr: x - lr * x, lambda x, lr: ((x, lr), {})),
        "kwarg": (lambda x, lr=None: x - lr * x, lambda x, lr: ((x,), {"lr": lr})),
        "dict": (lambda x, d: x - d["lr"] * x, lambda x, lr: ((x, {"lr": lr}), {})),
        "list": (lambda x, ps: x - ps[1] * x + ps[0], lambda x, lr: ((x, [Float(1.0), lr]), {})),
        "attr": (lambda x, s: x - s.lr * x, lambda x, lr: ((x, _state(lr)), {})),     # (one object)
        "global": (_global_lr, lambda x, lr: ((x,), {})),
        "closure": (closure, lambda x, lr: ((x,), {})),
        "vector": (lambda x, v: x - v.y * x, lambda x, lr: ((x, Array3f(1, lr, 2)), {})),
        "float64": (lambda x, lr: x - Float(lr) * x, lambda x, lr: ((x, Float64(lr.numpy()[0])), {})),
        "sized": (lambda x, lr: x - lr * x, lambda x, lr: ((x, fj.full(Float, lr.numpy()[0], n)), {})),
    }
    fn, make = fns[where]
    fz = fj.freeze(fn)
    for i in range(20):
        lr = Float(lr_at(i))
        LR = cell[0] = lr
        args, kwargs = make(ramp(n), lr)
        ref = fn(*args, **kwargs)
        args, kwargs = make(ramp(n), lr)
        got = fz(*args, **kwargs)
        assert same(got, ref), (where, i)
    assert fz.n_recordings <= 2, where


_STATE = State()


def _state(lr):
    _STATE.lr = lr
    return _STATE


def test_learning_rate_of_an_optimizer_like_state():
    # parameters (grad-enabled) and a literal learning rate in one object, as an optimizer holds them
    class Opt:
        def __init__(self, p):
            self.p, self.lr = p, Float(0.1)

    @fj.freeze
    def step(o):
        loss = fj.sum(fj.square(o.p - 3))
        fj.backward(loss)
        g = fj.grad(o.p)
        p = fj.detach(o.p) - FloatAD(o.lr) * g
        fj.enable_grad(p)
        o.p = p
        return loss

    def plain(o):
        return step.f(o)
    o1, o2 = Opt(FloatAD(np.arange(5, dtype=np.float32))), Opt(FloatAD(np.arange(5, dtype=np.float32)))
    fj.enable_grad(o1.p, o2.p)
    for i in range(15):
        o1.lr, o2.lr = Float(lr_at(i)), Float(lr_at(i))
        assert same(step(o1), plain(o2)) and same(fj.detach(o1.p), fj.detach(o2.p)), i
    assert step.n_recordings <= 3
