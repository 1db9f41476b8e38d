"""Kernel spec -> LLVM IR text, explicitly vectorized to the host SIMD width.

``frame.py``: the kernel's loop, lane mask, parameters and basic blocks;
``lowering.py``: one lowering function per lane-wise op of the op table;
``memory.py``: gathers and scatters (their run-time strategies);
``ir_types.py``: LLVM types and constants of the element types.
"""
from .frame import BLOCK_INSTRS, INLINE_MATH_CALLS, KERNEL_PLACEHOLDER, LOWERINGS, KernelEmitter, generate_ir
from .ir_types import float_constant, memory_type, scalar_constant, scalar_type

__all__ = ["BLOCK_INSTRS", "INLINE_MATH_CALLS", "KERNEL_PLACEHOLDER", "LOWERINGS", "KernelEmitter", "generate_ir",
           "float_constant", "memory_type", "scalar_constant", "scalar_type"]
