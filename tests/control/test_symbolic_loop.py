"""Symbolic ``fj.while_loop``: one loop inside the kernel, traced once, lanes retiring one by one.

Differential: random loop programs (hypothesis) against a NumPy loop with a per-lane active mask
and against evaluated mode, at widths 1, 7, 1000 and 100003, plain and frozen; both backends
(``--backend reference``).  Plus the kernel count (one kernel, compiled once whatever the
iteration count), nested loops, gathers, PyTree and Python-value state, PCG32 state, and the
errors.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.control import StateTypeError, StateValueError
from frostjit.llvm import Array3f, Float, PCG32, UInt32
from frostjit.schedule.loops import LoopVariableError

WIDTHS = (7, 1000, 100003, 1)      # (width 1 last: freeze records size-1 inputs apart)


@pytest.fixture(autouse=True)
def _history():
    fj.eval()
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history()
    yield
    fj.set_flag(fj.JitFlag.KernelHistory, False)
    fj.kernel_history()


def jit_kernels() -> list:
    return [h for h in fj.kernel_history() if h["type"] == "jit"]


# -- random programs ---------------------------------------------------------------------------
# A program updates k float32 state variables each iteration: v_j <- expr_j(v, a, constants),
# where an expression is a small tree of +, -, *, minimum, maximum and a select.  The loop runs
# while ``i < n`` (n per lane, 0..12) and ``v_0 < limit``.  Every operation is exact IEEE float32,
# so NumPy must agree bit for bit.

NP_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "min": np.minimum, "max": np.maximum, "sel": lambda a, b: np.where(a < b, b, a * np.float32(0.5))}
FJ_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "min": fj.minimum, "max": fj.maximum, "sel": lambda a, b: fj.select(a < b, b, a * 0.5)}


def exprs(k: int):
    leaf = st.one_of(st.tuples(st.just("v"), st.integers(0, k - 1)), st.just(("a",)),
                     st.tuples(st.just("c"), st.sampled_from([0.5, -0.25, 1.5, 2.0, -3.0, 0.125])))
    return st.recursive(leaf, lambda sub: st.tuples(st.sampled_from(sorted(NP_OPS)), sub, sub), max_leaves=6)


def evaluate(e, v, a, ops, const):
    tag = e[0]
    if tag == "v":
        return v[e[1]]
    if tag == "a":
        return a
    if tag == "c":
        return const(e[1])
    return ops[tag](evaluate(e[1], v, a, ops, const), evaluate(e[2], v, a, ops, const))


@st.composite
def programs(draw):
    k = draw(st.integers(1, 3))
    return {"k": k, "exprs": [draw(exprs(k)) for _ in range(k)], "limit": draw(st.sampled_from([1e3, 50.0, 4.0])),
            "seed": draw(st.integers(0, 2**16))}


def inputs(prog, n: int):
    r = np.random.default_rng(prog["seed"] + n)
    v0 = [r.uniform(-2, 2, n).astype(np.float32) for _ in range(prog["k"])]
    a = r.uniform(-1, 1, n).astype(np.float32)
    count = r.integers(0, 13, n).astype(np.uint32)
    return v0, a, count


@np.errstate(all="ignore")
def numpy_loop(prog, v0, a, count):
    v = [x.copy() for x in v0]
    i = np.zeros(a.size, np.uint32)
    active = np.ones(a.size, bool)
    limit = np.float32(prog["limit"])
    while True:
        active &= (i < count) & (v[0] < limit)
        if not active.any():
            return i, v
        new = [evaluate(e, v, a, NP_OPS, np.float32) for e in prog["exprs"]]
        v = [np.where(active, x, y) for x, y in zip(new, v)]
        i = np.where(active, i + 1, i)


def fj_loop(prog, v0, a, count, mode):
    def cond(i, v):
        return (i < count) & (v[0] < prog["limit"])

    def body(i, v):
        # (an expression that is a constant gives a Python float: the state keeps its type)
        return i + 1, [Float(evaluate(e, v, a, FJ_OPS, float)) for e in prog["exprs"]]
    i, v = fj.while_loop((UInt32(0), list(v0)), cond, body, mode=mode)
    return i, v


def as_fj(v0, a, count):
    return [Float(x) for x in v0], Float(a), UInt32(count)


@settings(max_examples=20)
@given(programs())
def test_symbolic_loop_matches_numpy_and_evaluated_mode(prog):
    frozen = fj.freeze(lambda v0, a, count: fj_loop(prog, v0, a, count, "symbolic"))
    for n in WIDTHS:
        v0, a, count = inputs(prog, n)
        ri, rv = numpy_loop(prog, v0, a, count)
        for how in ("symbolic", "frozen", "evaluated") if n <= 1000 else ("symbolic", "frozen"):
            args = as_fj(v0, a, count)
            i, v = frozen(*args) if how == "frozen" else fj_loop(prog, *args, how)
            np.testing.assert_array_equal(i.numpy(), ri, err_msg=f"{how}, width {n}: iteration counts")
            for j, (x, y) in enumerate(zip(v, rv)):
                np.testing.assert_array_equal(x.numpy(), y, err_msg=f"{how}, width {n}: state variable {j}")
        # recorded once, replayed at every other width and iteration count
        assert frozen.n_recordings == (1 if n > 1 else 2)


# -- one kernel, compiled once -----------------------------------------------------------------

def test_symbolic_loop_of_10000_iterations_compiles_one_kernel_once():
    x = fj.arange(Float, 5) * 2.0           # pending: computed in the loop's kernel
    i, y = fj.while_loop((UInt32(0), x), lambda i, y: i < 10000, lambda i, y: (i + 1, y + 1.0))
    fj.eval(i, y)
    h = jit_kernels()
    assert len(h) == 1
    assert h[0]["operation_count"] < 40
    assert list(i.numpy()) == [10000] * 5 and list(y.numpy()) == [10000.0 + 2 * k for k in range(5)]
    # another iteration count: the same kernel, found in memory
    i, y = fj.while_loop((UInt32(0), x), lambda i, y: i < UInt32(3, 1, 4, 1, 5), lambda i, y: (i + 1, y + 1.0))
    fj.eval(i, y)
    h2 = jit_kernels()
    assert len(h2) == 1
    assert list(i.numpy()) == [3, 1, 4, 1, 5]


def test_symbolic_loop_evaluates_its_other_results_in_the_same_kernel():
    i, z = fj.while_loop((UInt32(0), Float(1, 2, 3)), lambda i, z: i < UInt32(1, 2, 3), lambda i, z: (i + 1, z * z))
    fj.eval(i)                  # only i asked for: z is stored by the same launch
    assert len(jit_kernels()) == 1
    assert list(z.numpy()) == [1.0, 16.0, 6561.0]
    assert jit_kernels() == []


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_symbolic_loop_zero_iterations_and_empty_state_arrays(mode):
    i, x = fj.while_loop((UInt32(0), Float(1, 2)), lambda i, x: x > 5.0, lambda i, x: (i + 1, x + 1.0), mode=mode)
    # (Dr.Jit 1.5 too: a symbolic loop widens i, an evaluated one that runs no iteration does not)
    assert list(i.numpy()) == ([0, 0] if mode == "symbolic" else [0]) and list(x.numpy()) == [1.0, 2.0]
    # Dr.Jit 1.5: an empty array in the state (before or after an iteration) is an error
    with pytest.raises(RuntimeError, match="state variable 'x' of type .* is uninitialized"):
        fj.while_loop((UInt32(0), Float()), lambda i, x: x < 5.0, lambda i, x: (i + 1, x + 1.0), labels=("i", "x"),
                      mode=mode)
    with pytest.raises(RuntimeError, match="state variable 'x' of type .* is uninitialized"):
        fj.while_loop((UInt32(0, 1), Float(1, 2)), lambda i, x: i < 2, lambda i, x: (i + 1, Float()),
                      labels=("i", "x"), mode=mode)


# -- what the body may contain ------------------------------------------------------------------

def test_nested_symbolic_loops_read_the_outer_state():
    def outer_body(i, acc):
        _, acc = fj.while_loop((UInt32(0), acc), lambda j, a: j < i, lambda j, a: (j + 1, a + 1.0))
        return i + 1, acc
    i, acc = fj.while_loop((UInt32(0), Float(0, 0, 0, 0)), lambda i, acc: i < UInt32(0, 3, 4, 5), outer_body)
    assert list(acc.numpy()) == [0.0, 3.0, 6.0, 10.0]
    assert len(jit_kernels()) == 1


def test_symbolic_loop_gathers_in_the_body():
    src = Float(np.arange(10, dtype=np.float32))
    k, s = fj.while_loop((UInt32(0, 5, 9), Float(0)), lambda k, s: k < 10,
                         lambda k, s: (k + 1, s + fj.gather(Float, src, k)))
    assert list(s.numpy()) == [45.0, 35.0, 9.0]


def test_symbolic_loop_with_if_stmt_in_the_body():
    def body(i, x):
        x = fj.if_stmt((x,), x > 10.0, lambda x: x - 10.0, lambda x: x * 3.0)
        return i + 1, x
    i, x = fj.while_loop((UInt32(0), Float(1, 2, 3)), lambda i, x: i < 4, body)
    ref = []
    for v in (1.0, 2.0, 3.0):
        for _ in range(4):
            v = v - 10.0 if v > 10.0 else v * 3.0
        ref.append(v)
    assert list(x.numpy()) == ref


def test_symbolic_loop_state_is_any_pytree_with_python_values():
    st = {"p": Array3f(1, 2, 3), "n": 3, "c": UInt32(0)}

    def body(s):
        return ({"p": s["p"] * 2.0, "n": s["n"], "c": s["c"] + 1},)
    (r,) = fj.while_loop((st,), lambda s: s["c"] < UInt32(1, 2), body)
    assert r["n"] == 3
    assert isinstance(r["p"], Array3f)
    np.testing.assert_array_equal(r["p"].numpy(), [[2, 4], [4, 8], [6, 12]])


def test_symbolic_loop_size1_state_widened_by_the_body():
    lim = UInt32(2, 4, 6)
    (i,) = fj.while_loop((UInt32(0),), lambda i: i < lim, lambda i: (i + 1,))
    assert list(i.numpy()) == [2, 4, 6]


def test_symbolic_loop_pcg32_state_matches_evaluated_mode():
    def run(mode):
        def body(i, r, acc):
            return i + 1, r, acc + r.next_float32()
        return fj.while_loop((UInt32(0), PCG32(size=6), Float(0)), lambda i, r, acc: i < UInt32(0, 1, 2, 3, 9, 30),
                             body, mode=mode)
    a, b = run("symbolic"), run("evaluated")
    np.testing.assert_array_equal(a[2].numpy(), b[2].numpy())
    np.testing.assert_array_equal(a[1].state.numpy(), b[1].state.numpy())


def test_symbolic_loop_frozen_records_once_with_data_dependent_counts():
    @fj.freeze
    def f(x, n):
        i, y = fj.while_loop((UInt32(0), x), lambda i, y: i < n, lambda i, y: (i + 1, y * 1.5))
        return i, y
    for w in (7, 1000, 100003, 7, 1):
        n = np.random.default_rng(w).integers(0, 20, w).astype(np.uint32)
        i, y = f(fj.arange(Float, w), UInt32(n))
        np.testing.assert_array_equal(i.numpy(), n)
        ref = np.arange(w, dtype=np.float32)
        for _ in range(20):
            ref = np.where(n > _, ref * np.float32(1.5), ref)
        np.testing.assert_array_equal(y.numpy(), ref)
        # one recording for every width but 1 (freeze records size-1 inputs apart: they broadcast)
        assert f.n_recordings == (1 if w > 1 else 2)


# -- errors --------------------------------------------------------------------------------------

def test_symbolic_loop_state_type_change_raises_drjit_error():
    with pytest.raises(StateTypeError, match="the type of state variable 'x' changed"):
        fj.while_loop((UInt32(0), Float(1)), lambda i, x: i < 3, lambda i, x: (i + 1, UInt32(x)), labels=("i", "x"))


def test_symbolic_loop_python_value_change_raises_unless_not_strict():
    with pytest.raises(StateValueError, match="non-array state variable 'state\\[1\\]'"):
        fj.while_loop((UInt32(0), 5), lambda i, k: i < 3, lambda i, k: (i + 1, k + 1))
    i, k = fj.while_loop((UInt32(0), 5), lambda i, k: i < 3, lambda i, k: (i + 1, k + 1), strict=False)
    assert k == 6 and list(i.numpy()) == [3]


def test_symbolic_loop_variable_used_outside_raises():
    leaked = []

    def body(i):
        leaked.append(i * 2)
        return (i + 1,)
    fj.while_loop((UInt32(0, 1),), lambda i: i < 3, body)
    with pytest.raises(LoopVariableError, match="symbolic loop"):
        fj.eval(leaked[0])


def test_symbolic_loop_bool_condition_type_checked():
    with pytest.raises(StateTypeError, match="Jit-compiled 1D Boolean"):
        fj.while_loop((UInt32(0, 1),), lambda i: UInt32(1), lambda i: (i + 1,), mode="symbolic")


def test_frozen_symbolic_loop_advances_an_rng_input_like_plain_calls():
    def walk(rng, n):
        def body(i, r, x):
            return i + 1, r, x + (r.next_float32() - 0.5)
        _, r, x = fj.while_loop((UInt32(0), rng, Float(0)), lambda i, r, x: i < n, body)
        rng.state = r.state         # the caller's generator advances by each lane's count
        return x
    frozen = fj.freeze(walk)
    plain_rng, frozen_rng = PCG32(size=257), PCG32(size=257)
    n = UInt32(np.arange(257, dtype=np.uint32) % 7)
    for k in range(100):
        a, b = walk(plain_rng, n), frozen(frozen_rng, n)
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f"call {k}")
        np.testing.assert_array_equal(plain_rng.state.numpy(), frozen_rng.state.numpy(), err_msg=f"call {k}")
    assert frozen.n_recordings == 1


def test_symbolic_loop_returns_unchanged_state_with_its_own_width():
    # Dr.Jit 1.5: width(i) == 3, width(c) == 1, c == [5]
    i, c = fj.while_loop((UInt32(0), Float(5)), lambda i, c: i < UInt32(1, 2, 3), lambda i, c: (i + 1, c))
    assert fj.width(i) == 3 and fj.width(c) == 1 and list(c.numpy()) == [5.0]


def test_symbolic_loop_gathers_with_debug_flag_are_not_read_on_the_host():
    # Debug mode checks indices on the host; a loop body's indices exist only inside its kernel
    src = Float(np.arange(10, dtype=np.float32))
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        k, s = fj.while_loop((UInt32(0, 5, 9), Float(0)), lambda k, s: k < 10,
                             lambda k, s: (k + 1, s + fj.gather(Float, src, k)))
        assert list(s.numpy()) == [45.0, 35.0, 9.0]
        with pytest.raises(IndexError):         # outside loops the check still runs
            fj.gather(Float, src, UInt32(10))


def test_pcg32_drawn_from_in_the_body_but_not_in_the_state_equals_drjit():
    # Dr.Jit 1.5 prints the same numbers for this program (the generator is not loop state), also
    # for the draw after the loop
    rng = PCG32(3)
    _, acc = fj.while_loop((UInt32(0), Float(0, 0, 0)), lambda i, acc: i < 3,
                           lambda i, acc: (i + 1, acc + rng.next_float32()), mode="symbolic")
    np.testing.assert_allclose(acc.numpy(), [0.325136, 1.60173, 0.0205336], rtol=1e-5)
    np.testing.assert_allclose(rng.next_float32().numpy(), [0.90696, 0.325773, 0.479291], rtol=1e-5)
