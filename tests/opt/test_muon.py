"""Muon (frostjit.opt.Muon) against Dr.Jit 1.5's ``drjit.opt.Muon``: 100-step trajectories on
tests/opt/muon_problem.py (recorded by tests/opt/make_drjit_muon.py into
tests/opt/data/drjit_muon.npz), state save/restore, learning-rate changes in a frozen step,
the 2-D requirement and the Newton-Schulz iteration itself."""
import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import Float, TensorXf
from frostjit.opt.muon import orthogonalize

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "drjit_muon.npz")
sys.path.insert(0, HERE)
import muon_problem as problem    # noqa: E402
from test_trajectories import _drjit_available, _drjit_env    # noqa: E402

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def recorded():
    with np.load(DATA) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", list(problem.CONFIGS))
def test_muon_trajectory_matches_drjit_to_float32_roundoff(name, recorded):
    got = problem.run(fj, fj.opt, TensorXf, name)
    for key, traj in got.items():
        want = recorded[f"{name}/{key}"]
        assert traj.shape == want.shape
        # Matrix products and the Frobenius norm sum in another order than Dr.Jit's GEMM: a few
        # ulps per step, which the 100 steps carry (measured at most ~35 ulps of the scale)
        np.testing.assert_allclose(traj, want, rtol=0, atol=128 * EPS32 * np.abs(want).max(),
                                   err_msg=f"{name}: {key}")


def test_recorded_muon_trajectories_are_those_drjit_computes(tmp_path, recorded):
    if not _drjit_available():
        pytest.skip("drjit is not installed (the recorded trajectories are used as they are)")
    out = tmp_path / "fresh.npz"
    subprocess.run([sys.executable, os.path.join(HERE, "make_drjit_muon.py"), str(out)], check=True,
                   capture_output=True, timeout=600, env=_drjit_env())
    with np.load(out) as fresh:
        assert set(fresh.files) == set(recorded)
        for k in fresh.files:
            np.testing.assert_array_equal(fresh[k], recorded[k], err_msg=k)


@pytest.mark.parametrize("shape", [(5, 8), (9, 3), (4, 4), (1, 6)])
def test_newton_schulz_gives_a_nearly_orthogonal_factor(shape):
    G = np.random.default_rng(sum(shape)).normal(size=shape).astype(np.float32)
    Q = orthogonalize(TensorXf(G), 5).numpy()
    assert Q.shape == shape
    s = np.linalg.svd(Q, compute_uv=False)
    assert np.all((s > 0.6) & (s < 1.25))           # the quintic's band (Jordan et al.)
    u, _, vt = np.linalg.svd(G.astype(np.float64), full_matrices=False)
    assert np.sum(Q * (u @ vt)) > 0.6 * min(shape)  # and the factor of G, not another one


def _grad_step(opt, targets):
    for key, t in targets.items():
        d = fj.detach(opt[key]) - t
        fj.set_grad(opt[key], d + d * d * d * 0.5)
    opt.step()


def _problem():
    init = problem.initial()
    opt = fj.opt.Muon(lr=0.02, weight_decay=0.05)
    opt["W"], opt["V"] = TensorXf(init["W"]), TensorXf(init["V"])
    return opt, {"W": TensorXf(init["tW"]), "V": TensorXf(init["tV"])}


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "state"])
def test_state_save_and_restore_continues_the_same_trajectory(how):
    opt, targets = _problem()
    for _ in range(5):
        _grad_step(opt, targets)
    if how == "pickle":
        saved = pickle.dumps(opt)
    elif how == "deepcopy":
        saved = copy.deepcopy(opt)
    else:
        saved = dict(opt.state)
    for _ in range(5):
        _grad_step(opt, targets)
    want = {k: opt[k].numpy() for k in opt}
    if how == "pickle":
        opt = pickle.loads(saved)
    elif how == "deepcopy":
        opt = saved
    else:
        opt.state = saved
        fj.clear_grad(list(opt.values()))
    assert all(fj.grad_enabled(opt[k]) and opt[k].shape == want[k].shape for k in opt)
    for _ in range(5):
        _grad_step(opt, targets)
    for k in want:
        np.testing.assert_array_equal(opt[k].numpy(), want[k])


def test_learning_rate_changes_never_retrace_a_frozen_step():
    def step(opt, targets):
        _grad_step(opt, targets)

    runs = []
    for frozen in (False, True):
        opt, targets = _problem()
        f = fj.freeze(step) if frozen else step
        traj = []
        for i in range(30):
            opt.set_learning_rate(0.05 * 0.95 ** i)
            if i == 10:
                opt.set_learning_rate(V=0.01)
            f(opt, targets)
            traj.append(opt["W"].numpy().copy())
        runs.append(np.array(traj))
        if frozen:
            assert f.n_recordings <= 2      # (the per-parameter rate adds an input once)
    np.testing.assert_allclose(runs[1], runs[0], rtol=0, atol=4 * EPS32)


def test_muon_requires_2d_parameters_and_checks_its_hyper_parameters():
    opt = fj.opt.Muon(lr=0.1)
    for bad, what in ((Float(1, 2, 3), "Float"), (TensorXf(np.ones(3, np.float32)), r"\(3,\)"),
                      (TensorXf(np.ones((2, 2, 2), np.float32)), r"\(2, 2, 2\)")):
        with pytest.raises(ValueError, match=f"2-D.*{what}"):
            opt["b"] = bad
    assert "b" not in opt
    with pytest.raises(ValueError, match="momentum"):
        fj.opt.Muon(lr=0.1, momentum=1.0)
    with pytest.raises(ValueError, match="ns_steps"):
        fj.opt.Muon(lr=0.1, ns_steps=-1)
    opt = fj.opt.Muon(lr=0.1, ns_steps=0)          # the normalized update itself (Dr.Jit allows it)
    opt["W"] = TensorXf(np.ones((2, 3), np.float32))
    fj.set_grad(opt["W"], TensorXf(np.full((2, 3), 2, np.float32)))
    opt.step()
    np.testing.assert_allclose(opt["W"].numpy(), 1 - 0.1 / np.sqrt(6), rtol=1e-6)


def test_reassigning_a_tensor_of_another_shape_resets_the_state():
    opt = fj.opt.Muon(lr=0.1)
    opt["W"] = TensorXf(np.ones((2, 3), np.float32))
    fj.set_grad(opt["W"], TensorXf(np.ones((2, 3), np.float32)))
    opt.step()
    opt["W"] = TensorXf(np.ones((2, 3), np.float32))       # same shape: the momentum stays
    assert opt.state["W"][3][0].numpy().any()
    opt["W"] = TensorXf(np.ones((3, 2), np.float32))       # same width, another shape: reset
    assert opt.state["W"][3][1] == (3, 2) and not opt.state["W"][3][0].numpy().any()
    fj.set_grad(opt["W"], TensorXf(np.ones((3, 2), np.float32)))
    opt.step()
    assert opt["W"].shape == (3, 2)


@pytest.mark.parametrize("make", [lambda: fj.opt.Adam(lr=0.1), lambda: fj.opt.SGD(lr=0.1, momentum=0.5)])
def test_tensor_parameters_of_any_optimizer_pickle_and_reset_on_a_new_shape(make):
    # (found with Muon: a tensor's state was not picklable, and a tensor of the same width but
    # another shape kept the old shape's state)
    opt = make()
    opt["W"] = TensorXf(np.ones((2, 3), np.float32))
    fj.set_grad(opt["W"], TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3)))
    opt.step()
    back = pickle.loads(pickle.dumps(opt))
    assert back["W"].shape == (2, 3) and fj.grad_enabled(back["W"])
    np.testing.assert_array_equal(back["W"].numpy(), opt["W"].numpy())
    opt["W"] = TensorXf(np.ones((3, 2), np.float32))
    extra = opt.state["W"][3]
    moments = [extra] if isinstance(opt, fj.opt.SGD) else [extra[1], extra[2]]
    assert all(m.shape == (3, 2) and not m.numpy().any() for m in moments)
