"""Symbolic ``fj.if_stmt``, and AD through symbolic loops and conditionals (Dr.Jit 1.5's rules:
forward mode through symbolic loops; reverse mode only with ``max_iterations``)."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float as PlainFloat, UInt32
from frostjit.llvm.ad import Float


@pytest.fixture(autouse=True)
def _history():
    fj.eval()
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history()
    yield
    fj.set_flag(fj.JitFlag.KernelHistory, False)
    fj.kernel_history()


def jit_kernels() -> list:
    return [h for h in fj.kernel_history() if h["type"] == "jit"]


# -- if_stmt -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_symbolic_if_stmt_matches_numpy_in_one_kernel(n):
    x = np.random.default_rng(n).uniform(-2, 2, n).astype(np.float32)
    a = PlainFloat(x)
    fj.eval(a)
    fj.kernel_history()
    r = fj.if_stmt((a,), a > 0.5, lambda v: v * v - 1.0, lambda v: v + 10.0, mode="symbolic")
    np.testing.assert_array_equal(r.numpy(), np.where(x > np.float32(0.5), x * x - np.float32(1), x + np.float32(10)))
    assert len(jit_kernels()) == 1


def test_symbolic_if_stmt_masks_scatters_of_each_branch():
    target = fj.zeros(PlainFloat, 4)
    i = fj.arange(UInt32, 4)

    def t(i):
        fj.scatter_add(target, 1.0, i)
        return i

    def f(i):
        fj.scatter_add(target, 100.0, i)
        return i + 1
    r = fj.if_stmt((i,), i < 2, t, f, mode="symbolic")
    assert list(r.numpy()) == [0, 1, 3, 4]
    assert list(target.numpy()) == [1.0, 1.0, 100.0, 100.0]


def test_symbolic_if_stmt_results_must_agree():
    x = PlainFloat(1, 2)
    with pytest.raises(fj.control.StateTypeError, match="changed from"):
        fj.if_stmt((x,), x > 1.0, lambda v: v, lambda v: UInt32(v), mode="symbolic")


# -- AD through symbolic loops -------------------------------------------------------------------

def _loop(x, mode, **kw):
    return fj.while_loop((UInt32(0), x), lambda i, y: i < UInt32(1, 2, 3), lambda i, y: (i + 1, y * y + 0.5 * y),
                         mode=mode, **kw)


def _expected_grad():
    out = []
    for x0, n in zip((1.0, 2.0, 3.0), (1, 2, 3)):
        y, d = x0, 1.0
        for _ in range(n):
            y, d = y * y + 0.5 * y, (2 * y + 0.5) * d
        out.append(d)
    return out


def test_forward_mode_through_a_symbolic_loop_matches_evaluated_mode():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    _, y = _loop(x, "symbolic")
    fj.forward_from(x)
    g = fj.grad(y)
    np.testing.assert_allclose(g.numpy(), _expected_grad(), rtol=1e-6)
    x2 = Float(1, 2, 3)
    fj.enable_grad(x2)
    _, y2 = _loop(x2, "evaluated")
    fj.forward_from(x2)
    np.testing.assert_array_equal(g.numpy(), fj.grad(y2).numpy())
    np.testing.assert_array_equal(y.numpy(), y2.numpy())


def test_forward_mode_tangent_loop_is_one_kernel():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    _, y = _loop(x, "symbolic")
    fj.forward_from(x)
    g = fj.grad(y)
    fj.kernel_history()
    fj.eval(g)
    assert len(jit_kernels()) == 1


def test_reverse_mode_through_a_symbolic_loop_needs_max_iterations():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    _, y = _loop(x, "symbolic")
    with pytest.raises(RuntimeError, match="max_iterations"):
        fj.backward_from(y)


def test_reverse_mode_with_max_iterations_matches_evaluated_mode():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    _, y = _loop(x, "symbolic", max_iterations=5)
    fj.backward_from(y)
    np.testing.assert_allclose(fj.grad(x).numpy(), _expected_grad(), rtol=1e-6)
    x2 = Float(1, 2, 3)
    fj.enable_grad(x2)
    _, y2 = _loop(x2, "evaluated")
    fj.backward_from(y2)
    np.testing.assert_array_equal(fj.grad(x).numpy(), fj.grad(x2).numpy())


def test_reverse_mode_through_a_symbolic_if_stmt():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    y = fj.if_stmt((x,), x > 1.5, lambda v: v * v, lambda v: v + 1.0, mode="symbolic")
    fj.backward_from(y)
    assert list(fj.grad(x).numpy()) == [1.0, 4.0, 6.0]     # Dr.Jit 1.5: [1, 4, 6]


def test_forward_mode_through_closure_of_a_symbolic_loop():
    # Dr.Jit 1.5: [1, 4, 12] (the body multiplies by 'p', which is not state)
    p = Float(2.0)
    fj.enable_grad(p)
    _, y = fj.while_loop((UInt32(0), Float(1, 1, 1)), lambda i, y: i < UInt32(1, 2, 3), lambda i, y: (i + 1, y * p))
    fj.forward_from(p)
    assert list(fj.grad(y).numpy()) == [1.0, 4.0, 12.0]
