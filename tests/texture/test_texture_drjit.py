"""Texture lookups against drjit 1.5 itself: the cases and results stored by
``drjit_reference.py`` (texel data, positions inside, outside and on texel edges and centers,
active masks).  Nearest and linear filtering and ``eval_fetch`` agree bit for bit; the cubic
B-spline within a few ULP (Dr.Jit evaluates it as a weighted sum of linear lookups, frostjit
from the B-spline weights directly).  ``eval_cubic`` itself equals the value of
``eval_cubic_grad``/``eval_cubic_hessian`` (checked in test_texture_reference.py)."""
import os

import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.texture import FilterMode, WrapMode

from drjit_reference import CASES

DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "drjit_texture_reference.npz"))


def _arr(x) -> np.ndarray:
    return np.array([np.array(c) for c in x]) if isinstance(x, (list, tuple)) else np.array(x)


@pytest.mark.parametrize("ci", range(len(CASES)), ids=lambda i: "D{}-{}x{}ch-{}-{}-{}".format(
    CASES[i][0], "x".join(map(str, CASES[i][1])), CASES[i][2], CASES[i][3], CASES[i][4], CASES[i][5]))
def test_lookups_agree_with_drjit(ci):
    D, res, C, dtype, filt, wrap = CASES[ci]
    key = f"case{ci}"
    sfx = "f" if dtype == "f32" else "f64"
    tex = getattr(llvm, f"Texture{D}{sfx}")(getattr(llvm, f"TensorX{sfx}")(DATA[key + "_data"]),
                                            filter_mode=FilterMode[filt], wrap_mode=WrapMode[wrap])
    flt = llvm.Float if dtype == "f32" else llvm.Float64
    pos = DATA[key + "_pos"]
    p = [flt(pos[k]) for k in range(D)]
    act = llvm.Bool(DATA[key + "_active"])
    # every lookup of the case in one evaluation (one kernel: each compiled gather costs)
    ev = tex.eval(p, act)
    fetch = tex.eval_fetch(p, act) if filt == "Linear" else None
    cubic = tex.eval_cubic_hessian(p, act) if D > 1 else tex.eval_cubic_grad(p, act)
    fj.eval(ev, fetch, cubic)
    np.testing.assert_array_equal(_arr(ev), DATA[key + "_eval"])
    if fetch is not None:
        np.testing.assert_array_equal(np.array([_arr(c) for c in fetch]), DATA[key + "_fetch"])
    rtol = 2e-5 if dtype == "f32" else 1e-12
    scale = float(np.abs(DATA[key + "_data"]).max())
    np.testing.assert_allclose(_arr(cubic[0]), DATA[key + "_cubic"], rtol=rtol, atol=rtol * scale)
    gscale = scale * max(res) ** 2
    np.testing.assert_allclose(np.array([_arr(x) for x in cubic[1]]), DATA[key + "_grad"], rtol=rtol,
                               atol=rtol * gscale)
    if D > 1:
        hh = np.array([[[np.array(e) for e in row] for row in m] for m in cubic[2]])
        np.testing.assert_allclose(hh, DATA[key + "_hess"], rtol=rtol, atol=rtol * gscale)
