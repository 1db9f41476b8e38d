"""The rest of the gradient API (Dr.Jit 1.5's, checked side by side): ``x.grad``, ``x.label``,
``fj.set_label``, ``fj.relative_grad``, ``fj.graphviz_ad``, ``fj.whos_ad``, ``ADFlag``."""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.llvm.ad import Float, Float64, Array3f, TensorXf, UInt32


def values(a):
    return a.numpy().tolist()


# ---------------------------------------------------------------------------
# x.grad

def test_grad_property_reads_and_writes_the_gradient():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    assert type(x.grad) is Float and values(x.grad) == [0, 0, 0]
    x.grad = Float(5, 6, 7)
    assert values(fj.grad(x)) == [5, 6, 7]
    x.grad = 2
    assert values(x.grad) == [2, 2, 2]
    fj.backward(fj.sum(x * x))                  # a leaf accumulates
    assert values(x.grad) == [4, 6, 8]


def test_grad_property_of_static_vectors():
    v = Array3f(1, 2, 3)
    fj.enable_grad(v)
    assert type(v.grad) is Array3f and v.grad.numpy().tolist() == [[0], [0], [0]]
    v.grad = Array3f(1, 2, 3)
    assert fj.grad(v).numpy().tolist() == [[1], [2], [3]]
    v.grad = 4.0
    assert v.grad.numpy().tolist() == [[4], [4], [4]]


def test_tensor_gradients_take_lists_of_the_tensor_size_and_flat_arrays():
    # (a list into a tensor's gradient raised TypeError; Dr.Jit converts it, flat or nested)
    t = TensorXf([1, 2, 3, 4, 5, 6], shape=(2, 3))
    fj.enable_grad(t)
    for value in ([1, 2, 3, 4, 5, 6], [[1, 2, 3], [4, 5, 6]], np.arange(1, 7), Float(1, 2, 3, 4, 5, 6)):
        t.grad = value
        assert type(t.grad) is TensorXf and t.grad.shape == (2, 3) and values(t.grad) == [[1, 2, 3], [4, 5, 6]]
    fj.accum_grad(t, [[1, 1, 1], [1, 1, 1]])
    assert values(t.grad) == [[2, 3, 4], [5, 6, 7]]
    t0 = TensorXf(1.0)
    fj.enable_grad(t0)
    t0.grad = [3]
    assert t0.grad.shape == () and float(t0.grad.numpy()) == 3
    with pytest.raises(RuntimeError, match="size 2 into AD variable"):
        t.grad = [1, 2]


def test_array_gradients_take_one_dimensional_tensors():
    x = Float(1, 2, 3)
    fj.enable_grad(x)
    x.grad = TensorXf([4, 5, 6])
    assert type(x.grad) is Float and values(x.grad) == [4, 5, 6]


@pytest.mark.parametrize("make", [lambda: llvm.Float(1, 2), lambda: UInt32(1, 2), lambda: Float(1, 2)])
def test_grad_property_of_arrays_without_gradients_is_zero_and_assignment_does_nothing(make):
    a = make()
    assert type(a.grad) is type(a) and values(a.grad) == [0, 0]
    a.grad = type(a)(3, 4)
    assert values(a.grad) == [0, 0] and not fj.grad_enabled(a)


# ---------------------------------------------------------------------------
# Labels

def test_label_belongs_to_the_variable():
    x = Float(1, 2, 3)
    assert x.label is None
    x.label = "foo"
    assert x.label == "foo" and Float(x).label == "foo"       # the same variable
    fj.eval(x)
    assert x.label == "foo"
    x += 1                                                     # a new variable
    assert x.label is None


@pytest.mark.parametrize("bad", [3, None])
def test_label_must_be_a_string(bad):
    with pytest.raises(TypeError, match="str"):
        Float(1).label = bad


def test_set_label_names_the_paths_of_a_pytree():
    class S:
        DRJIT_STRUCT = {"p": Float}

        def __init__(self):
            self.p = Float(1)

    d = {"a": Float(1), "t": (Float(2), 3), "v": Array3f(1, 2, 3), "s": S()}
    fj.set_label(d, "d")
    assert (d["a"].label, d["t"][0].label, d["v"].y.label, d["s"].p.label) == ("d_a", "d_t_0", "d_v_1", "d_s_p")
    x, y = Float(1, 2), Float(3)
    fj.set_label(x=x, y=y)
    assert (x.label, y.label) == ("x", "y")
    fj.set_label(x, "bar")
    assert x.label == "bar"


def test_vector_label_labels_the_components():
    b = Array3f(1, 2, 3)
    assert b.label is None
    b.label = "q"
    assert [c.label for c in b] == ["q_0", "q_1", "q_2"] and b.label == "q"


def test_set_label_rejects_bad_calls():
    with pytest.raises(TypeError, match="label must be a str"):
        fj.set_label(Float(1), 3)
    with pytest.raises(TypeError, match="expected set_label"):
        fj.set_label(Float(1))


# ---------------------------------------------------------------------------
# relative_grad

def test_relative_grad_has_value_one_and_derivative_one_over_x():
    x = Float64(0, 2, -3, 0.5)
    fj.enable_grad(x)
    r = fj.relative_grad(x)
    assert type(r) is Float64 and values(r) == [1, 1, 1, 1] and fj.grad_enabled(r)
    fj.backward(r * 10)
    np.testing.assert_allclose(values(fj.grad(x)), [0, 5, -10 / 3, 20])
    x = Float64(0, 2, -3)
    fj.enable_grad(x)
    r = fj.relative_grad(x)
    fj.forward(x)
    np.testing.assert_allclose(values(fj.grad(r)), [0, 0.5, -1 / 3])


def test_relative_grad_of_vectors_plain_arrays_and_numbers():
    v = Array3f(1, 2, 0)
    fj.enable_grad(v)
    r = fj.relative_grad(v)
    assert type(r) is Array3f and r.numpy().tolist() == [[1], [1], [1]]
    p = fj.relative_grad(llvm.Float(1, 2))
    assert values(p) == [1, 1] and not fj.grad_enabled(p)
    assert fj.relative_grad(2.0) == 1.0


def test_relative_grad_inside_a_frozen_function_replays_at_new_widths():
    @fj.freeze
    def f(x):
        y = fj.relative_grad(x) * 3
        fj.backward(fj.sum(y))
        return fj.detach(y)

    for n in (3, 8, 3):
        x0 = np.arange(1, n + 1, dtype=np.float32)
        x = Float(x0)
        fj.enable_grad(x)
        assert values(f(x)) == [3] * n
        np.testing.assert_allclose(values(fj.grad(x)), 3 / x0, rtol=1e-6)
    assert f.n_recordings == 1


# ---------------------------------------------------------------------------
# graphviz_ad, whos_ad

class _Square(fj.CustomOp):
    def eval(self, x):
        self.x = x
        return x * x

    def backward(self):
        self.set_grad_in("x", 2 * self.x * self.grad_out())

    def name(self):
        return "Square"


def _graph():
    x = Float(1, 2)
    fj.enable_grad(x)
    x.label = "my_input"
    y = fj.custom(_Square, x)
    z = fj.sin(y) + x
    w = Float(3)
    fj.enable_grad(w)
    fj.set_grad(w, 2)
    return x, y, z, w


def test_graphviz_ad_describes_the_live_graph():
    x, y, z, w = _graph()
    dot = fj.graphviz_ad(as_string=True)
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    ix, iz, iw = x._ad.id, z._ad.id, w._ad.id
    assert f'{ix} [label="{{Label: \\"my_input\\"|{{Type: f32|Size: 2}}' in dot and "fillcolor=salmon" in dot
    assert 'Label: \\"Square\\"' in dot and "[color=red]" in dot               # the custom op
    assert f"{iz} -> {ix} [label=\" 2\"]" in dot                                 # operands numbered
    assert f'{iw} [label="{{(unnamed)|{{Type: f32|Size: 1}}' in dot and "fillcolor=yellowgreen" in dot
    assert f"{iz} [label=\"{{add|" in dot and "fillcolor=lightblue2" in dot      # an output


def test_graphviz_ad_without_the_graphviz_package_asks_for_it():
    try:
        import graphviz  # noqa: F401
    except ImportError:
        with pytest.raises(TypeError, match="pip install graphviz"):
            fj.graphviz_ad()
    else:
        assert "digraph" in fj.graphviz_ad().source


def test_whos_ad_lists_the_live_variables(capsys):
    x, y, z, w = _graph()
    text = fj.whos_ad(as_string=True)
    lines = text.splitlines()
    assert lines[1].split() == ["ID", "Type", "Size", "Refs", "Label"]
    row = next(line for line in lines if line.split()[:1] == [str(x._ad.id)])
    assert row.split() == [str(x._ad.id), "f32", "2", row.split()[3], "my_input"]
    assert any(line.split()[-1:] == ["Square"] for line in lines)
    assert fj.whos_ad() is None and "my_input" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# ADFlag, ADMode

def test_ad_flags_have_drjits_names_and_values():
    assert {name: int(f) for name, f in fj.ADFlag.__members__.items()} == {
        "ClearNone": 0, "ClearEdges": 1, "ClearInput": 2, "ClearInterior": 4, "ClearVertices": 6,
        "AllowNoGrad": 8, "Default": 7}
    assert [m.name for m in fj.ADMode] == ["Primal", "Forward", "Backward"]
