"""trace/loops.free_nodes: a symbolic loop's inputs, the nodes its body reads that do not depend on
its state, in first-use order (session r15 rewrote the walk for speed; the kernel a loop compiles
to depends on this order).  Checked against the definition, written recursively, on random
graphs: a node depends on the state when it is a ``loop_phi`` of the loop, a ``scatter_rmw``, or
has an operand that depends on it; the free nodes are the independent nodes met first in a
depth-first walk from the roots through dependent nodes (operands in order), stopping at the
loop's phis."""
from hypothesis import given, settings, strategies as st

from frostjit.trace.dtypes import Float32
from frostjit.trace.loops import free_nodes
from frostjit.trace.node import Node


def _reference(phis, roots):
    memo = {p: True for p in phis}

    def depends(n):
        if n not in memo:
            memo[n] = n.op == "scatter_rmw" or any([depends(a) for a in n.args])
        return memo[n]

    free, seen = {}, set()

    def collect(n):
        if n in seen:
            return
        seen.add(n)
        if not depends(n):
            free.setdefault(n, None)
        elif n.op != "loop_phi":
            for a in n.args:
                collect(a)
    for r in roots:
        collect(r)
    return list(free)


@st.composite
def graphs(draw):
    """Random DAGs: data and literal leaves, the loop's phis (over a width node), other loops'
    phis, one-, two- and three-operand nodes (two-operand ones in the slots a0/a1), scatter_rmw."""
    nodes = []
    width = Node("data", Float32, 4)
    phis = [Node("loop_phi", Float32, 4, (width,)) for _ in range(draw(st.integers(1, 3)))]
    other_phi = Node("loop_phi", Float32, 4, (width,))
    nodes += [width, other_phi] + phis
    for _ in range(draw(st.integers(1, 5))):
        nodes.append(Node(draw(st.sampled_from(["data", "literal"])), Float32, 4))
    for _ in range(draw(st.integers(1, 40))):
        k = draw(st.integers(1, 3))
        ops = [nodes[draw(st.integers(0, len(nodes) - 1))] for _ in range(k)]
        op = draw(st.sampled_from(["add", "fma" if k == 3 else "neg", "scatter_rmw", "mul"]))
        if k == 2:
            n = Node(op, Float32, 4)
            n.a0, n.a1 = ops        # (as trace.ops.make_binary stores two operands)
        else:
            n = Node(op, Float32, 4, tuple(ops))
        nodes.append(n)
    roots = [nodes[i] for i in draw(st.lists(st.integers(len(phis) + 2, len(nodes) - 1), min_size=1, max_size=4))]
    return phis, roots


@settings(max_examples=80)
@given(graphs())
def test_free_nodes_match_the_definition(g):
    phis, roots = g
    assert free_nodes(phis, roots) == _reference(phis, roots)


def test_a_long_chain_is_walked_without_recursion():
    phi = Node("loop_phi", Float32, 4, (Node("data", Float32, 4),))
    c = Node("data", Float32, 4)
    x, pre, used = phi, c, []
    for _ in range(20000):          # far deeper than Python's recursion limit
        n = Node("add", Float32, 4)
        n.a0, n.a1 = x, pre         # x_k = x_(k-1) + pre_(k-1): pre_(k-1) is free
        used.append(pre)
        x = n
        p = Node("mul", Float32, 4)
        p.a0, p.a1 = pre, c
        pre = p
    assert free_nodes([phi], [x]) == used      # (the deepest first: the walk reaches x_1 first)
