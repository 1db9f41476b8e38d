"""trace/node.py: how a node holds its operands.

Two-operand nodes keep their operands in slots (no tuple per operation, for the garbage
collector's sake); ``Node.args`` must still read as the operand tuple of every node, the node
must keep its operands alive on its own, and evaluation must let them go.
"""
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.trace import ops
from frostjit.trace.dtypes import Float32

WIDTHS = [1, 7, 1000, 100003]


@pytest.mark.parametrize("n", WIDTHS)
def test_a_result_alone_keeps_its_operands_alive_until_it_is_evaluated(n):
    """Every Python reference but the result is dropped (handles, operand nodes) before the
    evaluation: the operands live on in the two-operand nodes' slots only."""
    a = np.linspace(-3, 3, n, dtype=np.float32)
    b = np.cos(np.arange(n, dtype=np.float32))
    x, y = fj.llvm.Float(a), fj.llvm.Float(b)
    z = x
    for k in range(50):
        z = (z * y + 0.25) * 0.5 - x * (k + 0.125)
    watch = [weakref.ref(x._node), weakref.ref(y._node)]
    del x, y
    gc.collect()
    assert all(w() is not None for w in watch), "an operand died while a pending node used it"
    want = a.copy()
    for k in range(50):
        want = (want * b + np.float32(0.25)) * np.float32(0.5) - a * np.float32(k + 0.125)
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-5, atol=1e-3)
    gc.collect()
    assert all(w() is None for w in watch), "an evaluated node still holds its operands"


def test_args_reads_the_operand_tuple_of_every_kind_of_node():
    x = fj.llvm.Float([1.0, 2.0, 3.0])
    y = fj.llvm.Float([4.0, 5.0, 6.0])
    s = x + y
    assert s._node.args == (x._node, y._node) and type(s._node.args) is tuple
    f = fj.fma(x, y, x)
    assert f._node.args == (x._node, y._node, x._node)
    c = fj.llvm.Int32(x)
    assert c._node.args == (x._node,)
    assert x._node.args == () and ops.literal(Float32, 2.0).args == ()
    lit = ops.operand_literal(Float32, 7.0)       # (shared by later uses of 7.0 with a Float)
    p = x * 7.0
    assert p._node.args == (x._node, lit) and p._node.args[1] is lit


def test_assigning_args_replaces_the_operands_of_a_two_operand_node():
    x = fj.llvm.Float([1.0, 2.0])
    y = fj.llvm.Float([10.0, 20.0])
    s = x + y
    s._node.args = (y._node, y._node)
    assert s._node.args == (y._node, y._node)
    assert s.numpy().tolist() == [20.0, 40.0]
    assert s._node.args == ()


def test_an_operation_leaves_one_object_for_the_garbage_collector():
    """A chain of operations leaves one GC-tracked object per operation (the node), not two
    (the node and an operand tuple): each one makes the collector run sooner and traverse more."""
    x = fj.llvm.Float(np.ones(10, dtype=np.float32))
    z = x
    for _ in range(10):
        z = z * 1.5 + 0.5
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        before = gc.get_count()[0]
        for _ in range(100):
            z = z * 1.5 + 0.5
        per_op = (gc.get_count()[0] - before) / 200
    finally:
        if was:
            gc.enable()
    assert per_op <= 1.05, f"{per_op} tracked objects per operation"


@given(st.lists(st.sampled_from(["add", "mul", "sub", "fma", "select", "neg", "min"]), min_size=1, max_size=30),
       st.sampled_from(WIDTHS))
def test_chains_of_operations_match_numpy_plain_and_frozen(chain, n):
    """Nodes of every arity (1, 2, 3 operands) mixed in one graph, evaluated plain and by a
    frozen function (whose recorder reads the operands of every node) at several widths."""
    a = np.linspace(-2, 2, n, dtype=np.float32)
    b = np.sin(np.arange(n, dtype=np.float32))

    def run(x, y, m):
        z = x
        for op in chain:
            if op == "add":
                z = z + y
            elif op == "mul":
                z = z * 0.75
            elif op == "sub":
                z = 1.5 - z
            elif op == "fma":
                z = m.fma(z, y, x)
            elif op == "select":
                z = m.select(z > y, z, y * 0.5)
            elif op == "neg":
                z = -z
            else:
                z = m.minimum(z, x + 1.0)
        return z

    class NumpyOps:
        # one rounding, as the JIT's fused multiply-add (the product of two float32 is exact in
        # float64): with two roundings a later 'z > y' can flip at lanes where z ~ y
        fma = staticmethod(lambda p, q, r: (p.astype(np.float64) * q + r).astype(np.float32))
        select = staticmethod(np.where)
        minimum = staticmethod(np.minimum)

    want = run(a, b, NumpyOps)
    plain = run(fj.llvm.Float(a), fj.llvm.Float(b), fj).numpy()
    frozen_fn = fj.freeze(lambda x, y: run(x, y, fj))
    for _ in range(2):      # the recording, then a replay
        frozen = frozen_fn(fj.llvm.Float(a), fj.llvm.Float(b)).numpy()
        np.testing.assert_allclose(frozen, plain, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(plain, want, rtol=1e-4, atol=1e-4)
