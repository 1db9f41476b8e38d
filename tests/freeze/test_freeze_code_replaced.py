"""The code a frozen callable runs first, replaced after recording (``f.__code__ = ...``, as
IPython's autoreload does when a module is edited; ``Cls.__call__ = ...``; a callable object's
class swapped): every later call must run the new code, never replay the old recording.  Each
case was a stale replay before the frozen function watched its own code (it watched only the
code of the helpers it called)."""
import functools

import pytest

import frostjit as fj

from freeze_helpers import ramp, same

WIDTHS = (1, 7, 0, 3)
SCALE = 3.0


def _double(x):
    return x * 2


def _quintuple(x):
    return x * 5


def _scaled(x):
    return x * SCALE        # a global the first code never read


class _Callable:
    def __call__(self, x):
        return x * 2


class _Other:
    def __call__(self, x):
        return x + 100


class _Model:
    def __init__(self):
        self.k = 2.0

    def method(self, x):
        return x * self.k


def _kinds():
    """(name, make() -> (callable to freeze, plain twin, replace(i)))"""
    def function():
        def f(x):
            return x * 2
        codes = [_double.__code__, _quintuple.__code__, _scaled.__code__]
        return f, f, lambda i: setattr(f, "__code__", codes[i % 3])

    def bound_method():
        class M(_Model):
            def method(self, x):
                return x * self.k
        m = M()
        codes = [M.method.__code__, (lambda self, x: x * self.k * 10).__code__]
        return m.method, m.method, lambda i: setattr(M.method, "__code__", codes[i % 2])

    def decorated_method():
        class M(_Model):
            @fj.freeze(warn_after=100)      # (every replacement drops the recordings)
            def method(self, x):
                return x * self.k
        m = M()
        plain = M.method.f
        codes = [plain.__code__, (lambda self, x: x - self.k).__code__]
        return (lambda x: m.method(x)), (lambda x: plain(m, x)), \
            lambda i: setattr(plain, "__code__", codes[i % 2])

    def partial():
        def g(x, k):
            return x * k
        codes = [g.__code__, (lambda x, k: x + k).__code__]
        p = functools.partial(g, k=2.0)
        return p, p, lambda i: setattr(g, "__code__", codes[i % 2])

    def callable_object_call():
        class C(_Callable):
            pass
        calls = [_Callable.__call__, _Other.__call__]
        o = C()
        return o, o, lambda i: setattr(C, "__call__", calls[i % 2])

    def callable_object_class():
        o = _Callable()
        return o, o, lambda i: setattr(o, "__class__", (_Callable, _Other)[i % 2])

    return [function, bound_method, decorated_method, partial, callable_object_call, callable_object_class]


@pytest.mark.parametrize("make", _kinds(), ids=lambda m: m.__name__)
def test_replaced_code_runs(make):
    global SCALE
    f, plain, replace = make()
    frozen = fj.freeze(f, warn_after=100)     # (every replacement drops the recordings)
    for n in WIDTHS:
        for i in range(4):
            replace(i)
            SCALE = float(i + 3)
            x = ramp(n, 1)
            assert same(frozen(x), plain(x)), (n, i)


def test_code_replaced_inside_an_outer_frozen_function():
    # the inner frozen function is called plainly by the outer one's recording (its code is a
    # helper's there) and by itself at the outer replay's plain twin
    def inner(x):
        return x * 2
    frozen_inner = fj.freeze(inner)
    outer = fj.freeze(lambda x: frozen_inner(x) + 1)
    codes = [inner.__code__, _quintuple.__code__]
    for i in range(4):
        inner.__code__ = codes[i % 2]
        x = ramp(7, 1)
        ref = inner(x) + 1
        assert same(outer(x), ref), i
        assert same(frozen_inner(x), inner(x)), i


@pytest.mark.no_freeze_check
def test_unreplaced_code_still_replays():
    def f(x):
        return x * 2
    frozen = fj.freeze(f)
    for n in (1, 7, 7, 3):
        frozen(ramp(n))
    assert frozen.n_recordings == 2      # size 1, then wide
    f.__code__ = _quintuple.__code__
    assert same(frozen(ramp(7, 1)), ramp(7, 1) * 5)
    assert frozen.n_recordings == 3
    for n in (7, 3, 9):
        frozen(ramp(n))
    assert frozen.n_recordings == 3
