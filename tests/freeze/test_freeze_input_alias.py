"""Outputs and write-backs that are new objects on an input's variable (``Float(x)``, a texture made
around an optimizer's parameter) replay without falling back to the plain function, and pass
gradients as the plain call's objects do."""
from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm.ad as ad


def _fit(frozen: bool, size: int, steps: int):
    tex = ad.Texture2f([size, size], 3)
    opt = fj.opt.Adam(lr=0.05)
    opt["texture"] = fj.full(ad.TensorXf, 0.5, (size, size, 3))
    rng = np.random.default_rng(size)
    pos = ad.Array2f(ad.Float(rng.random(2 * size).astype(np.float32)),
                     ad.Float(rng.random(2 * size).astype(np.float32)))
    goal = ad.Array3f(*[ad.Float(rng.random(2 * size).astype(np.float32)) for _ in range(3)])

    def step(opt, tex, pos, goal):
        tex.set_tensor(opt["texture"])      # the texture holds the parameter's variable
        loss = fj.mean(fj.squared_norm(tex.eval(pos) - goal))
        fj.backward(loss)
        opt.step()
        return loss

    if frozen:
        step = fj.freeze(step)
    losses = [float(step(opt, tex, pos, goal)[0]) for _ in range(steps)]
    return losses, opt["texture"].numpy(), tex.tensor().numpy(), step


@pytest.mark.parametrize("size", [1, 4, 9])
def test_a_training_step_writing_a_parameter_into_a_texture_replays(size):
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)     # no fallback to the plain function
        losses, param, held, step = _fit(True, size, 6)
    assert step.n_recordings == 2       # Adam without state (first step), then with it: 4 replays
    plain_losses, plain_param, plain_held, _ = _fit(False, size, 6)
    np.testing.assert_allclose(losses, plain_losses, rtol=1e-6)
    np.testing.assert_allclose(param, plain_param, rtol=1e-6)
    np.testing.assert_allclose(held, plain_held, rtol=1e-6)


@pytest.mark.parametrize("width", [1, 7, 1000])
def test_a_new_object_on_a_grad_enabled_input_passes_its_gradient(width):
    f = fj.freeze(lambda x: (ad.Float(x), x * 2))
    for _ in range(3):
        x = ad.Float(np.linspace(-1, 1, width).astype(np.float32))
        fj.enable_grad(x)
        alias, double = f(x)
        assert alias is not x and alias.index == x.index
        fj.backward(fj.sum(alias * alias + double))
        np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 2, rtol=1e-6)
    assert f.n_recordings == 1


def test_an_input_changed_in_the_call_is_not_taken_for_an_alias():
    @fj.freeze
    def f(x):
        y = ad.Float(x)
        x += 1              # x's object gets a new variable; y keeps the old one
        return y

    for k in range(3):
        x = ad.Float(1.0 + k, 2.0)
        fj.enable_grad(x)
        with pytest.warns(fj.FreezeWarning, match="rebinds") if k == 0 else contextlib.nullcontext():
            y = f(x)            # x += 1 rebinds x's AD variable: a plain call (warned once), as documented
        assert y.numpy().tolist() == [1.0 + k, 2.0] and x.numpy().tolist() == [2.0 + k, 3.0]
