"""``@fj.func``: calls of one function compiled once, with Dr.Jit 1.5's semantics (PyTrees, Python
values, literals, masks, calls inside symbolic control flow, AD, freeze); compared with the same
code inlined and with NumPy at several widths, on whichever backend the suite runs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.control import StateValueError
from frostjit.llvm import Array3f, Bool, Float, UInt32
from frostjit.llvm.ad import Float as FloatAD
from frostjit.schedule.calls import FuncVariableError

WIDTHS = (1, 7, 1000, 100003)

# Operations exact in float32 (NumPy computes the same bits): (name, arity, frostjit, numpy)
OPS = [
    ("add", 2, lambda a, b: a + b, lambda a, b: a + b),
    ("sub", 2, lambda a, b: a - b, lambda a, b: a - b),
    ("mul", 2, lambda a, b: a * b, lambda a, b: a * b),
    ("half", 1, lambda a: a * 0.5, lambda a: a * np.float32(0.5)),
    ("min", 2, fj.minimum, np.minimum),
    ("max", 2, fj.maximum, np.maximum),
    ("abs", 1, abs, np.abs),
    ("neg", 1, lambda a: -a, lambda a: -a),
    ("sel", 2, lambda a, b: fj.select(a > b, a, b * 2.0), lambda a, b: np.where(a > b, a, b * np.float32(2))),
]

program = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 7), st.integers(0, 7)), min_size=1,
                   max_size=12)


def run(prog, x, y, ops_of):
    """Apply ``prog`` (op, operand positions) to the values (x, y, ...); returns the last two."""
    vals = [x, y]
    for k, i, j in prog:
        _, arity, f, g = OPS[k]
        fn = f if ops_of == "fj" else g
        a, b = vals[i % len(vals)], vals[j % len(vals)]
        vals.append(fn(a) if arity == 1 else fn(a, b))
    return vals[-1], vals[-2]


def data(n, seed):
    r = np.random.default_rng(seed)
    return r.uniform(-3, 3, n).astype(np.float32), r.uniform(-3, 3, n).astype(np.float32)


@settings(max_examples=15)
@given(prog=program, n=st.sampled_from(WIDTHS), seed=st.integers(0, 2**31))
def test_func_matches_inlined_code_and_numpy(prog, n, seed):
    x, y = data(n, seed)

    @fj.func
    def f(a, b):
        return run(prog, a, b, "fj")
    called = f(Float(x), Float(y))
    inlined = run(prog, Float(x), Float(y), "fj")
    ref = run(prog, x, y, "np")
    for c, i, r in zip(called, inlined, ref):
        np.testing.assert_array_equal(c.numpy(), i.numpy())
        np.testing.assert_array_equal(c.numpy(), np.broadcast_to(r, (n,)))


@settings(max_examples=8)
@given(prog=program, seed=st.integers(0, 2**31))
def test_frozen_function_calling_func_equals_plain_at_every_width(prog, seed):
    @fj.func
    def f(a, b):
        return run(prog, a, b, "fj")

    def g(a, b):
        u, v = f(a, b)
        w, _ = f(v, a)          # a second call site of the same function
        return u + w
    frozen = fj.freeze(g)
    for n in (7, 1000, 100003, 7, 1):
        x, y = data(n, seed + n)
        np.testing.assert_array_equal(frozen(Float(x), Float(y)).numpy(), g(Float(x), Float(y)).numpy())


def test_frozen_function_calling_func_records_once_for_every_width():
    @fj.func
    def f(a, b):
        return a * b + 1, a - b

    @fj.freeze
    def g(a, b):
        u, v = f(a, b)
        w, _ = f(v, a)
        return u + w
    for n in (7, 1000, 100003, 7):
        x, y = data(n, n)
        ref = (x * y + np.float32(1)) + ((x - y) * x + np.float32(1))
        np.testing.assert_array_equal(g(Float(x), Float(y)).numpy(), ref)
    assert g.n_recordings == 1


def test_many_call_sites_share_one_body():
    calls = 0

    @fj.func
    def f(x):
        nonlocal calls
        calls += 1
        for _ in range(10):
            x = fj.fma(x, 1.5, 0.25) * 0.5
        return x
    x = fj.arange(Float, 100)
    y = sum((f(x + k) for k in range(20)), Float(0))
    ref = np.zeros(100, np.float32)
    for k in range(20):
        v = np.arange(100, dtype=np.float32) + np.float32(k)
        for _ in range(10):
            v = (v * np.float32(1.5) + np.float32(0.25)) * np.float32(0.5)
        ref += v
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
    assert calls == 20          # traced at every call, as Dr.Jit (its Python side effects happen each time)


@pytest.mark.llvm_only("inspects the LLVM IR")
@pytest.mark.parametrize("make", [lambda f: fj.func(f), lambda f: fj.func(backend=fj.JitBackend.LLVM)(f)])
def test_llvm_ir_names_the_function_as_drjit_does(make):
    # Dr.Jit's test_func reads kernel_history((KernelType.JIT,))[0]['ir'].getvalue() and looks
    # for '@func_' and one 'define fastcc'; the inlined program has neither.
    def f(x):
        return x * 3

    x = Float(1, 2, 3)
    irs = []
    for g in (f, make(f)):
        with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
            fj.kernel_history()
            y = g(x)
            fj.eval(y)
            (h,) = fj.kernel_history((fj.KernelType.JIT,))
        assert np.array_equal(y.numpy(), np.array([3, 6, 9], np.float32))
        irs.append(h["ir"].getvalue())
    assert "@func_" not in irs[0] and "define fastcc" not in irs[0]
    assert "@func_" in irs[1] and irs[1].count("define fastcc") == 1


@pytest.mark.llvm_only("inspects the LLVM IR")
def test_llvm_kernel_defines_the_function_once_and_calls_it_from_each_site():
    fj.eval()
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history()
    try:
        @fj.func
        def f(x):
            return fj.sin(x) * 2 + x * x

        x = fj.arange(Float, 10) * 0.1
        y = f(x) + f(x + 1) + f(x * 3) + f(f(x))
        fj.eval(y)
        (h,) = [h for h in fj.kernel_history() if h["type"] == "jit"]
    finally:
        fj.set_flag(fj.JitFlag.KernelHistory, False)
        fj.kernel_history()
    assert h["ir"].count("define fastcc") == 1
    assert h["ir"].count("call fastcc") == 5
    v = np.arange(10, dtype=np.float32) * np.float32(0.1)

    def g(v):
        return np.sin(v) * 2 + v * v
    np.testing.assert_allclose(y.numpy(), g(v) + g(v + 1) + g(v * 3) + g(g(v)), rtol=1e-5)


def test_func_kernel_has_fewer_instructions_than_inlined():
    def body(x):
        for _ in range(30):
            x = x * 1.01 + 0.5
        return x
    f = fj.func(body)
    x = fj.arange(Float, 16)
    fj.eval(x)
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history()
    try:
        a = sum((f(x + k) for k in range(10)), Float(0))
        fj.eval(a)
        (with_func,) = [h["operation_count"] for h in fj.kernel_history() if h["type"] == "jit"]
        b = sum((body(x + k) for k in range(10)), Float(0))
        fj.eval(b)
        (inlined,) = [h["operation_count"] for h in fj.kernel_history() if h["type"] == "jit"]
    finally:
        fj.set_flag(fj.JitFlag.KernelHistory, False)
        fj.kernel_history()
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert with_func * 5 < inlined


def test_func_pytrees_python_values_and_literals():
    @fj.func
    def h(a, b, scale=2):
        return {"s": a + b.x, "t": (a * scale, b.y), "py": "text"}
    r = h(Float(1, 2, 3), Array3f(1, 2, 3), scale=3)
    assert list(r["s"].numpy()) == [2, 3, 4] and list(r["t"][0].numpy()) == [3, 6, 9]
    assert list(r["t"][1].numpy()) == [2, 2, 2] and r["py"] == "text"
    r = h(1.0, Array3f(1, 2, 3))                 # a Python argument stays Python (Dr.Jit: 2.0)
    assert r["t"][0] == 2.0 and list(r["s"].numpy()) == [2]

    @fj.func
    def lit(x):
        return x * 0 + 5
    assert list(lit(Float(1, 2, 3)).numpy()) == [5, 5, 5]

    @fj.func
    def scaled(x, s):
        return x * s
    # literal arguments are constants of the body: different values, different bodies
    assert list((scaled(Float(1, 2), Float(2)) + scaled(Float(1, 2), Float(3))).numpy()) == [5, 10]
    assert list(scaled(Float(1, 2), fj.opaque(Float, 4)).numpy()) == [4, 8]


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_func_mask_zeros_masked_lanes(n):
    x, _ = data(n, n)
    m = np.random.default_rng(n).random(n) < 0.5

    @fj.func
    def f(v, active=True):
        assert active is True or isinstance(active, Bool)
        return v * 2 + 1
    ref = np.where(m, x * np.float32(2) + np.float32(1), np.float32(0))
    np.testing.assert_array_equal(f(Float(x), Bool(m)).numpy(), ref)
    np.testing.assert_array_equal(f(Float(x), active=Bool(m)).numpy(), ref)
    np.testing.assert_array_equal(f(Float(x), active=False).numpy(), np.zeros(n, np.float32))


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_func_inside_symbolic_loop_if_stmt_and_switch(n):
    x, _ = data(n, n + 1)

    @fj.func
    def step(v):
        return v * 0.5 + 1

    def loop(v):
        i = UInt32(fj.arange(UInt32, n) % 4)
        _, v = fj.while_loop((i, v), lambda i, v: i < 4, lambda i, v: (i + 1, step(v)), mode="symbolic")
        return v

    ref = x.copy()
    for _ in range(4):
        ref = np.where(np.arange(n) % 4 + _ < 4, ref * np.float32(0.5) + np.float32(1), ref)
    np.testing.assert_array_equal(loop(Float(x)).numpy(), ref)
    r = fj.if_stmt((Float(x),), Float(x) > 0, lambda v: step(v), lambda v: -v, mode="symbolic")
    np.testing.assert_array_equal(r.numpy(), np.where(x > 0, x * np.float32(0.5) + np.float32(1), -x))
    idx = UInt32(np.arange(n, dtype=np.uint32) % 3)
    r = fj.switch(idx, [step, lambda v: step(step(v)), lambda v: v], Float(x), mode="symbolic")
    s1 = x * np.float32(0.5) + np.float32(1)
    np.testing.assert_array_equal(r.numpy(), np.select([np.arange(n) % 3 == 0, np.arange(n) % 3 == 1],
                                                        [s1, s1 * np.float32(0.5) + np.float32(1)], x))


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_func_reverse_and_forward_mode_ad_equal_inlined_and_analytic(n):
    def body(v, w, k=2.0):
        return {"y": fj.sin(v) * w + v * v * k, "i": UInt32(3)}

    f = fj.func(body)
    v, w = data(n, n)
    grads = {}
    for name, fn in (("func", f), ("inline", body)):
        a, b = FloatAD(v), FloatAD(w)
        fj.enable_grad(a, b)
        y = fn(a, b)["y"] + fn(a * 2, b, k=3.0)["y"] + fn(a, FloatAD(0.5))["y"]
        fj.backward(y)
        rev = fj.grad(a).numpy(), fj.grad(b).numpy()
        a, b = FloatAD(v), FloatAD(w)
        fj.enable_grad(a)
        y = fn(a, b)["y"] + fn(a * 2, b, k=3.0)["y"]
        fj.forward(a)
        grads[name] = rev + (fj.grad(y).numpy(),)
    v64, w64 = v.astype(np.float64), w.astype(np.float64)
    da = np.cos(v64) * w64 + 4 * v64 + 2 * (np.cos(2 * v64) * w64 + 12 * v64) + np.cos(v64) * 0.5 + 4 * v64
    db = np.sin(v64) + np.sin(2 * v64)
    fwd = np.cos(v64) * w64 + 4 * v64 + 2 * (np.cos(2 * v64) * w64 + 12 * v64)
    for got in grads.values():
        np.testing.assert_allclose(got[0], da, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got[1], db, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got[2], fwd, rtol=1e-4, atol=1e-4)
    for x, y in zip(grads["func"], grads["inline"]):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


@pytest.mark.llvm_only("inspects the LLVM IR")
def test_func_derivatives_are_functions_too():
    fj.eval()
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history()
    try:
        @fj.func
        def f(v):
            return fj.sin(v) * v
        a = FloatAD(1, 2, 3)
        fj.enable_grad(a)
        y = f(a) + f(a * 2) + f(a * 3) + f(a * 4)
        fj.backward(y)
        g = fj.grad(a)
        fj.eval(g)
        irs = [h["ir"] for h in fj.kernel_history() if h["type"] == "jit"]
    finally:
        fj.set_flag(fj.JitFlag.KernelHistory, False)
        fj.kernel_history()
    v = np.array([1, 2, 3], np.float64)
    np.testing.assert_allclose(g.numpy(), sum(k * (np.cos(k * v) * k * v + np.sin(k * v)) for k in (1, 2, 3, 4)),
                               rtol=1e-5)
    assert any(ir.count("call fastcc") >= 4 for ir in irs)
    assert all(ir.count("define fastcc") <= 2 for ir in irs)


def test_func_gathers_from_an_array_it_does_not_receive():
    src = Float(1, 2, 3, 4)

    @fj.func
    def g(i):
        return fj.gather(Float, src, i) * 2
    assert list(g(UInt32(3, 0, 1)).numpy()) == [8, 2, 4]


def test_func_errors_as_drjit():
    @fj.func
    def noarg():
        return Float(1)
    with pytest.raises(RuntimeError, match="could not detect the backend"):
        noarg()

    @fj.func(backend=fj.JitBackend.LLVM)
    def made(a):
        return Float(a) * 2
    assert list(made(3.0).numpy()) == [6]

    @fj.func
    def two(a, b):
        return a + b
    with pytest.raises(RuntimeError, match="incompatible sizes \\(encountered arrays of length 3 and 2\\)"):
        two(Float(1, 2, 3), Float(1, 2))
    g = Float(1, 2, 3)

    @fj.func
    def impure(x):
        return x + g
    with pytest.raises(StateValueError, match="has 3 lanes for one lane of the call"):
        impure(Float(1, 2, 3))
    g1 = fj.opaque(Float, 7)

    @fj.func
    def reads_size_one(x):
        return x + g1
    assert list(reads_size_one(Float(1, 2, 3)).numpy()) == [8, 9, 10]


def test_func_body_variable_used_outside_raises():
    leaked = []

    @fj.func
    def f(x):
        leaked.append(x * 2)
        return x + 1
    assert list(f(Float(1, 2)).numpy()) == [2, 3]
    with pytest.raises(FuncVariableError, match="inside the body of an @fj.func function"):
        fj.eval(leaked[0])


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_func_body_that_scatters_or_loops_runs_at_the_call_site(n):
    t = fj.zeros(Float, n + 2)
    traces = 0

    @fj.func
    def scatters(i, v, active=True):
        nonlocal traces
        traces += 1
        fj.scatter_add(t, v, i)
        return v * 2

    m = np.arange(n) % 3 != 1
    v = np.arange(n, dtype=np.float32)
    r = scatters(fj.arange(UInt32, n) + 1, Float(v), Bool(m))
    np.testing.assert_array_equal(r.numpy(), np.where(m, v * 2, 0))
    np.testing.assert_array_equal(t.numpy(), np.concatenate([[0], np.where(m, v, 0), [0]]))
    assert traces == 2              # traced over placeholders, then again at the call site

    @fj.func
    def loops(v):
        return fj.while_loop((UInt32(0), v), lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), mode="symbolic")[1]
    np.testing.assert_array_equal(loops(Float(v)).numpy(), v * 8)
    r = fj.if_stmt((Float(v),), Float(v) > 2, lambda x: loops(x), lambda x: x, mode="symbolic")
    np.testing.assert_array_equal(r.numpy(), np.where(v > 2, v * 8, v))


def test_func_bodies_differing_in_the_sign_of_a_zero_literal_stay_apart():
    @fj.func
    def add(x, s):
        return x + s
    x = fj.opaque(Float, -0.0, 3)
    a, b = add(x, Float(0.0)), add(x, Float(-0.0))     # literal arguments: constants of the bodies
    fj.eval(a, b)
    assert not np.signbit(a.numpy()).any() and np.signbit(b.numpy()).all()


def test_func_bodies_with_nan_literals_share_one_function():
    @fj.func
    def f(x):
        return fj.select(x > 0, x, float("nan"))
    x = fj.opaque(Float, 1.0, 4)
    y = f(x) + f(x + 1)
    assert y._node.args[0].args[0].extra is y._node.args[1].args[0].extra      # one record: one function
    assert list(y.numpy()) == [3, 3, 3, 3]


def test_func_body_read_on_the_host_for_debug_checks_stays_symbolic():
    src = Float(1, 2, 3, 4)

    @fj.func
    def g(i):
        return fj.gather(Float, src, i) * 2

    @fj.func
    def local(i, v):
        buf = fj.alloc_local(Float, 4, Float(0))
        buf[i] = v
        return buf[i] + buf[0]
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        assert list(g(UInt32(3, 0, 1)).numpy()) == [8, 2, 4]
        assert list(local(UInt32(3, 0, 1), Float(1, 2, 3)).numpy()) == [1, 4, 3]


def test_frozen_masked_and_nested_calls_and_gradients_equal_plain():
    @fj.func
    def f(v, w, active=True):
        return fj.sin(v) * w + v * v

    def step(x, m):
        y = f(x, x * 2, active=m)
        idx = fj.arange(UInt32, fj.width(x)) % 2
        return fj.switch(idx, [lambda a: f(a, 1.0), lambda a: a], y, mode="symbolic")

    def loss_grad(x):
        xx = FloatAD(x)
        fj.enable_grad(xx)
        y = f(xx, FloatAD(2.0)) + f(xx * 3, FloatAD(1.0))
        fj.backward(fj.sum(y))
        return fj.grad(xx)
    frozen_step, frozen_grad = fj.freeze(step), fj.freeze(loss_grad)
    for n in (7, 1000, 100003, 7):
        x = np.linspace(0, 1, n).astype(np.float32)
        m = Bool(np.arange(n) % 3 != 0)
        np.testing.assert_array_equal(frozen_step(Float(x), m).numpy(), step(Float(x), m).numpy())
        np.testing.assert_allclose(frozen_grad(Float(x)).numpy(), loss_grad(Float(x)).numpy(), rtol=1e-6)
    assert frozen_step.n_recordings == 1 and frozen_grad.n_recordings == 1


@pytest.mark.parametrize("x_grad", [False, True])
def test_func_gradients_reach_a_grad_enabled_array_the_body_reads(x_grad):
    p = fj.opaque(FloatAD, 2.0)
    fj.enable_grad(p)

    @fj.func
    def f(x):
        return x * p
    x = FloatAD(1, 2, 3)
    if x_grad:
        fj.enable_grad(x)
    y = f(x)
    fj.backward(fj.sum(y))
    assert list(fj.grad(p).numpy()) == [6]          # Dr.Jit 1.5: [6]
    assert list(y.numpy()) == [2, 4, 6]
    if x_grad:
        assert list(fj.grad(x).numpy()) == [2, 2, 2]


def test_func_body_raising_after_a_scatter_leaves_no_scatter_queued():
    t = fj.zeros(Float, 3)

    @fj.func
    def bad(i):
        fj.scatter(t, 1.0, i)
        raise KeyError("boom")
    with pytest.raises(KeyError):
        bad(UInt32(0, 1))
    assert list((t + 1).numpy()) == [1, 1, 1]
