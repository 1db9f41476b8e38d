"""Random programs (hypothesis): reverse mode, forward mode and finite differences agree;
the backward pass is traced and fuses into a few kernels."""
import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.array.flat import apply
from frostjit.llvm import UInt32
from frostjit.llvm.ad import Float, Float64

from ad_helpers import check_grad

N = 9
REV = UInt32(np.arange(N)[::-1].copy())
DUP = UInt32(np.array([0, 3, 3, 8, 1, 1, 1, 5, 2], dtype=np.uint32))

# Each operation keeps values bounded (so finite differences stay accurate) while
# exercising one primitive; arguments are the last 1-3 values picked from the stack.
UNARY = {
    "sin": fj.sin, "cos": fj.cos, "tanh": fj.tanh, "atan": fj.atan, "erf": fj.erf, "neg": lambda u: -u,
    "abs": fj.abs, "square": lambda u: fj.tanh(u * u),
    "exp": lambda u: fj.exp(fj.sin(u)), "exp2": lambda u: fj.exp2(fj.cos(u)),
    "log": lambda u: fj.log(1 + u * u), "log2": lambda u: fj.log2(1.5 + fj.cos(u)),
    "sqrt": lambda u: fj.sqrt(1 + u * u), "rsqrt": lambda u: fj.rsqrt(1 + u * u),
    "rcp": lambda u: fj.rcp(2 + fj.sin(u)), "cbrt": lambda u: fj.cbrt(2 + fj.sin(u)),
    "asin": lambda u: fj.asin(0.9 * fj.tanh(u)), "acos": lambda u: fj.acos(0.9 * fj.tanh(u)),
    "tan": lambda u: fj.tan(0.7 * fj.sin(u)), "sinh": lambda u: fj.sinh(fj.cos(u)),
    "cosh": lambda u: fj.cosh(fj.sin(u)), "floor": lambda u: fj.floor(u) + u,
    "sum": lambda u: u + 0.1 * fj.sum(u), "mean": lambda u: u * fj.mean(fj.sin(u)),
    "cumsum": lambda u: 0.1 * fj.cumsum(u), "max": lambda u: u - fj.max(u),
    "gather": lambda u: fj.gather(Float64, u, REV) * 0.5 + u,
    "scatter_add": lambda u: _scatter_add(u),
    "float32": lambda u: Float64(Float(u)) * 0 + u * 2,
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: fj.tanh(a * b) * 2,
    "div": lambda a, b: a / (2 + fj.sin(b)), "pow": lambda a, b: (1.5 + fj.sin(a)) ** fj.cos(b),
    "min": fj.minimum, "max": fj.maximum, "atan2": lambda a, b: fj.atan2(a, 1.5 + fj.cos(b)),
    # (float mod through apply: the % operator refuses floats, as Dr.Jit's)
    "mod": lambda a, b: apply("mod", a, 1.5 + fj.sin(b)), "copysign": fj.copysign,
    "select": lambda a, b: fj.select(a > b, fj.sin(a), b),
    "scatter": lambda a, b: _scatter(a, b),
}
TERNARY = {"fma": lambda a, b, c: fj.tanh(fj.fma(a, b, c)), "lerp": lambda a, b, c: fj.lerp(a, b, fj.sin(c))}


def _scatter_add(u):
    t = u * 0.5
    fj.scatter_add(t, u * u, DUP)
    return t


def _scatter(a, b):
    t = a * 1.0
    fj.scatter(t, b, REV, fj.arange(UInt32, N) < 4)
    return t


OPS = [(n, 1, f) for n, f in UNARY.items()] + [(n, 2, f) for n, f in BINARY.items()] \
    + [(n, 3, f) for n, f in TERNARY.items()]

program = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 99), st.integers(0, 99),
                             st.integers(0, 99)), min_size=1, max_size=6)


def run(prog, *inputs):
    stack = list(inputs)
    for op, i, j, k in prog:
        _name, arity, f = OPS[op]
        args = [stack[-1 - (i % len(stack))], stack[j % len(stack)], stack[k % len(stack)]][:arity]
        stack.append(f(*args))
    return stack[-1], stack[len(inputs)]


@given(program, st.integers(0, 2**31))
def test_random_program_gradients_match_finite_differences_and_forward_mode(prog, seed):
    rng = np.random.default_rng(seed)
    xs = [rng.uniform(-2, 2, N) for _ in range(3)]
    check_grad(lambda a, b, c: run(prog, a, b, c), xs, seed=seed, directions=1)


def test_every_operation_is_covered_by_the_random_programs():
    for index, (name, arity, _f) in enumerate(OPS):
        prog = [(index, 0, 1, 2), (OPS.index(next(o for o in OPS if o[0] == "sin")), 0, 0, 0)]
        rng = np.random.default_rng(index)
        xs = [rng.uniform(-2, 2, N) for _ in range(3)]
        check_grad(lambda a, b, c: run(prog, a, b, c), xs, seed=index, directions=1)


def test_backward_of_a_long_elementwise_chain_is_a_handful_of_kernels():
    n = 100_000
    x = Float(np.linspace(0, 1, n, dtype=np.float32))
    fj.enable_grad(x)
    y = x
    for k in range(100):       # 100 differentiable operations, several kinds
        y = [lambda u: fj.sin(u) * 0.9 + 0.1, lambda u: u * u * 0.5 + 0.2, lambda u: fj.exp(-u),
             lambda u: fj.sqrt(u + 1.0), lambda u: fj.tanh(u) + u * 0.1][k % 5](y)
    loss = fj.sum(y)
    fj.eval(loss)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.backward(loss)
        g = fj.grad(x)
        fj.eval(g)
        history = fj.kernel_history()
    kernels = [h for h in history if h["type"] == "jit"]
    assert len(history) <= 3, history
    assert 1 <= len(kernels) <= 2
    assert np.isfinite(g.numpy()).all()


def test_backward_of_a_scatter_gather_model_is_a_few_launches():
    k, hw = 64, 4096
    gid = fj.arange(UInt32, k * hw)
    g, pix = gid // hw, gid % hw
    mu = Float(np.linspace(0, 1, k, dtype=np.float32))
    fj.enable_grad(mu)
    d = Float(pix) / hw - fj.gather(Float, mu, g)
    img = fj.zeros(Float, hw)
    fj.scatter_add(img, fj.exp(-d * d * 50), pix)
    loss = fj.mean(fj.square(img - 0.5))
    fj.eval(loss)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.backward(loss)
        fj.eval(fj.grad(mu))
        history = fj.kernel_history()
    assert len(history) <= 4, [h["type"] for h in history]


@given(st.integers(1, 6), st.sampled_from([1, 7, 1000]), st.integers(0, 2**31 - 1))
def test_gathers_of_one_source_scatter_their_adjoints_into_one_buffer(k, n, seed):
    # k gathers of one interior array (base * 3), masked or not, with a plain use of it between
    # them: the adjoints scatter into one gradient buffer in one kernel (each used to be its own
    # array, read while its scatter was queued: one launch per gather), and the gradient that
    # flows on to `base` is np.add.at's.
    rng = np.random.default_rng(seed)
    m = 13
    b0 = rng.standard_normal(m).astype(np.float32)
    base = Float(b0)
    fj.enable_grad(base)
    src = base * 3
    want = np.zeros(m, np.float64)
    y = Float(0)
    for j in range(k):
        idx = rng.integers(0, m, n).astype(np.uint32)
        act = rng.random(n) < 0.7 if j % 2 else np.ones(n, bool)
        w = rng.standard_normal(n).astype(np.float32)
        y = y + fj.sum(fj.gather(Float, src, UInt32(idx), fj.llvm.ad.Bool(act)) * Float(w))
        np.add.at(want, idx[act], w[act].astype(np.float64))
        if j == 0:
            y = y + fj.sum(src * 0.5)
            want += 0.5
    fj.eval(y)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.backward(y)
        g = fj.grad(base)
        fj.eval(g)
        history = fj.kernel_history()
    assert len([h for h in history if h["type"] == "jit"]) <= 2, [h["type"] for h in history]
    assert np.allclose(g.numpy(), 3 * want, rtol=1e-5, atol=1e-4)


def test_forward_mode_through_a_reduction_matches_reverse_mode():
    x0 = np.linspace(0.1, 1.0, 50)
    x = Float64(x0)
    fj.enable_grad(x)
    y = fj.sum(fj.sin(x) * x)
    fj.forward(x)
    fwd = fj.grad(y)[0]
    x = Float64(x0)
    fj.enable_grad(x)
    fj.backward(fj.sum(fj.sin(x) * x))
    assert np.isclose(fwd, fj.grad(x).numpy().sum(), rtol=1e-12)
