"""``fj.reorder_threads``: Dr.Jit's shader execution reordering hint, a no-op on the CPU.

Dr.Jit reorders GPU threads by a key before divergent code (``dr.switch``) when
``JitFlag.ShaderExecutionReordering`` is set on the CUDA backend; on its LLVM backend the call
returns ``value`` unchanged.  frostjit has the LLVM backend only: it checks the arguments as
Dr.Jit 1.5 does there (the same messages) and returns ``value`` with its containers rebuilt and
new handles on the same variables (gradients flow through, as in Dr.Jit).
"""
from __future__ import annotations

import numbers

from ..array.flat import ArrayBase
from ..traits import is_array_v
from ..trace.dtypes import UInt32
from ..tree import flatten
from .consistency import fresh

_INT32 = (-2**31, 2**31 - 1)


def reorder_threads(key, num_bits: int, value):
    """Reorder threads by ``key`` before divergent code (a GPU feature): returns ``value``.

    On the CPU (frostjit's LLVM backend, as Dr.Jit's) nothing is reordered; the arguments are
    checked as Dr.Jit checks them.

    Parameters
    ----------
    key : UInt32 array
        A 1-D JIT array of 32-bit unsigned integers, the sorting key (only its ``num_bits`` low
        bits would be used on a GPU).
    num_bits : int
        How many bits of ``key`` to use (Dr.Jit recommends at most 16; like Dr.Jit's LLVM
        backend, any 32-bit ``int`` is accepted).
    value : PyTree
        Arrays, tensors or any PyTree holding at least one JIT array.

    Returns
    -------
    object
        ``value``: the same structure and variables, containers and array handles new.

    Raises
    ------
    RuntimeError
        ``key`` is not a JIT ``UInt32`` array, or ``value`` holds no JIT array (Dr.Jit's messages).
    TypeError
        ``key`` is not an array at all, ``num_bits`` is not an ``int`` of 32 bits, or ``value``
        is ``None`` (Dr.Jit's argument check).

    Examples
    --------
    >>> x = fj.reorder_threads(UInt32(1, 2, 3) % 4, 2, Float(10, 20, 30))
    >>> x
    [10, 20, 30]
    """
    if not is_array_v(key) or value is None or isinstance(num_bits, float) or \
            not isinstance(num_bits, numbers.Integral) or not _INT32[0] <= int(num_bits) <= _INT32[1]:
        raise TypeError("fj.reorder_threads(): incompatible function arguments: expected reorder_threads(key: a JIT "
                        "array, num_bits: a 32-bit int, value: a PyTree), got "
                        f"({type(key).__name__}, {type(num_bits).__name__}, {type(value).__name__})")
    if not isinstance(key, ArrayBase) or key._vt is not UInt32 or key._backend is None:
        raise RuntimeError("fj.reorder_threads(): 'key' must be a JIT-compiled 32 bit unsigned integer array (e.g., "
                           "'frostjit.llvm.UInt32' or 'frostjit.llvm.ad.UInt32')")
    if not flatten(value)[0]:
        raise RuntimeError("fj.reorder_threads(): 'value' must be a valid PyTree containing at least one "
                           "JIT-compiled type")
    return fresh(value)
