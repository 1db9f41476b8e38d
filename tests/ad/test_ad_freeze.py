"""AD under fj.freeze: backward inside, gradients through outputs, optimizer steps, trajectories."""
import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import UInt32
from frostjit.llvm.ad import Float


def arr(n, seed=0, cls=Float):
    return cls(np.random.default_rng(seed).uniform(0.5, 1.5, n).astype(np.float32 if cls is Float else np.float64))


def test_grad_enabled_status_is_part_of_the_layout_key():
    f = fj.freeze(lambda x: x * 2)
    a = arr(4)
    f(a)
    b = arr(4)
    fj.enable_grad(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f(b)
    assert f.n_recordings == 2


def test_backward_inside_gives_input_gradients_on_every_replay_and_width():
    @fj.freeze
    def f(x, y):
        loss = fj.sum(fj.sin(x) * y)
        fj.backward(loss)
        return fj.detach(loss)

    for n in (5, 5, 9, 5, 17):
        x, y = arr(n, 1), arr(n, 2)
        fj.enable_grad(x, y)
        f(x, y)
        assert np.allclose(fj.grad(x).numpy(), np.cos(x.numpy()) * y.numpy(), rtol=1e-5)
        assert np.allclose(fj.grad(y).numpy(), np.sin(x.numpy()), rtol=1e-5)
    assert f.n_recordings == 1


def test_backward_inside_reaches_variables_the_inputs_were_computed_from():
    @fj.freeze
    def f(x):
        fj.backward(fj.mean(fj.square(x)))

    for n in (4, 4, 8):
        p = arr(n, 3)
        fj.enable_grad(p)
        x = p * 3.0              # computed outside the frozen function
        f(x)
        assert np.allclose(fj.grad(p).numpy(), 2 * 3.0 * x.numpy() / n, rtol=1e-5)
        assert np.allclose(fj.grad(x).numpy(), 0)     # interior: cleared, as in a plain call
    assert f.n_recordings == 1


def test_backward_inside_with_gather_and_scatter():
    @fj.freeze
    def f(params, idx):
        v = fj.gather(Float, params, idx)
        img = fj.zeros(Float, fj.width(params))
        fj.scatter_add(img, v * v, idx)
        fj.backward(fj.sum(img))

    for n in (6, 6, 10):
        p = arr(n, 4)
        fj.enable_grad(p)
        idx = UInt32(np.arange(2 * n) % n)
        f(p, idx)
        assert np.allclose(fj.grad(p).numpy(), 4 * p.numpy(), rtol=1e-5)


def test_gradient_accumulates_across_frozen_calls_like_plain_calls():
    def g(x):
        fj.backward(fj.sum(x * x))
    f = fj.freeze(g)
    x1, x2 = arr(5, 5), arr(5, 5)
    fj.enable_grad(x1, x2)
    for _ in range(3):
        f(x1)
        g(x2)
    assert np.allclose(fj.grad(x1).numpy(), fj.grad(x2).numpy())
    assert np.allclose(fj.grad(x1).numpy(), 6 * x1.numpy(), rtol=1e-5)


def test_forward_mode_inside():
    @fj.freeze
    def f(x):
        y = fj.exp(x) * 2
        fj.forward(x)
        return fj.grad(y)

    for n in (3, 3, 6):
        x = arr(n, 6)
        fj.enable_grad(x)
        assert np.allclose(f(x).numpy(), 2 * np.exp(x.numpy()), rtol=1e-5)


def test_differentiating_through_a_frozen_result_gives_correct_gradients():
    @fj.freeze
    def f(x, y):
        return fj.sin(x) * y, x + y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (4, 4, 7):
            x, y = arr(n, 7), arr(n, 8)
            fj.enable_grad(x)
            a, b = f(x, y)
            fj.backward(fj.sum(a * 2 + b))
            assert np.allclose(fj.grad(x).numpy(), 2 * np.cos(x.numpy()) * y.numpy() + 1, rtol=1e-5)
            assert not np.allclose(fj.grad(x).numpy(), 0)


def test_non_grad_enabled_calls_still_replay():
    f = fj.freeze(lambda x: fj.sin(x) + 1)
    for n in (4, 4, 8):
        f(arr(n))
    assert f.n_recordings == 1


def test_optimizer_step_inside_updates_state_on_every_replay():
    target = Float(np.linspace(-1, 1, 8).astype(np.float32))

    def step(opt, target):
        fj.backward(fj.sum(fj.square(opt["x"] - target)))
        opt.step()

    plain, frozen = fj.opt.Adam(lr=0.05), fj.opt.Adam(lr=0.05)
    for o in (plain, frozen):
        o["x"] = Float(np.zeros(8, np.float32))
    fstep = fj.freeze(step)
    for i in range(10):
        step(plain, target)
        fstep(frozen, target)
        assert np.allclose(plain["x"].numpy(), frozen["x"].numpy(), rtol=1e-6, atol=1e-7), i
        assert fj.grad_enabled(frozen["x"])
    assert fstep.n_recordings == 1


@pytest.mark.parametrize("make_opt", [lambda: fj.opt.Adam(lr=0.02), lambda: fj.opt.SGD(lr=0.05, momentum=0.8)])
def test_training_loop_frozen_and_unfrozen_same_trajectory_over_50_steps(make_opt):
    k, hw = 8, 32
    gid = fj.arange(UInt32, k * hw)
    g, pix = gid // hw, gid % hw
    px = Float(pix) / hw
    target = Float(0.5 + 0.4 * np.sin(np.linspace(0, 6, hw)).astype(np.float32))
    rng = np.random.default_rng(0)
    init = {"mu": rng.uniform(0, 1, k).astype(np.float32), "amp": rng.uniform(0.1, 0.5, k).astype(np.float32)}

    def step(opt, target, g, pix, px):
        d = px - fj.gather(Float, opt["mu"], g)
        img = fj.zeros(Float, fj.width(target))
        fj.scatter_add(img, fj.gather(Float, opt["amp"], g) * fj.exp(-d * d * 40), pix)
        loss = fj.mean(fj.square(img - target))
        fj.backward(loss)
        opt.step()
        return fj.detach(loss)

    runs = []
    for frozen in (False, True):
        opt = make_opt()
        for name, v in init.items():
            opt[name] = Float(v)
        f = fj.freeze(step) if frozen else step
        traj = []
        for _ in range(50):
            loss = f(opt, target, g, pix, px)
            traj.append((loss[0], opt["mu"].numpy().copy(), opt["amp"].numpy().copy()))
        runs.append(traj)
        if frozen:
            assert f.n_recordings == 1
    for (l0, m0, a0), (l1, m1, a1) in zip(*runs):
        assert np.isclose(l0, l1, rtol=1e-5)
        assert np.allclose(m0, m1, rtol=1e-5, atol=1e-6) and np.allclose(a0, a1, rtol=1e-5, atol=1e-6)
    assert runs[0][-1][0] < runs[0][0][0]


def test_frozen_training_step_is_much_cheaper_to_call():
    """Not a timing assertion: a replay runs no Python per operation, so it builds no AD graph."""
    import frostjit.ad.graph as graph
    target = Float(np.zeros(16, np.float32))

    def step(opt, target):
        fj.backward(fj.sum(fj.square(opt["x"] - target)))
        opt.step()
    opt = fj.opt.Adam(lr=0.1)
    opt["x"] = Float(np.ones(16, np.float32))
    f = fj.freeze(step)
    f(opt, target)
    f(opt, target)
    before = graph.next_id()
    f(opt, target)
    assert graph.next_id() - before <= 3      # one new leaf (the updated parameter), no graph
