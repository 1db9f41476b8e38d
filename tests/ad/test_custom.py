"""fj.CustomOp / fj.custom: every pattern against central finite differences (float64), in reverse and
forward mode, plus Dr.Jit 1.5's rules (measured side by side) for names, non-differentiable inputs,
implicit inputs/outputs, nesting, flags, scopes and frozen functions."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float, Float64, Array3f64, UInt32

from ad_helpers import check_grad

RNG = np.random.default_rng(7)


def data(n, lo=0.5, hi=1.5, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, n)


# ---------------------------------------------------------------------------
# The operations (derivatives written by hand, checked against finite differences)

class Square(fj.CustomOp):
    def eval(self, x):
        self.x = x
        return x * x

    def forward(self):
        self.set_grad_out(2 * self.x * self.grad_in("x"))

    def backward(self):
        self.set_grad_in("x", 2 * self.x * self.grad_out())


class SinProduct(fj.CustomOp):
    """Two inputs, a dict of two outputs: {"p": sin(x) * y, "s": x + y}."""

    def eval(self, x, y):
        self.x, self.y = x, y
        return {"p": fj.sin(x) * y, "s": x + y}

    def forward(self):
        gx, gy = self.grad_in("x"), self.grad_in("y")
        self.set_grad_out({"p": fj.cos(self.x) * self.y * gx + fj.sin(self.x) * gy, "s": gx + gy})

    def backward(self):
        g = self.grad_out()
        self.set_grad_in("x", fj.cos(self.x) * self.y * g["p"] + g["s"])
        self.set_grad_in("y", fj.sin(self.x) * g["p"] + g["s"])


class WeightedSum(fj.CustomOp):
    """``*args`` by index, a keyword, a non-differentiable UInt32 index and a Python number."""

    def eval(self, *args, scale, index, offset=0.0):
        self.args, self.scale, self.index = args, scale, index
        return fj.gather(type(args[0]), args[0] * args[1], index) * scale + offset

    def forward(self):
        g0, g1, gs = self.grad_in(0), self.grad_in(1), self.grad_in("scale")
        a0, a1 = self.args
        d = fj.gather(Float64, g0 * a1 + a0 * g1, self.index) * self.scale
        self.set_grad_out(d + fj.gather(Float64, a0 * a1, self.index) * gs)

    def backward(self):
        g = self.grad_out()
        a0, a1 = self.args
        t = fj.zeros(Float64, len(a0))
        fj.scatter_add(t, g * self.scale, self.index)
        self.set_grad_in(0, t * a1)
        self.set_grad_in(1, t * a0)
        self.set_grad_in("scale", fj.sum(g * fj.gather(Float64, a0 * a1, self.index)))


class Normalize(fj.CustomOp):
    """A static vector in, a tuple (vector, norm) out."""

    def eval(self, v):
        self.v, self.n = v, fj.norm(v)
        return v / self.n, self.n

    def forward(self):
        g = self.grad_in("v")
        u = self.v / self.n
        dn = fj.dot(u, g)
        self.set_grad_out(((g - u * dn) / self.n, dn))

    def backward(self):
        gu, gn = self.grad_out()
        u = self.v / self.n
        self.set_grad_in("v", (gu - u * fj.dot(u, gu)) / self.n + u * gn)


GLOBAL = {}


@pytest.fixture(autouse=True)
def _forget_globals():
    yield
    GLOBAL.clear()      # no arrays left for interpreter shutdown


class ScaleByGlobal(fj.CustomOp):
    """An implicit input: ``x * w`` where ``w`` is not an argument (``add_input``)."""

    def eval(self, x):
        w = GLOBAL["w"]
        self.add_input(w)
        self.x, self.w = x, fj.detach(w)
        return x * self.w

    def forward(self):
        self.set_grad_out(self.grad_in("x") * self.w + fj.grad(GLOBAL["w"]) * self.x)

    def backward(self):
        g = self.grad_out()
        self.set_grad_in("x", g * self.w)
        fj.accum_grad(GLOBAL["w"], g * self.x)


class TwoOutputs(fj.CustomOp):
    """An implicit output: returns ``2 x`` and creates ``GLOBAL["extra"] = 3 x**2`` (``add_output``)."""

    def eval(self, x):
        self.x = x
        extra = Float64(3 * x * x)
        fj.enable_grad(extra)
        self.add_output(extra)
        GLOBAL["extra"] = self.extra = extra
        return x * 2

    def forward(self):
        gx = self.grad_in("x")
        self.set_grad_out(2 * gx)
        fj.accum_grad(self.extra, 6 * self.x * gx)

    def backward(self):
        self.set_grad_in("x", 2 * self.grad_out() + 6 * self.x * fj.grad(self.extra))


class SquareByNestedAD(fj.CustomOp):
    """The derivative of a custom operation computed with AD inside its callbacks (nesting)."""

    def eval(self, x):
        self.x = x
        return fj.custom(Square, x) + 1           # a custom op inside eval (its inputs are detached)

    def _derivative(self):
        x = Float64(self.x)
        fj.enable_grad(x)
        fj.backward(fj.custom(Square, x))
        return fj.grad(x)

    def forward(self):
        self.set_grad_out(self._derivative() * self.grad_in("x"))

    def backward(self):
        self.set_grad_in("x", self._derivative() * self.grad_out())


# ---------------------------------------------------------------------------
# Finite-difference checks (float64), reverse and forward mode

N = 9


def test_square_matches_finite_differences():
    check_grad(lambda x: fj.custom(Square, x), [data(N)])


def test_custom_op_inside_a_chain_matches_finite_differences():
    # inputs computed from other variables, outputs used by later operations
    check_grad(lambda x, y: fj.exp(fj.custom(Square, fj.sin(x) * y)) * x, [data(N, seed=1), data(N, seed=2)])


def test_two_inputs_and_a_dict_of_outputs_match_finite_differences():
    def f(x, y):
        r = fj.custom(SinProduct, x, y)
        return [r["p"], r["s"] * r["p"]]
    check_grad(f, [data(N, seed=3), data(N, seed=4)])


def test_keyword_arguments_match_finite_differences():
    check_grad(lambda x, y: fj.custom(SinProduct, y=y, x=x)["p"], [data(N, seed=5), data(N, seed=6)])


def test_varargs_by_index_keywords_and_non_differentiable_inputs_match_finite_differences():
    idx = UInt32(np.array([3, 0, 0, 8, 5, 1], dtype=np.uint32))

    def f(a, b, s):
        return fj.custom(WeightedSum, a, b, scale=s, index=idx, offset=0.25)
    check_grad(f, [data(N, seed=7), data(N, seed=8), data(1, seed=9)])


def test_static_vector_input_and_tuple_output_match_finite_differences():
    def f(x, y, z):
        u, n = fj.custom(Normalize, Array3f64(x, y, z))
        return [u.x, u.y * 2, u.z, n * n]
    check_grad(f, [data(N, seed=10), data(N, seed=11), data(N, seed=12)])


def test_implicit_input_matches_finite_differences():
    def f(x, w):
        GLOBAL["w"] = w
        return fj.custom(ScaleByGlobal, x)
    check_grad(f, [data(N, seed=13), data(N, seed=14)])


def test_implicit_output_matches_finite_differences():
    def f(x):
        y = fj.custom(TwoOutputs, x)
        return [y, GLOBAL["extra"]]
    check_grad(f, [data(N, seed=15)])


def test_nested_custom_ops_and_ad_inside_callbacks_match_finite_differences():
    check_grad(lambda x: fj.custom(SquareByNestedAD, x * 3) * x, [data(N, seed=16)])


@given(st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_custom_square_equals_builtin_square_for_random_inputs(n, seed):
    x0 = data(n, -2, 2, seed)
    a, b = Float64(x0), Float64(x0)
    fj.enable_grad(a, b)
    fj.backward(fj.sum(fj.sin(fj.custom(Square, a))))
    fj.backward(fj.sum(fj.sin(b * b)))
    np.testing.assert_allclose(fj.grad(a).numpy(), fj.grad(b).numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------
# Dr.Jit's rules (each checked against Dr.Jit 1.5)

def test_eval_receives_detached_arguments_of_the_same_types():
    seen = {}

    class Probe(fj.CustomOp):
        def eval(self, x, n, k=2.0):
            seen.update(x=(type(x), fj.grad_enabled(x)), n=type(n), k=k)
            return x * k

    x = Float(1, 2)
    fj.enable_grad(x)
    fj.custom(Probe, x, UInt32(1, 2))
    assert seen == {"x": (Float, False), "n": UInt32, "k": 2.0}


def test_outputs_are_new_variables_only_when_an_input_is_grad_enabled():
    class Identity(fj.CustomOp):
        def eval(self, x, n):
            return x, n

        def backward(self):
            self.set_grad_in("x", self.grad_out()[0] * 5)

    x = Float(1, 2)
    y, n = fj.custom(Identity, x, UInt32(3, 4))
    assert not fj.grad_enabled(y)
    fj.enable_grad(x)
    y, n = fj.custom(Identity, x, UInt32(3, 4))
    assert y is not x and fj.grad_enabled(y) and type(n) is UInt32 and not fj.grad_enabled(n)
    fj.backward(y)
    assert fj.grad(x).numpy().tolist() == [5, 5]


def test_outputs_of_eval_lose_their_own_derivatives():
    # eval multiplies by a grad-enabled global without add_input: only the op's rule counts (Dr.Jit)
    w = Float(10, 20)
    fj.enable_grad(w)

    class Scale(fj.CustomOp):
        def eval(self, x):
            return x * w

        def backward(self):
            self.set_grad_in("x", self.grad_out() * 100)

    x = Float(1, 2)
    fj.enable_grad(x)
    fj.backward(fj.custom(Scale, x))
    assert fj.grad(x).numpy().tolist() == [100, 100] and fj.grad(w).numpy().tolist() == [0, 0]


def test_grad_in_and_grad_out_have_the_structure_of_the_arguments_and_result():
    got = {}

    class Struct(fj.CustomOp):
        def eval(self, d, t):
            return d["a"] * t[0], t[1]

        def backward(self):
            got["in"] = (self.grad_in("d"), self.grad_in("t"))
            got["out"] = self.grad_out()
            self.set_grad_in("d", {"a": self.grad_out()[0] * 3, "b": 1.0})

    a, b, c = Float(1, 2), Float(3, 4), Float(5, 6)
    fj.enable_grad(a, b, c)
    r = fj.custom(Struct, {"a": a, "b": b}, [c, 1.5])
    fj.backward(r[0])
    gd, gt = got["in"]
    assert set(gd) == {"a", "b"} and gd["a"].numpy().tolist() == [0, 0]
    assert isinstance(gt, list) and gt[1] == 0.0
    assert isinstance(got["out"], tuple) and got["out"][0].numpy().tolist() == [1, 1] and got["out"][1] == 1.5
    assert fj.grad(a).numpy().tolist() == [3, 3] and fj.grad(b).numpy().tolist() == [1, 1]


def test_set_grad_in_accumulates_and_skips_inputs_without_gradients():
    class Twice(fj.CustomOp):
        def eval(self, x, y):
            return x * 2

        def backward(self):
            self.set_grad_in("x", self.grad_out() * 2)
            self.set_grad_in("x", self.grad_out() * 2)
            self.set_grad_in("y", self.grad_out())        # y is not grad-enabled: nothing happens

    x = Float(1, 2)
    fj.enable_grad(x)
    fj.backward(fj.custom(Twice, x, Float(5, 5)))
    assert fj.grad(x).numpy().tolist() == [4, 4]


def test_unknown_argument_names_raise_naming_the_argument():
    class Bad(fj.CustomOp):
        def eval(self, x, y):
            return x * 2

        def backward(self):
            self.set_grad_in("z", self.grad_out())

    x = Float(1, 2)
    fj.enable_grad(x)
    y = fj.custom(Bad, x, 1.0)
    with pytest.raises(RuntimeError, match=r"input argument named 'z' \(the arguments are 'x', 'y'\)"):
        fj.backward(y)


class _PassArgsAndKwargs(fj.CustomOp):
    """Returns (args[0], kwargs["key"]); reads and writes its gradients by the names of
    *args and **kwargs as a whole."""

    def eval(self, *args, **kwargs):
        return args[0] * 1.0, kwargs["key"] * 1.0

    def forward(self):
        self.set_grad_out((self.grad_in("args")[0] * 2, self.grad_in("kwargs")["key"] * 3))

    def backward(self):
        ga, gk = self.grad_out()
        self.set_grad_in("args", (ga * 2,))
        self.set_grad_in("kwargs", {"key": gk * 3})


def test_varargs_and_varkeywords_are_named_as_a_whole_in_both_modes():
    x, y = Float(1.0, 2.0), Float(3.0, 4.0)
    fj.enable_grad(x, y)
    a, b = fj.custom(_PassArgsAndKwargs, x, key=y)
    x.grad, y.grad = [1, 10], [100, 1000]
    ga, gb = fj.forward_to(a, b)
    assert ga.numpy().tolist() == [2, 20] and gb.numpy().tolist() == [300, 3000]
    x, y = Float(1.0, 2.0), Float(3.0, 4.0)
    fj.enable_grad(x, y)
    a, b = fj.custom(_PassArgsAndKwargs, x, key=y)
    a.grad, b.grad = 1, 1
    gx, gy = fj.backward_to(x, y)
    assert gx.numpy().tolist() == [2, 2] and gy.numpy().tolist() == [3, 3]


def test_missing_callbacks_raise_not_implemented():
    class OnlyEval(fj.CustomOp):
        def eval(self, x):
            return x * 2

    for direction in (fj.backward, fj.forward):
        x = Float(3, 4)
        fj.enable_grad(x)
        y = fj.custom(OnlyEval, x)
        with pytest.raises(RuntimeError, match=r"OnlyEval\.(backward|forward)\(\): not implemented"):
            direction(y if direction is fj.backward else x)


def test_custom_checks_its_class_and_arguments():
    with pytest.raises(TypeError, match="subclass of frostjit.CustomOp"):
        fj.custom(int, Float(1))
    with pytest.raises(TypeError, match=r"do not fit .*Square.eval\(\)"):
        fj.custom(Square, Float(1), Float(2))


def test_default_name_is_module_and_class():
    assert Square().name() == f"{__name__}.Square"


def test_inside_suspend_grad_the_result_is_not_grad_enabled():
    x = Float(3, 4)
    fj.enable_grad(x)
    with fj.suspend_grad():
        y = fj.custom(Square, x)
    assert not fj.grad_enabled(y)


def test_backward_with_clear_none_twice_calls_backward_with_fresh_output_gradients():
    # Dr.Jit 1.5: the operation's collected output gradients are consumed by each call
    x = Float(3, 4)
    fj.enable_grad(x)
    y = fj.custom(Square, x)
    fj.backward(y, fj.ADFlag.ClearNone)
    fj.backward(y, fj.ADFlag.ClearNone)
    assert fj.grad(x).numpy().tolist() == [12, 16]


def test_backward_is_called_once_for_several_outputs():
    calls = []

    class Counted(SinProduct):
        def backward(self):
            calls.append(1)
            super().backward()

    x, y = Float64(data(3)), Float64(data(3, seed=1))
    fj.enable_grad(x, y)
    r = fj.custom(Counted, x, y)
    fj.backward(fj.sum(r["p"]) + fj.sum(r["s"]))
    assert calls == [1]


def test_backward_to_and_forward_to_pass_through_a_custom_op():
    x0 = data(5)
    x = Float64(x0)
    fj.enable_grad(x)
    y = fj.custom(Square, x)
    z = fj.sin(y)
    fj.set_grad(z, 1.0)
    gx = fj.backward_to(x)
    np.testing.assert_allclose(gx.numpy(), np.cos(x0 ** 2) * 2 * x0, rtol=1e-12)
    x = Float64(x0)
    fj.enable_grad(x)
    z = fj.sin(fj.custom(Square, x))
    fj.set_grad(x, 1.0)
    np.testing.assert_allclose(fj.forward_to(z).numpy(), np.cos(x0 ** 2) * 2 * x0, rtol=1e-12)


def test_implicit_output_gradient_is_visible_in_backward_and_set_in_forward():
    x = Float(1, 2)
    fj.enable_grad(x)
    fj.custom(TwoOutputs, x)
    fj.backward(GLOBAL["extra"])                  # only the implicit output is used
    assert fj.grad(x).numpy().tolist() == [6, 12]
    x = Float(1, 2)
    fj.enable_grad(x)
    y = fj.custom(TwoOutputs, x)
    fj.forward(x)
    assert fj.grad(y).numpy().tolist() == [2, 2] and fj.grad(GLOBAL["extra"]).numpy().tolist() == [6, 12]


def test_implicit_input_alone_makes_the_result_differentiable():
    GLOBAL["w"] = w = Float(10, 20)
    fj.enable_grad(w)
    y = fj.custom(ScaleByGlobal, Float(1, 2))
    assert fj.grad_enabled(y)
    fj.backward(y)
    assert fj.grad(w).numpy().tolist() == [1, 2]


def test_add_input_outside_eval_raises():
    with pytest.raises(RuntimeError, match="call it from eval"):
        Square().add_input(Float(1))


# ---------------------------------------------------------------------------
# Inside frozen functions

def _loss_and_grads(x0, y0, f):
    x, y = Float(x0), Float(y0)
    fj.enable_grad(x, y)
    loss = f(x, y)
    return loss.numpy()[0], fj.grad(x).numpy(), fj.grad(y).numpy()


def _step(x, y):
    r = fj.custom(SinProduct, x, y)
    loss = fj.sum(fj.custom(Square, r["p"]) + r["s"])
    fj.backward(loss)
    return fj.detach(loss)


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_backward_through_custom_ops_inside_a_frozen_function_replays_at_every_width(n):
    frozen = fj.freeze(_step)
    for rep in range(3):
        x0, y0 = data(n, seed=rep).astype(np.float32), data(n, seed=rep + 10).astype(np.float32)
        got = _loss_and_grads(x0, y0, frozen)
        want = _loss_and_grads(x0, y0, _step)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
    assert frozen.n_recordings == 1


def test_custom_op_forward_inside_a_frozen_function_replays_at_new_widths():
    frozen = fj.freeze(lambda x, y: fj.custom(SinProduct, x, y)["p"])
    for n in (3, 11, 3):
        x0, y0 = data(n), data(n, seed=1)
        np.testing.assert_allclose(frozen(Float(x0), Float(y0)).numpy(), np.sin(x0) * y0, rtol=1e-6)
    assert frozen.n_recordings == 1


def test_gradients_through_a_frozen_custom_op_result_are_correct_plain_calls():
    frozen = fj.freeze(lambda x: fj.custom(Square, x))
    for n in (4, 4, 6):
        x0 = data(n)
        x = Float64(x0)
        fj.enable_grad(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fj.FreezeWarning)
            y = frozen(x)
        fj.backward(fj.sum(y))
        np.testing.assert_allclose(fj.grad(x).numpy(), 2 * x0, rtol=1e-12)


def test_isolate_grad_postpones_the_operation_until_the_scope_ends():
    x0 = data(4)
    x = Float64(x0)
    fj.enable_grad(x)
    y = fj.custom(Square, x)
    with fj.isolate_grad():
        fj.backward(fj.sum(fj.sin(y)))
        assert fj.grad(x).numpy().tolist() == [0, 0, 0, 0]     # not yet: x is outside the scope
    np.testing.assert_allclose(fj.grad(x).numpy(), np.cos(x0 ** 2) * 2 * x0, rtol=1e-12)


def test_a_frozen_function_whose_custom_op_gives_gradients_to_a_global_runs_plainly():
    # the implicit input is not among the frozen function's inputs: its gradient could not be
    # replayed, so the calls run the plain function (FreezeWarning) and the gradients are exact
    @fj.freeze
    def f(x):
        fj.backward(fj.sum(fj.custom(ScaleByGlobal, x)))

    for n in (3, 3, 5):
        GLOBAL["w"] = w = Float64(data(n, seed=n))
        fj.enable_grad(w)
        x = Float64(data(n, seed=n + 1))
        fj.enable_grad(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fj.FreezeWarning)
            f(x)
        np.testing.assert_allclose(fj.grad(w).numpy(), x.numpy(), rtol=1e-12)
        np.testing.assert_allclose(fj.grad(x).numpy(), w.numpy(), rtol=1e-12)


@pytest.mark.parametrize("enabled", [True, False])
def test_an_exception_in_eval_is_a_runtime_error_caused_by_it(enabled):
    class Broken(fj.CustomOp):
        def eval(self, x):
            raise ValueError("bar")

    x = Float(1.0)
    if enabled:
        fj.enable_grad(x)
    with pytest.raises(RuntimeError, match="Broken.*ValueError: bar") as info:
        fj.custom(Broken, x)
    assert type(info.value.__cause__) is ValueError and str(info.value.__cause__) == "bar"


def test_set_grad_out_and_set_grad_in_convert_a_list_like_set_grad():
    class Twice(fj.CustomOp):
        def eval(self, x):
            return x * 2

        def forward(self):
            self.set_grad_out([1.0, 2.0])

        def backward(self):
            self.set_grad_in("x", [3.0, 4.0])

    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = fj.custom(Twice, x)
    x.grad = 1
    assert fj.forward_to(y).numpy().tolist() == [1, 2]
    x = Float(1.0, 2.0)
    fj.enable_grad(x)
    y = fj.custom(Twice, x)
    y.grad = 1
    assert fj.backward_to(x).numpy().tolist() == [3, 4]
