"""frostjit.opt: SGD (with momentum) and Adam against NumPy references; the dict interface; learning
rates and frozen training steps for every optimizer (Dr.Jit's trajectories: test_trajectories.py)."""
import logging

import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.llvm.ad import Float, Float64, Array3f


def quadratic(x, target):
    return fj.sum(fj.square(x - target))


def reference_adam(x, target, steps, lr, b1=0.9, b2=0.999, eps=1e-8):
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    out = []
    for t in range(1, steps + 1):
        g = 2 * (x - target)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        # Dr.Jit: m / (sqrt(v) + eps), or m / sqrt(v + eps^2) for a tiny eps (<= 1e-6)
        x = x - lr_t * (m / np.sqrt(v + eps ** 2) if eps <= 1e-6 else m / (np.sqrt(v) + eps))
        out.append(x.copy())
    return out


def reference_sgd(x, target, steps, lr, momentum=0.0, nesterov=False):
    v = np.zeros_like(x)
    out = []
    for _ in range(steps):
        g = 2 * (x - target)
        v = momentum * v + g
        x = x - lr * ((g + momentum * v) if nesterov else v)
        out.append(x.copy())
    return out


X0 = np.array([0.5, -1.0, 2.0, 3.5])
TARGET = np.array([1.0, 2.0, -1.0, 0.0])


def run(opt, steps):
    opt["x"] = Float64(X0)
    target = Float64(TARGET)
    out = []
    for _ in range(steps):
        fj.backward(quadratic(opt["x"], target))
        opt.step()
        out.append(opt["x"].numpy())
    return out


def test_adam_matches_the_reference_update():
    got = run(fj.opt.Adam(lr=0.05), 30)
    want = reference_adam(X0, TARGET, 30, 0.05)
    assert np.allclose(got, want, rtol=1e-10, atol=1e-12)


def test_adam_custom_betas():
    got = run(fj.opt.Adam(lr=0.1, beta_1=0.5, beta_2=0.9, epsilon=1e-3), 10)
    want = reference_adam(X0, TARGET, 10, 0.1, 0.5, 0.9, 1e-3)
    assert np.allclose(got, want, rtol=1e-10)


def test_sgd_matches_the_reference_update():
    assert np.allclose(run(fj.opt.SGD(lr=0.1), 10), reference_sgd(X0, TARGET, 10, 0.1), rtol=1e-12)


def test_sgd_momentum_matches_the_reference_update():
    got = run(fj.opt.SGD(lr=0.05, momentum=0.9), 20)
    assert np.allclose(got, reference_sgd(X0, TARGET, 20, 0.05, 0.9), rtol=1e-12)


def test_sgd_nesterov_momentum():
    got = run(fj.opt.SGD(lr=0.05, momentum=0.9, nesterov=True), 20)
    assert np.allclose(got, reference_sgd(X0, TARGET, 20, 0.05, 0.9, True), rtol=1e-12)


def test_setitem_stores_a_grad_enabled_copy():
    opt = fj.opt.Adam(lr=0.1)
    x = Float(1.0, 2.0)
    opt["x"] = x
    assert fj.grad_enabled(opt["x"]) and not fj.grad_enabled(x)
    assert opt["x"] is not x and opt["x"].numpy().tolist() == [1, 2]


def test_step_clears_gradients_and_reenables_grad():
    opt = fj.opt.SGD(lr=0.5)
    opt["x"] = Float(1.0)
    fj.backward(opt["x"] * 2)
    opt.step()
    assert opt["x"][0] == 0
    assert fj.grad_enabled(opt["x"]) and fj.grad(opt["x"])[0] == 0


def test_dict_interface():
    opt = fj.opt.Adam(lr=0.1, params={"a": Float(1.0), "b": Float(2.0)})
    assert len(opt) == 2 and "a" in opt and set(opt.keys()) == {"a", "b"}
    assert [k for k, _ in opt.items()] == ["a", "b"]
    del opt["a"]
    assert list(opt) == ["b"]
    assert "Adam" in repr(opt)


@pytest.mark.parametrize("make", [lambda: llvm.Float(1.0), lambda: llvm.UInt32(1), lambda: 1.0])
def test_setitem_rejects_non_differentiable_values(make):
    value = make()
    with pytest.raises(TypeError, match="differentiable"):
        fj.opt.Adam(lr=0.1)["x"] = value


def test_invalid_hyperparameters_raise():
    with pytest.raises(ValueError):
        fj.opt.Adam(lr=-1)
    with pytest.raises(ValueError):
        fj.opt.Adam(lr=0.1, beta_1=1.0)
    with pytest.raises(ValueError):
        fj.opt.SGD(lr=0.1, momentum=-0.5)


def test_reassigning_a_parameter_of_same_shape_keeps_the_state():
    a = fj.opt.Adam(lr=0.05)
    b = fj.opt.Adam(lr=0.05)
    for opt in (a, b):
        opt["x"] = Float64(X0)
    target = Float64(TARGET)
    for i in range(5):
        for opt in (a, b):
            fj.backward(quadratic(opt["x"], target))
            opt.step()
        b["x"] = Float64(b["x"].numpy())      # same value re-set: state (m, v, t) kept
    assert np.allclose(a["x"].numpy(), b["x"].numpy(), rtol=1e-12)


def test_reset_forgets_the_state():
    opt = fj.opt.Adam(lr=0.05)
    opt["x"] = Float64(X0)
    fj.backward(quadratic(opt["x"], Float64(TARGET)))
    opt.step()
    opt.reset()
    opt["x"] = Float64(X0)
    fj.backward(quadratic(opt["x"], Float64(TARGET)))
    opt.step()
    assert np.allclose(opt["x"].numpy(), reference_adam(X0, TARGET, 1, 0.05)[0])


def test_set_learning_rate_does_not_recompile():
    opt = fj.opt.SGD(lr=0.1)
    opt["x"] = Float(1.0, 2.0)
    fj.backward(fj.sum(opt["x"]))
    opt.step()
    opt.set_learning_rate(0.2)
    fj.backward(fj.sum(opt["x"]))
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        opt.step()
        hist = fj.kernel_history()
    assert all(h["cache_hit"] for h in hist if h["type"] == "jit")
    assert np.allclose(opt["x"].numpy(), [0.7, 1.7])


def test_adam_step_is_one_kernel_and_does_not_recompile_across_steps():
    opt = fj.opt.Adam(lr=0.01)
    opt["x"] = Float(np.linspace(0, 1, 1000, dtype=np.float32))
    opt["y"] = Float(np.linspace(0, 1, 1000, dtype=np.float32))
    for i in range(3):
        fj.backward(fj.sum(opt["x"] * opt["y"]))
        with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
            fj.kernel_history()
            opt.step()
            hist = fj.kernel_history()
        kernels = [h for h in hist if h["type"] == "jit"]
        assert len(kernels) <= 2, hist
        if i >= 2:
            assert all(h["cache_hit"] for h in kernels)


def test_static_vector_parameters():
    opt = fj.opt.Adam(lr=0.1)
    opt["p"] = Array3f(1.0, 2.0, 3.0)
    for _ in range(100):
        fj.backward(fj.squared_norm(opt["p"] - Array3f(0.5, 0.5, 0.5)))
        opt.step()
    assert type(opt["p"]) is Array3f
    assert np.allclose(opt["p"].numpy().ravel(), 0.5, atol=0.05)


def test_mask_updates_leaves_entries_without_gradient_alone():
    opt = fj.opt.Adam(lr=0.1, mask_updates=True)
    opt["x"] = Float(1.0, 1.0)
    fj.backward(fj.sum(opt["x"] * Float(1.0, 0.0)))
    opt.step()
    assert opt["x"].numpy().tolist()[1] == 1.0 and opt["x"][0] < 1.0


def test_adam_fits_a_small_model():
    xs = np.linspace(-1, 1, 64)
    ys = 0.7 * xs ** 2 - 0.3 * xs + 0.1
    opt = fj.opt.Adam(lr=0.05)
    opt["c"] = Float(0.0, 0.0, 0.0)
    X, Y = Float(xs), Float(ys)
    for _ in range(300):
        c = opt["c"]
        pred = fj.gather(Float, c, 0) * X * X + fj.gather(Float, c, 1) * X + fj.gather(Float, c, 2)
        fj.backward(fj.mean(fj.square(pred - Y)))
        opt.step()
    assert np.allclose(opt["c"].numpy(), [0.7, -0.3, 0.1], atol=0.02)


# -- learning rates (issue 8 item 22): Dr.Jit's forms, never a re-trace ------------------------

def sgd_step(opt, coef=2.0):
    loss = fj.sum(opt["x"] * coef) + fj.sum(opt["y"] * coef)
    fj.backward(loss)
    opt.step()


def test_set_learning_rate_forms_match_drjit():
    opt = fj.opt.SGD(lr=0.5, params={"x": Float(1.0, 2.0), "y": Float(3.0)})
    assert opt.learning_rate() == 0.5 and opt.learning_rate("x") is None
    opt.set_learning_rate(0.25)
    assert opt.learning_rate() == 0.25 and opt.lr == 0.25
    opt.set_learning_rate({"x": 0.1})
    assert opt.learning_rate("x") == 0.1 and opt.learning_rate("y") is None
    opt.set_learning_rate(y=0.2)
    assert opt.learning_rate("y") == 0.2
    opt.set_learning_rate(1, x=2)
    assert opt.learning_rate() == 1.0 and type(opt.learning_rate()) is float and opt.learning_rate("x") == 2.0
    opt.set_learning_rate(y=None)
    assert opt.learning_rate("y") is None
    opt.set_learning_rate()                       # nothing to change
    opt.set_learning_rate(None)
    assert opt.learning_rate() == 1.0
    rate = Float(0.3)
    opt.set_learning_rate(rate)
    assert opt.learning_rate() is rate
    opt.lr = 0.7                                  # the attribute is the default rate, not a dead copy
    assert opt.learning_rate() == 0.7


def test_set_learning_rate_rejects_unknown_parameters_and_non_numbers():
    opt = fj.opt.Adam(lr=0.1, params={"x": Float(1.0)})
    with pytest.raises(KeyError, match="'z'"):
        opt.set_learning_rate({"z": 1.0})
    with pytest.raises(KeyError, match="'z'"):
        opt.set_learning_rate(z=1.0)
    with pytest.raises(KeyError, match="'z'"):
        opt.learning_rate("z")
    with pytest.raises(TypeError, match="learning rate"):
        opt.set_learning_rate("fast")
    with pytest.raises(ValueError, match="lr"):
        fj.opt.SGD(lr=0.0)


def test_per_parameter_rate_takes_precedence_until_removed():
    # Dr.Jit 1.5 (measured): x 1 -> 0 -> -1 -> -1.2, y 1 -> -1 -> -1.2 -> -1.4
    opt = fj.opt.SGD(lr=1.0)
    opt["x"], opt["y"] = Float(1.0), Float(1.0)
    opt.set_learning_rate({"x": 0.5})
    sgd_step(opt)
    assert (opt["x"][0], opt["y"][0]) == (0, -1)
    opt.set_learning_rate(0.1)
    sgd_step(opt)
    assert opt["x"][0] == -1 and np.isclose(opt["y"][0], -1.2)
    opt.set_learning_rate(x=None)
    sgd_step(opt)
    assert np.isclose(opt["x"][0], -1.2) and np.isclose(opt["y"][0], -1.4)


def test_parameter_rate_is_forgotten_with_the_parameter():
    opt = fj.opt.SGD(lr=1.0, params={"x": Float(1.0)})
    opt.set_learning_rate(x=0.5)
    del opt["x"]
    opt["x"] = Float(1.0)
    assert opt.learning_rate("x") is None
    opt.set_learning_rate(x=0.5)
    opt["x"] = Float(3.0)                           # re-setting the value keeps its rate
    assert opt.learning_rate("x") == 0.5


def test_learning_rate_array_with_one_rate_per_element():
    opt = fj.opt.SGD(lr=Float(0.5, 0.25))
    opt["x"] = Float(1.0, 1.0)
    fj.backward(fj.sum(opt["x"] * 2))
    opt.step()
    assert opt["x"].numpy().tolist() == [0.0, 0.5]


def test_constructor_arguments_follow_drjit():
    x = Float(1.0)
    opt = fj.opt.Adam(0.1, {"x": x}, beta_1=0.8, mask_updates=True)
    assert "x" in opt and opt.beta_1 == 0.8 and opt.mask_updates
    assert "x" in fj.opt.SGD(0.1, {"x": x}, momentum=0.5)
    with pytest.raises(TypeError):
        fj.opt.SGD(0.1, None, 0.9)                 # momentum is keyword-only, as in Dr.Jit


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_sgd_mask_updates_leaves_entries_without_gradient_alone(momentum):
    opt = fj.opt.SGD(lr=0.1, momentum=momentum, mask_updates=True)
    opt["x"] = Float(1.0, 1.0)
    for _ in range(2):
        fj.backward(fj.sum(opt["x"] * Float(1.0, 0.0)))
        opt.step()
    assert opt["x"].numpy().tolist()[1] == 1.0 and opt["x"][0] < 1.0


def _training(freeze: bool, make_opt, n: int, steps: int, per_param: bool):
    opt = make_opt()
    opt["x"] = Float(np.linspace(-1, 1, n, dtype=np.float32))
    opt["y"] = Float(np.linspace(2, 3, n, dtype=np.float32))
    target = Float(np.zeros(n, np.float32))

    def step(opt, target):
        loss = fj.sum(fj.square(opt["x"] - target)) + fj.sum(fj.square(opt["y"] * opt["x"]))
        fj.backward(loss)
        opt.step()
        return fj.detach(loss)

    f = fj.freeze(step) if freeze else step
    losses = []
    for i in range(steps):
        opt.set_learning_rate(0.1 * 0.99 ** i)
        if per_param:
            opt.set_learning_rate(y=0.05 * 0.98 ** i)
        losses.append(f(opt, target).numpy()[0])
    return f, np.array(losses), opt["x"].numpy(), opt["y"].numpy()


ALL_OPTIMIZERS = [lambda: fj.opt.Adam(lr=0.1), lambda: fj.opt.SGD(lr=0.1, momentum=0.5),
                  lambda: fj.opt.SGD(lr=0.1, momentum=0.5, nesterov=True, mask_updates=True),
                  lambda: fj.opt.RMSProp(lr=0.01), lambda: fj.opt.Adam(lr=0.1, amsgrad=True),
                  lambda: fj.opt.AdamW(lr=0.1, weight_decay=0.1, uniform=True)]


@pytest.mark.parametrize("make_opt", ALL_OPTIMIZERS)
@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_frozen_step_with_learning_rate_schedule_records_once_and_matches_plain(make_opt, n):
    per_param = n == 7
    from frostjit.backend import current_backend
    # 200 steps; 40 at the widest width on the NumPy reference backend (12-29 s each otherwise)
    steps = 40 if n > 1000 and current_backend().name != "LLVM" else 200
    f, losses, x, y = _training(True, make_opt, n, steps, per_param)
    _, plain_losses, plain_x, plain_y = _training(False, make_opt, n, steps, per_param)
    assert f.n_recordings <= 2
    np.testing.assert_array_equal(losses, plain_losses)
    np.testing.assert_array_equal(x, plain_x)
    np.testing.assert_array_equal(y, plain_y)


@pytest.mark.parametrize("make_opt", ALL_OPTIMIZERS)
def test_frozen_step_binds_the_optimizer_with_a_generated_binder(make_opt, caplog):
    # The optimizer's traversal returns the same objects every call (no fresh tuples), so the
    # frozen function's fast generated binder accepts it instead of walking it at every call.
    opt = make_opt()
    opt["x"] = Float(1.0, 2.0, 3.0)

    @fj.freeze
    def step(opt):
        fj.backward(fj.sum(fj.square(opt["x"])))
        opt.step()

    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        for i in range(4):
            opt.set_learning_rate(0.1 / (i + 1))
            step(opt)
    assert step.n_recordings == 1
    assert not [r for r in caplog.records if "no binder" in r.getMessage()]


def _scaled_training(freeze: bool, n: int, steps: int):
    opt = fj.opt.Adam(lr=0.1)
    opt["x"] = Float(np.linspace(-1, 1, n, dtype=np.float32))
    scaler = fj.opt.GradScaler(init_scale=2.0 ** 10, growth_interval=5)

    def step(opt, scaler, w):
        loss = fj.sum(fj.square(opt["x"] - 0.5) * w)
        fj.backward(scaler.scale(loss))
        scaler.step(opt)
        return fj.detach(loss)

    f = fj.freeze(step) if freeze else step
    for i in range(steps):
        opt.set_learning_rate(0.1 * 0.99 ** i)
        overflow = i in (3, 9, 10)             # an infinite gradient entry: the step is skipped
        w = Float(np.where(np.arange(n) == 0, np.inf if overflow else 1.0, 1.0).astype(np.float32))
        f(opt, scaler, w)
    return f, opt["x"].numpy(), scaler.scale_factor.numpy(), scaler.it.numpy()


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_frozen_step_with_a_grad_scaler_matches_plain(n):
    f, x, scale, it = _scaled_training(True, n, 30)
    _, plain_x, plain_scale, plain_it = _scaled_training(False, n, 30)
    # the scale and the counter are Python numbers at the first call, arrays afterwards (Dr.Jit)
    assert f.n_recordings == 2
    np.testing.assert_array_equal(x, plain_x)
    np.testing.assert_array_equal(scale, plain_scale)
    np.testing.assert_array_equal(it, plain_it)
