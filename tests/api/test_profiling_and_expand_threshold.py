"""Dr.Jit's profiler annotations (profile_range/mark/enable) and the expansion threshold."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import frostjit as fj
from frostjit.backend.llvm.threads import private_chosen
from frostjit.llvm import Float, UInt32


@pytest.fixture
def restore_runtime():
    threshold, threads = fj.expand_threshold(), fj.thread_count()
    yield
    fj.set_expand_threshold(threshold)
    fj.set_thread_count(threads)


def test_expand_threshold_defaults_to_drjits_and_round_trips(restore_runtime):
    assert fj.expand_threshold() == 1 << 20
    fj.set_expand_threshold(5)
    assert fj.expand_threshold() == 5
    fj.set_expand_threshold(np.int64(2**40))
    assert fj.expand_threshold() == 2**40 and type(fj.expand_threshold()) is int


@pytest.mark.parametrize("bad", [-1, 1.5, "x", True, None])
def test_set_expand_threshold_rejects_what_is_not_a_non_negative_int(bad, restore_runtime):
    with pytest.raises(TypeError, match="set_expand_threshold"):
        fj.set_expand_threshold(bad)
    assert fj.expand_threshold() == 1 << 20


def test_targets_above_the_threshold_are_not_replicated(restore_runtime):
    # private entries: (param index, op, dtype, all reductions, reductions per lane);
    # args: (pointer, size) pairs
    private = ((0, "add", np.float32, True, 1), (1, "add", np.float32, True, 1))
    args = (0, 97, 0, 5000)
    assert [p[0] for p in private_chosen(private, args, 1 << 20)] == [0, 1]
    fj.set_expand_threshold(100)
    assert [p[0] for p in private_chosen(private, args, 1 << 20)] == [0]
    fj.set_expand_threshold(0)
    assert private_chosen(private, args, 1 << 20) == []


def test_targets_as_large_as_the_launch_are_replicated_for_few_threads(restore_runtime):
    # 1e6 bilinear texture lookups' backward pass: 4 scatter_adds per lane into 1024 x 1024 texels
    private = ((0, "add", np.float32, True, 4),)
    args = (0, 1 << 20)
    assert private_chosen(private, args, 10 ** 6, n_workers=1)       # copies: 2.2 ms, atomics: ~24 ms
    assert not private_chosen(private, args, 10 ** 6, n_workers=15)  # copies: 33 ms, atomics: ~3 ms
    one_scatter = ((0, "add", np.float32, True, 1),)
    assert not private_chosen(one_scatter, (0, 1 << 20), 10 ** 5, n_workers=1)
    # (a target at most a quarter of the launch: always, for any number of threads)
    assert private_chosen(one_scatter, (0, 1000), 4000, n_workers=63)


@pytest.mark.parametrize("threshold", [0, 50, 1 << 20])
def test_scatter_add_gives_the_same_counts_whatever_the_threshold(threshold, restore_runtime):
    fj.set_thread_count(4)
    fj.set_expand_threshold(threshold)
    n = 1 << 19
    idx = (np.arange(n) % 97).astype(np.uint32)
    target = fj.zeros(Float, 97)
    fj.scatter_add(target, Float(np.ones(n, np.float32)), UInt32(idx))
    np.testing.assert_array_equal(target.numpy(), np.bincount(idx, minlength=97).astype(np.float32))


def test_profile_ranges_and_marks_are_logged_with_their_nesting(caplog):
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        with fj.profile_range("outer"):
            with fj.profile_range("inner"):
                fj.profile_mark("event")
            fj.profile_mark("later")
    messages = [r.getMessage() for r in caplog.records if r.name == "frostjit" and "profile" in r.getMessage()]
    assert messages[0] == "profile range 'outer' begins"
    assert messages[1] == "profile range 'outer/inner' begins"
    assert messages[2] == "profile mark 'outer/inner/event'"
    assert messages[3].startswith("profile range 'outer/inner': ") and messages[3].endswith(" ms")
    assert messages[4] == "profile mark 'outer/later'"
    assert messages[5].startswith("profile range 'outer': ")


def test_a_range_closes_when_its_block_raises(caplog):
    with pytest.raises(ZeroDivisionError):
        with fj.profile_range("failing"):
            1 / 0
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        fj.profile_mark("after")
    assert "profile mark 'after'" in [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("call", [lambda: fj.profile_range(3), lambda: fj.profile_mark(b"x"),
                                  lambda: fj.profile_enable(1)])
def test_profiling_annotations_name_a_wrong_argument_type(call):
    with pytest.raises(TypeError, match="profile_"):
        call()


def test_profile_enable_records_the_kernel_history_of_its_block_only():
    assert not fj.flag(fj.JitFlag.KernelHistory)
    fj.kernel_history_clear()
    with fj.profile_enable():
        assert fj.flag(fj.JitFlag.KernelHistory)
        fj.eval(Float(1, 2, 3) * 2 + 1)
    assert not fj.flag(fj.JitFlag.KernelHistory)
    assert len(fj.kernel_history()) >= 1
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        with fj.profile_enable(False):
            fj.eval(Float(4, 5) * 3 + 1)
        assert fj.flag(fj.JitFlag.KernelHistory)
    fj.kernel_history_clear()


def test_kernel_history_filters_by_type_and_clears_everything():
    # Dr.Jit: kernel_history(types) returns the entries of those types; the history is cleared.
    fj.eval()
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        x = Float(1, 2, 3) + 1
        fj.eval(x)
        s = fj.sum(x)
        fj.eval(s)
        jit = fj.kernel_history([fj.KernelType.JIT])
        assert fj.kernel_history() == []
        fj.eval(Float(4, 5) * 2, fj.sum(Float(1, 2) + 0))
        every = fj.kernel_history()
    assert [e["type"] for e in jit] == [fj.KernelType.JIT]
    assert jit[0]["ir"].getvalue() == jit[0]["ir"] and isinstance(jit[0]["ir"], str)
    assert {e["type"] for e in every} >= {fj.KernelType.JIT, fj.KernelType.Reduce}
    with pytest.raises(TypeError, match="types"):
        fj.kernel_history(fj.KernelType.JIT)


def test_kernel_type_is_not_a_number():
    # Dr.Jit 1.5's KernelType is a plain Enum: int() and float() raise TypeError (the str base
    # parsed "jit": ValueError)
    for conv, name in ((int, "int"), (float, "float")):
        with pytest.raises(TypeError, match=rf"{name}\(\) argument must be .* not 'KernelType'"):
            conv(fj.KernelType.JIT)
    with pytest.raises(TypeError):
        [0][fj.KernelType.JIT]
    assert fj.KernelType.JIT == "jit" and fj.KernelType("reduce") is fj.KernelType.Reduce


def test_kernel_type_has_drjit_names():
    names = ["JIT", "BlockReduce", "BlockPrefixReduce", "Dot", "BatchedGemm", "Compress", "MkPerm",
             "Memcpy", "Memset", "Poke", "Aggregate", "LLVMHostFunc"]
    assert all(hasattr(fj.KernelType, n) for n in names)
    assert fj.KernelType.Memcpy is fj.KernelType.Copy and fj.KernelType.Memset is fj.KernelType.Fill
    fj.eval()
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        fj.eval(Float(1, 2, 3) + 0, fj.sum(Float(4, 5) + 0))
        kinds = [e["type"] for e in fj.kernel_history([fj.KernelType.JIT, fj.KernelType.Memcpy,
                                                       fj.KernelType.Memset])]
    assert kinds and set(kinds) == {fj.KernelType.JIT}      # (the reduction is filtered out)
