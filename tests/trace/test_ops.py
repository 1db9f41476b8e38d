"""The node constructors of trace/ops.py: literal folding follows the op table's semantics,
shared operand literals, the one door's checks."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.array import registry
from frostjit.trace import ops
from frostjit.trace.dtypes import ALL_TYPES, Bool
from frostjit.trace.state import JitBackend

CONVERSIONS = [(s, d) for s in ALL_TYPES for d in ALL_TYPES if s is not d]


def _cls(vt):
    return registry.flat_type(JitBackend.LLVM, vt, False)


def _values(vt, rng, n):
    if vt is Bool:
        return rng.integers(0, 2, n).astype(bool)
    if vt.is_float:
        with np.errstate(over="ignore"):        # beyond Float16's range: +-inf
            return (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 70, n)).astype(vt.np_dtype)
    lo, hi = ops.int_range(vt)
    return rng.integers(lo, hi, n, dtype=np.uint64 if vt.bits == 64 and not vt.is_signed else np.int64,
                        endpoint=True).astype(vt.np_dtype)


@pytest.mark.parametrize("src,dst", CONVERSIONS, ids=lambda t: t.name)
def test_cast_of_a_literal_gives_what_the_kernel_computes(src, dst):
    """Folding Float32(Int64 literal) rounded twice (through a Python float): 2**60 + 2**36 + 1
    became 2**60 where a kernel (and NumPy) give 2**60 + 2**37."""
    rng = np.random.default_rng(7)
    values = _values(src, rng, 64)
    if src.is_integral and dst is fj.llvm.Float32._vt:
        values[:2] = [2**60 + 2**36 + 1, 2**62 + 2**38 + 1] if src.bits == 64 else values[:2]
    S, D = _cls(src), _cls(dst)
    in_kernel = D(S(values)).numpy()
    for k, v in enumerate(values):
        folded = D(S(v.item()))
        assert folded.state == "literal"
        if src.is_float and not dst.is_float and dst is not Bool:
            lo, hi = ops.int_range(dst)
            if not (np.isfinite(v) and lo <= np.trunc(v.astype(np.float64)) <= hi):
                continue        # out of range: unspecified
        got, want = folded[0], in_kernel[k].item()
        assert got == want or (got != got and want != want), f"{src.name}({v!r}) -> {dst.name}: {got!r} != {want!r}"


@given(st.floats(allow_nan=False), st.floats(allow_nan=False))
def test_operand_literals_are_shared_but_keep_the_sign_of_zero(a, b):
    x = fj.llvm.Float64([1.0, 2.0])
    y1 = x * a
    y2 = x * a
    if a != 0:
        assert y1._node.args[1] is y2._node.args[1]
    z = x * 0.0
    w = x * -0.0
    assert np.signbit(w._node.args[1].value) and not np.signbit(z._node.args[1].value)
    with np.errstate(over="ignore"):
        want = np.array([1.0, 2.0]) * b
    np.testing.assert_array_equal((x * b).numpy(), want)


def test_operand_literal_cache_is_bounded():
    x = fj.llvm.Float64([1.0])
    for k in range(3000):
        x * (k + 0.5)
    assert len(ops.literal_cache(x._vt)) <= 1024


def test_make_binary_checks_sizes_and_names_the_op():
    a, b = fj.llvm.Float([1, 2, 3]), fj.llvm.Float([1, 2])
    with pytest.raises(ValueError, match=r"frostjit.add\(\): incompatible array sizes \(3, 2\)"):
        a + b


@pytest.mark.parametrize("sizes", [(3, 3, 3), (1, 3, 3), (3, 1, 3), (3, 3, 1), (1, 1, 3), (1, 1, 1), (1, 3, 1)])
def test_make_ternary_and_make_unary_build_what_make_builds(sizes):
    nodes = [fj.llvm.Float(list(range(1, s + 1)))._node for s in sizes]
    a = ops.make_ternary("fma", nodes[0].vt, *nodes)
    b = ops.make("fma", nodes[0].vt, tuple(nodes))
    for n in (a, b):
        assert n.op == "fma" and n.args == tuple(nodes) and n.a1 is None and n.value is None and n.extra is None
    assert a.size == b.size == max(sizes)
    u = ops.make_unary("neg", a.vt, a)
    assert u.args == (a,) and u.size == a.size and u.op == "neg" and u.value is None


@pytest.mark.parametrize("sizes", [(3, 2, 3), (2, 3, 3), (3, 3, 2), (1, 2, 3)])
def test_make_ternary_checks_sizes_and_names_the_op(sizes):
    nodes = [fj.llvm.Float(list(range(s)))._node for s in sizes]
    with pytest.raises(ValueError, match=r"frostjit.fma\(\): incompatible array sizes"):
        ops.make_ternary("fma", nodes[0].vt, *nodes)
    with pytest.raises(ValueError, match=r"frostjit.fma\(\): incompatible array sizes"):
        ops.make("fma", nodes[0].vt, tuple(nodes))


def test_only_the_trace_door_creates_nodes():
    """Every Node is made in frostjit/trace/ops.py (make, literal, data, ...): no other module of
    the package calls Node(...) or object.__new__(Node), the freeze recorder and the generated
    replay code included, so checks added to the door reach every node."""
    import ast
    import pathlib
    import frostjit
    root = pathlib.Path(frostjit.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel in ("trace/ops.py", "trace/node.py"):
            continue
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if called == "Node" or (called == "__new__" or called in ("_new", "new_instance")) and \
                        any(isinstance(a, ast.Name) and a.id == "Node" for a in node.args):
                    offenders.append(f"{rel}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Node(" in node.value:
                offenders.append(f"{rel}:{node.lineno} (generated code)")
    assert offenders == []


def test_a_replay_builds_its_output_nodes_through_the_door():
    from frostjit.llvm import Float
    f = fj.freeze(lambda a: (a + 1, fj.full(Float, 3.0, 4)))
    x = fj.arange(Float, 4)
    f(x)
    (entry,) = f._cache.entries.values()
    source = [r for r in entry.order if hasattr(r, "source")][0].source
    assert "data_node(" in source and "literal_node(" in source and "Node(" not in source
    y, z = f(x)
    assert y.numpy().tolist() == [1, 2, 3, 4] and z.numpy().tolist() == [3, 3, 3, 3]
