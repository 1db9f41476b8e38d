"""Every way resolution can change invalidates exactly the JIT-cache entries that depended on
it: frozen functions (``fj.freeze``) and ``jax.jit`` (``frostjit.dispatch.jit`` precisely, plain
``jax.jit`` by clearing jax's caches), as a new method does.

Each test uses its own subclass of ``Float`` (conversion and promotion rules are global).
"""

from typing import Annotated

import numpy as np
import pytest

import frostjit as fj
from frostjit.dispatch import (Dispatcher, PromisedType, add_conversion_method, add_promotion_rule,
                               parametric, promote, set_union_alias)
from frostjit.llvm import Float

WIDTHS = (1, 7, 1000)


def ramp(T, n):
    return T(np.arange(n, dtype=np.float32))


def values(x):
    return np.asarray(x.numpy())


def record_all(fz, T):
    for n in WIDTHS:
        fz(ramp(T, n))
    return fz.n_cached_recordings, fz.n_recordings


def untouched(fz, before):
    """The recordings are still cached and calling again traces nothing new."""
    return (fz.n_cached_recordings, fz.n_recordings) == before


def test_conversion_method_drops_recordings_of_functions_whose_results_it_converts():
    class Meters(Float):
        pass

    Tagged = Annotated[Meters, "converted in this test"]
    d = Dispatcher()

    @d
    def measure(x: Meters) -> Tagged:
        return x * 2

    @d
    def plain(x: Meters):
        return x * 2

    @d
    def other(x: Meters) -> Meters:
        return x * 3

    uses_measure = fj.freeze(lambda x: measure(x) + 1)
    uses_plain = fj.freeze(lambda x: plain(x) + 1)
    uses_other = fj.freeze(lambda x: other(x) + 1)
    before = {fz: record_all(fz, Meters) for fz in (uses_measure, uses_plain, uses_other)}
    v = measure.version
    add_conversion_method(Meters, Tagged, lambda m: m + 100)
    assert measure.version > v  # the conversion applies to measure's results
    assert uses_measure.n_cached_recordings == 0
    for n in WIDTHS:
        x = np.arange(n, dtype=np.float32)
        assert np.array_equal(values(uses_measure(ramp(Meters, n))), x * 2 + 100 + 1)
        assert np.array_equal(values(uses_plain(ramp(Meters, n))), x * 2 + 1)
        assert np.array_equal(values(uses_other(ramp(Meters, n))), x * 3 + 1)
    assert untouched(uses_plain, before[uses_plain]) and untouched(uses_other, before[uses_other])


def test_promotion_rule_drops_recordings_that_promoted():
    class Volts(Float):
        pass

    class Millivolts(Float):
        pass

    add_conversion_method(Millivolts, Volts, lambda m: Volts(m) * 0.001)
    both = fj.freeze(lambda a, b: sum(promote(a, b)))
    same_type = fj.freeze(lambda a: a * 2)
    for n in WIDTHS:
        with pytest.raises(TypeError, match="No promotion rule"):
            both(ramp(Volts, n), ramp(Millivolts, n))
        both(ramp(Volts, n), ramp(Volts, n))
    before = record_all(same_type, Volts)
    assert both.n_cached_recordings > 0
    v = promote.rules.version
    add_promotion_rule(Volts, Millivolts, Volts)
    assert promote.rules.version > v
    assert both.n_cached_recordings == 0 and untouched(same_type, before)
    for n in WIDTHS:
        x = np.arange(n, dtype=np.float32)
        got = values(both(ramp(Volts, n), ramp(Millivolts, n)))
        assert np.allclose(got, x + x * np.float32(0.001))
        assert np.array_equal(values(both(ramp(Volts, n), ramp(Volts, n))), 2 * x)


def test_delivering_a_promised_type_again_drops_recordings_that_dispatched_on_it():
    class Fast(Float):
        pass

    class Slow(Float):
        pass

    Speed = PromisedType("Speed")
    Speed.deliver(Fast)
    d = Dispatcher()

    @d
    def run(x: Speed):
        return x * 10

    @d
    def run(x: Float):
        return x

    @d
    def walk(x: Float):
        return x + 1

    uses_run = fj.freeze(lambda x: run(x))
    uses_walk = fj.freeze(lambda x: walk(x))
    for n in WIDTHS:
        assert np.array_equal(values(uses_run(ramp(Slow, n))), np.arange(n, dtype=np.float32))
    before = record_all(uses_walk, Slow)
    Speed.deliver(Slow)
    assert uses_run.n_cached_recordings == 0 and untouched(uses_walk, before)
    for n in WIDTHS:
        assert np.array_equal(values(uses_run(ramp(Slow, n))), np.arange(n, dtype=np.float32) * 10)


def test_creating_a_parametric_type_changes_no_decision():
    # A new concrete type is a new cache key; the decisions for existing types stay right, so
    # no recording is dropped.
    @parametric
    class Unit:
        def __init__(self, x):
            self.x = x

    d = Dispatcher()

    @d
    def scale(u: Unit[float], x: Float):
        return x * 2

    @d
    def scale(u: Unit, x: Float):
        return x

    fz = fj.freeze(lambda x: scale(Unit(1.0), x))
    before = record_all(fz, Float)
    v = scale.version
    assert Unit[str] is not Unit[int]  # new concrete types
    assert scale.version == v
    assert np.array_equal(values(scale(Unit("a"), ramp(Float, 3))), [0, 1, 2])
    assert np.array_equal(values(fz(ramp(Float, 7))), 2 * np.arange(7, dtype=np.float32))
    assert untouched(fz, before)


def test_union_alias_changes_no_decision():
    from typing import Union
    d = Dispatcher()

    class A(Float):
        pass

    class B(Float):
        pass

    @d
    def pick(x: Union[A, B]):
        return x + 5

    fz = fj.freeze(lambda x: pick(x))
    before = record_all(fz, A)
    v = pick.version
    set_union_alias(Union[A, B], "AorB in a test")
    assert pick.version == v
    assert np.array_equal(values(fz(ramp(A, 7))), np.arange(7, dtype=np.float32) + 5)
    assert untouched(fz, before)


def test_clear_cache_drops_recordings_that_called_the_function():
    d = Dispatcher()

    @d
    def f(x: Float):
        return x * 2

    fz = fj.freeze(lambda x: f(x))
    record_all(fz, Float)
    f.clear_cache()
    assert fz.n_cached_recordings == 0
    assert np.array_equal(values(fz(ramp(Float, 7))), 2 * np.arange(7, dtype=np.float32))


class TestJax:
    jax = pytest.importorskip("jax")

    def test_precise_jit_retraces_after_a_conversion_method_for_a_dependency(self):
        import jax
        import jax.numpy as jnp

        from frostjit.dispatch import jit

        class Tag:
            pass

        Tagged = Annotated[jax.Array, Tag]
        d = Dispatcher()

        @d
        def f(x: jax.Array) -> Tagged:
            return x * 2

        g = jit(lambda x: f(x) + 1)
        assert float(g(jnp.float32(1.0))) == 3.0
        add_conversion_method(jax.Array, Tagged, lambda a: a + 100)
        assert float(g(jnp.float32(1.0))) == 103.0

    def test_plain_jit_retraces_after_a_promised_type_is_delivered_again(self):
        import jax
        import jax.numpy as jnp

        P = PromisedType("Array for jax test")
        P.deliver(jax.Array)
        d = Dispatcher()

        @d
        def f(x: P):
            return x * 10

        @d
        def f(x: object):
            return x

        g = jax.jit(lambda x: f(x) + 1)
        assert float(g(jnp.float32(1.0))) == 11.0

        class Nothing:
            pass

        P.deliver(Nothing)
        assert float(g(jnp.float32(1.0))) == 2.0
