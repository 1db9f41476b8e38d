"""fj.auto and fj.set_backend, as Dr.Jit 1.5's drjit.auto / dr.set_backend (checked side by side:
the attribute and sys.modules entry are rebound; types imported before a switch stay what they were)."""
import importlib
import sys

import pytest

import frostjit as fj
import frostjit.llvm
import frostjit.llvm.ad


@pytest.fixture(autouse=True)
def _restore_default():
    yield
    fj.set_backend("llvm")


def test_auto_is_the_llvm_backend_by_default():
    assert fj.auto is frostjit.llvm and fj.auto.ad is frostjit.llvm.ad
    from frostjit.auto import Float
    assert Float is frostjit.llvm.Float
    assert importlib.import_module("frostjit.auto.ad") is frostjit.llvm.ad


def test_set_backend_accepts_the_enum_and_rebinds_imports():
    fj.set_backend(fj.JitBackend.LLVM)
    assert sys.modules["frostjit.auto"] is frostjit.llvm
    assert (fj.auto.Array3f(1, 2, 3) + 1).x[0] == 2


def test_set_backend_scalar_when_the_scalar_backend_exists():
    try:
        scalar = importlib.import_module("frostjit.scalar")
    except ModuleNotFoundError:
        pytest.skip("frostjit.scalar is not built in this checkout")
    from frostjit.auto import Float as before
    fj.set_backend("scalar")
    assert fj.auto is scalar and sys.modules["frostjit.auto"] is scalar
    assert "frostjit.auto.ad" not in sys.modules       # Dr.Jit's scalar backend has no ad
    assert before is frostjit.llvm.Float                 # imported before the switch: unchanged


@pytest.mark.parametrize("bad", ["foo", "LLVM", 2, None])
def test_set_backend_rejects_other_names_with_drjits_message(bad):
    with pytest.raises(RuntimeError, match="argument must equal 'cuda', 'llvm', 'metal', or 'scalar'"):
        fj.set_backend(bad)
    assert fj.auto is frostjit.llvm


@pytest.mark.parametrize("gpu", ["cuda", "metal", fj.JitBackend.CUDA, fj.JitBackend.Metal])
def test_gpu_backends_are_refused_by_name(gpu):
    with pytest.raises(RuntimeError, match="frostjit has no '(cuda|metal)' backend"):
        fj.set_backend(gpu)
    assert fj.auto is frostjit.llvm
