"""Review findings: Dr.Jit-suite behaviours of the frozen-function API."""
import frostjit as fj
from frostjit.llvm import Float

from freeze_helpers import F, same


def test_flush_kernel_cache_forces_a_retrace():
    # Dr.Jit test02_flush_kernel_cache: flushing the kernel cache drops the recordings.
    f = fj.freeze(lambda x, y: x + y)
    assert same(f(F(0, 1, 2), F(2, 1, 0)), F(2, 2, 2))
    assert f.n_recordings == 1
    fj.flush_kernel_cache()
    assert same(f(F(1, 2, 3), F(3, 2, 1)), F(4, 4, 4))
    assert f.n_recordings == 2 and f.n_cached_recordings == 1
    assert same(f(F(1, 2, 3, 4), F(1, 1, 1, 1)), F(2, 3, 4, 5))
    assert f.n_recordings == 2


def test_output_that_is_also_written_back_into_an_input():
    # The same new array stored into an input container and returned: the first (recorded)
    # call must not fail, and every call returns the object the input now holds.
    @fj.freeze
    def f(d):
        y = d["x"] + 1
        d["x"] = y
        return {"n": 3, "y": y}, [y]

    for n in (3, 4, 5):
        d = {"x": fj.arange(Float, n)}
        out, lst = f(d)
        assert out["n"] == 3
        assert same(d["x"], fj.arange(Float, n) + 1)
        assert out["y"] is d["x"] and lst[0] is d["x"]
    assert f.n_recordings == 1


def test_optimizer_step_returning_its_parameter():
    from frostjit.llvm.ad import Float as FloatAD

    def train(opt, target):
        loss = fj.sum(fj.square(opt["x"] - target))
        fj.backward(loss)
        opt.step()
        return loss, {"p": opt["x"]}

    frozen = fj.freeze(train)
    o1, o2 = fj.opt.Adam(lr=0.1), fj.opt.Adam(lr=0.1)
    o1["x"] = fj.zeros(FloatAD, 4) + 0
    o2["x"] = fj.zeros(FloatAD, 4) + 0
    target = fj.arange(FloatAD, 4) + 0
    for _ in range(4):
        l1, r1 = frozen(o1, target)
        l2, r2 = train(o2, target)
        assert same(l1, l2) and same(r1["p"], r2["p"])
        assert r1["p"] is o1["x"] and fj.grad_enabled(r1["p"])
    assert frozen.n_recordings == 1
