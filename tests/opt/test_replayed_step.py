"""``opt.step()`` after a backward pass through a frozen function's result is replayed from a
recording (opt/base.py): the same parameters and state as the traced step, one recording per
optimizer layout, and the traced step wherever a replay could differ (a subclass, ``eval=False``,
``grad_scale``/``active``, work scheduled outside the optimizer, no replayed backward pass)."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import Float
from frostjit.opt import SGD, RMSProp, Adam, AdamW
from frostjit.opt import base

KINDS = {"SGD": lambda: SGD(lr=0.05, momentum=0.5), "RMSProp": lambda: RMSProp(lr=0.01),
         "Adam": lambda: Adam(lr=0.02), "AdamW": lambda: AdamW(lr=0.02, weight_decay=0.1)}


def loss_of(opt, x):
    return fj.mean(fj.square(opt["a"] * x + opt["b"] - 1.0))


frozen_loss = fj.freeze(loss_of)


def make(kind, n=50, seed=0):
    rng = np.random.default_rng(seed)
    opt = KINDS[kind]() if isinstance(kind, str) else kind()
    opt["a"] = Float(rng.uniform(-1, 1, n).astype(np.float32))
    opt["b"] = Float(np.float32(0.5))
    x = Float(rng.uniform(-2, 2, n).astype(np.float32))
    fj.eval(x)
    return opt, x


def state_arrays(opt) -> list:
    out = []
    for k in sorted(opt.state):
        value, _promoted, _lr, extra = opt.state[k]
        out.append(np.asarray(value.numpy()))
        for e in (extra if isinstance(extra, tuple) else (extra,)):
            if e is not None:
                out.append(np.asarray(e.numpy()))
    return out


def replays() -> int:
    """Recordings made so far by the replayed step (0 before the first)."""
    return base._replayed[0].n_recordings if base._replayed else 0


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_step_after_a_replayed_backward_pass_is_replayed_and_equals_the_traced_step(kind):
    plain, px = make(kind)
    opt, x = make(kind)
    before = replays()
    for s in range(6):
        fj.backward(loss_of(plain, px))
        plain.step()
        fj.backward(frozen_loss(opt, x))
        # (the first call records: its result has the traced AD graph, no replayed derivative)
        assert fj.ad.graph.scopes.replayed_backward == (s > 0)
        opt.step()
        assert not fj.ad.graph.scopes.replayed_backward
        for got, want in zip(state_arrays(opt), state_arrays(plain)):
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-8, err_msg=f"step {s}")
    assert replays() - before <= 1     # one recording for this layout (none if an earlier test made it)
    assert base._replayed[0].n_cached_recordings >= 1


def test_the_replayed_step_launches_recorded_kernels():
    opt, x = make("Adam", seed=1)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):     # (the JIT flags are part of the layout)
        for _ in range(4):
            fj.backward(frozen_loss(opt, x))
            fj.kernel_history()
            opt.step()
            hist = fj.kernel_history((fj.KernelType.JIT,))
    assert hist and all(h["recording_mode"] == fj.KernelRecordingMode.Replayed for h in hist)


class CountingAdam(Adam):
    """A subclass with Python state in its rule: a replay would not count."""

    calls = 0

    def _step(self, value, g, lr, extra):
        CountingAdam.calls += 1
        return super()._step(value, g, lr, extra)


def test_a_subclass_step_is_traced():
    opt, x = make(lambda: CountingAdam(lr=0.02), seed=2)
    CountingAdam.calls = 0
    for _ in range(3):
        fj.backward(frozen_loss(opt, x))
        opt.step()
    assert CountingAdam.calls == 3 * 2


@pytest.mark.parametrize("how", ["eval=False", "grad_scale", "active", "scheduled", "plain backward"])
def test_steps_a_replay_could_change_are_traced(how):
    plain, px = make("Adam", seed=3)
    opt, x = make("Adam", seed=3)
    for _ in range(3):          # (a recording exists for this layout)
        fj.backward(frozen_loss(opt, x))
        opt.step()
        fj.backward(loss_of(plain, px))
        plain.step()
    other = Float(1, 2, 3) * 2.0
    kwargs = {"eval=False": {"eval": False}, "grad_scale": {"grad_scale": 0.5},
              "active": {"active": fj.llvm.Bool(True)}}.get(how, {})
    fj.backward(loss_of(plain, px))
    if how == "plain backward":
        fj.backward(loss_of(opt, x))
    else:
        fj.backward(frozen_loss(opt, x))
    if how == "scheduled":
        fj.schedule(other)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        opt.step(**kwargs)
        fj.eval(opt)
        hist = fj.kernel_history((fj.KernelType.JIT,))
    assert hist and all(h["recording_mode"] == fj.KernelRecordingMode.Inactive for h in hist)
    if how == "scheduled":
        assert other._node.op == "data" and other.numpy().tolist() == [2, 4, 6]
    plain.step(**kwargs)
    fj.eval(plain)
    for got, want in zip(state_arrays(opt), state_arrays(plain)):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-8)


def test_a_changed_hyper_parameter_or_learning_rate_is_replayed_correctly():
    plain, px = make("Adam", seed=4)
    opt, x = make("Adam", seed=4)
    for s in range(8):
        if s == 3:
            plain.beta_1 = opt.beta_1 = 0.5          # folded into the kernels: a new recording
        if s == 5:
            plain.set_learning_rate(0.001)
            opt.set_learning_rate(0.001)            # an input: replayed as it is
        fj.backward(loss_of(plain, px))
        plain.step()
        fj.backward(frozen_loss(opt, x))
        opt.step()
        for got, want in zip(state_arrays(opt), state_arrays(plain)):
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-8, err_msg=f"step {s}")


def test_without_kernel_freezing_the_step_is_traced():
    opt, x = make("SGD", seed=5)
    fj.backward(frozen_loss(opt, x))
    with fj.scoped_set_flag(fj.JitFlag.KernelFreezing, False), fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        opt.step()
        hist = fj.kernel_history((fj.KernelType.JIT,))
    assert hist and all(h["recording_mode"] == fj.KernelRecordingMode.Inactive for h in hist)
