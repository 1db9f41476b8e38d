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
