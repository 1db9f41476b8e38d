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
    copysign, sign, fma, lerp, select, reinterpret_array,
    safe_sqrt, safe_asin, safe_acos, hypot, power, log10, deg2rad, rad2deg,
)
from .functions.geometry import cross, squared_norm, norm, normalize
from .functions.linalg import (matmul, transpose, inverse, det, diag, identity, frob, trace, polar_decomp,
                               transform_decompose, transform_compose)
from .functions.quaternion import (real, imag, conj, arg, quat_to_matrix, matrix_to_quat, quat_to_euler,
                                   euler_to_quat, quat_apply, rotate, slerp)
from .functions.shape import shape, ravel, unravel, tile, repeat, reverse, meshgrid
from .functions.reduce import sum, prod, min, max, mean, dot, all, any, none, count, prefix_sum, cumsum, compress
from .functions.memory import ReduceOp, gather, scatter, scatter_add, scatter_reduce
from .functions.cache import flush_kernel_cache, flush_malloc_cache, sync_thread
from .backend.cache_control import set_kernel_cache_size, kernel_cache_info
from . import llvm
from . import tree
from .freeze import freeze, FreezeWarning, FreezeMismatchError
from .ad import (enable_grad, disable_grad, grad_enabled, grad, set_grad, accum_grad, clear_grad, detach,
                 backward, backward_from, backward_to, forward, forward_from, forward_to, replace_grad,
                 suspend_grad, resume_grad, isolate_grad, set_grad_enabled, enqueue, traverse, ADFlag, ADMode)
from . import opt
from .random import rng
# Dispatch stands alone (it imports nothing from the JIT).  The package ``frostjit.dispatch``
# is itself the global Dispatcher (one object, however it is imported).
from .dispatch import dispatch, Dispatcher, NotFoundLookupError, AmbiguousLookupError, DispatchCache

__version__ = "0.1.0"
