"""Special methods replaced on a class after recording (``K.__call__ = other``,
``K.__mul__ = ...``): Python looks them up on the object's class in C (``o(x)``, ``o * x``,
``o[k]``, ``len(o)``, ``with o``), where no attribute chain of the read set sees the lookup.  Each
was a stale replay (session r11): the read set now guards the class dicts along the MRO for
every dunder name under which the running method sits in a user class."""
import pytest

import frostjit as fj

from freeze_helpers import ramp, same


def _use_call(o, x):
    return o(x)


def _use_mul(o, x):
    return o * x


def _use_getitem(o, x):
    return x * o[0]


def _use_len(o, x):
    return x * len(o)


def _use_bool(o, x):
    return x * (2.0 if o else 3.0)


def _use_with(o, x):
    with o as v:
        return x * v


CASES = {
    "__call__": (lambda s, x: x * 2, lambda s, x: x * 3, _use_call),
    "__mul__": (lambda s, x: x * 2, lambda s, x: x * 3, _use_mul),
    "__getitem__": (lambda s, k: 2.0, lambda s, k: 3.0, _use_getitem),
    "__len__": (lambda s: 2, lambda s: 3, _use_len),
    "__bool__": (lambda s: True, lambda s: False, _use_bool),
    "__enter__": (lambda s: 2.0, lambda s: 3.0, _use_with),
}


def _new_class(name):
    a, b, use = CASES[name]

    class Base:
        def __exit__(self, *exc):
            return False
    K = type("K", (Base,), {name: a})
    return K, (a, b), use


@pytest.mark.parametrize("as_input", [False, True], ids=["hidden", "input"])
@pytest.mark.parametrize("name", list(CASES))
def test_special_method_replaced_on_the_class(name, as_input):
    K, methods, use = _new_class(name)
    o = K()
    frozen = fj.freeze((lambda x, o: use(o, x)) if as_input else (lambda x: use(o, x)))
    for n in (1, 7, 3):
        for i in range(4):
            setattr(K, name, methods[i % 2])
            x = ramp(n, 1)
            got = frozen(x, o) if as_input else frozen(x)
            assert same(got, use(o, x)), (n, i)


def test_special_method_defined_on_a_base_then_overridden():
    K, methods, use = _new_class("__call__")
    Sub = type("Sub", (K,), {})
    o = Sub()
    frozen = fj.freeze(lambda x: o(x))
    x = ramp(7, 1)
    assert same(frozen(x), x * 2)
    Sub.__call__ = lambda s, x: x + 100     # shadows the base's method
    assert same(frozen(x), x + 100)
    del Sub.__call__
    assert same(frozen(x), x * 2)


@pytest.mark.no_freeze_check
def test_unchanged_special_methods_replay():
    K, methods, use = _new_class("__call__")
    o = K()
    frozen = fj.freeze(lambda x: o(x))
    for _ in range(4):
        frozen(ramp(7))
    assert frozen.n_recordings == 1
