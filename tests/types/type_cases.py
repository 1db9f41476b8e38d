"""Programs over Dr.Jit's array types run by both Dr.Jit 1.5 and frostjit (tests/types/).

A case is ``name -> expression`` over ``J`` (``drjit`` or ``frostjit``), ``T`` (its ``llvm``
module), ``np`` and the values of :data:`SETUP`.  :func:`describe` turns a result into
JSON-able data the same way on both sides: the class name, and the values (``numpy()``) of
arrays, recursively for tuples.  ``make_type_data.py`` records Dr.Jit's answers,
``test_type_anchor.py`` compares frostjit's.

This module imports neither drjit nor frostjit.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

#: Statements run first (in one namespace with ``J``, ``T`` and ``np``).
SETUP = """
v4 = T.Array4f(1, 2, 3, 4)
a22 = T.Array22f([1, 2], [3, 4])
m2 = T.Matrix2f(1, 2, 3, 4)
m3 = T.Matrix3f(2, 1, 0, -1, 3, 2, 0.5, 1, 4)
m4 = T.Matrix4f(2, 0, 0, 1, 0, 3, 0, 2, 0, 0, 4, 3, 0, 0, 0, 1)
r4 = T.Matrix4f(0.5, 1, -2, 1, 3, 0.25, 1, 2, -1, 2, 4, 0.5, 1, -3, 1, 2)
c = T.Complex2f(1, 2)
d = T.Complex2f(3, -1)
cw = T.Complex2f(T.Float(0.5, -1.5, 2, 0), T.Float(1, 0.25, -3, -2))
q = T.Quaternion4f(1, 2, 3, 4)
r = T.Quaternion4f(0.5, -1, 2, 1)
qn = J.normalize(q)
rn = J.normalize(r)
x = T.ArrayXf(T.Float(1, 2), T.Float(3, 4), T.Float(5, 6))
"""

#: Construction and conversion.
CONSTRUCTION = {
    "array0": "T.Array0f()", "array1_of_float": "T.Array1f(T.Float(1, 2))", "array1_list": "T.Array1f([1])",
    "array1_too_long": "T.Array1f([1, 2])", "array0_arg": "T.Array0f(1)",
    "array3_lists": "T.Array3f([1, 2], [3, 4], [5, 6])", "array3_broadcast": "T.Array3f(T.Float(1, 2), 3, T.Float(4, 5))",
    "array3_numpy_rows": "T.Array3f(np.array([[1, 2], [3, 4], [5, 6]]))", "array3_numpy_1d": "T.Array3f(np.array([1, 2, 3]))",
    "array3_numpy_bad": "T.Array3f(np.array([[1, 2, 3]]))", "array3_tuple": "T.Array3f((1, 2, 3))",
    "array3_range": "T.Array3f(range(3))", "array3u_from_f": "T.Array3u(T.Array3f(1.5, 2.5, 3.5))",
    "array2i8": "T.Array2i8(1, -2)", "array2u8": "T.Array2u8(200, 3)", "array2f16": "T.Array2f16(0.1, 2.5)",
    "array4b": "T.Array4b(True, False, True, True)", "array3i64": "T.Array3i64(1, -2, 3)",
    "array22": "a22", "array22_scalar": "T.Array22f(1)", "array22_float": "T.Array22f(T.Float(1, 2, 3))",
    "array22_numpy": "T.Array22f(np.arange(4.0).reshape(2, 2))",
    "array22_numpy_wide": "T.Array22f(np.arange(12.0).reshape(2, 2, 3))",
    "array22_from_array2": "T.Array22f(T.Array2f(1, 2))", "array334": "T.Array334f(1)",
    "array441": "T.Array441f(T.Float(1, 2))", "array44b": "T.Array44b(True)", "array33f64": "T.Array33f64(2)",
    "array43f16": "T.Array43f16(0.5)",
    "matrix2_entries": "m2", "matrix2_rows": "T.Matrix2f([1, 2], [3, 4])",
    "matrix2_arrays": "T.Matrix2f(T.Array2f(1, 2), T.Array2f(3, 4))", "matrix2_scalar": "T.Matrix2f(5)",
    "matrix2_numpy": "T.Matrix2f(np.array([[1, 2], [3, 4]]))",
    "matrix2_numpy_wide": "T.Matrix2f(np.arange(8.0).reshape(2, 2, 2))", "matrix3_scalar": "T.Matrix3f(1)",
    "matrix34": "T.Matrix34f(1)", "matrix41": "T.Matrix41f(2)", "matrix44f64": "T.Matrix44f64(1)",
    "matrix4f16": "T.Matrix4f16(0.5)", "matrix_from_array22": "T.Matrix2f(a22)",
    "complex": "c", "complex_scalar": "T.Complex2f(5)", "complex_float": "T.Complex2f(T.Float(1, 2))",
    "complex_python": "T.Complex2f(2 + 1j)", "complex_numpy": "T.Complex2f(np.array([1 + 2j, 3 + 4j]))",
    "complex64": "T.Complex2f64(1, -2)",
    "quaternion": "q", "quaternion_scalar": "T.Quaternion4f(5)", "quaternion_numpy": "T.Quaternion4f(np.array([1, 2, 3, 4.0]))",
    "quaternion_f16": "T.Quaternion4f16(1, 2, 3, 4)",
    "dynamic": "x", "dynamic_list": "T.ArrayXf([1, 2, 3])", "dynamic_numpy": "T.ArrayXf(np.arange(6.0).reshape(3, 2))",
    "dynamic_numpy_1d": "T.ArrayXf(np.arange(6.0))", "dynamic_empty": "T.ArrayXf()", "dynamic_scalar": "T.ArrayXf(3)",
    "dynamic_float": "T.ArrayXf(T.Float(1, 2, 3))", "dynamic_from_static": "T.ArrayXf(T.Array3f(1, 2, 3))",
    "static_from_dynamic": "T.Array3f(T.ArrayXf(T.Float(1), T.Float(2), T.Float(3)))",
    "dynamic_u_from_f": "T.ArrayXu(T.ArrayXf(T.Float(1.5), T.Float(2.5)))", "dynamic_b": "T.ArrayXb(True, False)",
    "dynamic_i8": "T.ArrayXi8(1, -2, 3)", "zeros_dynamic": "J.zeros(T.ArrayXf, (3, 2))",
    "zeros_dynamic_int": "J.zeros(T.ArrayXf, 2)", "zeros_matrix": "J.zeros(T.Matrix2f, 3)",
    "ones_matrix": "J.ones(T.Matrix2f)", "zeros_complex": "J.zeros(T.Complex2f, 2)",
    "ones_complex": "J.ones(T.Complex2f, 2)", "zeros_array22": "J.zeros(T.Array22f, 2)",
    "full_array33": "J.full(T.Array33f, 1.5, 2)",
}

#: Shapes, indexing, swizzles (assignment ones are statements ending with the value shown).
INDEXING = {
    "shape_array22": "a22.shape", "shape_matrix": "m2.shape", "shape_dynamic": "x.shape",
    "shape_array0": "T.Array0f().shape", "shape_array1": "T.Array1f(T.Float(1, 2)).shape",
    "shape_complex": "cw.shape", "shape_broadcast": "T.Array3f(T.Float(1, 2), 3, 5).shape",
    "ragged_shape": "T.Array3f(T.Float(1, 2), T.Float(1, 2, 3), 4).shape",
    "len_dynamic": "len(x)", "len_array0": "len(T.Array0f())",
    "numpy_array22": "a22.numpy()", "numpy_matrix": "m2.numpy()", "numpy_complex": "cw.numpy()",
    "numpy_quaternion": "q.numpy()", "numpy_dynamic": "x.numpy()", "numpy_array0": "T.Array0f().numpy()",
    "item_row": "a22[0]", "item_entry": "a22[0][1]", "item_negative": "v4[-1]", "item_out_of_range": "v4[4]",
    "slice": "v4[1:3]", "matrix_row": "m2[1]", "matrix_entry": "m2[0][1]",
    "swizzle_xy": "v4.xy", "swizzle_zyx": "v4.zyx", "swizzle_xx": "v4.xx", "swizzle_wzyx": "v4.wzyx",
    "swizzle_missing": "T.Array2f(1, 2).z", "swizzle_nested": "a22.y.x", "swizzle_quaternion": "q.w",
    "swizzle_matrix": "m2.x", "swizzle_complex": "c.x", "swizzle_dynamic": "x.x",
    "assign_swizzle": "v = T.Array4f(1, 2, 3, 4); v.xy = T.Array2f(9, 8); v",
    "assign_swizzle_scalar": "v = T.Array4f(1, 2, 3, 4); v.zw = 5; v",
    "assign_component_wide": "v = T.Array4f(1, 2, 3, 4); v.x = T.Float(7, 7); v",
    "inplace_component": "f = T.Float(1, 2); v = T.Array3f(f); v.x += 1; (v, f)",
    "inplace_copy": "b = T.Array3f(1, 2, 3); e = T.Array3f(b); e.x += 10; (b, e)",
    "inplace_reference": "v = T.Array3f(1, 2, 3); t = v.x; t += 1; v",
    "inplace_row": "n = T.Array22f([1, 2], [3, 4]); row = n[0]; row += 10; n",
    "setitem": "v = T.Array3f(1, 2, 3); v[1] = T.Float(5, 6); v",
    "complex_real_imag": "(c.real, c.imag)", "dynamic_item": "x[1]",
}

#: Arithmetic of static, nested and dynamic arrays.
ARITHMETIC = {
    "nested_plus_scalar": "a22 + 1", "nested_times_nested": "a22 * a22", "nested_matmul": "a22 @ a22",
    "nested_plus_vector": "a22 + T.Array2f(10, 20)", "vector_plus_nested": "T.Array2f(10, 20) + a22",
    "nested_times_float": "a22 * T.Float(2, 3)", "nested_compare": "a22 > 2", "nested_f64": "a22 + T.Array22f64(1)",
    "array44_at_vector": "T.Array44f(1) @ v4", "vector_at_vector": "v4 @ v4",
    "matmul_vectors": "J.matmul(T.Array2f(1, 2), T.Array2f(3, 4))",
    "array0_sum": "T.Array0f() + T.Array0f()", "array1_ops": "T.Array1f(2) * T.Array1f(T.Float(1, 2))",
    "i8_vector": "T.Array3i8(1, 2, 3) * T.Int8(100)", "f16_vector": "T.Array3f16(1, 2, 3) / 3",
    "dynamic_plus_scalar": "x + 1", "dynamic_times": "x * x", "dynamic_plus_float": "x + T.Float(1, 1)",
    "dynamic_plus_dynamic": "x + T.ArrayXf(T.Float(1), T.Float(2), T.Float(3))",
    "dynamic_size_mismatch": "x + T.ArrayXf(T.Float(1), T.Float(2))", "dynamic_compare": "x == x",
    "dynamic_sum": "J.sum(x)", "dynamic_dot": "J.dot(x, x)", "static_size_mismatch": "T.Array3f(1) + T.Array2f(1)",
    "norm_nested": "J.norm(T.Array3f(1, 2, 2))", "f16_norm": "J.norm(T.Array3f16(1, 2, 2))",
}

#: Matrices.
MATRIX = {
    "mm_star": "m2 * m2", "mm_at": "m2 @ m2", "mv_star": "m2 * T.Array2f(1, 1)", "mv_at": "m2 @ T.Array2f(1, 1)",
    "vm_at": "T.Array2f(1, 1) @ m2", "vm_star": "T.Array2f(1, 1) * m2", "m_scale": "m2 * 2", "scale_m": "2 * m2",
    "m_float": "T.Float(2, 3) * m2", "m_plus_1": "m2 + 1", "one_plus_m": "1 + m2", "m_minus_1": "m2 - 1",
    "one_minus_m": "1 - m2", "m_plus_m": "m2 + m2", "m_div_2": "m2 / 2", "two_div_m": "2 / m2", "m_div_m": "m3 / m3",
    "m_eq": "m2 == m2", "m_abs": "J.abs(m2 - 3)", "m_sqrt": "J.sqrt(m2)", "m_exp": "J.exp(m2)",
    "m_fma": "J.fma(m2, m2, m2)", "m_rcp2": "J.rcp(m2)", "m_rcp3": "J.rcp(m3)", "m_rcp4": "J.rcp(r4)",
    "m_det2": "J.det(m2)", "m_det3": "J.det(m3)", "m_det4": "J.det(r4)", "m_transpose_T": "m3.T",
    "m_diag": "J.diag(m3)", "diag_vector": "J.diag(T.Array3f(3, 4, 5))", "m_identity": "J.identity(T.Matrix3f)",
    "m_identity_wide": "J.identity(T.Matrix2f, 3)", "m_identity_34": "J.identity(T.Matrix34f)",
    "m_diag_34": "J.diag(T.Matrix34f(1))", "m_frob": "J.frob(m3)", "m_trace": "J.trace(m4)",
    "m34_product": "T.Matrix34f(1) * T.Matrix34f(2)", "m_wide_product": "m2 @ T.Matrix2f(T.Float(1, 2), 0, 0, 1)",
    "polar3": "J.polar_decomp(T.Matrix3f(1, 2, 0, 0, 1, 0, 0, 0, 2))", "polar4": "J.polar_decomp(m4)",
    "decompose": "J.transform_decompose(m4)", "compose": "J.transform_compose(*J.transform_decompose(r4))",
    "decompose_rotated": "J.transform_decompose(J.transform_compose(T.Matrix3f(2), J.normalize(q), T.Array3f(1, 2, 3)))",
    "m_compare_lt": "m2 < m2", "m_inverse_wide": "J.rcp(T.Matrix2f(T.Float(1, 2), 1, 0, T.Float(3, 4)))",
    "m_f64": "J.rcp(T.Matrix3f64(m3))", "m_f16": "T.Matrix2f16(1, 2, 3, 4) @ T.Matrix2f16(1, 2, 3, 4)",
}

#: Complex numbers.
COMPLEX = {
    "c_mul": "c * d", "c_div": "c / d", "c_add": "c + d", "c_sub": "c - d", "c_scale": "c * 2", "scale_c": "2 * c",
    "c_plus_1": "c + 1", "one_plus_c": "1 + c", "c_div_2": "c / 2", "two_div_c": "2 / c", "c_neg": "-c",
    "c_abs": "J.abs(c)", "c_abs_builtin": "abs(cw)", "c_real": "J.real(cw)", "c_imag": "J.imag(cw)",
    "c_conj": "J.conj(cw)", "c_arg": "J.arg(cw)", "c_exp": "J.exp(cw)", "c_log": "J.log(cw)", "c_sqrt": "J.sqrt(cw)",
    "c_sin": "J.sin(cw)", "c_cos": "J.cos(cw)", "c_tan": "J.tan(cw)", "c_sinh": "J.sinh(cw)", "c_cosh": "J.cosh(cw)",
    "c_tanh": "J.tanh(cw)", "c_asin": "J.asin(cw)", "c_acos": "J.acos(cw)", "c_atan": "J.atan(cw)",
    "c_sincos": "J.sincos(cw)", "c_pow_int": "c ** 2", "c_pow_c": "c ** d", "c_pow_half": "c ** 0.5",
    "c_power": "J.power(c, d)", "c_rcp": "J.rcp(cw)", "c_rsqrt": "J.rsqrt(cw)", "c_log2": "J.log2(cw)",
    "c_exp2": "J.exp2(cw)", "c_cbrt": "J.cbrt(c)", "c_squared_norm": "J.squared_norm(cw)", "c_norm": "J.norm(cw)",
    "c_dot": "J.dot(c, d)", "c_normalize": "J.normalize(cw)", "c_fma": "J.fma(c, d, c)", "c_lerp": "J.lerp(c, d, 0.5)",
    "c_select": "J.select(T.Bool(True, False), c, d)", "c_eq": "c == d", "c_lt": "c < d",
    "c_identity": "J.identity(T.Complex2f)", "c_f64": "T.Complex2f64(1, 2) * d", "c_times_float": "c * T.Float(1, 2)",
    "c_inplace": "e = T.Complex2f(1, 2); e *= d; e",
}

#: Quaternions.
QUATERNION = {
    "q_mul": "q * r", "q_div": "q / r", "q_add": "q + r", "q_scale": "q * 2", "q_plus_1": "q + 1",
    "one_div_q": "1 / q", "q_abs": "J.abs(q)", "q_conj": "J.conj(q)", "q_rcp": "J.rcp(q)", "q_exp": "J.exp(q)",
    "q_log": "J.log(q)", "q_sqrt": "J.sqrt(q)", "q_pow_int": "q ** 2", "q_pow_half": "q ** 0.5", "q_sin": "J.sin(q)",
    "q_real": "J.real(q)", "q_imag": "J.imag(q)", "q_identity": "J.identity(T.Quaternion4f)", "q_normalize": "qn",
    "q_dot": "J.dot(q, r)", "q_squared_norm": "J.squared_norm(q)", "q_neg": "-q", "q_eq": "q == r", "q_lt": "q < r",
    "q_to_matrix3": "J.quat_to_matrix(T.Matrix3f, qn)", "q_to_matrix4": "J.quat_to_matrix(T.Matrix4f, qn)",
    "matrix3_to_q": "J.matrix_to_quat(J.quat_to_matrix(T.Matrix3f, qn))",
    "matrix4_to_q": "J.matrix_to_quat(J.quat_to_matrix(T.Matrix4f, rn))",
    "matrix_to_q_negative_w": "J.matrix_to_quat(J.quat_to_matrix(T.Matrix3f, J.normalize(T.Quaternion4f(3, 1, -2, -0.5))))",
    "q_to_euler": "J.quat_to_euler(qn)", "euler_to_q": "J.euler_to_quat(T.Array3f(0.1, 0.2, 0.3))",
    "euler_roundtrip": "J.quat_to_euler(J.euler_to_quat(T.Array3f(0.4, -0.3, 1.2)))",
    "q_apply": "J.quat_apply(rn, T.Array3f(1, 2, 3))", "q_apply_axis": "J.quat_apply(qn, T.Array3f(1, 2, 3))",
    "rotate": "J.rotate(T.Quaternion4f, T.Array3f(0, 0, 1), 0.5)",
    "rotate_wide": "J.rotate(T.Quaternion4f, T.Array3f(0, 0, 1), T.Float(0.5, 1))",
    "rotate_axis": "J.rotate(T.Quaternion4f, J.normalize(T.Array3f(1, 2, 3)), 2.0)",
    "slerp": "J.slerp(qn, rn, 0.3)", "slerp_wide": "J.slerp(qn, rn, T.Float(0.3, 0.7))",
    "slerp_close": "J.slerp(qn, J.normalize(qn + 0.0001), 0.5)", "slerp_opposite": "J.slerp(qn, -rn, 0.25)",
    "q_f64": "T.Quaternion4f64(1, 2, 3, 4) * r",
}

#: Wide random inputs (the same NumPy draws on both sides) for the bit-exact cases below.
RANDOM_SETUP = """
rng = np.random.default_rng(20251201)
def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)
N = 1000
W = lambda a: T.Float(a)
cz, dz = T.Complex2f(W(_f(N)), W(_f(N))), T.Complex2f(W(_f(N)), W(_f(N)))
qa = T.Quaternion4f(*[W(v) for v in _f(4, N)])
qb = T.Quaternion4f(*[W(v) for v in _f(4, N)])
ma = T.Matrix3f(*[W(v) for v in _f(9, N)])
mb = T.Matrix3f(*[W(v) for v in _f(9, N)])
m2a = T.Matrix2f(*[W(v) for v in _f(4, N)])
m4a = T.Matrix4f(*[W(v) for v in _f(16, N)])
m4b = T.Matrix4f(*[W(v) for v in _f(16, N)])
va = T.Array3f(*[W(v) for v in _f(3, N)])
v4a = T.Array4f(*[W(v) for v in _f(4, N)])
"""

#: Random inputs, results compared bit for bit (SHA-256 of the values): the formulas (fma
#: chains and their order) are Dr.Jit's.
RANDOM_EXACT = {
    "complex_mul": "cz * dz", "complex_div": "cz / dz", "complex_abs": "J.abs(cz)", "complex_rcp": "J.rcp(cz)",
    "complex_squared_norm": "J.squared_norm(cz)", "complex_scale": "cz * 1.5 + 2",
    "quaternion_mul": "qa * qb", "quaternion_abs": "J.abs(qa)", "quaternion_rcp": "J.rcp(qa)",
    "quaternion_div": "qa / qb", "quaternion_dot": "J.dot(qa, qb)",
    "matmul3": "ma @ mb", "matmul3_star": "ma * mb", "matvec3": "ma @ va", "vecmat3": "va @ ma",
    "matmul4": "m4a @ m4b", "matvec4": "m4a @ v4a", "inner": "va @ va",
    "det2": "J.det(m2a)", "det3": "J.det(ma)", "inverse2": "J.rcp(m2a)", "inverse3": "J.rcp(ma)",
    "frob3": "J.frob(ma)", "trace3": "J.trace(ma)", "transpose3": "ma.T", "diag3": "J.diag(ma)",
    "matrix_plus_scalar": "ma + 2.5", "scalar_minus_matrix": "1 - ma",
    "matrix_fma_product": "J.fma(ma, mb, ma)", "matrix_fma_product_scalar": "J.fma(ma, mb, 0.5)",
    "matrix_fma_scaled": "J.fma(ma, 1.5, -2.0)", "matrix_fma_scaled_array": "J.fma(ma, va.x, mb)",
    "matrix_fma_scalar_first": "J.fma(2.5, ma, va.y)",
    "complex_fma": "J.fma(cz, dz, cz)", "complex_fma_real_addend": "J.fma(cz, dz, va.x)",
    "complex_fma_scaled": "J.fma(cz, va.x, dz)", "complex_fma_scalar_first": "J.fma(va.y, cz, dz)",
    "complex_fma_numbers": "J.fma(cz, 1.5, 2.0)",
    "quaternion_fma": "J.fma(qa, qb, qa)", "quaternion_fma_real_addend": "J.fma(qa, qb, va.x)",
    "quaternion_fma_scaled": "J.fma(qa, va.x, qb)", "quaternion_fma_scalar_first": "J.fma(va.y, qa, qb)",
    "quaternion_fma_numbers": "J.fma(qa, 1.5, 2.0)",
}

#: Random inputs compared within a relative tolerance (not bit-identical formulas: 4x4
#: inverse and determinant; the median relative error of both systems is ~1e-7).
RANDOM_CLOSE = {"det4": "J.det(m4a)", "inverse4": "J.rcp(m4a)", "complex_exp": "J.exp(cz)",
                "complex_log": "J.log(cz)", "complex_sqrt": "J.sqrt(cz)", "quaternion_exp": "J.exp(qa)",
                "quaternion_log": "J.log(qa)"}

GROUPS = {"construction": CONSTRUCTION, "indexing": INDEXING, "arithmetic": ARITHMETIC, "matrix": MATRIX,
          "complex": COMPLEX, "quaternion": QUATERNION}

#: Relative tolerance of float results (exact: 0).  Transcendental functions and the
#: iterative decompositions are approximations in both systems.
TOLERANCE = {"matrix": 2e-6, "complex": 2e-5, "quaternion": 2e-5, "random": 2e-4}
EXACT = {"c_mul", "c_div", "c_abs", "c_rcp", "mm_star", "mm_at", "mv_at", "vm_at", "m_rcp2", "m_rcp3", "m_det2",
         "m_det3", "m_frob", "q_mul"}


def namespace(J, T) -> dict:
    ns = {"J": J, "T": T, "np": np, "math": math}
    exec(SETUP, ns)
    exec(RANDOM_SETUP, ns)
    return ns


def digest(r) -> str:
    """SHA-256 of a result's values (every NaN one canonical NaN), or the error's name."""
    try:
        a = np.asarray(r.numpy())
    except Exception as e:
        return f"error: {type(e).__name__}"
    if a.dtype.kind in "fc":
        a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


_KEPT = 256


def run_random(ns: dict) -> dict:
    """``{"exact": {name: digest}, "close": {name: values}}`` of the random cases."""
    exact = {}
    for name, expr in RANDOM_EXACT.items():
        try:
            exact[name] = digest(eval(expr, ns))
        except Exception as e:
            exact[name] = f"error: {type(e).__name__}"
    close = {}
    for name, expr in RANDOM_CLOSE.items():
        d = run(expr, ns, None)
        for key in ("value", "complex"):       # the first lanes are enough (and keep the data small)
            if key in d:
                d[key] = d[key][:_KEPT] if key == "value" else [part[:_KEPT] for part in d[key]]
        close[name] = d
    return {"exact": exact, "close": close}


def run(expr: str, ns: dict, J):
    """Evaluate a case (an expression, or statements whose last one is the result)."""
    try:
        if ";" in expr:
            *stmts, last = expr.split(";")
            exec(";".join(stmts), ns)
            r = eval(last, ns)
        else:
            r = eval(expr, ns)
        return describe(r, J)
    except Exception as e:
        return {"error": type(e).__name__}


def describe(r, J):
    """JSON-able description: ``{"type": name, "value": nested lists}`` or a Python value."""
    if isinstance(r, tuple):
        return {"tuple": [describe(x, J) for x in r]}
    if isinstance(r, (bool, int, float, str)) or r is None:
        return {"py": r if not isinstance(r, float) or math.isfinite(r) else repr(r)}
    if hasattr(r, "numpy"):
        a = np.asarray(r.numpy())
        if a.dtype.kind == "c":
            return {"type": type(r).__name__, "complex": [a.real.tolist(), a.imag.tolist()], "shape": list(a.shape)}
        return {"type": type(r).__name__, "value": _lists(a), "shape": list(a.shape), "dtype": str(a.dtype)}
    return {"other": type(r).__name__}


def _lists(a: np.ndarray):
    if a.dtype.kind == "f":
        a = a.astype(np.float64)
        return [x if math.isfinite(x) else repr(x) for x in a.ravel().tolist()]
    return a.ravel().tolist()
