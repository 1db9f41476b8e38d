"""jax.jit traces that call a dispatched function with static (non-tracer) arguments."""

import pytest

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from frostjit.dispatch import Dispatcher, jit  # noqa: E402


def test_first_static_call_inside_a_plain_trace_is_seen():
    d = Dispatcher()

    @d
    def scale(n: int):
        return 2

    @jax.jit
    def algo(x):
        return x * scale(3)  # resolved for the first time while jax traces

    x = jnp.ones(())
    assert float(algo(x)) == 2.0

    @d
    def scale(n: int):
        return 5

    assert float(algo(x)) == 5.0


def test_jitted_dispatched_function_with_static_argnums():
    d = Dispatcher()

    @d
    def g(x: int):
        return x * 2

    jg = jax.jit(g, static_argnums=0)
    assert jg(3) == 6

    @d
    def g(x: int):
        return x * 3

    assert jg(3) == 9


def test_static_hit_after_eager_call_with_jitted_function_itself():
    d = Dispatcher()

    @d
    def g(x: int):
        return x * 2

    assert g(3) == 6  # cached eagerly first
    jg = jax.jit(g, static_argnums=0)
    assert jg(3) == 6

    @d
    def g(x: int):
        return x * 3

    assert jg(3) == 9


def test_jit_wrapper_stays_precise_with_static_arguments():
    d = Dispatcher()

    @d
    def scale(n: int):
        return 2

    @d
    def unrelated(x: jax.Array):
        return x

    @jit
    def algo(x):
        return x * scale(3)  # static argument: no tracer reaches `scale`

    @jit
    def other(x):
        return unrelated(x) - 1

    x = jnp.ones(3)
    algo(x), other(x)
    other_size = other._cache_size()

    @d
    def scale(n: int):
        return 5

    assert float(algo(x)[0]) == 5.0
    assert other._cache_size() == other_size  # only algo's cache was cleared


def test_eager_decision_then_plain_trace_then_registration():
    d = Dispatcher()

    @d
    def op(x: jax.Array):
        return x * 2

    x = jnp.ones(3)
    op(x)  # eager decision for jax's array type, cached

    @jax.jit
    def algo(x):
        return op(x) + 1

    assert float(algo(x)[0]) == 3.0

    @d
    def op(x: jax.Array):
        return x * 10

    assert float(algo(x)[0]) == 11.0
