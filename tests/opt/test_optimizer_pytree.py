"""An optimizer is a PyTree (traversal protocol): eval, detach and the tree functions see its
hyper-parameters, learning-rate arrays, parameters and state; parameters are arrays or vectors."""
import pytest

import frostjit as fj
from frostjit import tree
from frostjit.llvm.ad import Float, Array3f


def make():
    opt = fj.opt.Adam(lr=0.1)
    opt["x"] = Float(1, 2, 3)
    opt["v"] = Array3f(1, 2, 3)
    return opt


def test_the_leaves_of_an_optimizer_are_its_rates_parameters_and_state():
    opt = make()
    ids = {id(a) for a in tree.leaves(opt)}
    want = [opt._lr, opt["x"], *opt["v"], *tree.leaves(opt.state["x"][3])]
    assert all(id(a) in ids for a in want)


def test_detach_of_an_optimizer_is_a_copy_with_detached_parameters():
    opt = make()
    d = fj.detach(opt)
    assert type(d) is fj.opt.Adam and d is not opt and d.beta_1 == opt.beta_1
    assert not fj.grad_enabled(d["x"]) and fj.grad_enabled(opt["x"])
    assert d["x"].numpy().tolist() == [1, 2, 3]


def test_a_step_on_vector_parameters_keeps_their_types():
    opt = make()
    fj.backward(fj.sum(opt["x"] * opt["x"]) + fj.sum(opt["v"].x))
    opt.step()
    assert type(opt["v"]) is Array3f and type(opt.state["v"][3][1]) is Array3f


@pytest.mark.parametrize("value", [(Float(1),), {"a": Float(1)}, fj.llvm.Float(1), 1.0])
def test_a_parameter_is_a_differentiable_array_or_vector_not_a_pytree(value):
    with pytest.raises(TypeError, match="expected a differentiable floating point array"):
        fj.opt.SGD(lr=0.1)["p"] = value
