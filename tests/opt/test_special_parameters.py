"""Optimizers on complex, quaternion and matrix parameters update them component by component
(Dr.Jit: "optimized component-wise", through ``.array``), so a trajectory equals the one of the
plain static array of the same components; restoring ``opt.state`` into a new optimizer resumes
the trajectory.  Found by the session-r11 port of Dr.Jit's optimizer page: Adam's ``g * g`` of a
``Complex2f`` gradient was a complex square, of a ``Matrix2f`` a matrix product."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm.ad import (Float, Array2f, Array4f, Array22f, Complex2f, Quaternion4f, Matrix2f,
                              TensorXf)

# (special type, the plain type of its components, the components' (row, column) positions)
KINDS = {
    "complex": (Complex2f, Array2f, [(0,), (1,)]),
    "quaternion": (Quaternion4f, Array4f, [(0,), (1,), (2,), (3,)]),
    "matrix": (Matrix2f, Array22f, [(0, 0), (0, 1), (1, 0), (1, 1)]),
}

OPTIMIZERS = {
    "adam": lambda: fj.opt.Adam(lr=0.1),
    "adam_masked": lambda: fj.opt.Adam(lr=0.1, mask_updates=True),
    "adam_uniform": lambda: fj.opt.Adam(lr=0.1, uniform=True),
    "adamw": lambda: fj.opt.AdamW(lr=0.1, weight_decay=0.1),
    "rmsprop": lambda: fj.opt.RMSProp(lr=0.05),
}


def component(p, pos):
    for k in pos:
        p = p[k]
    return p


def loss(p, positions, target, weight):
    """sum_k weight_k (p_k - target_k)^2 over the components, written with component access
    only (so it is the same function of the same numbers for the special and the plain type)."""
    total = 0
    for k, pos in enumerate(positions):
        total = total + weight[k] * fj.square(component(p, pos) - target[k])
    return fj.sum(total)


def trajectory(make_opt, cls, start, positions, target, weight, steps=2):
    opt = make_opt()
    comps = [Float(c) for c in start]
    if len(positions[0]) == 2:      # a 2x2 matrix: two rows
        value = Array22f(Array2f(comps[0], comps[1]), Array2f(comps[2], comps[3]))
    else:
        value = (Array2f if len(comps) == 2 else Array4f)(*comps)
    opt["p"] = value if cls is type(value) else cls(value)
    out = []
    for _ in range(steps):
        fj.backward(loss(opt["p"], positions, target, weight))
        opt.step()
        p = opt["p"]
        assert type(p) is cls
        out.append(np.array([component(p, pos).numpy() for pos in positions]))
    return out


lanes = st.integers(1, 3)
number = st.floats(-2, 2, allow_nan=False, width=32)


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=3)
@given(data=st.data())
def test_special_parameter_is_optimized_componentwise(kind, opt_name, data):
    special, plain, positions = KINDS[kind]
    n = data.draw(lanes)
    m = len(positions)
    start = [data.draw(st.lists(number, min_size=n, max_size=n)) for _ in range(m)]
    target = [data.draw(number) for _ in range(m)]
    # a zero weight leaves a component without gradient (mask_updates skips it)
    weight = [data.draw(st.sampled_from([0.0, 0.5, 1.0, 3.0])) for _ in range(m)]
    got = trajectory(OPTIMIZERS[opt_name], special, start, positions, target, weight)
    want = trajectory(OPTIMIZERS[opt_name], plain, start, positions, target, weight)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_adam_state_of_a_complex_parameter_is_a_plain_array():
    # Dr.Jit's state holds the moments as the parameter's `.array` type
    opt = fj.opt.Adam(lr=0.1, params={"c": Complex2f(1, 2)})
    fj.backward(fj.squared_norm(opt["c"]))
    opt.step()
    t, m, v, v_max = opt.state["c"][3]
    assert type(m) is Array2f and type(v) is Array2f and v_max is None
    # first step: m = 0.1 g, v = 0.001 g^2, g = 2 c = (2, 4): component-wise squares
    np.testing.assert_allclose(v.numpy().ravel(), [0.004, 0.016], rtol=1e-4)
    np.testing.assert_allclose(opt["c"].numpy().ravel(), [0.9 + 1.9j], rtol=1e-5)


def test_array_property_of_special_arrays():
    c = Complex2f(1, 2)
    fj.enable_grad(c)
    a = c.array
    assert type(a) is Array2f and a is not c
    assert fj.grad_enabled(a)
    fj.backward(3 * a[0] + a[1])
    np.testing.assert_allclose(c.grad.numpy().ravel(), [3 + 1j])
    assert type(Matrix2f(1, 2, 3, 4).array) is Array22f
    np.testing.assert_array_equal(Matrix2f(1, 2, 3, 4).array.numpy(), Matrix2f(1, 2, 3, 4).numpy())
    assert type(Quaternion4f(1, 2, 3, 4).array) is Array4f
    x, v = Float(1, 2), Array2f(1, 2)
    assert x.array is x and v.array is v
    t = TensorXf([[1.0, 2.0]])
    assert type(t.array) is Float


@pytest.mark.parametrize("make", [lambda: fj.opt.Adam(lr=0.1), lambda: fj.opt.SGD(lr=0.1, momentum=0.5),
                                  lambda: fj.opt.RMSProp(lr=0.1)])
def test_restoring_the_state_dict_resumes_the_trajectory(make):
    target = Float(1, -2, 3)

    def step(opt):
        fj.backward(fj.sum(fj.square(opt["x"] - target)))
        opt.step()

    opt = make()
    opt["x"] = Float(0, 0, 0)
    for _ in range(3):
        step(opt)
    saved = {k: (fj.detach(v[0]),) + tuple(v[1:]) for k, v in opt.state.items()}
    for _ in range(3):
        step(opt)
    fresh = make()
    fresh.state = {k: (fj.detach(v[0]),) + tuple(v[1:]) for k, v in saved.items()}
    for value, *_ in fresh.state.values():
        fj.enable_grad(value)
    for _ in range(3):
        step(fresh)
    np.testing.assert_array_equal(fresh["x"].numpy(), opt["x"].numpy())


def test_sgd_momentum_arguments_follow_drjit():
    with pytest.raises(RuntimeError, match="Nesterov"):
        fj.opt.SGD(lr=0.1, nesterov=True)
    with pytest.raises(RuntimeError):
        fj.opt.SGD(lr=0.1, momentum=-0.5)
    opt = fj.opt.SGD(lr=0.1, momentum=1.5, params={"x": Float(0.0)})    # Dr.Jit accepts it
    fj.backward(fj.sum(opt["x"] - 1))
    opt.step()
    np.testing.assert_allclose(opt["x"].numpy(), [-0.1])
