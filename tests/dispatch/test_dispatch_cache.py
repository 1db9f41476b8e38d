"""The resolution cache, its invalidation, and the hooks JIT caches use."""

import abc
import threading
from typing import Literal

import pytest

from frostjit.dispatch import (DispatchCache, Dispatcher, NotFoundLookupError, observe_calls,
                               on_register)

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")


def _state(f):
    return f._dispatch_state


def test_registration_invalidates_only_that_functions_cache():
    d = Dispatcher()

    @d
    def f(x: object):
        return "object"

    @d
    def g(x: object):
        return "g"

    assert f(1) == "object" and g(1) == "g"
    g_cache = _state(g).ns["decisions"]

    @d
    def f(x: int):
        return "int"

    assert f(1) == "int"
    assert _state(g).ns["decisions"] is g_cache and int in g_cache


def test_version_increments_on_every_registration():
    d = Dispatcher()

    @d
    def f(x: int):
        return 1

    v = f.version

    @d
    def f(x: str):
        return 2

    f.register(lambda x: 3, (bytes,))
    assert f.version == v + 2


def test_clear_cache_keeps_methods():
    d = Dispatcher()

    @d
    def f(x: int):
        return 1

    f(1)
    f.clear_cache()
    assert not _state(f).ns["decisions"] and f(1) == 1


def test_abc_register_after_first_call_re_resolves():
    class MyABC(abc.ABC):
        pass

    class Foo:
        pass

    d = Dispatcher()

    @d
    def g(x: object):
        return "object"

    @d
    def g(x: MyABC):
        return "abc"

    assert g(Foo()) == "object"
    MyABC.register(Foo)
    assert g(Foo()) == "abc"


class Proxy:
    """An object whose ``__class__`` lies (as mocks and some tracers do)."""

    def __init__(self, wrapped):
        self._wrapped = wrapped

    @property
    def __class__(self):
        return type(self._wrapped)


def test_class_liar_does_not_poison_the_cache():
    d = Dispatcher()

    @d
    def h(x: int):
        return "int"

    @d
    def h(x: str):
        return "str"

    assert h(Proxy(1)) == "int"
    assert h(Proxy("a")) == "str"
    assert h(Proxy(1)) == "int"


def test_containers_are_checked_element_by_element_never_sampled():
    d = Dispatcher()

    @d
    def f(x: list[int]):
        return "ints"

    @d
    def f(x: list):
        return "list"

    mixed = [1] * 50 + ["a"]
    assert all(f(mixed) == "list" for _ in range(50))
    assert f([1, 2]) == "ints" and f([]) == "ints"


def test_literal_method_keeps_fast_path_for_other_types():
    d = Dispatcher()

    @d
    def f(x: int):
        return "int"

    @d
    def f(x: Literal["fast"]):
        return "fast"

    @d
    def f(x: str):
        return "str"

    f(1), f("fast"), f("slow")
    cache = _state(f).ns["decisions"]
    assert cache[int] is f.invoke(int)  # a plain entry, no value check for ints
    assert f("fast") == "fast" and f("slow") == "str"


def test_cache_hit_does_not_depend_on_number_of_methods():
    d = Dispatcher()
    classes = [type(f"C{i}", (), {}) for i in range(300)]
    for i, C in enumerate(classes):
        d.multi((C,))(_named(lambda x, i=i: i))
    f = d.functions["many"]
    assert f(classes[123]()) == 123
    assert len(_state(f).ns["decisions"]) == 1


def _named(fn):
    fn.__name__ = fn.__qualname__ = "many"
    fn.__module__ = __name__
    return fn


def test_thread_safe_first_resolution_and_registration_race():
    d = Dispatcher()

    @d
    def f(x: object):
        return "object"

    errors = []
    barrier = threading.Barrier(8)

    def worker(i):
        try:
            barrier.wait()
            for _ in range(200):
                r = f(i)
                assert r in ("object", "int")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()

    @d
    def f(x: int):
        return "int"

    for t in threads:
        t.join()
    assert not errors
    assert f(1) == "int"  # no stale decision was written back


# -- hooks for JIT caches -------------------------------------------------------------------

class FakeRecording:
    """What the freeze engine does: observe calls while recording, subscribe to registrations."""

    def __init__(self):
        self.called = set()
        self.valid = True
        self.subs = []

    def record(self, fn, *args):
        with observe_calls(self.called.add):
            out = fn(*args)
        for f in self.called:
            self.subs.append(on_register(f, self.invalidate))
        return out

    def invalidate(self, function):
        self.valid = False

    def close(self):
        for s in self.subs:
            s.close()


def test_observe_calls_sees_hits_and_misses_of_every_dispatched_function():
    d = Dispatcher()

    @d
    def inner(x: int):
        return x + 1

    @d
    def outer(x: int):
        return inner(x) * 2

    outer(1)  # warm: the next calls are cache hits
    seen = []
    with observe_calls(seen.append):
        assert outer(1) == 4
        assert outer(1) == 4
    assert seen == [outer, inner, outer, inner]
    outer(1)
    assert len(seen) == 4  # inactive after the block


def test_nested_observers_each_see_calls():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    a, b = [], []
    with observe_calls(a.append):
        f(1)
        with observe_calls(b.append):
            f(2)
    h = observe_calls(a.append)
    f(3)
    h.close()
    h.close()
    f(4)
    assert a == [f, f, f] and b == [f]


def test_registration_invalidates_only_the_recordings_that_called_the_function():
    d = Dispatcher()

    @d
    def f(x: int):
        return "f-int"

    @d
    def g(x: int):
        return "g-int"

    rec_f, rec_g = FakeRecording(), FakeRecording()
    rec_f.record(f, 1)
    rec_g.record(g, 1)

    @d
    def f(x: bool):
        return "f-bool"

    assert not rec_f.valid and rec_g.valid
    rec_f.close()


def test_closed_subscription_is_not_called():
    d = Dispatcher()

    @d
    def f(x: int):
        return 1

    calls = []
    sub = on_register(f, calls.append)

    @d
    def f(x: str):
        return 2

    sub.close()

    @d
    def f(x: bytes):
        return 3

    assert calls == [f]
    with pytest.raises(TypeError):
        on_register(lambda x: x, calls.append)


def test_dispatch_cache_records_and_replays_without_resolving():
    d = Dispatcher()

    @d
    def f(x: int):
        return "int"

    @d
    def f(x: Literal[0]):
        return "zero"

    with DispatchCache() as c:
        assert f(0) == "zero"
    assert len(c) == 1 and c.functions() == [f]
    with c:
        assert f(5) == "zero"  # replayed by type: values are not looked at
    assert c.hits == 1
    assert f(5) == "int"  # outside, normal dispatch


def test_dispatch_cache_invalidated_by_registration():
    d = Dispatcher()

    @d
    def f(x: float):
        return "float"

    @d
    def other(x: float):
        return "other"

    with DispatchCache() as c:
        f(1.0)
        other(1.0)

    @d
    def f(x: float, precedence=None):  # redefinition of f(float)
        return "new float"

    assert c.functions() == [other]
    with c:
        assert f(1.0) == "new float"


def test_hot_path_unaffected_after_observers_close():
    d = Dispatcher()

    @d
    def f(x: int):
        return 1

    with observe_calls(lambda fn: None):
        f(1)
    from frostjit.dispatch._observers import ACTIVE

    assert ACTIVE == []
    with pytest.raises(NotFoundLookupError):
        f("x")


def test_nested_cache_for_fixed_arity_functions():
    """Two or more fixed parameters: ``cache[type(a0)][type(a1)]...``; misses at any level."""
    d = Dispatcher()

    @d
    def f(x: int, y: float, z: str):
        return "ifs"

    @d
    def f(x: int, y: int, z: str):
        return "iis"

    @d
    def f(x: object, y: object, z: object):
        return "ooo"

    calls = [((1, 1.0, "a"), "ifs"), ((1, 1, "a"), "iis"), ((1, 1, 1), "ooo"), ((1.0, 1, "a"), "ooo")]
    for _ in range(2):  # misses, then hits
        for args, expected in calls:
            assert f(*args) == expected, args
    cache = _state(f).ns["decisions"]
    assert set(cache) == {int, float} and set(cache[int]) == {float, int}
    assert cache[int][int][str] is f.methods[1].implementation
    with pytest.raises(NotFoundLookupError):
        f(1, 2)  # too few: the private "not passed" default never hits the cache
    with pytest.raises(NotFoundLookupError):
        f()
    assert f(1, 1, "a") == "iis"

    @d
    def f(x: int, y: int, z: object):
        return "iio"

    assert f(1, 1, 1) == "iio" and f(1, 1, "a") == "iis"


def test_nested_cache_with_value_dependent_and_return_checked_methods():
    d = Dispatcher()

    @d
    def f(x: int, mode: str) -> int:
        return 0

    @d
    def f(x: int, mode: Literal["fast"]) -> int:
        return 1

    @d
    def f(x: float, mode: str) -> int:
        return "not an int"

    for _ in range(3):
        assert (f(1, "slow"), f(1, "fast"), f(2, "fast")) == (0, 1, 1)
    with pytest.raises(TypeError, match="return annotation"):
        f(1.0, "x")
    assert str in _state(f).ns["decisions_returning"][int]


def test_nested_cache_respects_abc_register_and_observers():
    class Base(abc.ABC):
        pass

    class Late:
        pass

    d = Dispatcher()

    @d
    def f(x: Base, y: int):
        return "base"

    @d
    def f(x: object, y: int):
        return "object"

    assert f(Late(), 1) == "object"
    Base.register(Late)
    assert f(Late(), 1) == "base"
    seen = []
    with observe_calls(seen.append):
        f(Late(), 1)
    assert seen == [f]


def test_value_keyed_entries_on_fixed_arity_paths():
    d = Dispatcher()

    @d
    def f(x: int, mode: str, *, scale: int = 1):
        return ("str", scale)

    @d
    def f(x: int, mode: Literal["fast", "exact"], *, scale: int = 1):
        return ("literal", scale)

    for _ in range(3):
        assert f(1, "fast") == ("literal", 1) and f(1, "slow") == ("str", 1)
        assert f(1, "exact", scale=2) == ("literal", 2) and f(1, "other", scale=3) == ("str", 3)
    entry = _state(f).ns["decisions"][int][str]
    assert entry.__code__.co_argcount == 2  # generated for the fixed arity, no *args/**kw
    with DispatchCache() as c:
        assert f(1, "fast") == ("literal", 1)
    with c:
        assert f(1, "fast") == ("literal", 1)


def test_hooks_divert_every_call_path_shape_and_restore_the_live_caches():
    """While a hook is active each function publishes an empty cache (its call path has no
    hook test); every shape must still notify, and closing the hook restores the decisions."""
    d = Dispatcher()

    @d
    def one(x: int):
        return "one"

    @d
    def three(x: int, y: int, z: int):
        return "three"

    @d
    def kw(x: int, *, k: int = 0):
        return ("kw", k)

    @d
    def ret(x: int) -> int:
        return 7

    @d
    def var(x: int, *rest: int):
        return ("var", len(rest))

    calls = [(one, (1,), {}, "one"), (three, (1, 2, 3), {}, "three"), (kw, (1,), {"k": 2}, ("kw", 2)),
             (kw, (1,), {}, ("kw", 0)), (ret, (1,), {}, 7), (var, (1, 2, 3), {}, ("var", 2))]
    for f, a, k, expected in calls:
        assert f(*a, **k) == expected  # warm the caches
    live = {f: _state(f).decisions.live for f in (one, three, kw, ret, var)}
    seen = []
    with observe_calls(seen.append):
        for f, a, k, expected in calls:
            assert f(*a, **k) == expected
        with pytest.raises(NotFoundLookupError):
            three(1, 2)  # too few, while diverted

        @d
        def late(x: int):  # created while a hook is active
            return "late"

        assert late(1) == "late"

        @d
        def one(x: str):  # registration while diverted: stays diverted
            return "str"

        assert one("a") == "str"
    assert seen == [f for f, *_ in calls] + [three, late, one]
    for f in (three, kw, var):
        assert _state(f).ns["decisions"] is live[f]  # decisions kept
    assert _state(one).ns["decisions"] is _state(one).decisions.live  # re-published after the registration
    n = len(seen)
    for f, a, k, expected in calls:
        assert f(*a, **k) == expected
    assert late(1) == "late" and len(seen) == n


def test_hook_activated_in_another_thread_sees_calls_here():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    f(1)
    seen, started, done = [], threading.Event(), threading.Event()

    def observe():
        with observe_calls(seen.append):
            started.set()
            done.wait(10)

    t = threading.Thread(target=observe)
    t.start()
    started.wait(10)
    try:
        assert f(2) == 2 and seen == [f]
    finally:
        done.set()
        t.join(10)
    f(3)
    assert seen == [f]


def test_key_error_from_an_implementation_is_not_a_cache_miss():
    d = Dispatcher()
    calls = []

    @d
    def f(x: int):
        calls.append(x)
        raise KeyError("from the implementation")

    @d
    def g(x: int, y: int):
        calls.append((x, y))
        return {}[x]

    for _ in range(2):  # miss, then hit
        with pytest.raises(KeyError, match="from the implementation"):
            f(1)
        with pytest.raises(KeyError):
            g(1, 2)
    assert calls == [1, (1, 2), 1, (1, 2)]  # each implementation ran once per call


def test_lookup_errors_do_not_chain_the_cache_key_error():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    @d
    def g(x: int) -> int:
        return x

    for fn in (f, g):
        with pytest.raises(NotFoundLookupError) as info:
            fn("a")
        assert info.value.__context__ is None


def test_return_checks_of_every_annotation_kind_on_the_cached_path():
    import numbers

    d = Dispatcher()

    @d
    def f(x: int) -> int | None:  # isinstance fast path (a tuple of classes)
        return None if x < 0 else x

    @d
    def f(x: float) -> numbers.Number:  # an ABC: the seen-types set
        return x if x >= 0 else "negative"

    @d
    def f(x: str) -> list[int]:  # value-dependent: checked element by element
        return [1] if x == "ok" else ["bad"]

    @d
    def f(x: bytes):  # no annotation in a return-checking function
        return "anything"

    for _ in range(3):  # misses, then hits
        assert f(1) == 1 and f(-1) is None and f(True) is True
        assert f(1.5) == 1.5 and f("ok") == [1] and f(b"") == "anything"
        for bad in (-1.5, "no"):
            with pytest.raises(TypeError, match="return annotation"):
                f(bad)
    assert f.invoke(float)(2.0) == 2.0
    with pytest.raises(TypeError, match="return annotation"):
        f.invoke(str)("no")


def test_errors_from_value_selected_implementations_propagate_once():
    d = Dispatcher()
    calls = []

    @d
    def f(x: str):
        return "str"

    @d
    def f(x: Literal["key", "type"]):
        calls.append(x)
        raise KeyError(x) if x == "key" else TypeError(x)

    for _ in range(2):
        with pytest.raises(KeyError):
            f("key")
        with pytest.raises(TypeError):
            f("type")
        assert f("other") == "str"
    assert calls == ["key", "type", "key", "type"]
