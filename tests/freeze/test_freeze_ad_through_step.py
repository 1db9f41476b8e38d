"""Training steps through a frozen forward pass (freeze/through.py, opt/): the loss computed by a
frozen function, ``fj.backward`` through its result (the replayed backward derivative), then the
optimizer's step unfrozen or frozen on its own, or the whole step frozen.  At every step, the
gradients and the new parameters equal those of the same step run plainly, in lockstep, at
several widths replayed by the same frozen functions (and with a parameter of width 1 beside
the wide ones, so that a step evaluates results of two sizes)."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import UInt32
from frostjit.llvm.ad import Float
from frostjit.opt import SGD, RMSProp, Adam, AdamW

WIDTHS = (7, 1, 7, 1000, 33)
STEPS = 5
OPTIMIZERS = {
    "SGD": lambda: SGD(lr=0.05, momentum=0.9, nesterov=True),
    "RMSProp": lambda: RMSProp(lr=0.01),
    "Adam": lambda: Adam(lr=0.02),
    "AdamW": lambda: AdamW(lr=0.02, weight_decay=0.1),
}
MODES = ("fwd frozen", "fwd frozen + step frozen", "whole step frozen")


def forward(opt, data):
    """A loss of the parameters: elementwise work, a gather, a scatter_add and a mean."""
    x, target, idx = data
    a, b, c = opt["a"], opt["b"], opt["c"]
    pred = a * fj.sin(x) + b * b + c
    acc = fj.zeros(Float, fj.width(x))
    fj.scatter_add(acc, fj.gather(Float, pred, idx) * 0.5, idx)
    return fj.mean(fj.square(pred + acc - target))


def whole_step(opt, data):
    loss = forward(opt, data)
    fj.backward(loss)
    opt.step()
    return fj.detach(loss)


def make(kind, n, seed):
    rng = np.random.default_rng(seed)
    opt = OPTIMIZERS[kind]()
    opt["a"] = Float(rng.uniform(-1, 1, n).astype(np.float32))
    opt["b"] = Float(rng.uniform(-1, 1, n).astype(np.float32))
    opt["c"] = Float(np.float32(0.25))
    x = Float(rng.uniform(-2, 2, n).astype(np.float32))
    target = Float(rng.uniform(-1, 1, n).astype(np.float32))
    idx = UInt32(rng.integers(0, n, n).astype(np.uint32))
    fj.eval(x, target, idx)
    return opt, (x, target, idx)


def values(opt) -> dict:
    return {k: np.asarray(opt[k].numpy()).copy() for k in ("a", "b", "c")}


def grads(opt) -> dict:
    return {k: np.asarray(fj.grad(opt[k]).numpy()).copy() for k in ("a", "b", "c")}


def assert_close(got: dict, want: dict, what: str):
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-6, atol=1e-7, err_msg=f"{what} of {k!r}")


def frozen_step(mode):
    """The training step of ``mode`` and the frozen functions it calls."""
    if mode == "whole step frozen":
        f = fj.freeze(whole_step)
        return f, [f]
    ff = fj.freeze(forward)
    update = fj.freeze(lambda opt: opt.step()) if mode.endswith("step frozen") else None

    def step(opt, data):
        loss = ff(opt, data)
        fj.backward(loss)
        return loss

    return step, [ff] + ([update] if update else []), update


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_frozen_steps_follow_the_plain_trajectory_at_every_width(kind, mode):
    made = frozen_step(mode)
    step, frozen = made[0], made[1]
    update = made[2] if len(made) > 2 else None
    for w, n in enumerate(WIDTHS):
        plain, pdata = make(kind, n, w)
        opt, data = make(kind, n, w)
        for s in range(STEPS):
            if s == 3:      # a new learning rate is an input: it never re-traces
                plain.set_learning_rate(plain.lr * 0.5)
                opt.set_learning_rate(opt.lr * 0.5)
            ploss = forward(plain, pdata)
            fj.backward(ploss)
            pg = grads(plain)
            plain.step()
            if mode == "whole step frozen":
                loss = step(opt, data)
            else:
                loss = step(opt, data)
                # the gradients the replayed backward derivative gave the parameters
                assert_close(grads(opt), pg, f"{mode}, width {n}, step {s}: gradient")
                if update is not None:
                    update(opt)
                else:
                    opt.step()
            np.testing.assert_allclose(loss.numpy(), ploss.numpy(), rtol=2e-6, err_msg=f"loss, width {n}, step {s}")
            assert_close(values(opt), values(plain), f"{mode}, width {n}, step {s}: parameter")
    # one recording per frozen function for all widths and rates (the width-1 call may need its own)
    for f in frozen:
        assert f.n_recordings <= 2, (f, f.n_recordings)
    if mode != "whole step frozen":
        # the backward passes replayed the recorded derivative bound from the forward call's walk
        infos = [r.through for e in frozen[0]._cache.entries.values() for r in e.order if r.through is not None]
        assert infos and all(i.vjp is not None and i.vjp.n_recordings <= 2 for i in infos)
        assert any(i.bound for i in infos)


@pytest.mark.no_freeze_check
def test_the_optimizer_state_after_frozen_steps_is_the_plain_state():
    """Moments and step counts (not only the parameters) after steps through a frozen forward pass."""
    ff = fj.freeze(forward)
    update = fj.freeze(lambda opt: opt.step())
    plain, pdata = make("Adam", 100, 3)
    opt, data = make("Adam", 100, 3)
    for _ in range(STEPS):
        fj.backward(forward(plain, pdata))
        plain.step()
        fj.backward(ff(opt, data))
        update(opt)
    for k in ("a", "b", "c"):
        (t0, m0, v0, _), (t1, m1, v1, _) = plain.state[k][3], opt.state[k][3]
        assert t0.numpy().tolist() == t1.numpy().tolist() == [STEPS]
        np.testing.assert_allclose(m1.numpy(), m0.numpy(), rtol=2e-6, atol=1e-8)
        np.testing.assert_allclose(v1.numpy(), v0.numpy(), rtol=2e-6, atol=1e-10)


def other_loss(opt, data):
    """A second loss of the same parameters (other operations, so another recording)."""
    x, target, _idx = data
    return fj.sum(fj.abs(opt["a"] * fj.cos(x) - opt["b"] * target)) * 0.1 + fj.mean(opt["c"] * opt["c"])


def state_of(opt) -> list:
    """Every array of the optimizer: parameters, rates and the rule's state (moments, step counts)."""
    out = []
    for k in sorted(opt.state):
        value, _promoted, lr, extra = opt.state[k]
        for e in (value, lr, *(extra if isinstance(extra, tuple) else (extra,))):
            if e is not None:
                out.append((k, np.asarray(e.numpy()).copy()))
    return out


def assert_same_state(got, want, what):
    assert [k for k, _ in got] == [k for k, _ in want], what
    for (k, a), (_, b) in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7, err_msg=f"{what}: state of {k!r}")


def _between(how: str, opt, data, s: int, n: int) -> None:
    """What the training loop does to the optimizer before step ``s`` (the same to both)."""
    if how == "parameter changed" and s in (2, 3):
        opt["a"] = opt["a"] * 0.5 + 0.125          # a new value, same type and width: state kept
    elif how == "learning rate schedule":
        opt.set_learning_rate(0.02 * 0.7 ** s)
        if s == 2:
            opt.set_learning_rate(b=0.005)
        if s == 3:
            opt.set_learning_rate(b=None)
    elif how == "state reset" and s == 2:
        opt.reset("b")
    elif how == "parameter re-assigned" and s == 2:
        opt["b"] = Float(np.linspace(-0.5, 0.5, n, dtype=np.float32))     # a fresh array, state kept
        opt["c"] = Float(np.full(n, 0.75, np.float32))        # width n, was 1: its state is reset
    elif how == "state restored":
        if s == 1:
            opt._saved = dict(opt.state)
        if s == 2 or s == 3:
            opt.state = opt._saved
            fj.clear_grad(opt.values())


def _backward_passes(how: str, s: int, loss_fn, other_fn, opt, data):
    """The backward passes of step ``s``; returns the last loss."""
    if how == "different loss" and s in (2, 3):
        loss = other_fn(opt, data)
        fj.backward(loss)
        return loss
    loss = loss_fn(opt, data)
    fj.backward(loss)
    if how == "gradient accumulation" and s != 1:
        extra = other_fn(opt, data) if s % 2 else loss_fn(opt, data)
        fj.backward(extra)         # adds to the gradients of the first pass
    if how == "gradient changed" and s >= 1:
        fj.set_grad(opt["a"], fj.grad(opt["a"]) * 0.5 + 0.01)    # (clipping, rescaling)
    return loss


CHANGES = ("parameter changed", "learning rate schedule", "state reset", "different loss",
           "gradient accumulation", "parameter re-assigned", "gradient changed", "state restored")


# the step frozen on its own: the cases where its recording could differ from the plain step
STEP_FROZEN_CHANGES = ("learning rate schedule", "gradient accumulation", "parameter re-assigned", "gradient changed")


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("how, mode", [(h, MODES[0]) for h in CHANGES] + [(h, MODES[1]) for h in STEP_FROZEN_CHANGES])
def test_frozen_steps_with_changes_between_steps_follow_the_plain_steps(how, mode):
    """Whatever the loop does between steps (to the parameters, rates, state, gradients, or which
    loss it differentiates), the replayed backward derivative and the replayed (or separately
    frozen) step give the plain step's gradients, parameters and optimizer state, at every width."""
    ff, fo = fj.freeze(forward), fj.freeze(other_loss)
    update = fj.freeze(lambda opt: opt.step()) if mode.endswith("step frozen") else (lambda opt: opt.step())
    replayed = 0        # steps after a replayed backward derivative (the paths under test)
    for w, n in enumerate((7, 1, 1000)):
        plain, pdata = make("Adam", n, 10 + w)
        opt, data = make("Adam", n, 10 + w)
        for s in range(4):
            _between(how, plain, pdata, s, n)
            _between(how, opt, data, s, n)
            ploss = _backward_passes(how, s, forward, other_loss, plain, pdata)
            pg = grads(plain)
            plain.step()
            loss = _backward_passes(how, s, ff, fo, opt, data)
            what = f"{how}, {mode}, width {n}, step {s}"
            assert_close(grads(opt), pg, f"{what}: gradient")
            replayed += fj.ad.graph.scopes.replayed_backward
            update(opt)
            np.testing.assert_allclose(loss.numpy(), ploss.numpy(), rtol=2e-6, err_msg=f"{what}: loss")
            assert_same_state(state_of(opt), state_of(plain), what)
    assert replayed >= 3, replayed
