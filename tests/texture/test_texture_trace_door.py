"""A texture lookup's arithmetic goes through ``sampling.lanewise`` (``apply`` for 1-D JIT arrays)
and its fetches through ``memory.gather_flat`` instead of the public functions: the traced graph
must be the one the public functions build (same kernel key, bit-identical values), for every
wrap mode, dimension, channel count and precision, with grad-enabled positions too (the
general path's AD edges), and the positions' gradients must agree."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm.ad as AD
from frostjit.functions import memory
from frostjit.schedule.kernel import build_kernel
from frostjit.texture import FilterMode, WrapMode, sampling
from frostjit.texture import texture as texture_module


class _Nothing:
    """Stands for ArrayBase where no operand is one: lanewise() takes the public functions."""


@pytest.fixture
def public_functions(monkeypatch):
    """Within the test, a callable that runs ``fn`` with the lookup built by the public functions."""
    def run(fn):
        with monkeypatch.context() as m:
            m.setattr(sampling, "ArrayBase", _Nothing)
            m.setattr(texture_module, "gather_flat", memory.gather)
            return fn()
    return run


def _lookup(D, C, wrap, filt, prec, grad):
    rng = np.random.default_rng(D * 100 + C * 10 + wrap.value)
    res = [5, 4, 3][:D]
    tex_t = getattr(AD, f"Texture{D}f{prec}")
    tensor_t = getattr(AD, f"TensorXf{prec}")
    float_t = getattr(AD, f"Float{prec}")
    tex = tex_t(tensor_t(rng.standard_normal(res[::-1] + [C])), filter_mode=filt, wrap_mode=wrap)
    pos = [float_t(rng.uniform(-0.7, 1.7, 37)) for _ in range(D)]

    def run():
        p = [float_t(q) for q in pos]
        if grad:
            for q in p:
                fj.enable_grad(q)
        out = list(tex.eval(getattr(AD, f"Array{D}f{prec}")(*p) if D > 1 else p[0]))
        key = build_kernel([o._node for o in out], []).key()
        if grad:
            fj.backward(sum(out[1:], out[0]))
            grads = [fj.grad(q).numpy().tobytes() for q in p]
        else:
            grads = []
        return key, [o.numpy().tobytes() for o in out], grads
    return run


@pytest.mark.parametrize("wrap", list(WrapMode))
@pytest.mark.parametrize("D,C", [(1, 1), (2, 1), (2, 3), (3, 2)])
@pytest.mark.parametrize("prec", ["", "64"])
def test_the_lookup_traces_the_public_functions_graph(wrap, D, C, prec, public_functions):
    for filt in (FilterMode.Linear, FilterMode.Nearest):
        run = _lookup(D, C, wrap, filt, prec, grad=False)
        assert run() == public_functions(run)


@pytest.mark.parametrize("wrap", list(WrapMode))
@pytest.mark.parametrize("D", [1, 2])
def test_grad_enabled_positions_give_the_public_functions_values_and_gradients(wrap, D, public_functions):
    run = _lookup(D, 2, wrap, FilterMode.Linear, "", grad=True)
    assert run() == public_functions(run)
