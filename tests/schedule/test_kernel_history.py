"""fj.kernel_history(): the entries' keys and values as Dr.Jit 1.5's (its test_history behaviour)."""
import frostjit as fj
from frostjit.llvm import Float, UInt32


def test_history_is_off_by_default_and_cleared_by_each_query():
    fj.eval(fj.arange(Float, 4))
    assert not fj.flag(fj.JitFlag.KernelHistory) and fj.kernel_history() == []
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        for i in range(4):
            fj.eval(fj.arange(Float, i + 4) * 3)
        assert [h["size"] for h in fj.kernel_history()] == [4, 5, 6, 7]
        assert fj.kernel_history() == []


def test_kernel_entries_name_the_backend_and_count_inputs_and_outputs_plain_and_replayed():
    # (backend was the CPU backend's name as a str; input_count, output_count, uses_optix missing)
    x = fj.arange(Float, 5)
    y = Float(1, 2, 3)
    fj.eval(x, y)

    def f(x, y):
        z = fj.gather(Float, x, fj.arange(UInt32, 3)) + y
        return z, z * 2

    frozen = fj.freeze(f)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        for call in (f, frozen, frozen):
            fj.eval(call(x, y))
            (h,) = [e for e in fj.kernel_history() if e["type"] == fj.KernelType.JIT]
            assert h["backend"] is fj.JitBackend.LLVM and h["uses_optix"] is False
            assert h["cpu_backend"].lower() == fj.cpu_backend()
            assert (h["input_count"], h["output_count"], h["size"]) == (2, 2, 3)
        fj.sum(x).numpy()
        assert all(e["backend"] is fj.JitBackend.LLVM for e in fj.kernel_history())
