"""Python numbers as parameters (issue 9): an int or float input whose value changes becomes a
kernel parameter after one re-trace; one that steers Python control flow or a size keeps its
exact value.  Every call is checked against a plain call (checking mode, tests/freeze/conftest.py)."""
import collections
import logging

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, UInt32
from frostjit.llvm.ad import Float as FloatAD

from freeze_helpers import ramp, same

WIDTHS = (1, 7, 1000, 100003)


def lr_at(i):
    return 0.1 * 0.97 ** i          # a learning-rate schedule: a new float every step


@pytest.mark.parametrize("n", WIDTHS)
def test_learning_rate_schedule_records_at_most_twice(n):
    def step(w, lr):
        g = 2 * (w - 3)             # gradient of sum((w - 3)^2)
        return w - lr * g, fj.sum(fj.square(w - 3))
    fz = fj.freeze(step)
    w_f = w_p = ramp(n)
    for i in range(12):
        w_f, loss_f = fz(w_f, lr_at(i))
        w_p, loss_p = step(w_p, lr_at(i))
        assert same(w_f, w_p) and same(loss_f, loss_p), i
    assert fz.n_recordings <= 2


@pytest.mark.parametrize("where", ["kwarg", "attribute", "dict", "list", "global", "closure", "method-self"])
def test_parameter_wherever_it_sits(where):
    class Opt:
        def __init__(self):
            self.lr = 0.1

        def step(self, x):
            return x - self.lr * x
    def closure(x):
        return x - closure_lr * x
    closure_lr = 0.1
    opt = Opt()
    cases = {
        "kwarg": (lambda x, lr=None: x - lr * x, lambda lr: ((), {"lr": lr})),
        "attribute": (lambda x, o: x - o.lr * x, lambda lr: ((opt,), {})),
        "dict": (lambda x, d: x - d["lr"] * x, lambda lr: (({"lr": lr},), {})),
        "list": (lambda x, ps: x - ps[1] * x, lambda lr: (([1.0, lr],), {})),
        "global": (_global_step, lambda lr: ((), {})),
        "closure": (closure, lambda lr: ((), {})),
        "method-self": (None, lambda lr: ((), {})),
    }
    fn, make = cases[where]
    fz = fj.freeze(opt.step) if where == "method-self" else fj.freeze(fn)
    plain = opt.step if where == "method-self" else fn
    for i in range(10):
        lr = lr_at(i)
        opt.lr = lr
        globals()["LR"] = lr
        closure_lr = lr  # noqa: F841 (rebinds the closure cell)
        args, kwargs = make(lr)
        ref = plain(ramp(9), *args, **kwargs)
        args, kwargs = make(lr)
        got = fz(ramp(9), *args, **kwargs)
        assert same(got, ref), (where, i)
    assert fz.n_recordings <= 2, where


LR = 0.1


def _global_step(x):
    return x - LR * x


@pytest.mark.parametrize("kind", [float, np.float32])      # (np.float32: a parameter since r12)
def test_ad_training_loop_with_a_float_learning_rate(kind):
    @fj.freeze
    def step(p, lr):
        loss = fj.sum(fj.square(p - 3))
        fj.backward(loss)
        q = fj.detach(p) - lr * fj.grad(p)
        fj.enable_grad(q)
        return q, fj.detach(loss)
    p1 = FloatAD(np.arange(5, dtype=np.float32))
    p2 = FloatAD(np.arange(5, dtype=np.float32))
    fj.enable_grad(p1, p2)
    for i in range(10):
        p1, l1 = step(p1, kind(lr_at(i)))
        p2, l2 = step.f(p2, kind(lr_at(i)))
        assert same(fj.detach(p1), fj.detach(p2)) and same(l1, l2), i
    assert step.n_recordings <= 3      # (the first call's literal-free inputs, then the parameter)


def test_number_in_control_flow_is_guarded():
    def fn(x, k):
        return x * k if k > 0.5 else x - k
    fz = fj.freeze(fn)
    for k in (0.1, 0.2, 0.9, 0.3, 2.0, 0.4, 0.7):
        for n in (1, 7, 1000):
            assert same(fz(ramp(n), k), fn(ramp(n), k)), (k, n)
    # value, then a parameter with each branch (guarded), per layout (size 1, wide)
    assert fz.n_recordings <= 6


def test_number_used_as_an_array_size_stays_symbolic():
    def fn(x, n):
        return x + fj.sum(fj.arange(Float, n))
    fz = fj.freeze(fn)
    for n in (3, 4, 5, 4, 3, 100):
        assert same(fz(ramp(7), n), fn(ramp(7), n)), n
    assert fz.n_recordings == 2         # the size follows the parameter, like a width


def test_number_steering_python_keeps_its_value(caplog):
    def fn(x, n):
        for _ in range(n):          # a Python loop count: the recording needs the exact value
            x = x * 2
        return x
    fz = fj.freeze(fn)
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        for n in (3, 4, 5, 4, 3):
            assert same(fz(ramp(7), n), fn(ramp(7), n)), n
    assert "keyed by value again" in caplog.text
    assert fz.n_recordings == 4         # 3, then 4 (parameter, guarded exactly), then 4 and 5 by value


def test_type_of_a_parameter_is_its_type():
    def fn(x, k):
        return x * k, type(k).__name__
    fz = fj.freeze(fn)
    for k in (1.5, 2.5, 3.5, 2.5):
        got, ref = fz(ramp(4), k), fn(ramp(4), k)
        assert same(got[0], ref[0]) and got[1] == ref[1] == "float"


def test_number_returned_and_written_back():
    class State:
        def __init__(self):
            self.t = 0.0

    def fn(s, x, dt):
        s.t = s.t + dt
        return x * s.t, s.t
    fz = fj.freeze(fn)
    a, b = State(), State()
    for dt in (0.5, 0.25, 0.125, 1.0):
        ra, rb = fz(a, ramp(3), dt), fn(b, ramp(3), dt)
        assert same(ra[0], rb[0]) and ra[1] == rb[1] and type(ra[1]) is float and a.t == b.t
        assert type(a.t) is float
    assert fz.n_recordings <= 3


def test_number_inside_a_tuple_becomes_a_parameter():
    # (r13: the tuple is rebuilt with the symbol in it while the function records; before, each
    # new value traced again)
    fz = fj.freeze(lambda x, ks: x * ks[0] + ks[1])
    for k in (1.0, 2.0, 3.0, 4.0):
        assert same(fz(ramp(5), (k, 0.5)), ramp(5) * k + 0.5)
    assert fz.n_recordings == 2


def test_number_inside_a_namedtuple_becomes_a_parameter():
    # Regression (r11): a changed number inside a namedtuple (a tuple subclass) was made a
    # parameter, and substituting it raised "'Scale' object does not support item assignment";
    # r13 rebuilds it (tuple.__new__), and the caller's namedtuple is left as it was.
    Scale = collections.namedtuple("Scale", "k x")
    fz = fj.freeze(lambda s: s.x * s.k)
    for k in (1.0, 2.0, 3.0, 4.0):
        s = Scale(k, ramp(5))
        assert same(fz(s), ramp(5) * k)
        assert type(s) is Scale and s.k == k
    assert fz.n_recordings == 2


class _Indirect:
    """Protocol keys that are not attributes, no ``__fj_assign__``: a number in it cannot be
    replaced by a parameter (``setattr`` would not reach it)."""

    def __init__(self, k):
        self.store = {"k": k}

    def __fj_traverse__(self):
        return {"scale": self.store["k"]}


def test_number_a_protocol_object_cannot_write_back_stays_a_value():
    fz = fj.freeze(lambda o, x: x * o.store["k"])
    for k in (1.0, 2.0, 3.0):
        assert same(fz(_Indirect(k), ramp(5)), ramp(5) * k)
    assert fz.n_recordings == 3


def test_int_step_counter_parameter():
    fz = fj.freeze(lambda x, t: x + t * 2)
    for t in range(8):
        assert same(fz(UInt32(1, 2, 3), t), UInt32(1, 2, 3) + t * 2)
    assert fz.n_recordings == 2


@pytest.mark.parametrize("use", [
    lambda p: float(__import__("decimal").Decimal(p) * 2),
    lambda p: float(len(__import__("json").dumps(p))),
], ids=["Decimal", "json.dumps"])
def test_a_parameter_given_to_c_code_that_needs_a_real_number(use):
    # The symbolic number is not a float to C code that checks the exact type: the recording
    # with parameters raised TypeError where the plain call does not.  It is traced again with
    # the numbers as values (a recording exception with parameters is not the plain call's).
    def fn(x, p):
        return x * use(p)
    fz = fj.freeze(fn)
    for n in (1, 7, 1000):
        for p in (1.0, 2.0, 2.5, 3.25):
            assert same(fz(ramp(n), p), fn(ramp(n), p)), (n, p)


def test_an_exception_of_the_plain_call_with_a_parameter_is_the_plain_one():
    def fn(x, p):
        if p > 2.0:
            raise KeyError(p)
        return x * p
    fz = fj.freeze(fn)
    for p in (1.0, 2.0):
        assert same(fz(ramp(7), p), fn(ramp(7), p))
    with pytest.raises(KeyError) as e:
        fz(ramp(7), 3.0)
    assert e.value.args == (3.0,) and type(e.value.args[0]) is float
