"""What the session-r10 run of Dr.Jit 1.5's own test suite under frostjit changed (docs/types.md).

Written from scratch: type metadata answers substring queries as Dr.Jit's ``__meta__`` string
does (and the base class has one), out-of-range items, ``.x``/``.imag`` of arrays without them,
and the error classes of operands whose sizes do not broadcast and of ``reinterpret_array``
between sizes (each also the ``RuntimeError``/``TypeError`` Dr.Jit raises).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import frostjit as fj
from frostjit import llvm, scalar
from frostjit.array.meta import ArrayMeta, meta_of
from frostjit.errors import IncompatibleSizesError


def _array_types():
    """Every array class of the public modules (the way a test harness walks them)."""
    seen = {}
    for mod in (llvm, llvm.ad, scalar):
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, fj.ArrayBase):
                seen[id(obj)] = obj
    return list(seen.values())


def test_every_array_class_the_modules_export_has_a_meta_that_answers_in():
    types = _array_types()
    assert len(types) > 50
    for tp in types:
        meta = tp.__meta__
        if tp is fj.ArrayBase:
            continue
        assert isinstance(meta, ArrayMeta), tp
        text = str(meta)
        # every "key=value" line is found, and a line it does not have is not
        for line in text.splitlines()[1:-1]:
            assert line.strip().rstrip(",") in meta
        assert ("is_diff" in meta) == meta.is_diff
        assert ("shape=(*)" in meta) == (meta.shape == (fj.Dynamic,))
        assert "type=nothing" not in meta


def test_the_base_class_meta_is_dr_jits_string_and_no_array_meta():
    assert fj.ArrayBase.__meta__ == "ArrayMeta[invalid]"
    assert meta_of(fj.ArrayBase) is None
    assert "float32" not in fj.ArrayBase.__meta__


def test_meta_refuses_a_non_string_query():
    with pytest.raises(TypeError):
        3 in llvm.Float.__meta__


def test_meta_lists_the_kind_before_is_diff_as_dr_jit_does():
    # Dr.Jit 1.5: llvm.ad.Array3f's __meta__ lists is_vector=1 then is_diff=1
    text = str(llvm.ad.Array3f.__meta__)
    assert text.index("is_vector=1") < text.index("is_diff=1")
    assert "is_vector=1,\n  is_diff=1" in llvm.ad.Array3f.__meta__
    assert "is_complex=1,\n  is_diff=1" in llvm.ad.Complex2f.__meta__
    # a query for "shape=(3, *)" selects exactly the 3-vectors of the JIT modules
    picked = {tp.__name__ for tp in _array_types() if "shape=(3, *)" in tp.__meta__}
    assert "Array3f" in picked and "Array4f" not in picked and "Float" not in picked


@pytest.mark.parametrize("cls", [llvm.Float, llvm.UInt, llvm.ad.Float, scalar.ArrayXf,
                                 llvm.Array3f, scalar.Array3f, scalar.Array3i])
@given(n=st.integers(1, 6), k=st.integers(-20, 20))
def test_item_out_of_bounds_names_the_entry_and_size(cls, n, k):
    if cls in (llvm.Array3f, scalar.Array3f, scalar.Array3i):
        n = 3
        v = cls(*range(n))
    else:
        v = cls(np.arange(n))
    ref = list(range(n))
    if -n <= k < n:
        assert v[k] == ref[k]           # in range: as a Python list
        return
    entry = k + n if k < 0 else k
    pattern = rf"entry {entry} is out of bounds \(the array is of size {n}\)\."
    if n == 1:
        assert v[k] == ref[0]           # a size-1 array broadcasts on reads (Dr.Jit 1.5, session r12)
    else:
        with pytest.raises(IndexError, match=pattern):
            v[k]
    with pytest.raises(IndexError, match=pattern):
        v[k] = 1


@pytest.mark.parametrize("cls", [llvm.Float, llvm.Int, llvm.ad.Float, scalar.ArrayXf])
@pytest.mark.parametrize("name", ["x", "y", "z", "w"])
def test_a_1d_array_has_no_components(cls, name):
    v = cls(1, 2, 3)
    for exc in (RuntimeError, AttributeError):
        with pytest.raises(exc, match=f"does not have a '{name}' component"):
            setattr(v, name, 4)
        with pytest.raises(exc, match=f"does not have a '{name}' component"):
            getattr(v, name)
    assert not hasattr(v, name) and getattr(v, name, None) is None
    assert fj.all(v == cls(1, 2, 3))


@pytest.mark.parametrize("cls", [llvm.Float, llvm.Array3f, scalar.Array3f, scalar.ArrayXf,
                                 llvm.Matrix2f, llvm.Quaternion4f])
def test_imag_of_a_non_complex_array_is_a_type_and_attribute_error(cls):
    v = cls(1, 2, 3) if cls in (llvm.Float, scalar.ArrayXf) else fj.zeros(cls)
    for exc in (TypeError, AttributeError):
        with pytest.raises(exc, match="is not complex-valued"):
            v.imag = 4
    assert not hasattr(v, "imag")
    # the complex types keep theirs
    z = llvm.Complex2f(1, 2)
    z.imag = llvm.Float(5)
    assert fj.all(z.imag == 5) and fj.all(z.real == 1)


_OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "fma": lambda a, b: fj.fma(a, b, 2.0),
    "select": lambda a, b: fj.select(a > 1, a, b),
    "minimum": lambda a, b: fj.minimum(a, b),
}


@pytest.mark.parametrize("op", sorted(_OPS))
@given(n=st.integers(1, 5), m=st.integers(1, 5), opaque=st.booleans())
def test_sizes_broadcast_as_dr_jit_allows(op, n, m, opaque):
    # Equal sizes, or a size-1 operand with another: the result is NumPy's; other sizes raise
    # an error that is a ValueError and Dr.Jit's RuntimeError ("incompatible sizes").
    # (Empty operands are left out: frostjit broadcasts a size-1 operand with an empty one,
    # Dr.Jit 1.5 raises; docs/types.md.)
    f = _OPS[op]

    def make(k, base):
        a = llvm.Float(np.arange(k, dtype=np.float32) + base)
        if opaque:
            fj.make_opaque(a)
        return a

    a, b = make(n, 0), make(m, 10)
    if n == m or 1 in (n, m):
        r = f(a, b)
        w = max(n, m)
        assert fj.width(r) == w
        an = np.broadcast_to(a.numpy(), (w,))
        bn = np.broadcast_to(b.numpy(), (w,))
        want = {"add": an + bn, "mul": an * bn, "fma": an * bn + 2, "select": np.where(an > 1, an, bn),
                "minimum": np.minimum(an, bn)}[op]
        np.testing.assert_array_equal(r.numpy(), want)
    else:
        for exc in (ValueError, RuntimeError, IncompatibleSizesError):
            with pytest.raises(exc, match="incompatible sizes"):
                fj.eval(f(a, b))


def test_reinterpret_between_different_sizes_is_a_type_and_runtime_error():
    for exc in (TypeError, RuntimeError):
        with pytest.raises(exc, match="cannot reinterpret-cast between types of different size"):
            fj.reinterpret_array(llvm.UInt64, llvm.Float(1.0))
    assert fj.reinterpret_array(llvm.UInt, llvm.Float(1.0))[0] == 0x3F800000


# (what Dr.Jit 1.5 answers, recorded side by side in session r10: True / error class / message)
@pytest.mark.parametrize("make, want", [
    (lambda: scalar.ArrayXb(True), True),
    (lambda: scalar.Array1b(False), False),
    (lambda: llvm.Bool(True), True),
    (lambda: scalar.ArrayXb(True, False), (RuntimeError, "at most 1 element (this one has 2 elements)")),
    (lambda: scalar.ArrayXb(), (RuntimeError, "at most 1 element (this one has 0 elements)")),
    (lambda: llvm.Bool(True, False), (RuntimeError, "at most 1 element (this one has 2 elements)")),
    (lambda: llvm.Array1b(True), (RuntimeError, "at most 1 dimension (this one has 2 dimensions)")),
    (lambda: scalar.Array2f(1, 2), (TypeError, "only supported for scalar mask arrays")),
    (lambda: llvm.Array3f(1, 2, 3), (TypeError, "only supported for scalar mask arrays")),
    (lambda: llvm.Float(1), (TypeError, "only supported for scalar mask arrays")),
])
def test_truth_value_follows_dr_jit(make, want):
    v = make()
    if isinstance(want, bool):
        assert bool(v) is want
        return
    exc, text = want
    with pytest.raises(exc) as ei:
        bool(v)
    assert text in str(ei.value)
