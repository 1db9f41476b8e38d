"""jax.jit stays correct when a dispatched function gains a method (skipped without jax)."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from frostjit.dispatch import Dispatcher, jit  # noqa: E402

SEED = """
import jax
jax.config.update("jax_enable_x64", True)
from jaxtyping import Int, Array, Float, Float64
from frostjit.dispatch import dispatch

@jax.jit
@dispatch
def func(a: int | Int[Array, ""]) -> int | Int[Array, ""]:
    return 2 * a

func(3)
try:
    out = func(3.0)
except Exception as e:
    print("error:", type(e).__name__)

@jax.jit
@dispatch
def func(a: float | Float[Array, ""]) -> float | Float[Array, ""]:
    return 2.1 * a

print(float(func(3.0)))

@jax.jit
@dispatch(precedence=1)
def func(a: Float64[Array, ""]) -> Float64[Array, ""]:
    return 2.2 * a

print(float(func(3.0)))
"""


def test_seed_scenario_without_clear_cache_gives_6_6():
    pytest.importorskip("jaxtyping")
    out = subprocess.run([sys.executable, "-c", SEED], capture_output=True, text=True, timeout=120,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "error: NotFoundLookupError"
    assert abs(float(lines[1]) - 6.3) < 1e-12
    assert abs(float(lines[2]) - 6.6) < 1e-12


def test_plain_jit_caller_traced_through_function_sees_new_method():
    d = Dispatcher()

    @d
    def op(x: jax.Array):
        return x * 2

    @jax.jit
    def algo(x):
        return op(x) + 1

    x = jnp.ones(3)
    assert float(algo(x)[0]) == 3.0

    @d
    def op(x: jax.Array):  # redefinition
        return x * 10

    assert float(algo(x)[0]) == 11.0


def test_jit_wrapper_clears_only_dependent_traces():
    d = Dispatcher()

    @d
    def op(x: jax.Array):
        return x * 2

    @d
    def unrelated(x: jax.Array):
        return x

    @jit
    def algo(x):
        return op(x) + 1

    @jit
    def other(x):
        return unrelated(x) - 1

    x = jnp.ones(3)
    algo(x), other(x)
    assert op in set(algo.dispatch_dependencies)
    assert not op._dispatch_state.traced_by_jax  # precise tracking: no global clearing needed
    other_size = other._cache_size()

    @d
    def op(x: jax.Array):
        return x * 10

    assert float(algo(x)[0]) == 11.0
    assert other._cache_size() == other_size  # untouched


def test_jitted_dispatched_function_itself():
    d = Dispatcher()

    @d
    def f(x: jax.Array):
        return x + 1

    jf = jax.jit(f)
    assert float(jf(jnp.zeros(()))) == 1.0

    @d
    def f(x: jax.Array):
        return x + 2

    assert float(jf(jnp.zeros(()))) == 2.0


def test_static_argument_cache_hit_during_plain_trace_is_detected():
    d = Dispatcher()

    @d
    def scale(n: int):
        return 2

    scale(1)  # cached eagerly

    @jax.jit
    def algo(x):
        return x * scale(3)

    x = jnp.ones(())
    algo(x)

    @d
    def scale(n: int):
        return 5

    assert float(algo(x)) == 5.0
