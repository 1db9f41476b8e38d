"""A training step (MLP over packed weights, Adam) gives the same numbers frozen and plain."""
import numpy as np

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm.ad import TensorXf, Float
from frostjit.opt import Adam


def _setup():
    net = nn.Sequential(nn.SinEncode(1), nn.Linear(-1, 4), nn.ReLU(), nn.Linear(-1, 1))
    net = nn.pack(net.alloc(TensorXf, 2), layout="training")
    opt = Adam(lr=1e-2)
    opt.update(net)
    return net, opt


def _step(net, opt, x, y):
    net.update(opt)
    out = net(nn.CoopVec(x, y))
    loss = fj.mean(fj.square(out[0] - fj.sin(3 * x) * y))
    fj.backward(loss)
    opt.step()
    return loss


def test_frozen_training_step_equals_plain_at_several_widths():
    plain_net, plain_opt = _setup()
    frozen_net, frozen_opt = _setup()
    frozen = fj.freeze(_step)
    rng = np.random.default_rng(0)
    for width in (7, 1000, 1, 7, 1000, 33):
        x = rng.random((2, width)).astype(np.float32)
        lp = _step(plain_net, plain_opt, Float(x[0]), Float(x[1]))
        lf = frozen(frozen_net, frozen_opt, Float(x[0]), Float(x[1]))
        np.testing.assert_allclose(lf.numpy(), lp.numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(frozen_opt["weights"].numpy(), plain_opt["weights"].numpy(),
                                   rtol=1e-5, atol=1e-7)
    assert frozen.n_recordings <= 3


def test_training_reduces_the_loss():
    net, opt = _setup()
    rng = np.random.default_rng(1)
    x = rng.random((2, 256)).astype(np.float32)
    losses = [float(_step(net, opt, Float(x[0]), Float(x[1])).numpy()[0]) for _ in range(60)]
    assert losses[-1] < 0.5 * losses[0]
