"""Scatters inside symbolic loop bodies: each iteration's scatters run inside the loop's kernel,
masked by the lanes still running, once (however the loop's results are evaluated)."""
import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, UInt32
from frostjit.llvm.ad import Float as ADFloat

WIDTHS = (1, 7, 1000, 100003)


def histogram(mode, start, bins: int):
    """Each lane counts from its start to 2 * bins, adding 1 to bin (i % bins) and i to bin 0."""
    t = fj.zeros(Float, bins)

    def body(i):
        fj.scatter_add(t, 1.0, i % bins)
        fj.scatter_add(t, Float(i) * 0.5, UInt32(0))
        return (i + 1,)
    (i,) = fj.while_loop((UInt32(start),), lambda i: i < 2 * bins, body, mode=mode)
    return t, i


def numpy_histogram(start, bins: int):
    t = np.zeros(bins, np.float64)
    for s in start:
        for i in range(int(s), 2 * bins):
            t[i % bins] += 1.0
            t[0] += i * 0.5
    return t


@pytest.mark.parametrize("n", WIDTHS)
def test_scatters_in_a_symbolic_loop_match_evaluated_mode_and_numpy(n):
    start = np.random.default_rng(n).integers(0, 13, n).astype(np.uint32)
    t, i = histogram("symbolic", start, 6)
    t2, i2 = histogram("evaluated", start, 6)
    np.testing.assert_allclose(t.numpy(), t2.numpy(), rtol=1e-6)
    assert list(i.numpy()) == [12] * n
    if n <= 1000:
        np.testing.assert_allclose(t.numpy(), numpy_histogram(start, 6), rtol=1e-5)


def test_loop_evaluated_through_its_results_scatters_once():
    t = fj.zeros(Float, 4)
    (i,) = fj.while_loop((UInt32(0, 1),), lambda i: i < 4, lambda i: (fj.scatter_add(t, 1.0, i) or i + 1,))
    fj.eval(i)                      # the results first: the scatters run in the same launch
    assert list(t.numpy()) == [1.0, 2.0, 2.0, 2.0]
    fj.eval(i, t)
    assert list(t.numpy()) == [1.0, 2.0, 2.0, 2.0]


def test_loop_kept_only_for_its_scatters_runs():
    t = fj.zeros(Float, 4)
    fj.while_loop((UInt32(0, 2),), lambda i: i < 4, lambda i: (fj.scatter_add(t, 1.0, i) or i + 1,))
    assert list(t.numpy()) == [1.0, 1.0, 2.0, 2.0]


def test_plain_scatters_keep_program_order_around_a_scattering_loop():
    t = fj.zeros(Float, 3)
    fj.scatter(t, 7.0, UInt32(0, 1, 2))                     # before the loop: overwritten by it
    (i,) = fj.while_loop((UInt32(0),), lambda i: i < 2, lambda i: (fj.scatter(t, Float(i) + 10.0, i) or i + 1,))
    fj.scatter(t, 99.0, UInt32(1))                          # after the loop: wins
    assert list(t.numpy()) == [10.0, 99.0, 7.0]


def test_nested_symbolic_loops_scatter_like_evaluated_mode():
    def run(mode, n):
        t = fj.zeros(Float, 8)

        def outer(i, acc):
            _, a = fj.while_loop((UInt32(0), acc), lambda j, a: j < i,
                                 lambda j, a: (fj.scatter_add(t, 1.0, j) or j + 1, a + 1.0), mode=mode)
            fj.scatter_add(t, 0.5, i + 4)
            return i + 1, a
        _, acc = fj.while_loop((UInt32(np.arange(n) % 3), Float(0)), lambda i, acc: i < 3, outer, mode=mode)
        return t.numpy(), acc.numpy()
    for n in (1, 7, 1000):
        (a, b), (c, d) = run("symbolic", n), run("evaluated", n)
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_widened_loop_traced_twice_scatters_once():
    t = fj.zeros(Float, 4)
    lim = UInt32(1, 2, 3)
    (i,) = fj.while_loop((UInt32(0),), lambda i: i < lim, lambda i: (fj.scatter_add(t, 1.0, i) or i + 1,))
    assert list(i.numpy()) == [1, 2, 3]
    assert list(t.numpy()) == [3.0, 2.0, 1.0, 0.0]


def test_frozen_scattering_loop_replays_at_any_width():
    def f(t, x):
        (i,) = fj.while_loop((x,), lambda i: i < 5, lambda i: (fj.scatter_add(t, 1.0, i) or i + 1,))
        return i
    frozen = fj.freeze(f)
    for n in (7, 1000, 100003, 7):
        x = np.arange(n, dtype=np.uint32) % 6
        t1, t2 = fj.zeros(Float, 8), fj.zeros(Float, 8)
        r1, r2 = f(t1, UInt32(x)), frozen(t2, UInt32(x))
        np.testing.assert_array_equal(t1.numpy(), t2.numpy())
        np.testing.assert_array_equal(r1.numpy(), r2.numpy())
    assert frozen.n_recordings == 1


def test_ad_of_a_scattering_loop_scatters_once_in_both_modes():
    # Dr.Jit 1.5 (reverse mode, a scatter that carries no derivative): the same gradient; the
    # re-run that records the iterations for reverse mode does not write again
    t = fj.zeros(Float, 3)
    x = ADFloat(1, 2, 3)
    fj.enable_grad(x)
    _, y = fj.while_loop((UInt32(0), x), lambda i, y: i < 2,
                         lambda i, y: (fj.scatter_add(t, 1.0, i) or i + 1, y * y))
    fj.forward_from(x)
    assert list(fj.grad(y).numpy()) == [4.0, 32.0, 108.0]
    assert list(t.numpy()) == [3.0, 3.0, 0.0]
    x = ADFloat(1, 2, 3)
    fj.enable_grad(x)
    _, y = fj.while_loop((UInt32(0), x), lambda i, y: i < 2,
                         lambda i, y: (fj.scatter_add(t, 1.0, i) or i + 1, y * y), max_iterations=2)
    fj.backward_from(y)
    assert list(fj.grad(x).numpy()) == [4.0, 32.0, 108.0]
    assert list(t.numpy()) == [6.0, 6.0, 0.0]


def test_body_reading_what_it_scattered_raises_loop_variable_error():
    from frostjit.schedule.loops import LoopVariableError
    t = fj.zeros(Float, 4)

    def body(i):
        fj.scatter_add(t, 1.0, i)
        return (i + UInt32(fj.gather(Float, t, i)),)
    with pytest.raises(LoopVariableError, match="scattered to"):
        fj.while_loop((UInt32(0, 1),), lambda i: i < 3, body)
    assert list(t.numpy()) == [0.0] * 4           # nothing of the failed loop stays queued


def test_body_gathers_see_the_array_as_before_the_loop():
    # documented difference (docs/control_symbolic.md): scatters are write-only for the loop
    t = Float(1, 2, 3, 4)

    def body(i, s):
        v = fj.gather(Float, t, i)
        fj.scatter(t, v * 10.0, i)
        return i + 1, s + v
    _, s = fj.while_loop((UInt32(0, 0), Float(0)), lambda i, s: i < 4, body)
    assert list(t.numpy()) == [10.0, 20.0, 30.0, 40.0]
    assert list(s.numpy()) == [10.0, 10.0]


def test_frozen_scattering_loop_whose_body_widens_the_state_keeps_its_recording():
    # the widening re-trace drops the first trace's scatters: the recording must not wait for
    # their launch (it was discarded as "scatters evaluated by another thread", every call)
    def f(limit):
        t = fj.zeros(Float, fj.width(limit))
        lane = fj.arange(UInt32, fj.width(limit))

        def body(i):
            fj.scatter_add(t, 1.0, lane)
            return (i + 1,)
        fj.while_loop((UInt32(0),), lambda i: i < limit, body, mode="symbolic")      # i: 1 lane, widened
        return t
    frozen = fj.freeze(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)
        for n in (5, 6, 7):
            assert frozen(UInt32(np.arange(n) % 3)).numpy().tolist() == [float(k % 3) for k in range(n)]
    assert frozen.n_recordings == 1
