"""Guards on the Python state a recording read (issue 9): each case replayed a stale result
before; now every call equals the plain call, at widths 1, 7, 1000 and 100003, while the state
changes between calls."""
import abc
import collections
import dataclasses
import functools
import logging
import random
import threading
import time
import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.dispatch import Dispatcher
from frostjit.llvm import Float

import guard_settings
from freeze_helpers import ramp, same

WIDTHS = (1, 7, 1000, 100003)


def agree(fn, frozen, mutations, args=lambda n: (ramp(n, 1),), widths=WIDTHS):
    """For each width and each mutation of hidden state: frozen == plain."""
    for n in widths:
        for mutate in mutations:
            mutate()
            ref = fn(*args(n))
            got = frozen(*args(n))
            assert same(got, ref), (n, mutate)


def setter(obj, name, *values):
    """Mutations that set ``obj.name`` to each value in turn."""
    return [functools.partial(setattr, obj, name, v) for v in values]


# --- 1. a class attribute read through an argument -------------------------------------------
class Cfg:
    scale = 2.0


def test_class_attribute_read_through_an_argument():
    def fn(x, cfg):
        return x * cfg.scale
    fz = fj.freeze(fn)
    cfg = Cfg()
    agree(fn, fz, setter(Cfg, "scale", 2.0, 3.0, 3.0, -1.5), args=lambda n: (ramp(n, 1), cfg))
    Cfg.scale = 2.0
    # one recording per distinct value (kept beside each other) and layout (size 1, wide)
    assert fz.n_recordings == 6


def test_failed_guard_names_the_attribute_and_the_line(caplog):
    class Model:
        scale = 2.0
    fz = fj.freeze(lambda x, m: x * m.scale)
    m = Model()
    fz(ramp(3), m)
    Model.scale = 3.0
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        assert same(fz(ramp(3), m), ramp(3) * 3.0)
    text = caplog.text
    assert "Model.scale read at test_freeze_guards.py:" in text and "changed from 2.0 to 3.0" in text


def test_warn_after_names_the_failed_guard():
    class K:
        v = 0.0
    fz = fj.freeze(lambda x: x + K.v, warn_after=1)
    with pytest.warns(fj.FreezeWarning, match=r"K\.v read at test_freeze_guards\.py:\d+ changed from 0\.0 to 1\.0"):
        for v in (0.0, 1.0):
            K.v = v
            fz(ramp(4))


# --- 2. a frozen bound method: the instance's attributes ---------------------------------------
class Model:
    def __init__(self):
        self.scale = 2.0
        self.bias = Float(1.0)

    def forward(self, x):
        return x * self.scale + self.bias


def test_frozen_bound_method_sees_its_instance():
    m = Model()
    fz = fj.freeze(m.forward)
    muts = setter(m, "scale", 2.0, 5.0) + setter(m, "bias", Float(1.0), Float(-3.0))
    agree(m.forward, fz, muts)


# --- 3. a functools.wraps-decorated function: the wrapped function's globals --------------------
SCALE3 = 2.0


def _decorate(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args) + 1
    return wrapper


@_decorate
def _wrapped(x):
    return x * SCALE3


def test_wrapped_function_globals():
    global SCALE3
    fz = fj.freeze(_wrapped)

    def set_scale(v):
        global SCALE3
        SCALE3 = v
    agree(_wrapped, fz, [functools.partial(set_scale, v) for v in (2.0, 4.0, 4.0, 0.5)])
    SCALE3 = 2.0


# --- 4. a global read by a helper (and by a nested frozen function) -----------------------------
def test_global_read_by_a_helper_in_another_module():
    fz = fj.freeze(lambda x: guard_settings.helper(x) * 2)
    agree(lambda x: guard_settings.helper(x) * 2, fz,
          setter(guard_settings, "scale", 2.0, 3.0) + setter(guard_settings, "offset", 1.0, 7.0))
    guard_settings.scale, guard_settings.offset = 2.0, 1.0


H4 = 1.0


def _h4(x):
    return x + H4


_inner4 = fj.freeze(_h4)


def test_global_read_by_a_nested_frozen_function():
    global H4

    def outer(x):
        return _inner4(x) * 2
    fz = fj.freeze(outer)

    def set_h(v):
        global H4
        H4 = v
    agree(outer, fz, [functools.partial(set_h, v) for v in (1.0, 2.0, -4.0)])
    H4 = 1.0


# --- 5. a mutable default argument mutated between calls ---------------------------------------
def test_mutable_default_mutated():
    def fn(x, opts={"scale": 2.0}):  # noqa: B006 (the point of the test)
        return x * opts["scale"]
    fz = fj.freeze(fn)
    agree(fn, fz, [functools.partial(fn.__defaults__[0].__setitem__, "scale", v) for v in (2.0, 3.0, 3.0)])


def test_default_argument_replaced():
    def fn(x, scale=2.0):
        return x * scale
    fz = fj.freeze(fn)
    agree(fn, fz, [functools.partial(setattr, fn, "__defaults__", (v,)) for v in (2.0, 9.0)])


def test_helper_default_argument_replaced():
    def helper(x, scale=2.0):
        return x * scale

    def fn(x):
        return helper(x) + 1
    fz = fj.freeze(fn)
    agree(fn, fz, [functools.partial(setattr, helper, "__defaults__", (v,)) for v in (2.0, 9.0)])


# --- 6. module attributes; sets, deques, bytearrays by contents ---------------------------------
def test_module_attribute():
    fz = fj.freeze(lambda x: x * guard_settings.scale)
    agree(lambda x: x * guard_settings.scale, fz, setter(guard_settings, "scale", 2.0, 3.0, 3.0))
    guard_settings.scale = 2.0


@pytest.mark.parametrize("make,mutate,use", [
    (lambda: {1.0, 2.0}, lambda c: c.add(len(c) + 5.0), lambda c: sum(sorted(c))),
    (lambda: collections.deque([1.0]), lambda c: c.append(3.0), lambda c: sum(c)),
    (lambda: bytearray(b"\x01"), lambda c: c.append(2), lambda c: float(sum(c))),
], ids=["set", "deque", "bytearray"])
def test_unhashable_builtin_argument_mutated(make, mutate, use):
    c = make()

    def fn(x, c):
        return x * use(c)
    fz = fj.freeze(fn)
    agree(fn, fz, [lambda: None, functools.partial(mutate, c), functools.partial(mutate, c)],
          args=lambda n: (ramp(n, 1), c))


# --- 7. a partial or bound method passed as an argument -------------------------------------------
def test_partial_argument_keywords():
    def scaled(x, scale):
        return x * scale

    def fn(x, p):
        return p(x) + 1
    fz = fj.freeze(fn)
    for n in WIDTHS:
        for s in (2.0, 3.0, 3.0):
            p = functools.partial(scaled, scale=s)
            assert same(fz(ramp(n), p), fn(ramp(n), p))
    p = functools.partial(scaled, scale=2.0)
    for s in (2.0, 5.0):
        p.keywords["scale"] = s
        assert same(fz(ramp(9), p), fn(ramp(9), p))


def test_bound_method_argument_instance_attributes():
    m = Model()

    def fn(x, method):
        return method(x)
    fz = fj.freeze(fn)
    agree(fn, fz, setter(m, "scale", 2.0, 4.0) + setter(m, "bias", Float(5.0)),
          args=lambda n: (ramp(n), m.forward))


# --- 8. dispatch: invoke, and ABC.register without a registration event ---------------------------
def test_dispatch_invoke_and_abc_register():
    class Marker(abc.ABC):
        pass

    class Thing:
        pass
    d = Dispatcher()

    @d
    def kind(o: object):
        return 1.0

    @d
    def kind(o: Marker):  # noqa: F811
        return 5.0
    t = Thing()

    def by_call(x):
        return x * kind(t)

    def by_invoke(x):
        return x * kind.invoke(Thing)(t)
    f1, f2 = fj.freeze(by_call), fj.freeze(by_invoke)
    for n in WIDTHS:
        assert same(f1(ramp(n)), by_call(ramp(n))) and same(f2(ramp(n)), by_invoke(ramp(n)))
    Marker.register(Thing)
    for n in WIDTHS:
        assert same(f1(ramp(n)), ramp(n) * 5.0) and same(f2(ramp(n)), ramp(n) * 5.0)


def test_dispatch_invoke_sees_a_new_method():
    d = Dispatcher()

    @d
    def g(x: object):
        return x * 2

    def fn(x):
        return g.invoke(Float)(x)
    fz = fj.freeze(fn)
    assert same(fz(ramp(5)), ramp(5) * 2)

    @d
    def g(x: Float):  # noqa: F811
        return x * 3
    for n in WIDTHS:
        assert same(fz(ramp(n)), ramp(n) * 3)


# --- 9. outputs holding arrays inside objects that are not PyTrees ---------------------------------
class Holder:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


@pytest.mark.parametrize("make,read", [
    (lambda y: (lambda: y), lambda r: r()),
    (lambda y: functools.partial(fj.maximum, y), lambda r: r(Float(0.0))),
    (lambda y: collections.deque([y, y + 1]), lambda r: r[1]),
    (lambda y: Holder(y).get, lambda r: r()),
], ids=["closure", "partial", "deque", "bound-method"])
def test_output_object_rebuilt(make, read):
    def fn(x):
        return make(x * 2)
    fz = fj.freeze(fn)
    for n in WIDTHS:
        for shift in (0, 3):
            assert same(read(fz(ramp(n, shift))), read(fn(ramp(n, shift)))), (n, shift)


def test_output_generator_falls_back():
    def fn(x):
        y = x * 2

        def gen():
            yield y
        return gen()
    fz = fj.freeze(fn)
    with pytest.warns(fj.FreezeWarning, match="generator"):
        for n in WIDTHS:
            for shift in (0, 3):
                assert same(next(fz(ramp(n, shift))), next(fn(ramp(n, shift))))


# --- 10. work done in a helper thread inside ------------------------------------------------------
def test_work_in_a_helper_thread_falls_back():
    def fn(x):
        out = []
        t = threading.Thread(target=lambda: out.append(x * 2 + 1))
        t.start()
        t.join()
        return out[0] + 1
    fz = fj.freeze(fn)
    with pytest.warns(fj.FreezeWarning, match=r"another thread \(threading\.Thread\.start at test_freeze_guards"):
        for n in WIDTHS:
            for shift in (0, 2):
                assert same(fz(ramp(n, shift)), fn(ramp(n, shift)))


# --- the same family --------------------------------------------------------------------------------
def test_monkeypatched_method():
    class Net:
        pass

    def act2(self, x):
        return x * 2

    def act5(self, x):
        return x * 5

    def fn(x, net):
        return net.act(x) + 1
    net = Net()
    fz = fj.freeze(fn)
    agree(fn, fz, [lambda: setattr(Net, "act", act2), lambda: setattr(Net, "act", act5),
                   lambda: setattr(net, "act", lambda x: x - 1), lambda: delattr(net, "act")],
          args=lambda n: (ramp(n), net))


def test_closure_cell_of_a_function_argument():
    k = 2.0

    def cb(x):
        return x * k

    def fn(x, g):
        return g(x) + 1
    fz = fj.freeze(fn)

    def set_k(v):
        nonlocal k
        k = v
    agree(fn, fz, [functools.partial(set_k, v) for v in (2.0, 3.0)], args=lambda n: (ramp(n), cb))


def test_non_field_attribute_of_a_dataclass():
    @dataclasses.dataclass
    class Params:
        w: Float

    def fn(x, p):
        return x * p.w * p.extra
    p = Params(Float(2.0))
    p.extra = 1.0
    fz = fj.freeze(fn)
    agree(fn, fz, setter(p, "extra", 1.0, 4.0), args=lambda n: (ramp(n), p))


def test_non_field_attribute_of_a_drjit_struct():
    class S:
        DRJIT_STRUCT = {"w": Float}

        def __init__(self):
            self.w = Float(2.0)
            self.extra = 1.0

    def fn(x, s):
        return x * s.w + s.extra
    s = S()
    fz = fj.freeze(fn)
    agree(fn, fz, setter(s, "extra", 1.0, -2.0), args=lambda n: (ramp(n), s))


GX = 2.0


def test_globals_subscript():
    global GX

    def fn(x):
        return x * globals()["GX"]
    fz = fj.freeze(fn)

    def set_gx(v):
        global GX
        GX = v
    agree(fn, fz, [functools.partial(set_gx, v) for v in (2.0, 6.0)])
    GX = 2.0


def test_frozen_callable_object():
    class Scaler:
        def __init__(self):
            self.k = 2.0

        def __call__(self, x):
            return x * self.k
    s = Scaler()
    fz = fj.freeze(s)
    agree(s, fz, setter(s, "k", 2.0, 3.0))


def test_frozen_partial():
    def scaled(x, k):
        return x * k
    p = functools.partial(scaled, k=2.0)
    fz = fj.freeze(p)
    agree(p, fz, [functools.partial(p.keywords.__setitem__, "k", v) for v in (2.0, 7.0)])


def test_numpy_input_contents_read_in_python():
    def fn(x, a):
        return x * float(a.sum()) if a[0] > 0 else x - 1
    fz = fj.freeze(fn)
    a = np.ones(3, dtype=np.float32)
    agree(fn, fz, [functools.partial(a.fill, v) for v in (1.0, 2.0, -1.0)], args=lambda n: (ramp(n), a))


def test_hidden_numpy_array_read():
    table = np.array([1.0, 2.0], dtype=np.float32)

    def fn(x):
        return x * float(table[1])
    fz = fj.freeze(fn)
    agree(fn, fz, [functools.partial(table.__setitem__, 1, v) for v in (2.0, 8.0)])


@pytest.mark.parametrize("source,what", [
    (lambda: random.random(), "random.Random.random"),
    (lambda: float(np.random.rand()), "numpy.random"),
    (lambda: time.perf_counter() * 0 + 1.0, "time.perf_counter"),
], ids=["random", "numpy.random", "time"])
def test_randomness_and_clocks_fall_back(source, what):
    def fn(x):
        return x + source()
    fz = fj.freeze(fn)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in (1, 7):
            for _ in range(3):
                random.seed(n)
                np.random.seed(n)
                ref = fn(ramp(n))
                random.seed(n)
                np.random.seed(n)
                got = fz(ramp(n))
                if what != "time.perf_counter":
                    assert same(got, ref)
    msgs = [str(m.message) for m in w if issubclass(m.category, fj.FreezeWarning)]
    # one warning per key (size 1 and wide), each naming the call and the line
    assert len(msgs) == 2 and all(what in m and "test_freeze_guards.py" in m for m in msgs), msgs
    assert fz.n_cached_recordings == 2      # both keys fall back to the plain call


# --- what stays frozen ---------------------------------------------------------------------------------
def test_fresh_objects_need_no_guards():
    class P:
        pass

    def helper(p):
        return p.k * 2

    def fn(x):
        p = P()
        p.k = 3.0
        return x * helper(p)
    fz = fj.freeze(fn)
    for n in WIDTHS:
        assert same(fz(ramp(n)), fn(ramp(n)))
    assert fz.n_recordings == 2         # size 1 and wide


def test_unchanged_hidden_state_replays():
    fz = fj.freeze(lambda x: guard_settings.helper(x) + Cfg.scale)
    for n in WIDTHS + WIDTHS:
        assert same(fz(ramp(n)), guard_settings.helper(ramp(n)) + Cfg.scale)
    assert fz.n_recordings == 2         # size 1 and wide


def test_frostjit_own_library_calls_do_not_fall_back(tmp_path, monkeypatch):
    # (the kernel disk cache writes with tempfile while a recording compiles: frostjit's own use of
    # a deny-listed library function is not the function's; found by the differential programs)
    import tempfile
    from frostjit.freeze import readset

    def internal_helper():
        return tempfile.gettempdir()
    internal_helper.__code__ = internal_helper.__code__.replace(co_filename=readset.__file__)

    def fn(x):
        internal_helper()
        return x + 1
    fz = fj.freeze(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)
        for n in WIDTHS:
            assert same(fz(ramp(n)), ramp(n) + 1)
    assert fz.n_recordings == 2


class _Renamed:
    """The traversal protocol under other names than the attributes (``a`` is exposed as ``first``)."""

    def __init__(self, a, hidden):
        self.a, self.hidden = a, hidden

    def __fj_traverse__(self):
        return {"first": self.a}

    def __fj_assign__(self, values):
        self.a = values["first"]


def test_attributes_the_protocol_walks_are_not_guarded_by_identity():
    # Regression (found when the guards met the PyTree work): reading ``obj.a`` of a protocol object
    # was guarded by the array's identity, so every call with a new array traced again.
    f = fj.freeze(lambda o: o.a * 2 + o.hidden)
    for n in (1, 7, 1000, 100003, 7, 1000):
        o = _Renamed(fj.arange(Float, n), 3.0)
        assert np.array_equal(f(o).numpy(), np.arange(n, dtype=np.float32) * 2 + 3)
    assert f.n_recordings == 2          # size 1 (it broadcasts) and wide


def test_an_attribute_the_protocol_hides_is_still_guarded():
    f = fj.freeze(lambda o: o.a * 2 + o.hidden)
    o = _Renamed(fj.arange(Float, 7), 3.0)
    f(o)
    o.hidden = Float(5.0)           # not walked: a hidden value the recording read
    assert np.array_equal(f(o).numpy(), np.arange(7, dtype=np.float32) * 2 + 5)


class _Swapped:
    """Protocol object whose child the function replaces (``__fj_assign__`` writes it back)."""

    def __init__(self, a):
        self.a = a

    def __fj_traverse__(self):
        return {"first": self.a}

    def __fj_assign__(self, values):
        self.a = values["first"]


def test_a_protocol_child_the_function_replaces_is_not_guarded():
    # Regression: the read of ``o.a`` was matched against what __fj_traverse__ returned *after*
    # the call (the new array), so it was guarded by identity and every call traced again.
    def fn(o):
        o.a = o.a * 2
    f = fj.freeze(fn)
    for n in (7, 1000, 100003, 7):
        o = _Swapped(fj.arange(Float, n))
        f(o)
        assert np.array_equal(o.a.numpy(), np.arange(n, dtype=np.float32) * 2)
    assert f.n_recordings == 1


class _AnyAttribute:
    """A callable whose ``__getattr__`` answers every name (and records that it ran)."""
    asked: list = []

    def __call__(self, x):
        return x * 2

    def __getattr__(self, name):
        type(self).asked.append(name)
        return 1


_scale = _AnyAttribute()


def test_the_read_set_runs_no_getattr_of_a_callable_it_sees():
    # Regression: recognising dispatched functions with hasattr(v, "_dispatch_state") ran this
    # __getattr__, took the object for one and failed ("'int' object has no attribute
    # 'subscriptions'"); the deny list's hasattr(v, "__self__") ran it too.
    _AnyAttribute.asked.clear()          # (pytest's collection asks module objects for names)
    f = fj.freeze(lambda x: _scale(x) + 1)
    for n in (7, 1000):
        assert np.array_equal(f(fj.arange(Float, n)).numpy(), np.arange(n, dtype=np.float32) * 2 + 1)
    assert _AnyAttribute.asked == [] and f.n_recordings == 1


@pytest.mark.parametrize("n", [4, 100, 300])
def test_many_hidden_class_attributes_are_guarded_in_bulk(n):
    # groups of one class's attributes are checked in one pass (unpacked `is` tests up to 256
    # entries, map(operator.is_) beyond): a changed value, or an equal value of another type or
    # sign, must retrace
    C = type("C", (), {f"a{i}": float(i) for i in range(n)})
    ns = {"C": C}
    exec("def f(x):\n    return x + (" + " + ".join(f"C.a{i}" for i in range(n)) + ")\n", ns)
    f = fj.freeze(ns["f"])
    x = fj.arange(Float, 4)
    base = float(sum(range(n)))
    for _ in range(3):
        assert f(x).numpy().tolist() == [base + k for k in range(4)]
    setattr(C, f"a{n - 1}", float(n - 1) + 2.0)
    assert f(x).numpy().tolist() == [base + 2 + k for k in range(4)]
    C.a0 = -0.0            # equal to 0.0, another value: the sum's sign of zero may differ
    setattr(C, f"a{n - 1}", float(n - 1))
    assert f(x).numpy().tolist() == [base + k for k in range(4)]
    C.a1 = 1               # equal to 1.0, an int
    assert f(x).numpy().tolist() == [base + k for k in range(4)]
    assert f.n_recordings >= 2


@pytest.mark.parametrize("namespace", [{}, {"__name__": "__main__"}])
def test_functions_executed_from_strings_are_watched(namespace):
    # regression: code exec'd into a fresh namespace (filename "<string>") was taken for library
    # code, its reads not watched: a changed class attribute replayed stale
    class K:
        a = 1.0
    ns = dict(namespace, K=K)
    exec("def g(x):\n    return x + K.a\n", ns)
    f = fj.freeze(ns["g"])
    x = fj.arange(Float, 3)
    for _ in range(3):
        assert f(x).numpy().tolist() == [1, 2, 3]
    K.a = 5.0
    assert f(x).numpy().tolist() == [5, 6, 7]
