"""The heat demo's simulation: NumPy reference against a cell-by-cell loop, frostjit (traced and
frozen) against NumPy at several grid sizes."""
import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm as T
from frostjit.demo import heat


def _heat_loop_reference(steps, n):
    """Cell-by-cell reference of the same scheme (slow; tiny grids only)."""
    mask, val = heat.sources(n)
    u = heat.initial(n).astype(np.float32)
    a = np.float32(heat.ALPHA)
    zero = np.float32(0)
    for _ in range(steps):
        new = u.copy()
        for k in range(n * n):
            i, j = divmod(k, n)
            nb = ((u[k - 1] if j > 0 else zero) + (u[k + 1] if j < n - 1 else zero)
                  + (u[k - n] if i > 0 else zero) + (u[k + n] if i < n - 1 else zero))
            new[k] = val[k] if mask[k] else u[k] + a * (nb - np.float32(4) * u[k])
        u = new
    return u


def test_numpy_reference_matches_cell_loop():
    n, steps = 12, 7
    got = heat.simulate_numpy(steps, n)
    assert heat.compare(got, _heat_loop_reference(steps, n)) < 1e-6


def test_numpy_reference_physics():
    n = 40
    mask, val = heat.sources(n)
    u = heat.simulate_numpy(300, n)
    assert np.array_equal(u[mask], val[mask])                              # sources held fixed
    assert u.min() >= val.min() - 1e-6 and u.max() <= val.max() + 1e-6    # maximum principle
    assert heat.compare(u, heat.initial(n)) > 0.01                         # heat spread


@pytest.mark.parametrize("n", [3, 7, 33, 317])  # 9 ... 100489 cells: masked tails, several threads
@pytest.mark.parametrize("frozen", [False, True])
def test_jit_simulation_matches_numpy(n, frozen):
    steps = 5
    field, first, total = heat.simulate(fj, T, steps, n, frozen=frozen)
    assert heat.compare(field, heat.simulate_numpy(steps, n)) <= 1e-6
    assert 0 <= first <= total


@pytest.mark.parametrize("make", [lambda n: heat.numpy_runner(n),
                                  lambda n: heat.jit_runner(fj, T, n, frozen=False),
                                  lambda n: heat.jit_runner(fj, T, n, frozen=True)],
                         ids=["numpy", "traced", "frozen"])
def test_timing_runners_continue_the_simulation(make):
    """Each call of a timing runner continues from the last: 3 + 4 steps are 7 steps."""
    n = 20
    run = make(n)
    run(3)
    u = run(4)
    u = np.asarray(u.numpy() if hasattr(u, "numpy") else u).ravel()
    assert heat.compare(u, heat.simulate_numpy(7, n)) <= 1e-6


def test_timing_sizes_rejects_bad_lists():
    assert heat._sizes(None, quick=True) == heat.TIMING_SIZES_QUICK
    assert heat._sizes("64,128", quick=False) == (64, 128)
    for bad in ("", "x", "2,64", "64,,-1"):
        with pytest.raises(ValueError, match="--timing-sizes"):
            heat._sizes(bad, quick=False)
