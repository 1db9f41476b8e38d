"""Derivatives of ``scatter_exch``/``scatter_cas`` (the atomics that return old values).

Outside loops frostjit builds them from gathers and scatters, so their old values and the
target's new contents carry the derivatives of the values they came from: checked against a
lane-order model that tracks where each value came from (both directions, several widths,
repeated indices).  Dr.Jit 1.5 detaches both (measured: ``grad_enabled(old)`` is False and a
backward from the target "does not depend" on it), a documented difference (docs/ad.md).
Inside a symbolic loop the in-kernel atomic has no derivative rule: grad-enabled operands are
refused with a ``GradArgumentError`` instead of the silently lost derivatives of Dr.Jit 1.5."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.errors import GradArgumentError
from frostjit.llvm.ad import Float64, UInt

# (n target elements, lanes): indices repeat, so lanes chain through one element
cases = st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 2), st.integers(0, 2), st.booleans()),
             min_size=1, max_size=9)))


def _model(n, lanes, x, cas):
    """Lane-order model: per lane (old value, where it came from), and the target's final
    (value, source); a source is ("x", element) or ("v", lane)."""
    cur = [(float(x[k]), ("x", k)) for k in range(n)]
    old = []
    for i, (k, compare, value, active) in enumerate(lanes):
        if not active:
            old.append((0.0, None))
            continue
        old.append(cur[k])
        if not cas or cur[k][0] == compare:
            cur[k] = (float(value), ("v", i))
    return old, cur


def _expected_grads(n, lanes, old_src, final_src, w_old, w_t):
    gx, gv = np.zeros(n), np.zeros(len(lanes))
    for w, (_, src) in list(zip(w_old, old_src)) + list(zip(w_t, final_src)):
        if src is not None:
            (gx if src[0] == "x" else gv)[src[1]] += w
    return gx, gv


def _run(op, n, lanes, x_np):
    x = Float64(x_np)
    v = Float64([float(value) for _, _, value, _ in lanes])
    fj.enable_grad(x, v)
    t = x * 1                        # the target: a new variable, so x keeps its own gradient
    idx = UInt([k for k, _, _, _ in lanes])
    act = fj.llvm.ad.Bool([a for _, _, _, a in lanes])
    if op == "exch":
        old = fj.scatter_exch(t, v, idx, act)
    else:
        old, _ = fj.scatter_cas(t, Float64([float(c) for _, c, _, _ in lanes]), v, idx, act)
    return x, v, t, old


@pytest.mark.parametrize("op", ["exch", "cas"])
@settings(max_examples=15)        # each example traces and runs a few kernels: keep the file quick
@given(case=cases)
def test_old_values_and_target_carry_the_derivatives_of_their_sources(op, case):
    n, lanes = case
    x_np = np.arange(n) % 3.0               # values 0..2, as compare/value: swaps happen
    old_src, final_src = _model(n, lanes, x_np, op == "cas")
    w_old = np.arange(1.0, len(lanes) + 1)
    w_t = 100.0 * np.arange(1.0, n + 1)
    x, v, t, old = _run(op, n, lanes, x_np)
    np.testing.assert_array_equal(old.numpy(), [o for o, _ in old_src])
    np.testing.assert_array_equal(t.numpy(), [c for c, _ in final_src])
    fj.backward(fj.sum(old * Float64(w_old)) + fj.sum(t * Float64(w_t)))
    gx, gv = _expected_grads(n, lanes, old_src, final_src, w_old, w_t)
    np.testing.assert_array_equal(x.grad.numpy(), gx)
    np.testing.assert_array_equal(v.grad.numpy(), gv)


@pytest.mark.parametrize("op", ["exch", "cas"])
@settings(max_examples=15)        # each example traces and runs a few kernels: keep the file quick
@given(case=cases)
def test_forward_mode_agrees_with_the_model(op, case):
    n, lanes = case
    x_np = np.arange(n) % 3.0
    old_src, final_src = _model(n, lanes, x_np, op == "cas")
    x, v, t, old = _run(op, n, lanes, x_np)
    fj.set_grad(x, Float64(np.arange(1.0, n + 1)))       # seeds 1..n on x, 0 on v
    fj.forward_to(old, t)
    seed = lambda src: float(src[1] + 1) if src is not None and src[0] == "x" else 0.0   # noqa: E731
    np.testing.assert_array_equal(fj.grad(old).numpy(), [seed(s) for _, s in old_src])
    np.testing.assert_array_equal(fj.grad(t).numpy(), [seed(s) for _, s in final_src])


def test_exchange_matches_finite_differences_at_several_widths():
    # exch is a selection, so differences of a linear functional with step 1 are exact
    for width in (1, 9):
        rng = np.random.default_rng(width)
        x_np, v_np = rng.normal(size=5), rng.normal(size=width)
        idx_np = rng.integers(0, 5, width)

        def f(xa, va, grad=False):
            x, v = Float64(xa), Float64(va)
            if grad:
                fj.enable_grad(x, v)
            t = x * 1
            old = fj.scatter_exch(t, v, UInt(idx_np))
            y = fj.sum(old * old) + fj.sum(t * 3)
            return y, x, v

        y, x, v = f(x_np, v_np, grad=True)
        fj.backward(y)
        h = 1e-6
        fd_x = [(f(x_np + h * e, v_np)[0][0] - f(x_np - h * e, v_np)[0][0]) / (2 * h) for e in np.eye(5)]
        fd_v = [(f(x_np, v_np + h * e)[0][0] - f(x_np, v_np - h * e)[0][0]) / (2 * h) for e in np.eye(width)]
        np.testing.assert_allclose(x.grad.numpy(), fd_x, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(v.grad.numpy(), fd_v, rtol=1e-6, atol=1e-8)


def _loop(call):
    i = fj.arange(UInt, 3)
    fj.while_loop((i,), lambda i: i < 2, lambda i: (call(), i + 1)[1:], mode="symbolic")


@pytest.mark.parametrize("op, grad_on", [("exch", "target"), ("exch", "value"), ("cas", "target"),
                                         ("cas", "value"), ("cas", "compare")])
def test_symbolic_loop_refuses_grad_enabled_operands(op, grad_on):
    arrays = {name: Float64(1, 2, 3) for name in ("target", "value", "compare")}
    fj.enable_grad(arrays[grad_on])
    t = arrays["target"] * 1 if grad_on == "target" else arrays["target"]
    call = ((lambda: fj.scatter_exch(t, arrays["value"], UInt(0, 2, 0))) if op == "exch" else
            (lambda: fj.scatter_cas(t, arrays["compare"], arrays["value"], UInt(0, 2, 0))))
    with pytest.raises(Exception, match=f"scatter_{op}\\(\\): '{grad_on}' is grad-enabled") as info:
        _loop(call)
    chain = [info.value, info.value.__cause__, info.value.__context__]
    assert any(isinstance(e, GradArgumentError) for e in chain) or "GradArgumentError" in str(info.value)


def test_symbolic_loop_runs_detached_operands_as_drjit():
    x = Float64(1, 2, 3)
    fj.enable_grad(x)
    t = fj.detach(x * 1)
    v = Float64(10, 20, 30)
    _loop(lambda: fj.scatter_exch(t, fj.detach(v * x), UInt(0, 2, 0)))
    assert not fj.grad_enabled(t) and t.numpy().tolist() == [10.0, 2.0, 40.0]   # lane 2 is not in the loop
    with fj.suspend_grad():          # not grad-enabled in this scope: runs
        y = x * 1
        _loop(lambda: fj.scatter_exch(y, Float64(5, 6, 7), UInt(0, 1, 2)))
