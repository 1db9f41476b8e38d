"""Dr.Jit 1.5's optimizer interface beyond the update rules: the state layout, reset, step's
``grad_scale``/``active``, RMSProp/AdamW/GradScaler arguments, saving and restoring the state
(pickle, copy.deepcopy, the ``state`` dictionary), the mapping methods, ``repr``."""
import copy
import logging
import pickle

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Bool, UInt32
from frostjit.llvm.ad import Float, Float64, Array3f

OPTIMIZERS = {
    "sgd": lambda: fj.opt.SGD(lr=0.1, momentum=0.5, nesterov=True),
    "rmsprop": lambda: fj.opt.RMSProp(lr=0.05),
    "adam": lambda: fj.opt.Adam(lr=0.1, amsgrad=True),
    "adamw": lambda: fj.opt.AdamW(lr=0.1, weight_decay=0.05, uniform=True),
}


def loss_of(opt):
    x, v = opt["x"], opt["v"]
    return fj.sum(fj.square(x - 0.5) * fj.arange(Float, len(x))) + fj.sum(fj.squared_norm(v - 1))


def steps(opt, n):
    for _ in range(n):
        fj.backward(loss_of(opt))
        opt.step()


def make(name):
    opt = OPTIMIZERS[name]()
    opt["x"] = Float(np.linspace(-1, 2, 9, dtype=np.float32))
    opt["v"] = Array3f(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4))
    return opt


def snapshot(opt):
    return {k: opt[k].numpy().copy() for k in opt}


# ---------------------------------------------------------------------------
# The state, reset, shapes

def test_state_is_drjits_tuple_value_promoted_rate_extra():
    opt = fj.opt.Adam(lr=0.1, amsgrad=True)
    opt["x"] = Float(1, 2, 3)
    steps_ = 2
    for _ in range(steps_):
        fj.backward(fj.sum(opt["x"] * opt["x"]))
        opt.step()
    value, promoted, rate, (t, m, v, v_max) = opt.state["x"]
    assert value is opt["x"] and promoted is False and rate is None
    assert type(t) is UInt32 and t.numpy().tolist() == [steps_]
    assert type(m) is Float and type(v) is Float and type(v_max) is Float and not fj.grad_enabled(m)
    assert fj.opt.Adam(lr=0.1, params={"x": Float(1)}).state["x"][3][3] is None      # no amsgrad
    assert fj.opt.SGD(lr=0.1, params={"x": Float(1)}).state["x"][3] is None          # no momentum


def test_reset_also_forgets_the_parameters_own_rate():
    # Dr.Jit 1.5: reset() rebuilds the entry with no own learning rate
    opt = fj.opt.Adam(lr=0.1, params={"x": Float(1.0)})
    opt.set_learning_rate(x=0.5)
    fj.backward(opt["x"] * 2)
    opt.step()
    opt.reset("x")
    assert opt.learning_rate("x") is None and opt.state["x"][2] is None
    assert opt.state["x"][3][0].numpy().tolist() == [0]


def test_a_parameter_of_another_shape_resets_state_and_rate():
    opt = fj.opt.Adam(lr=0.1, params={"x": Float(1.0, 2.0)})
    opt.set_learning_rate(x=0.5)
    fj.backward(fj.sum(opt["x"]))
    opt.step()
    opt["x"] = Float(1.0, 2.0, 3.0)
    assert opt.learning_rate("x") is None and opt.state["x"][3][0].numpy().tolist() == [0]
    opt["x"] = Float(5.0, 6.0, 7.0)                 # same shape: state kept
    assert opt.state["x"][0].numpy().tolist() == [5, 6, 7]


def test_an_empty_parameter_raises():
    with pytest.raises(RuntimeError, match="empty"):
        fj.opt.SGD(lr=0.1)["x"] = Float()


def test_setitem_stores_an_evaluated_copy():
    opt = fj.opt.SGD(lr=0.1)
    opt["x"] = Float(1.0, 2.0) * 3
    assert opt["x"].state == "evaluated"


# ---------------------------------------------------------------------------
# step(grad_scale=..., active=...)

@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_grad_scale_multiplies_the_gradients(name):
    a, b = make(name), make(name)
    for _ in range(3):
        fj.backward(loss_of(a))
        a.step()
        fj.backward(loss_of(b) * 4)
        b.step(grad_scale=0.25)
    for k in a:
        np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_an_inactive_step_changes_no_value_and_no_moment(name):
    opt = make(name)
    steps(opt, 2)
    before = snapshot(opt)
    extra = [copy.deepcopy(fj.tree.leaves(opt.state[k][3])) for k in opt]
    fj.backward(loss_of(opt))
    opt.step(active=Bool(False))
    for k in opt:
        np.testing.assert_array_equal(opt[k].numpy(), before[k])
    for k, old in zip(opt, extra):
        new = fj.tree.leaves(opt.state[k][3])
        if isinstance(opt, fj.opt.Adam):        # the step count advances (Dr.Jit)
            assert new[0].numpy()[0] == old[0].numpy()[0] + 1
            new, old = new[1:], old[1:]
        for a, b in zip(new, old):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_step_without_eval_leaves_the_update_pending():
    opt = fj.opt.SGD(lr=0.1, params={"x": Float(1.0, 2.0)})
    fj.backward(fj.sum(opt["x"]))
    opt.step(eval=False)
    assert opt["x"].state == "unevaluated" and opt["x"].numpy().tolist() == pytest.approx([0.9, 1.9])


def test_adam_keeps_an_array_learning_rate():
    # Dr.Jit 1.5 multiplies an array rate in place by the bias correction at every step (a bug:
    # the rate read back changes sign); frostjit keeps it, and each element follows its own rate.
    rates = [0.1, 0.2, 0.05]
    opt = fj.opt.Adam(lr=0.3, params={"x": Float(1.0, 2.0, 3.0)})
    opt.set_learning_rate(x=Float(*rates))
    alone = [fj.opt.Adam(lr=r, params={"x": Float(float(i + 1))}) for i, r in enumerate(rates)]
    for _ in range(5):
        for o in [opt] + alone:
            fj.backward(fj.sum(fj.square(o["x"])))
            o.step()
    assert opt.learning_rate("x").numpy().tolist() == pytest.approx(rates)
    np.testing.assert_allclose(opt["x"].numpy(), [o["x"].numpy()[0] for o in alone], rtol=1e-6)


# ---------------------------------------------------------------------------
# Arguments

def test_hyper_parameter_errors_are_value_and_runtime_errors():
    # Dr.Jit raises RuntimeError there; ValueError says what is wrong
    for make in (lambda: fj.opt.Adam(lr=0.1, beta_1=1.5), lambda: fj.opt.SGD(lr=0.1, momentum=-1.0),
                 lambda: fj.opt.RMSProp(lr=0.1, alpha=1.0)):
        with pytest.raises(RuntimeError) as info:
            make()
        assert isinstance(info.value, ValueError) and isinstance(info.value, fj.errors.OptimizerArgumentError)


def test_registering_a_bad_parameter_uses_drjits_words():
    opt = fj.opt.Adam(lr=0.1)
    with pytest.raises(TypeError, match='cannot register parameter "x" of type "int"'):
        opt["x"] = 1
    with pytest.raises(TypeError, match='cannot register parameter "u" of type "UInt'):
        opt["u"] = UInt32(1)
    with pytest.raises(RuntimeError, match='parameter "x" is empty'):
        opt["x"] = Float()


def test_hyper_parameters_are_checked():
    with pytest.raises(ValueError, match="alpha"):
        fj.opt.RMSProp(lr=0.1, alpha=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        fj.opt.RMSProp(lr=0.1, epsilon=-1)
    with pytest.raises(ValueError, match="weight_decay"):
        fj.opt.AdamW(lr=0.1, weight_decay=-0.1)
    with pytest.raises(ValueError, match="epsilon"):
        fj.opt.Adam(lr=0.1, epsilon=-1)
    with pytest.raises(ValueError, match="backoff_factor"):
        fj.opt.GradScaler(backoff_factor=1.0)
    with pytest.raises(ValueError, match="growth_factor"):
        fj.opt.GradScaler(growth_factor=0.5)


def test_constructors_take_drjits_keywords():
    x = Float(1.0)
    assert fj.opt.AdamW(0.1, {"x": x}, weight_decay=0.2, amsgrad=True, uniform=False, promote_fp16=False).amsgrad
    assert fj.opt.RMSProp(0.1, {"x": x}, alpha=0.9, epsilon=1e-3, mask_updates=True).alpha == 0.9
    assert fj.opt.SGD(0.1, momentum=0.5, promote_fp16=True).momentum == 0.5
    assert fj.opt.AdamW(0.1).weight_decay == 0.01                 # Dr.Jit's default
    assert isinstance(fj.opt.AdamW(0.1), fj.opt.Adam)


def test_repr_lists_parameters_count_rates_and_hyper_parameters():
    opt = fj.opt.AdamW(lr=0.1, params={"x": Float(1, 2, 3), "v": Array3f(1, 2, 3)})
    opt.set_learning_rate(v=0.5)
    text = repr(opt)
    assert text.startswith("AdamW[\n  parameters = ['x', 'v'],\n  total_count = 6,\n")
    assert "lr = {'default': 0.1, 'v': 0.5}" in text and "beta = (0.9, 0.999)" in text
    assert "weight_decay = 0.01" in text and text.endswith("\n]")


def test_mapping_methods():
    opt = fj.opt.SGD(lr=0.1, params={"a": Float(1.0), "b": Float(2.0)})
    assert opt.get("a") is opt["a"] and opt.get("z") is None
    assert opt.pop("a").numpy().tolist() == [1] and list(opt) == ["b"]
    assert opt == opt and opt != fj.opt.SGD(lr=0.1) and hash(opt) == hash(opt)
    opt.clear()
    assert len(opt) == 0


def test_learning_rate_type_alias():
    assert fj.opt.LearningRate.__args__ == (float, fj.opt.base.ArrayBase)


# ---------------------------------------------------------------------------
# GradScaler

def scaled_steps(opt, scaler, n, bad_steps=()):
    scales = []
    for i in range(n):
        x = opt["x"]
        w = Float(np.where(np.arange(len(x)) == 1, np.inf if i in bad_steps else 1.0, 1.0).astype(np.float32))
        fj.backward(scaler.scale(fj.sum(fj.square(x - 0.5) * w)))
        scaler.step(opt)
        scales.append(float(np.asarray(scaler.scale_factor.numpy() if hasattr(scaler.scale_factor, "numpy")
                                       else scaler.scale_factor).ravel()[0]))
    return scales


def test_grad_scaler_skips_overflowing_steps_and_adapts_the_scale():
    opt = fj.opt.SGD(lr=0.1, params={"x": Float(1.0, 2.0, 3.0)})
    scaler = fj.opt.GradScaler(init_scale=1024.0, growth_interval=3)
    scales = scaled_steps(opt, scaler, 2)
    x_before = opt["x"].numpy().copy()
    scales += scaled_steps(opt, scaler, 1, bad_steps=(0,))
    np.testing.assert_array_equal(opt["x"].numpy(), x_before)          # skipped
    scales += scaled_steps(opt, scaler, 6)
    # steps without overflow: the counter reaches growth_interval, then the scale grows every step
    assert scales == [1024, 1024, 512, 512, 512, 512, 1024, 2048, 4096]


def test_grad_scaler_step_equals_an_unscaled_step():
    a = fj.opt.Adam(lr=0.1, params={"x": Float(1.0, 2.0, 3.0)})
    b = fj.opt.Adam(lr=0.1, params={"x": Float(1.0, 2.0, 3.0)})
    scaler = fj.opt.GradScaler(init_scale=2.0 ** 8)
    for _ in range(4):
        fj.backward(fj.sum(fj.square(a["x"] - 0.5)))
        a.step()
    scaled_steps(b, scaler, 4)
    np.testing.assert_allclose(a["x"].numpy(), b["x"].numpy(), rtol=1e-6)


def test_grad_scaler_scale_unscale_and_no_parameters():
    scaler = fj.opt.GradScaler(init_scale=4.0)
    assert scaler.scale(Float(1.0, 2.0)).numpy().tolist() == [4, 8]
    assert scaler.unscale(Float(4.0)).numpy().tolist() == [1]
    scaler.step(fj.opt.SGD(lr=0.1))                      # nothing to do
    assert scaler.scale_factor == 4.0


def test_grad_scaler_handles_static_vector_parameters():
    # (Dr.Jit 1.5's GradScaler raises for a static vector parameter)
    opt = fj.opt.SGD(lr=0.1, params={"v": Array3f(1, 2, 3)})
    scaler = fj.opt.GradScaler(init_scale=8.0)
    fj.backward(scaler.scale(fj.sum(opt["v"].x * float("nan"))))
    scaler.step(opt)
    assert scaler.scale_factor.numpy().tolist() == [4] and opt["v"].numpy().tolist() == [[1], [2], [3]]


def test_grad_scaler_debug_logs_changes(caplog):
    opt = fj.opt.SGD(lr=0.1, params={"x": Float(1.0, 2.0)})
    scaler = fj.opt.GradScaler(init_scale=8.0, debug=True)
    with caplog.at_level(logging.INFO, logger="frostjit"):
        scaled_steps(opt, scaler, 1, bad_steps=(0,))
    assert any("overflow" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------
# Saving and restoring

@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "state"])
def test_state_round_trips_and_the_trajectory_continues(name, how):
    opt = make(name)
    opt.set_learning_rate(x=0.05)
    steps(opt, 3)
    if how == "pickle":
        saved = pickle.dumps(opt)
    elif how == "deepcopy":
        saved = copy.deepcopy(opt)
    else:
        saved = dict(opt.state)                   # Dr.Jit's way: the entries are immutable tuples
    steps(opt, 4)
    after = snapshot(opt)
    if how == "pickle":
        restored = pickle.loads(saved)
    elif how == "deepcopy":
        restored = saved
    else:
        # The saved parameters received gradients from the later steps' backward passes (a
        # step reads a parameter's gradient and leaves it there, as in Dr.Jit): clear them.
        restored = opt
        opt.state = saved
        fj.clear_grad(opt.values())
    assert type(restored) is type(opt) and restored.learning_rate("x") == 0.05
    assert all(fj.grad_enabled(restored[k]) for k in restored)
    steps(restored, 4)
    for k in after:
        np.testing.assert_array_equal(restored[k].numpy(), after[k])


def test_a_restored_copy_is_independent():
    opt = make("adam")
    steps(opt, 2)
    twin = copy.deepcopy(opt)
    steps(twin, 3)
    assert not np.array_equal(twin["x"].numpy(), opt["x"].numpy())
    assert opt.state["x"][3][0].numpy().tolist() == [2] and twin.state["x"][3][0].numpy().tolist() == [5]


def test_grad_scaler_pickles():
    scaler = fj.opt.GradScaler(init_scale=16.0)
    opt = fj.opt.SGD(lr=0.1, params={"x": Float(1.0)})
    scaled_steps(opt, scaler, 1)
    back = pickle.loads(pickle.dumps((opt, scaler)))
    assert back[1].scale_factor.numpy().tolist() == [16] and back[1].it.numpy().tolist() == [1]


def test_float64_parameters():
    opt = fj.opt.RMSProp(lr=0.1, params={"x": Float64(1.0, -2.0)})
    fj.backward(fj.sum(fj.square(opt["x"])))
    opt.step()
    assert type(opt["x"]) is Float64
    g = np.array([2.0, -4.0])
    m = 0.01 * g * g
    np.testing.assert_allclose(opt["x"].numpy(), [1.0, -2.0] - 0.1 * g / np.sqrt(m + 1e-16), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------
# Half precision (promote_fp16)

@pytest.mark.parametrize("make", [lambda **kw: fj.opt.SGD(lr=1e-2, **kw),
                                  lambda **kw: fj.opt.RMSProp(lr=1e-2, **kw),
                                  lambda **kw: fj.opt.Adam(lr=1e-2, **kw)])
@pytest.mark.parametrize("promote", [False, True])
def test_promote_fp16_keeps_a_float32_copy_so_small_steps_are_not_rounded_away(make, promote):
    half = fj.float16_array_t(Float)
    opt = make(promote_fp16=promote)
    opt["x"] = half(100.0)
    for _ in range(200):
        fj.backward((opt["x"] - 101.0) ** 2)
        opt.step()
    value, promoted = opt.state["x"][:2]
    assert promoted is promote
    assert fj.type_v(value) == (fj.VarType.Float32 if promote else fj.VarType.Float16)
    assert type(opt["x"]) is half and fj.grad_enabled(opt["x"])
    assert type(opt.values()[0]) is half and type(opt.items()[0][1]) is half
    # an ULP of Float16 at 100 is 0.0625: without the copy the steps of ~0.02 are lost
    assert (abs(opt["x"][0] - 101.0) < 0.1) == promote
    opt.reset("x")
    assert opt.state["x"][1] is promote
