"""Steady calls of frozen functions whose inputs change kind between calls (session r15, lane wholeprog).

The r13 ports q_freeze_tree and q_inverse_opt were thought to record their frozen step at every
call: they do not (these tests pin it), but every call walked its inputs twice.  A step called with
fresh, pending inputs (``make()`` builds a state of unevaluated tensors) made every binder miss: the
walk evaluated them, walked again, hashed the key and looked it up.  And a state whose field is a
literal on one call and an evaluated array on the next alternates between two keys, while only the
last key's binder was tried.  Now a binder is tried again once the walk evaluated the inputs, and
the binders of the last few keys are tried (conftest.py turns on VERIFY_BINDERS: every binder hit
is compared with the full layout walk).
"""
import dataclasses

import numpy as np
import pytest

import frostjit as fj
from frostjit.freeze import frozen, layout
from frostjit.llvm import Float, UInt32, Array3f, TensorXf
from frostjit.llvm.ad import Float as FloatAD

from freeze_helpers import bits, ramp


@dataclasses.dataclass
class State:
    pts: object         # TensorXf (B, 3)
    vel: object
    pos: object         # Array3f: a literal when made, evaluated after a step wrote it
    extra: dict


def _step(s: State, dt, sub: int):
    pts, vel = s.pts, s.vel
    for _ in range(sub):
        vel = vel + (-pts * 2.0 + s.extra["wind"][None, :]) * (dt / sub)
        pts = pts + vel * (dt / sub)
    s.pts, s.vel = pts, vel
    c = fj.mean(pts, axis=0)
    s.pos = Array3f(*[fj.gather(Float, c.array, UInt32(j)) for j in range(3)]) + Array3f(0, 0, -5)
    s.extra["count"] = s.extra["count"] + pts.shape[0]
    return fj.sum(fj.square(vel), axis=1)


def _make(b, seed):
    """Fresh state: pending tensors (``sin``/``cos`` not evaluated), a literal ``pos``."""
    i = fj.arange(Float, b * 3)
    return State(TensorXf(fj.sin(i * 0.7 + seed), shape=(b, 3)), TensorXf(fj.cos(i * 0.3 + seed) * 0.1, shape=(b, 3)),
                 Array3f(0, 0, -5), {"wind": TensorXf(Float(0.1, 0.0, -0.2)), "count": UInt32(0)})


def _state_bits(s):
    return [bits(s.pts.array), bits(s.vel.array), [bits(c) for c in s.pos], bits(s.extra["count"])]


class _CountingWalker(layout.Walker):
    passes = 0      # full walks of the arguments (``_walk_fast`` stops at the first non-array)

    def walk(self, o, path):
        if path == "args":
            type(self).passes += 1
        super().walk(o, path)


PLAN = [(8, 2), (8, 2), (5, 2), (13, 2), (8, 3), (5, 3), (8, 2)]


def _round(ff, seed):
    for k, (b, sub) in enumerate(PLAN):
        a, c = _make(b, k + seed), _make(b, k + seed)
        for dt in (Float(0.1), Float(0.05)):       # (a literal: made opaque by the second recording)
            ref = _step(a, dt, sub)
            got = ff(c, Float(dt[0]), sub)
            assert bits(got.array) == bits(ref.array)
            assert _state_bits(c) == _state_bits(a)


def test_a_dataclass_step_with_fresh_state_records_once_per_kind_and_walks_once(monkeypatch):
    ff = fj.freeze(_step, warn_after=1000)
    _round(ff, 0)
    _round(ff, 0)
    n = ff.n_recordings
    assert n <= 8
    monkeypatch.setattr(frozen, "Walker", _CountingWalker)
    _CountingWalker.passes = 0
    _round(ff, 10)      # new values, the same kinds of inputs
    assert ff.n_recordings == n, "a steady call recorded again"
    # every call's inputs are pending or a literal made opaque: one walk evaluates them, and a
    # binder (of one of the two alternating keys) takes them; the walk's second pass is skipped
    # (before r15: two passes per call, VERIFY_BINDERS' own walks aside)
    calls = 2 * len(PLAN)
    monkeypatch.setattr(frozen, "VERIFY_BINDERS", False)
    _CountingWalker.passes = 0
    _round(ff, 20)
    assert _CountingWalker.passes <= calls


def test_binders_of_two_alternating_keys_skip_the_walk(monkeypatch):
    # an evaluated Float on one call, an evaluated UInt32 on the next: two keys, each with its binder
    fn = lambda x, c: x * c + 1      # noqa: E731
    ff = fj.freeze(fn)

    def opaque(x):
        fj.make_opaque(x)
        return x
    cases = [lambda i: (ramp(8, i), opaque(Float(3.0 + i))), lambda i: (ramp(8, i), opaque(UInt32(i)))]
    for i in range(3):
        for mk in cases:
            args = mk(i)
            assert bits(ff(*args)) == bits(fn(*args))
    n = ff.n_recordings
    assert n == 2

    def boom(*a, **k):
        raise AssertionError("the full layout walk ran")
    monkeypatch.setattr(frozen, "VERIFY_BINDERS", False)
    monkeypatch.setattr(ff, "_walk", boom)
    monkeypatch.setattr(ff, "_walk_fast", boom)
    for i in range(3, 7):
        for mk in cases:
            args = mk(i)
            assert bits(ff(*args)) == bits(fn(*args))
    assert ff.n_recordings == n


@pytest.mark.parametrize("n_keys", [2, 4, 5])
def test_binders_of_several_keys_agree_with_the_walk(n_keys):
    # keys cycled through (more than the binders kept, for 5): every replay equals the plain call,
    # and no key records twice; VERIFY_BINDERS checks every binder hit against the walk
    types = [Float, UInt32, fj.llvm.Int32, fj.llvm.Float64, fj.llvm.UInt64][:n_keys]
    fn = lambda x, y: x + Float(y) * 2      # noqa: E731
    ff = fj.freeze(fn)
    for r in range(4):
        for t in types:
            y = t(np.arange(6) + r)
            x = ramp(6, r) * 2          # pending: the walk evaluates it, then a binder may take it
            want = fn(ramp(6, r) * 2, y)
            assert bits(ff(x, y)) == bits(want)
    assert ff.n_recordings == n_keys


def test_an_optimizer_step_with_a_fresh_optimizer_is_not_recorded_again():
    # q_inverse_opt: a learning-rate schedule, a frozen step, a new optimizer per run
    target = fj.linspace(FloatAD, 0, 1, 16)

    def step(opt):
        loss = fj.mean(fj.square(opt["x"] - target))
        fj.backward(loss)
        opt.step()
        return loss

    ff = fj.freeze(step)
    counts = []
    for run in range(3):
        opt_f, opt_p = fj.opt.Adam(lr=0.05), fj.opt.Adam(lr=0.05)
        opt_f["x"] = fj.full(FloatAD, 0.3, 16)
        opt_p["x"] = fj.full(FloatAD, 0.3, 16)
        for k in range(5):
            opt_f.set_learning_rate(0.05 * 0.9 ** k)
            opt_p.set_learning_rate(0.05 * 0.9 ** k)
            assert bits(ff(opt_f)) == bits(step(opt_p))
        assert bits(opt_f["x"]) == bits(opt_p["x"])
        counts.append(ff.n_recordings)
    assert counts[1] == counts[2], counts
    assert counts[2] <= 3, counts
