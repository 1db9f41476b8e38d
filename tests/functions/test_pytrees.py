"""PyTrees through the fj.* functions: eval, schedule, make_opaque, width, gather, scatter,
select, tile and repeat, each against the same call made leaf by leaf (Dr.Jit's semantics)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import tree
from frostjit.llvm import Float, UInt32, Bool, Array3f

from pytree_strategies import (Attrs, Box, Pair, Struct, Traversable, assert_leaves_equal, assert_same_structure,
                               numpy_leaves, pytrees, random_arrays)

WIDTHS = [1, 7, 1000, 100003]


def same_width_trees(values: bool = True):
    """(n, a PyTree whose arrays all have n elements)."""
    return st.sampled_from(WIDTHS).flatmap(lambda n: st.tuples(st.just(n), pytrees(random_arrays(widths=(n,)), values=values)))


def lazy(t):
    """``t`` with every array replaced by a pending computation on it."""
    return tree.transform(t, lambda a: a * 1.5 + 0.25)


def evaluated(a) -> bool:
    return a._node.op in ("data", "literal")


# ---------------------------------------------------------------------------- evaluation
@given(same_width_trees())
def test_eval_evaluates_every_array_of_any_pytree(nt):
    t = lazy(nt[1])
    fj.eval(t)
    assert all(evaluated(a) for a in tree.leaves(t))


@pytest.mark.parametrize("make", [
    lambda x: Traversable(x, [x * 2]), lambda x: Attrs({"k": x}, None), lambda x: Struct(x, 1, required=1),
    lambda x: Pair(x, x + 1)])
def test_eval_sees_objects_using_the_traversal_protocol(make):
    """Regression: an object using __fj_traverse__ was walked by freeze but invisible to fj.eval."""
    obj = make(fj.arange(Float, 10) + 1)
    fj.eval(obj)
    assert tree.leaves(obj) and all(evaluated(a) for a in tree.leaves(obj))


def test_eval_of_an_optimizer_evaluates_its_parameters_and_state():
    opt = fj.opt.Adam(lr=0.1)
    opt["x"] = fj.llvm.ad.Float(1, 2, 3)
    value, *rest = opt.state["x"]
    opt.state["x"] = (value * 2, *rest)
    assert not evaluated(opt["x"])
    fj.eval(opt)
    assert evaluated(opt["x"]) and all(evaluated(a) for a in tree.leaves(opt))


def test_schedule_then_eval_evaluates_a_pytree_in_one_kernel():
    t = {"a": Traversable(fj.arange(Float, 10) + 1, None), "b": [fj.arange(Float, 10) * 3]}
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.schedule(t)
        fj.eval()
        launches = [h for h in fj.kernel_history() if h["type"] == "jit"]
    assert all(evaluated(a) for a in tree.leaves(t)) and len(launches) == 1


def test_make_opaque_turns_every_literal_of_a_pytree_into_memory():
    t = Box(Float(1.5), [Traversable(fj.full(Float, 2.0, 5), "s")])
    fj.make_opaque(t)
    assert [a._node.op for a in tree.leaves(t)] == ["data", "data"]


# ---------------------------------------------------------------------------- width
@pytest.mark.parametrize("args, want", [
    ((), 0), (((),), 0), (([],), 0), ((None,), 1), ((5,), 1), ((Float(),), 0), (((Float(), Float(1)),), 1),
    (((Float(1), Float()),), 1), (((Float(1), 5),), 1), (((Float(1, 2, 3), 5),), 3), (({"a": ()},), 0),
    ((Array3f(),), 0), ((Array3f(Float(1, 2), Float(1), Float(1, 2)),), 2), (({"a": 1, "b": Float(1, 2)},), 2),
    ((Traversable(Float(1, 2), None),), 2)])
def test_width_follows_drjit(args, want):
    """Regression: width() of nothing was 1 (Dr.Jit: 0), width((Float(), Float(1))) was 0 (Dr.Jit: 1)."""
    assert fj.width(*args) == want


@pytest.mark.parametrize("args", [(Float(), Float(1, 2)), (Float(1, 2), Float(1, 2, 3)), ([Float(1, 2), Float(1), Float()],)])
def test_width_of_a_ragged_input_raises(args):
    with pytest.raises(ValueError, match="incompatible sizes"):
        fj.width(*args)


# ---------------------------------------------------------------------------- gather / scatter
@given(same_width_trees(values=False), st.integers(0, 2**31 - 1))
def test_gather_of_a_pytree_is_the_gather_of_each_leaf(nt, seed):
    n, source = nt[0], [nt[1]]        # a list around it: a bare array is a PyTree too
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n + 2, 1 + n // 3).astype(np.uint32)      # some out of bounds
    got = fj.gather(list, source, UInt32(idx))
    assert_same_structure(got, source)
    want = [fj.gather(type(a), a, UInt32(idx)) for a in tree.leaves(source)]
    assert_leaves_equal(numpy_leaves(got), [w.numpy() for w in want])


def test_gather_of_a_pytree_type_with_a_mask():
    src = {"p": Array3f([1, 2, 3], [4, 5, 6], [7, 8, 9]), "w": Float(10, 20, 30)}
    got = fj.gather(dict, src, UInt32(2, 0), Bool(True, False))
    assert got["p"].numpy().tolist() == [[3, 0], [6, 0], [9, 0]] and got["w"].numpy().tolist() == [30, 0]


def test_gather_of_a_pytree_type_needs_a_source_of_that_type():
    with pytest.raises(TypeError, match=r"'dtype' list does not match the type of 'source' \(tuple\)"):
        fj.gather(list, (Float(1, 2),), UInt32(0))


def test_gather_of_a_pytree_with_a_python_value_names_its_path():
    with pytest.raises(TypeError, match=r"gather\(\): source\[1\]\.b: expected a JIT array, got a Python value of type int"):
        fj.gather(tuple, (Float(1, 2), Box(Float(1), 5)), UInt32(0))


@given(same_width_trees(values=False), st.integers(0, 2**31 - 1), st.sampled_from(["scatter", "scatter_add"]))
def test_scatter_of_a_pytree_is_the_scatter_of_each_leaf(nt, seed, op):
    n, target = nt
    rng = np.random.default_rng(seed)
    m = 1 + n // 3
    idx = UInt32(rng.permutation(n)[:m].astype(np.uint32))
    value = tree.transform(target, lambda a: fj.gather(type(a), a, UInt32(rng.integers(0, n, m).astype(np.uint32))) * 2)
    fj.eval(value)
    want_targets = tree.transform(target, lambda a: type(a)(a.numpy()))
    for t, v in zip(tree.leaves(want_targets), tree.leaves(value)):
        getattr(fj, op)(t, v, idx)
    getattr(fj, op)(target, value, idx)
    assert_leaves_equal(numpy_leaves(target), numpy_leaves(want_targets))


def test_scatter_reduce_into_a_dict():
    t = {"a": fj.zeros(Float, 3)}
    fj.scatter_reduce(fj.ReduceOp.Max, t, {"a": Float(4, 2)}, UInt32(1, 1))
    assert t["a"].numpy().tolist() == [0, 4, 0]


def test_scatter_of_python_numbers_inside_a_pytree_value():
    t = (fj.zeros(Float, 3), Box(fj.zeros(Array3f, 3), fj.zeros(Float, 3)))
    fj.scatter(t, (5.0, Box(Array3f(1, 2, 3), 7)), UInt32(1))
    assert t[0].numpy().tolist() == [0, 5, 0] and t[1].a.numpy()[:, 1].tolist() == [1, 2, 3]
    assert t[1].b.numpy().tolist() == [0, 7, 0]


def test_scatter_value_must_mirror_the_target_and_nothing_is_written_otherwise():
    t = (fj.zeros(Float, 3), [fj.zeros(Float, 3)])
    with pytest.raises(TypeError, match=r"scatter\(\): value does not match target at target\[1\]: expected a list of 1 entry"):
        fj.scatter(t, (Float(1), [Float(1), Float(2)]), UInt32(0))
    with pytest.raises(TypeError, match=r"at target: expected a tuple of 2 entries, got a float"):
        fj.scatter(t, 1.0, UInt32(0))
    assert [a.numpy().tolist() for a in tree.leaves(t)] == [[0, 0, 0], [0, 0, 0]]


def test_scatter_of_a_value_that_is_not_a_number_names_its_path():
    t = {"a": fj.zeros(Float, 3), "b": [fj.zeros(Float, 3)]}
    with pytest.raises(TypeError, match=r'scatter\(\): target\["b"\]\[0\]: cannot write a NoneType into a Float'):
        fj.scatter(t, {"a": Float(1), "b": [None]}, UInt32(0))
    assert t["a"].numpy().tolist() == [0, 0, 0]


def test_scatter_into_a_python_value_of_a_pytree_names_its_path():
    t = {"a": fj.zeros(Float, 3), "n": 5}
    with pytest.raises(TypeError, match=r'scatter_add\(\): target\["n"\]: expected a JIT array to write into'):
        fj.scatter_add(t, {"a": Float(1), "n": 1}, UInt32(0))
    assert t["a"].numpy().tolist() == [0, 0, 0]


# ---------------------------------------------------------------------------- select
@given(same_width_trees(), st.integers(0, 2**31 - 1))
def test_select_of_pytrees_is_the_select_of_each_leaf(nt, seed):
    n, a = nt[0], [nt[1]]     # a list around it: never a bare number (select gives an array then)
    rng = np.random.default_rng(seed)
    b = tree.transform(a, lambda x: x * 3 - 1)
    mask = Bool(rng.random(n) < 0.5)
    got = fj.select(mask, a, b)
    assert_same_structure(got, a)
    want = [fj.select(mask, x, y) for x, y in zip(tree.leaves(a), tree.leaves(b))]
    assert_leaves_equal(numpy_leaves(got), [w.numpy() for w in want])


def test_select_of_pytrees_keeps_equal_python_values_and_selects_numbers():
    got = fj.select(Bool(True, False), (Float(1, 2), "s", None, 3, 4), (Float(5, 6), "s", None, 3, 5.0))
    assert got[1:4] == ("s", None, 3)
    assert got[0].numpy().tolist() == [1, 6] and got[4].numpy().tolist() == [4, 5]


def test_select_of_pytrees_with_differing_python_values_names_the_path():
    with pytest.raises(TypeError, match=r"select\(\): a\[\"k\"\]\[1\]: cannot choose lane by lane between the Python values 's' and 't'"):
        fj.select(Bool(True, False), {"k": (Float(1, 2), "s")}, {"k": (Float(1, 2), "t")})


def test_select_of_pytrees_of_different_structure_raises():
    with pytest.raises(TypeError, match=r"select\(\): b does not match a at a: expected a tuple of 2 entries, got a tuple of 1 entry"):
        fj.select(Bool(True, False), (Float(1, 2), Float(3, 4)), (Float(0),))


def test_select_with_a_python_bool_returns_one_pytree_whole():
    a, b = (Float(1), "s"), (Float(2), "t")
    assert fj.select(True, a, b) is a and fj.select(False, a, b) is b


# ---------------------------------------------------------------------------- tile / repeat
@given(same_width_trees(), st.sampled_from(["tile", "repeat"]), st.integers(0, 3))
def test_tile_and_repeat_of_a_pytree_act_on_each_array(nt, op, count):
    t = nt[1]
    if nt[0] == 100003 and count > 1:
        count = 1       # keep the example small
    got = getattr(fj, op)(t, count)
    assert_same_structure(got, t)
    numpy_op = (lambda a: np.tile(a, count)) if op == "tile" else (lambda a: np.repeat(a, count))
    want = [numpy_op(a) for a in numpy_leaves(t)]
    assert_leaves_equal(numpy_leaves(got), want)


def test_tile_and_repeat_keep_python_values():
    assert fj.tile(5, 2) == 5 and fj.repeat({"n": None, "a": Float(1, 2)}, 2)["n"] is None


# ---------------------------------------------------------------------------- inside fj.freeze
def pytree_step(state, idx):
    """gather, select, scatter_add and width of PyTrees, on a protocol object."""
    g = fj.gather(dict, {"p": state.x, "q": state.y}, idx)
    out = fj.select(g["p"] > 0, g, {"p": g["q"], "q": g["p"] * 2})
    fj.scatter_add({"y": state.y}, {"y": out["p"]}, idx)
    return out, fj.width(state) + 0 * state.x


def test_pytree_functions_in_a_frozen_function_match_the_plain_call_at_several_widths():
    frozen = fj.freeze(pytree_step)
    rng = np.random.default_rng(5)
    for n in [1, 7, 1000, 100003, 7, 1000]:
        # Quarters of small integers: scatter_add's sums over duplicate indices are exact in any
        # order (threads add in an order that varies from call to call, plain or frozen alike).
        x, y = (np.round(rng.standard_normal(n) * 4).astype(np.float32) / 4 for _ in range(2))
        idx = rng.integers(0, n, max(n // 2, 1)).astype(np.uint32)
        plain_state, frozen_state = Traversable(Float(x), Float(y)), Traversable(Float(x), Float(y))
        want = pytree_step(plain_state, UInt32(idx))
        got = frozen(frozen_state, UInt32(idx))
        assert_same_structure(got, want)
        assert_leaves_equal(numpy_leaves(got), numpy_leaves(want))
        assert_leaves_equal(numpy_leaves(frozen_state), numpy_leaves(plain_state))
    assert frozen.n_recordings == 2     # width 1 (it broadcasts) and every other width


def test_tile_of_a_pytree_in_a_frozen_function_replays_at_a_new_width():
    frozen = fj.freeze(lambda t: fj.tile(t, 2))
    for n in [7, 1000, 100003]:
        t = {"a": fj.arange(Float, n), "n": 3}
        got = frozen(t)
        assert got["n"] == 3 and np.array_equal(got["a"].numpy(), np.tile(np.arange(n, dtype=np.float32), 2))
    assert frozen.n_recordings == 1


def test_scatter_into_a_namedtuple_with_a_list_value_entry():
    # (the list-to-array conversion rebuilt the namedtuple from a generator: TypeError)
    import collections
    P = collections.namedtuple("P", "a b")
    t = P(fj.zeros(Float, 3), fj.zeros(Float, 3))
    fj.scatter(t, P(Float(1), [5, 6]), UInt32(0, 2))
    assert t.a.numpy().tolist() == [1, 0, 1] and t.b.numpy().tolist() == [5, 0, 6]
