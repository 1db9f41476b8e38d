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
from .schedule.evaluate import KernelType, KernelRecordingMode
from .functions.creation import zeros, ones, full, empty, arange, linspace, opaque, opaque_width
from .functions.math import (
    abs, sqrt, rsqrt, rcp, square, cbrt, exp, exp2, log, log2, sin, cos, tan, sincos, asin, acos, atan, atan2,
    sinh, cosh, tanh, erf, floor, ceil, trunc, round, isnan, isinf, isfinite, minimum, maximum, clip,
    copysign, sign, fma, lerp, select, reinterpret_array,
    safe_sqrt, safe_asin, safe_acos, hypot, power, log10, deg2rad, rad2deg,
    asinh, acosh, atanh, sincosh, lgamma, erfinv, fmin, fmax,
)
from .functions.bits import popcnt, lzcnt, tzcnt, brev, log2i, mul_hi, mul_wide
from .functions.geometry import cross, squared_norm, norm, normalize
from .functions.linalg import det, diag, identity, frob, trace, polar_decomp, transform_decompose, transform_compose
from .functions.quaternion import (real, imag, conj, arg, quat_to_matrix, matrix_to_quat, quat_to_euler,
                                   euler_to_quat, quat_apply, rotate, slerp)
from .functions.shape import shape, ravel, unravel, reverse, meshgrid
from .functions.tiling import tile, repeat
from .functions.reduce import (sum, prod, min, max, mean, dot, all, any, none, count, prefix_sum, cumsum, compress,
                               reduce)
from .functions.memory import ReduceOp, ReduceMode, gather, scatter, scatter_add, scatter_reduce
from .functions.scan import prefix_reduce
from .functions.sorting import sort, argsort, argmin, argmax, median, binary_search
from .functions.statistics import var, std
from .functions.slicing import slice
from .functions.atomics import scatter_inc, scatter_exch, scatter_cas
from .functions.spherical_harmonics import sh_eval
from .tensor.stacking import (hstack, vstack, row_stack, dstack, column_stack, array_split, take, take_interp,
                              slice_index)
from .functions.block import block_reduce, block_sum, block_prefix_reduce, block_prefix_sum
from .backend import set_cpu_backend, cpu_backend
from .backend.cache_control import (set_kernel_cache_size, kernel_cache_info, flush_kernel_cache, flush_malloc_cache,
                                    sync_thread)
from .functions.helpers import (
    zeros_like, ones_like, empty_like, copy, allclose, assert_allclose, assert_true, assert_false, assert_equal,
    mulsign, step, sqr, clamp, inverse, all_nested, any_nested, none_nested, sum_nested, prod_nested, min_nested, max_nested,
)
from .functions.printing import format, print
from .functions.color import srgb_to_linear, linear_to_srgb, linear_srgb_to_oklab, oklab_to_linear_srgb
from .functions.directions import abs_dot, unit_angle, sphdir
from .functions.runtime import (LogLevel, log_level, set_log_level, thread_count, set_thread_count, has_backend,
                                kernel_history_clear, flush_thread, expand_threshold, set_expand_threshold)
from .functions.profiling import profile_range, profile_mark, profile_enable
from .functions.diagnostics import whos, graphviz
from .constants import (
    e, log_two, inv_log_two, pi, inv_pi, sqrt_pi, inv_sqrt_pi, two_pi, inv_two_pi, sqrt_two_pi, inv_sqrt_two_pi,
    four_pi, inv_four_pi, sqrt_four_pi, inv_sqrt_four_pi, sqrt_two, inv_sqrt_two, inf, nan,
    epsilon, one_minus_epsilon, largest, smallest, recip_overflow,
)
from .traits import (
    ArrayBase, VarType, VarState, Dynamic,
    is_array_v, is_float_v, is_jit_v, is_diff_v, is_matrix_v, is_complex_v, is_quaternion_v, is_tensor_v,
    is_dynamic_v, is_mask_v, is_signed_v, is_unsigned_v, is_integral_v, is_arithmetic_v, is_struct_v, is_vector_v,
    is_special_v, is_half_v, depth_v, size_v, itemsize_v, type_v, backend_v, value_t, scalar_t, mask_t, leaf_t,
    array_t, detached_t, diff_array_t, expr_t, float_array_t, float16_array_t, float32_array_t, float64_array_t,
    int_array_t, int8_array_t, int32_array_t, int64_array_t, uint_array_t, uint8_array_t, uint32_array_t,
    uint64_array_t, reinterpret_array_t, replace_type_t, replace_shape_t, tensor_t, matrix_t,
)
from . import llvm
from . import scalar
from .auto import set_backend, install as _install_auto
_install_auto(llvm)      # fj.auto: the default backend's types (rebound by set_backend)
from .tensor import (reshape, transpose, moveaxis, swapaxes, squeeze, expand_dims, concat, stack, split, matmul,
                     resample, convolve, upsample, newaxis)
from .texture import FilterMode, WrapMode
from . import tree
from . import detail
from .freeze import freeze, FreezeWarning, FreezeMismatchError
from .ad import (enable_grad, disable_grad, grad_enabled, grad, set_grad, accum_grad, clear_grad, detach,
                 backward, backward_from, backward_to, forward, forward_from, forward_to, replace_grad,
                 suspend_grad, resume_grad, isolate_grad, set_grad_enabled, enqueue, traverse, ADFlag, ADMode)
from .ad import CustomOp, custom
from .ad import relative_grad
from .ad import set_label, graphviz_ad, whos_ad
from .ad import wrap, wrap_ad
from . import opt
from . import nn
from . import hashgrid
from .random import rng
from .control import while_loop, if_stmt, switch, syntax, hint, Local, alloc_local, func, reorder_threads
# Dispatch stands alone (it imports nothing from the JIT).  The package ``frostjit.dispatch``
# is itself the global Dispatcher (one object, however it is imported).
from .dispatch import dispatch, Dispatcher, NotFoundLookupError, AmbiguousLookupError, DispatchCache

__version__ = "0.1.0"
