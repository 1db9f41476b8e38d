"""Gradients through a frozen function's results (freeze/through.py): the backward (and forward)
pass through a replayed call is replayed too, and equals the plain call's at every width."""
import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.ad import graph
from frostjit.freeze.frozen import FreezeWarning
from frostjit.llvm import UInt32
from frostjit.llvm.ad import Array3f, Float

WIDTHS = (7, 1, 7, 1000, 100003)


def arr(n, seed, lo=-1.5, hi=1.5):
    return Float(np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32))


def _rev(u):
    n = fj.width(u)
    return fj.gather(Float, u, n - 1 - fj.arange(UInt32, n))


# width-agnostic operations, bounded values (the last 1-2 stack entries are the arguments)
UNARY = [fj.sin, fj.cos, fj.tanh, lambda u: fj.exp(fj.sin(u)), lambda u: fj.sqrt(1 + u * u),
         lambda u: u * fj.mean(fj.cos(u)), lambda u: u - fj.max(u), lambda u: 0.01 * fj.cumsum(u),
         lambda u: fj.rcp(2 + fj.sin(u)), _rev, lambda u: u + 0.001 * fj.sum(u)]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a / (2 + fj.sin(b)),
          lambda a, b: fj.select(a > b, fj.sin(a), b), fj.minimum, lambda a, b: fj.atan2(a, 1.5 + fj.cos(b))]
OPS = [(1, f) for f in UNARY] + [(2, f) for f in BINARY]
program = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 99), st.integers(0, 99)),
                   min_size=1, max_size=5)


def run(prog, x, y):
    stack = [x, y]
    for op, i, j in prog:
        arity, f = OPS[op]
        args = [stack[-1 - (i % len(stack))], stack[j % len(stack)]][:arity]
        stack.append(f(*args))
    return stack[-1], stack[len(stack) // 2]


def derivatives(f) -> list:
    """The frozen derivative functions of ``f``'s recordings (freeze/through.py)."""
    out = []
    for entry in f._cache.entries.values():
        for r in entry.order:
            info = getattr(r, "through", None)
            if info is not None:
                out += [d for d in (info.vjp, info.jvp) if d is not None]
    return out


def close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.allclose(a, b, rtol=2e-5, atol=2e-5 * (1 + np.abs(b).max(initial=0)), equal_nan=True)


@settings(max_examples=12)
@given(program, st.integers(0, 2**31), st.sampled_from(["x", "y", "xy"]))
def test_frozen_backward_equals_plain_backward_on_random_programs_at_every_width(prog, seed, which):
    f = fj.freeze(lambda x, y: run(prog, x, y))
    for n in WIDTHS:
        grads = []
        for g in (f, lambda x, y: run(prog, x, y)):
            x, y = arr(n, seed), arr(n, seed + 1)
            fj.enable_grad(*[v for name, v in (("x", x), ("y", y)) if name in which])
            a, b = g(x, y)
            # the loss adds operations outside the frozen call, and weights both outputs
            loss = fj.sum(a * arr(n, seed + 2)) + fj.sum(fj.sin(b)) * 0.5
            fj.backward(loss, fj.ADFlag.Default | fj.ADFlag.AllowNoGrad)
            grads.append((fj.grad(x).numpy(), fj.grad(y).numpy(), a.numpy()))
        (gx, gy, a), (px, py, pa) = grads
        assert close(a, pa) and close(gx, px) and close(gy, py), (n, prog)
    assert f.n_recordings <= 2


@settings(max_examples=8)
@given(program, st.integers(0, 2**31))
def test_frozen_forward_mode_equals_plain_forward_mode_on_random_programs(prog, seed):
    f = fj.freeze(lambda x, y: run(prog, x, y))
    for n in (7, 1, 7, 1000):
        tangents = []
        for g in (f, lambda x, y: run(prog, x, y)):
            x, y = arr(n, seed), arr(n, seed + 1)
            fj.enable_grad(x)
            a, b = g(x, y)
            fj.set_grad(x, arr(n, seed + 3))
            # ClearNone: through a replay the outputs are children of the hub, not of each other,
            # so the default ClearInterior would clear an output's tangent only in the plain call
            # when another output is computed from it (docs/ad.md, "Differences")
            fj.forward_from(x, fj.ADFlag.ClearNone | fj.ADFlag.AllowNoGrad)
            tangents.append((fj.grad(a).numpy(), fj.grad(b).numpy()))
        (ta, tb), (pa, pb) = tangents
        assert close(ta, pa) and close(tb, pb), (n, prog)


@pytest.mark.no_freeze_check
def test_training_loop_replays_both_directions_and_follows_the_plain_trajectory_over_50_steps():
    k, hw = 8, 32
    gid = fj.arange(UInt32, k * hw)
    g, pix = gid // hw, gid % hw
    px = Float(pix) / hw
    target = Float(0.5 + 0.4 * np.sin(np.linspace(0, 6, hw)).astype(np.float32))
    rng = np.random.default_rng(0)
    init = {"mu": rng.uniform(0, 1, k).astype(np.float32), "amp": rng.uniform(0.1, 0.5, k).astype(np.float32)}

    def forward(mu, amp, target, g, pix, px):
        d = px - fj.gather(Float, mu, g)
        img = fj.zeros(Float, fj.width(target))
        fj.scatter_add(img, fj.gather(Float, amp, g) * fj.exp(-d * d * 40), pix)
        return fj.mean(fj.square(img - target))

    runs = []
    for frozen in (False, True):
        opt = fj.opt.Adam(lr=0.02)
        for name, v in init.items():
            opt[name] = Float(v)
        f = fj.freeze(forward) if frozen else forward
        traj = []
        for i in range(50):
            before = graph.next_id()
            loss = f(opt["mu"], opt["amp"], target, g, pix, px)
            fj.backward(loss)
            opt.step()
            traj.append((loss[0], opt["mu"].numpy().copy(), opt["amp"].numpy().copy()))
            if frozen and i > 2:
                # a replayed step builds no AD graph: the hub, the loss, the two new parameter leaves
                assert graph.next_id() - before <= 6
        runs.append(traj)
        if frozen:
            # the forward traced once, its backward derivative once: both directions replay
            assert f.n_recordings == 1
            assert [d.n_recordings for d in derivatives(f)] == [1]
    for (l0, m0, a0), (l1, m1, a1) in zip(*runs):
        assert np.isclose(l0, l1, rtol=1e-5)
        assert np.allclose(m0, m1, rtol=1e-5, atol=1e-6) and np.allclose(a0, a1, rtol=1e-5, atol=1e-6)
    assert runs[1][-1][0] < runs[1][0][0]


def test_which_inputs_require_gradients_changes_the_recording():
    f = fj.freeze(lambda x, y: fj.sin(x) * fj.cos(y))
    for which in ("x", "y", "xy", "x", "xy", "y"):
        for n in (5, 9):
            x, y = arr(n, 1), arr(n, 2)
            fj.enable_grad(*[v for name, v in (("x", x), ("y", y)) if name in which])
            fj.backward(fj.sum(f(x, y)))
            xv, yv = x.numpy(), y.numpy()
            assert close(fj.grad(x).numpy(), np.cos(xv) * np.cos(yv) if "x" in which else 0 * xv)
            assert close(fj.grad(y).numpy(), -np.sin(xv) * np.sin(yv) if "y" in which else 0 * yv)


def test_only_the_outputs_that_received_gradients_are_seeded():
    f = fj.freeze(lambda x: (fj.sin(x), fj.exp(x), x * 3))
    for pick in (0, 1, 2, 0, 1):
        x = arr(6, pick)
        fj.enable_grad(x)
        outs = f(x)
        fj.backward(fj.sum(outs[pick]))
        want = [np.cos, np.exp, lambda v: 3 + 0 * v][pick](x.numpy())
        assert close(fj.grad(x).numpy(), want)


def test_gradient_reaches_what_the_inputs_were_computed_from_and_accumulates():
    f = fj.freeze(lambda x: fj.square(x))
    for n in (4, 4, 11):
        a = arr(n, 3)
        fj.enable_grad(a)
        x = a * 3                      # computed outside from a grad-enabled variable
        y = f(x) + x * 2               # a second path to x, made before the traversal reaches the hub
        fj.backward(fj.sum(y))
        assert close(fj.grad(a).numpy(), 3 * (2 * x.numpy() + 2))


def test_backward_to_only_reaches_its_targets():
    f = fj.freeze(lambda x, y: x * y)
    for n in (3, 3, 8):
        x, y = arr(n, 4), arr(n, 5)
        fj.enable_grad(x, y)
        z = f(x, y)
        fj.set_grad(z, 1.0)
        gx = fj.backward_to(x)
        assert close(gx.numpy(), y.numpy())
        assert close(fj.grad(y).numpy(), 0 * y.numpy())


def test_forward_mode_through_a_frozen_result():
    f = fj.freeze(lambda x, y: (fj.sin(x) * y, x + y))
    for n in (4, 4, 9):
        x, y = arr(n, 6), arr(n, 7)
        fj.enable_grad(x)
        a, b = f(x, y)
        fj.forward(x)
        assert close(fj.grad(a).numpy(), np.cos(x.numpy()) * y.numpy())
        assert close(fj.grad(b).numpy(), np.ones(n))


def test_input_changed_in_place_before_the_backward_pass_differentiates_the_value_the_call_saw():
    def g(x, w):
        return fj.square(x) * w
    f = fj.freeze(g)
    for n in (5, 5, 5, 9):
        got = []
        for fn in (f, g):
            x, w = arr(n, 8), arr(n, 9)
            fj.enable_grad(x, w)
            y = fn(x, w)
            w[0] = 100.0                  # w changes in place (a new node in the same array object)
            fj.backward(fj.sum(y))
            got.append((fj.grad(x).numpy(), fj.grad(w).numpy(), w.numpy()))
        (gx, gw, w1), (px, pw, w0) = got
        assert close(gx, px) and close(gw, pw) and close(w1, w0) and w1[0] == 100.0


def test_input_replaced_in_its_container_before_the_backward_pass_raises():
    f = fj.freeze(lambda d: fj.square(d["x"]))
    results = []
    for n in (5, 5):
        d = {"x": arr(n, 9)}
        fj.enable_grad(d["x"])
        results.append(f(d))
    d["x"] = arr(5, 10)
    with pytest.raises(RuntimeError, match="replaced"):
        fj.backward(fj.sum(results[-1]))


def test_suspended_inputs_get_no_gradient_through_a_replay():
    f = fj.freeze(lambda x, y: x * y)
    for n in (4, 4, 6):
        x, y = arr(n, 11), arr(n, 12)
        fj.enable_grad(x, y)
        with fj.suspend_grad(y):
            z = f(x, y)
        fj.backward(fj.sum(z))
        assert close(fj.grad(x).numpy(), y.numpy())
        assert close(fj.grad(y).numpy(), 0 * y.numpy())


def test_a_function_that_also_writes_back_still_runs_plainly_with_correct_gradients():
    def g(x, state):
        state["n"] = state["n"] + x
        return fj.sin(x)
    f = fj.freeze(g)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in (4, 4, 7):
            x = arr(n, 13)
            fj.enable_grad(x)
            state = {"n": Float(np.zeros(n, np.float32))}
            fj.backward(fj.sum(f(x, state)))
            assert close(fj.grad(x).numpy(), np.cos(x.numpy()))
    assert any(issubclass(i.category, FreezeWarning) for i in w)


@dataclasses.dataclass
class _Out:
    a: Float
    v: Array3f
    tag: str = "t"


class _Square(fj.CustomOp):
    def eval(self, x):
        self.x = x
        return x * x

    def forward(self):
        self.set_grad_out(2 * self.x * self.grad_in("x"))

    def backward(self):
        self.set_grad_in("x", 2 * self.x * self.grad_out())


def test_outputs_in_structures_custom_operations_and_an_input_variable_in_a_new_array():
    # v.x is Float(x): x's own AD variable in another array object.  Before, a replay made it a
    # new AD leaf (its gradient never reached x).
    def g(x):
        y = fj.custom(_Square, x)
        return _Out(y + 1, Array3f(x, y, fj.sin(x)))
    f = fj.freeze(g)
    for n in (3, 3, 5, 5, 1000):
        got = []
        for fn in (f, g):
            x = arr(n, 14)
            fj.enable_grad(x)
            o = fn(x)
            fj.backward(fj.sum(o.a) + fj.sum(o.v.z) + 3 * fj.sum(o.v.x))
            got.append(fj.grad(x).numpy())
        assert type(o) is _Out and close(got[0], got[1])
        assert close(got[0], 2 * x.numpy() + np.cos(x.numpy()) + 3)
    # sum()'s gradient is a literal of the width: when the width changes it becomes opaque, one
    # more trace of the derivative (auto_opaque, as for any frozen function and in Dr.Jit)
    assert f.n_recordings == 1 and [d.n_recordings for d in derivatives(f)] == [2]


def test_grad_enabled_state_of_the_call_is_keyed_suspended_calls_give_plain_results():
    f = fj.freeze(lambda x: fj.exp(x) * 2)
    for suspended in (False, True, False, True, False):
        for n in (4, 9):
            x = arr(n, 15)
            fj.enable_grad(x)
            if suspended:
                with fj.suspend_grad():
                    y = f(x)
                assert not fj.grad_enabled(y)
                continue
            y = f(x)
            fj.backward(fj.sum(y))
            assert close(fj.grad(x).numpy(), 2 * np.exp(x.numpy()))
    assert f.n_recordings == 2


def test_other_paths_to_an_input_made_before_the_call_still_reach_its_parents():
    # y1 is made before the call: the traversal reaches it after the hub.  (In checking mode the
    # plain reference call used to run outside an isolation scope, walk on into a and clear x's
    # edges before y1's contribution arrived.)
    f = fj.freeze(lambda x: fj.square(x), check=True)
    for n in (4, 4, 4, 11):
        a = arr(n, 16)
        fj.enable_grad(a)
        x = a * 3
        y1 = x * 2
        fj.backward(fj.sum(f(x)) + fj.sum(y1))
        assert close(fj.grad(a).numpy(), 3 * (2 * x.numpy() + 2))


def test_a_replayed_call_through_its_result_leaves_no_reference_cycle():
    # The hub holds its handler (the call's Through); a strong reference back made a cycle that
    # kept the call's arrays (and their buffers) alive until the cyclic GC ran.
    import gc
    import weakref
    f = fj.freeze(lambda x: fj.sum(fj.sin(x)))
    x = arr(7, 0)
    fj.enable_grad(x)
    for _ in range(3):
        fj.backward(f(x))
    gc.collect()
    gc.disable()
    try:
        loss = f(x)
        hub = weakref.ref(loss._ad.parents[0][0])
        handler = weakref.ref(hub().handler)
        fj.backward(loss)
        del loss
        assert hub() is None and handler() is None
        loss = f(x)             # never differentiated
        hub = weakref.ref(loss._ad.parents[0][0])
        del loss
        assert hub() is None
    finally:
        gc.enable()
    assert np.allclose(fj.grad(x).numpy(), 4 * np.cos(x.numpy()), rtol=1e-5)


def test_repeated_calls_do_not_grow_the_inputs_lists_of_children():
    # The hub of each replay is a child of the inputs' vertices (a weak reference); dead ones
    # are pruned as for any vertex, or a parameter replayed 1e6 times would hold 1e6 of them.
    f = fj.freeze(lambda x: fj.sum(fj.sin(x)))
    x = arr(7, 0)
    fj.enable_grad(x)
    for _ in range(300):
        f(x)
    assert len(x._ad.children) < 64
    loss = f(x)
    fj.backward(loss)
    assert np.allclose(fj.grad(x).numpy(), np.cos(x.numpy()), rtol=1e-5)
