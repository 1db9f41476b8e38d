"""fj.detail: the drjit.detail helpers that programs written for Dr.Jit call directly."""
import threading

import pytest

import frostjit as fj

LLVM = fj.JitBackend.LLVM


def test_new_scope_gives_a_larger_identifier_and_set_scope_restores_one():
    before = fj.detail.scope(LLVM)
    made = fj.detail.new_scope(LLVM)
    assert made > before and fj.detail.scope(LLVM) == made
    assert fj.detail.new_scope(LLVM) > made
    fj.detail.set_scope(LLVM, before)
    assert fj.detail.scope(LLVM) == before


def test_scopes_are_per_thread_and_identifiers_unique_across_threads():
    mine = fj.detail.new_scope(LLVM)
    theirs = []
    t = threading.Thread(target=lambda: theirs.append((fj.detail.scope(LLVM), fj.detail.new_scope(LLVM))))
    t.start()
    t.join()
    (start, made), = theirs
    assert start == 0 and made > mine and fj.detail.scope(LLVM) == mine


def test_scope_functions_name_a_wrong_backend():
    with pytest.raises(TypeError, match="scope\\(\\): 'backend'"):
        fj.detail.scope("llvm")
    with pytest.raises(TypeError, match="'scope' must be"):
        fj.detail.set_scope(LLVM, -1)


def test_scoped_rtld_deepbind_is_a_context_manager_that_changes_nothing():
    import sys
    flags = sys.getdlopenflags() if hasattr(sys, "getdlopenflags") else None
    with fj.detail.scoped_rtld_deepbind():
        if flags is not None:
            assert sys.getdlopenflags() == flags


def test_versions_are_tuples_of_the_compiling_llvm_and_no_cuda():
    import llvmlite.binding
    assert fj.detail.llvm_version() == tuple(llvmlite.binding.llvm_version_info)
    assert fj.detail.llvm_version() >= (17, 0)       # (what Dr.Jit's nn tests ask of LLVM)
    assert fj.detail.cuda_version() == (0, 0)


@pytest.mark.parametrize("a,b,message", [
    ({"a": 1}, {"b": 1}, r"inconsistent dictionary keys for field 'out' \(\['a'\] and \['b'\]\)"),
    ((1,), [1], r"inconsistent types for field 'out' \('tuple' and 'list'\)"),
    ((1, 2), (1,), r"inconsistent sizes for field 'out' \(2 and 1\)"),
    ("x", "y", r"inconsistent scalar Python object of type 'str' for field 'out'"),
    ({"k": (1, 2)}, {"k": (1, 3)}, r"for field 'out.k\[1\]'"),
])
def test_check_compatibility_names_the_first_mismatch(a, b, message):
    with pytest.raises(RuntimeError, match=message):
        fj.detail.check_compatibility(a, b, False, "out")


def test_check_compatibility_of_arrays_compares_types_and_optionally_widths():
    from frostjit.llvm import Array3f, Float, UInt32
    fj.detail.check_compatibility({"a": Float(1, 2), "v": Array3f(1)}, {"a": Float(3, 4, 5), "v": Array3f(2)})
    fj.detail.check_compatibility(Float(1), Float(2, 3), True, "x")             # (width 1 broadcasts)
    with pytest.raises(RuntimeError, match=r"incompatible sizes for field 'x' \(2 and 3\)"):
        fj.detail.check_compatibility(Float(1, 2), Float(1, 2, 3), True, "x")
    with pytest.raises(RuntimeError, match="inconsistent types for field 'x' .'frostjit.llvm.Float' and 'frostjit.llvm.UInt"):
        fj.detail.check_compatibility(Float(1), UInt32(1), False, "x")
