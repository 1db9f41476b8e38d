"""frostjit: a pure-Python tracing JIT for wide arrays, compiled with LLVM.

>>> import frostjit as fj
>>> from frostjit.llvm import Float
>>> x = fj.arange(Float, 1000)
>>> y = fj.sin(x) * 2 + 1      # traced, not computed
>>> fj.eval(y)                  # one fused, vectorized kernel on all cores

The API follows Dr.Jit's Python API (``drjit`` 1.x); see docs/ for the
differences.
"""
from .trace.state import JitFlag, JitBackend, set_flag, flag, scoped_set_flag
from .functions.evaluation import eval, schedule, make_opaque, width, kernel_history, is_jit
from .schedule.evaluate import KernelType
from .functions.creation import zeros, ones, full, empty, arange, linspace, opaque
from .functions.math import (
    abs, sqrt, rsqrt, rcp, square, cbrt, exp, exp2, log, log2, sin, cos, tan, sincos, asin, acos, atan, atan2,
    sinh, cosh, tanh, erf, floor, ceil, trunc, round, isnan, isinf, isfinite, minimum, maximum, clip, clamp,
    copysign, sign, fma, lerp, select, reinterpret_array, cross, squared_norm, norm, normalize,
    safe_sqrt, safe_asin, safe_acos, hypot, power, log10, deg2rad, rad2deg,
)
from .functions.shape import shape, ravel, unravel, tile, repeat, reverse, meshgrid
from .functions.reduce import sum, prod, min, max, mean, dot, all, any, none, count, prefix_sum, cumsum, compress
from .functions.memory import ReduceOp, gather, scatter, scatter_add, scatter_reduce
from .backend import set_cpu_backend, cpu_backend
from .backend.cache_control import (set_kernel_cache_size, kernel_cache_info, flush_kernel_cache, flush_malloc_cache,
                                    sync_thread)
from . import llvm
from .freeze import freeze, FreezeWarning
from .ad import (enable_grad, disable_grad, grad_enabled, grad, set_grad, accum_grad, clear_grad, detach,
                 backward, backward_from, backward_to, forward, forward_from, forward_to, replace_grad,
                 suspend_grad, resume_grad, isolate_grad, set_grad_enabled, enqueue, traverse, ADFlag, ADMode)
from . import opt
# Dispatch stands alone (it imports nothing from the JIT).  This makes the attribute
# ``frostjit.dispatch`` the global Dispatcher, which falls back to the subpackage's names.
from .dispatch import dispatch, Dispatcher, NotFoundLookupError, AmbiguousLookupError, DispatchCache

__version__ = "0.1.0"
