"""Findings of session r13's ports (whole Dr.Jit programs run under frostjit): what a frozen
function hands back to Python after the call that recorded it is exactly what a plain call gives."""
import json
from dataclasses import dataclass

import pytest

import frostjit as fj
from frostjit.llvm import Float, TensorXf

_KEPT = []


@dataclass
class _State:
    t: TensorXf


def _step(s, k):
    s.t = s.t * 2 + 1                                       # written back into the input state
    _KEPT.append(fj.reshape(TensorXf, s.t, (3, -1)))        # kept outside the call (symbolic trailing axis)
    return s.t[:, 1:], fj.sum(s.t, axis=1)


@pytest.mark.parametrize("sizes", [(4, 4, 5), (2, 9, 2)])
def test_shapes_after_a_recording_call_are_python_ints(sizes):
    # Inside the recording call a shape's entries are symbolic numbers (freeze/symbolic.py); the
    # tensors that leave the call (returned, written into the inputs, stored elsewhere) must hold
    # the ints of a plain call: type(d) is int, json.dumps / int.__repr__ work on them.
    f = fj.freeze(_step)
    for b in sizes:
        _KEPT.clear()
        s = _State(TensorXf(fj.arange(Float, b * 3), shape=(b, 3)))
        ref = _State(TensorXf(fj.arange(Float, b * 3), shape=(b, 3)))
        out = f(s, 0)
        want = _step(ref, 0)
        for got, exp in ((s.t, ref.t), (out[0], want[0]), (out[1], want[1]), (_KEPT[0], _KEPT[1])):
            assert [type(d) for d in got.shape] == [int] * len(exp.shape), (b, got.shape)
            assert got.shape == exp.shape
            assert json.loads(json.dumps(list(got.shape))) == list(exp.shape)
            assert fj.all(got == exp, axis=None)


@pytest.mark.parametrize("sizes", [(4, 5, 4), (7, 7, 2)])
def test_a_frozen_calls_tensor_is_keyed_like_a_fresh_one(sizes):
    # The tensor a frozen call returns (recording or replay) and a new tensor of the same shape
    # are the same input to a second frozen function: one recording per shape, as in Dr.Jit,
    # not a second one for the replay's tensor (its template held the recording's tracked widths).
    f = fj.freeze(lambda t: fj.reshape(TensorXf, t * 2, (3, -1)))
    g = fj.freeze(lambda t: t + 1)
    for b in sizes:
        u = f(TensorXf(fj.arange(Float, b * 3), shape=(b, 3)))
        fresh = TensorXf(fj.arange(Float, b * 3) * 2, shape=(3, b))
        assert fj.all(g(u) == g(fresh), axis=None)
        assert fj.all(g(f(TensorXf(fj.arange(Float, b * 3), shape=(b, 3)))) == fresh + 1, axis=None)
    assert g.n_recordings == len(set(sizes))


@dataclass
class _Counted:
    x: Float
    n: object = 0
    meta: object = None


def _count(s):
    s.n = fj.width(s.x) * 2                                 # a width stored into the input state
    s.meta = {"n": fj.width(s.x), "pair": (fj.width(s.x) - 1, [fj.width(s.x)])}
    return s.x + 1


@pytest.mark.parametrize("sizes", [(3, 4, 3), (1000, 7)])
def test_widths_stored_into_the_inputs_are_python_ints(sizes):
    # A width inside a recording is a symbolic number; stored into the inputs (an attribute, a
    # new dict/tuple/list there) it must be the plain call's int after the call.
    f = fj.freeze(_count)
    for n in sizes:
        s, ref = _Counted(fj.arange(Float, n)), _Counted(fj.arange(Float, n))
        f(s)
        _count(ref)
        got = json.loads(json.dumps({"n": s.n, "meta": s.meta}))
        assert got == json.loads(json.dumps({"n": ref.n, "meta": ref.meta}))
        assert type(s.n) is int and type(s.meta["n"]) is int and type(s.meta["pair"][0]) is int
        assert type(s.meta["pair"][1][0]) is int
