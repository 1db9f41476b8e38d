"""A frozen method that scatters into an attribute of ``self`` that its ``DRJIT_STRUCT`` does not
list (the pattern of Dr.Jit's test_freeze.py test38, ``forgotten_target_buffer``).

Dr.Jit 1.5 raises; frostjit runs such a call as a plain call (one ``FreezeWarning`` per layout), so
the buffer and the result always equal the plain call's, whatever the widths and even after the
attribute is rebound to a buffer of another width.  With ``state_fn`` naming the buffer, the
method replays, and still matches the plain call."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import UInt32

from freeze_helpers import same

BUFFER = 10     # the buffer's width; x's width stays <= it, so no two lanes write one entry


def _scatter_into_buffer(self, x):
    index = fj.arange(UInt32, fj.width(x)) % fj.width(self.forgotten_target_buffer)
    fj.scatter(self.forgotten_target_buffer, x, index)
    return 2 * x


def _model_class():
    """A new class each time, so each test starts with frozen methods that never recorded."""
    class Model:
        DRJIT_STRUCT = {"some_state": UInt32}

        def __init__(self):
            self.some_state = fj.arange(UInt32, BUFFER) + 1
            self.forgotten_target_buffer = self.some_state + 1
            fj.eval(self.some_state, self.forgotten_target_buffer)

        frozen = fj.freeze(_scatter_into_buffer)
        with_state = fj.freeze(_scatter_into_buffer,
                               state_fn=lambda self, x: self.forgotten_target_buffer)

    return Model


def _x(width, seed):
    return UInt32(np.arange(width, dtype=np.uint32) * 7 + seed)


def _run(model, method, widths, rebind):
    """Calls ``method`` on a ``model`` instance and the plain function on its twin with the same
    inputs (``widths``: (width, which of two pairs of instances)); after each call the results and
    both buffers must be equal."""
    pairs = [(model(), model()), (model(), model())]
    for i, (w, which) in enumerate(widths):
        ours, plain = pairs[which]
        if rebind is not None and i == rebind[0]:
            # a new buffer object of another width behind the same attribute name
            for m in (ours, plain):
                m.forgotten_target_buffer = fj.arange(UInt32, rebind[1]) + 100
        x = _x(w, i)
        got = method(ours, x)
        want = _scatter_into_buffer(plain, x)
        assert same(got, want), (i, w)
        assert same(ours.forgotten_target_buffer, plain.forgotten_target_buffer), (i, w)
        assert same(ours.some_state, plain.some_state), (i, w)


calls = st.lists(st.tuples(st.integers(1, BUFFER), st.integers(0, 1)), min_size=1, max_size=6)
rebinds = st.none() | st.tuples(st.integers(0, 5), st.integers(BUFFER, BUFFER + 6))


@settings(max_examples=15)
@given(calls, rebinds)
def test_scatter_into_an_attribute_outside_the_struct_matches_the_plain_call(widths, rebind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fj.FreezeWarning)
        _run(_model_class(), lambda m, x: m.frozen(x), widths, rebind)


@settings(max_examples=15)
@given(calls, rebinds)
def test_the_same_scatter_with_state_fn_replays_like_the_plain_call(widths, rebind):
    _run(_model_class(), lambda m, x: m.with_state(x), widths, rebind)


def test_the_first_call_warns_and_runs_plainly():
    model = _model_class()
    m, plain = model(), model()
    with pytest.warns(fj.FreezeWarning, match="scatters into an array that is not among its inputs"):
        m.frozen(_x(3, 0))           # (the recording ran plainly, so it wrote the buffer)
    _scatter_into_buffer(plain, _x(3, 0))
    assert same(m.forgotten_target_buffer, plain.forgotten_target_buffer)


def test_with_state_fn_one_recording_serves_several_widths():
    model = _model_class()
    _run(model, lambda m, x: m.with_state(x), [(2, 0), (3, 1), (5, 0), (9, 1)], None)
    assert model.with_state.n_recordings == 1
