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
