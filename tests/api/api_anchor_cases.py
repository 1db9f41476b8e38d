"""The cases Dr.Jit 1.5 and frostjit both run for the array-API tests (tests/api/).

``make_api_anchor_data.py`` evaluates every case with Dr.Jit (in its own process: never import
drjit and frostjit together) and writes the results to ``data/drjit_1_5_api.json``; the tests
evaluate the same cases with frostjit and compare.  A case is a Python expression over the
names of :func:`namespace` (``dr`` is the package, ``llvm``/``ad``/``scalar`` its modules), and a
result is turned into JSON by :func:`describe` the same way on both sides.

This module imports neither drjit nor frostjit.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

#: One-argument type traits, run on every type and on every object of OBJECTS.
TRAITS = (
    "is_array_v", "is_float_v", "is_jit_v", "is_diff_v", "is_matrix_v", "is_complex_v", "is_quaternion_v",
    "is_tensor_v", "is_dynamic_v", "is_mask_v", "is_signed_v", "is_unsigned_v", "is_integral_v",
    "is_arithmetic_v", "is_struct_v", "is_vector_v", "is_special_v", "is_half_v", "depth_v", "size_v",
    "itemsize_v", "type_v", "backend_v", "value_t", "scalar_t", "mask_t", "leaf_t", "array_t", "detached_t",
    "diff_array_t", "float_array_t", "float16_array_t", "float32_array_t", "float64_array_t", "int_array_t",
    "int8_array_t", "int32_array_t", "int64_array_t", "uint_array_t", "uint8_array_t", "uint32_array_t",
    "uint64_array_t", "tensor_t", "matrix_t", "expr_t",
    # precision-dependent constants are functions of a type in Dr.Jit
    "epsilon", "one_minus_epsilon", "largest", "smallest", "recip_overflow",
)

#: Two-argument traits ``f(type, VarType.X)``, run on the types of TYPES2 for each VarType of VARTYPES2.
TRAITS2 = ("replace_type_t", "reinterpret_array_t")
VARTYPES2 = ("Bool", "Int8", "UInt8", "Int32", "UInt32", "Int64", "UInt64", "Float16", "Float32", "Float64")
TYPES2 = ("llvm.Float", "llvm.Float64", "llvm.UInt", "llvm.Int64", "llvm.Bool", "llvm.Array3f", "llvm.Array2u",
          "llvm.Array4b", "llvm.Array3f64", "llvm.ad.Float", "llvm.ad.Array3f", "llvm.Matrix4f", "llvm.Complex2f",
          "llvm.Quaternion4f", "llvm.TensorXf", "llvm.ArrayXf", "llvm.Array33f", "llvm.Array0f", "llvm.Float16",
          "scalar.Array3f", "scalar.ArrayXf", "scalar.Matrix4f")

#: Every class of ``llvm`` goes through TRAITS; of ``llvm.ad`` and ``scalar`` the classes listed here
#: (the rest follows the same rules; the data file stays small).
AD_TYPES = ("Float", "Float64", "Float16", "Int", "UInt", "Int64", "UInt64", "Bool", "Array3f", "Array2u",
            "Array4b", "Array3f64", "Array1f", "Array0f", "Array44f", "ArrayXf", "ArrayXu", "Matrix4f",
            "Complex2f", "Quaternion4f", "TensorXf", "TensorXu")
SCALAR_TYPES = ("Float16", "Int8", "UInt8", "Array0f", "Array1f", "Array3f", "Array3u", "Array4b", "Array3f64",
                "Array3f16", "Array22f", "Array44f", "ArrayXf", "ArrayXu", "ArrayXb", "Matrix4f", "Matrix2f64",
                "Complex2f", "Quaternion4f", "TensorXf", "TensorXu", "PCG32")

#: Non-type arguments of the traits: instances and Python values (name -> expression).
OBJECTS = {
    "int": "1", "float": "1.5", "bool": "True", "str": "'a'", "none": "None",
    "np_float32": "np.float32(1)", "np_int32": "np.int32(1)", "np_array": "np.array([1.0])",
    "list": "[1.0]", "tuple": "(1,)", "dict": "{}", "vartype": "dr.VarType.Float32",
    "struct": "Struct(llvm)()", "dataclass": "Point(1.0, 2.0)",
    "type_int": "int", "type_float": "float", "type_bool": "bool", "type_str": "str", "type_list": "list",
    "type_struct": "Struct(llvm)",
    "Float": "llvm.Float(1, 2)", "UInt": "llvm.UInt(1)", "Bool": "llvm.Bool(True)", "Int64": "llvm.Int64(5)",
    "Float64": "llvm.Float64(1.5)", "Array3f": "llvm.Array3f(1, 2, 3)", "Array2u": "llvm.Array2u(1, 2)",
    "Array3b": "llvm.Array3b(True)", "ad_Float": "ad.Float(1)", "ad_Array3f": "ad.Array3f(1)",
    "ad_UInt": "ad.UInt(1)", "Matrix4f": "llvm.Matrix4f(1)", "Complex2f": "llvm.Complex2f(1, 2)",
    "ArrayXf": "llvm.ArrayXf(llvm.Float(1), llvm.Float(2))", "scalar_Array3f": "scalar.Array3f(1, 2, 3)",
}

#: ``expr_t`` with several arguments.
EXPR_T = {
    "Float,UInt": "dr.expr_t(llvm.Float, llvm.UInt)", "Float,float": "dr.expr_t(llvm.Float, 1.0)",
    "UInt,float": "dr.expr_t(llvm.UInt, 1.0)", "Int,bool": "dr.expr_t(llvm.Int, True)",
    "UInt,int": "dr.expr_t(llvm.UInt, 1)", "Bool,Bool": "dr.expr_t(llvm.Bool, llvm.Bool)",
    "Bool,int": "dr.expr_t(llvm.Bool, 1)", "int,float": "dr.expr_t(1, 2.0)", "int,bool": "dr.expr_t(1, True)",
    "Array3f,Float": "dr.expr_t(llvm.Array3f, llvm.Float)", "Float,Float64": "dr.expr_t(llvm.Float, llvm.Float64)",
    "Int64,UInt": "dr.expr_t(llvm.Int64, llvm.UInt)", "Int,UInt": "dr.expr_t(llvm.Int, llvm.UInt)",
    "ad.Float,Float": "dr.expr_t(ad.Float, llvm.Float)", "Array3u,Float": "dr.expr_t(llvm.Array3u, llvm.Float)",
    "Array3f,Array2f": "dr.expr_t(llvm.Array3f, llvm.Array2f)", "Array3f,Array3u": "dr.expr_t(llvm.Array3f, llvm.Array3u)",
    "instances": "dr.expr_t(llvm.Float(1), llvm.Array3u(1))", "none": "dr.expr_t()", "str": "dr.expr_t('a')",
    "Float,str": "dr.expr_t(llvm.Float, 'a')", "Array3f,Float64": "dr.expr_t(llvm.Array3f, llvm.Float64)",
    "ad.Array3f,Float64": "dr.expr_t(ad.Array3f, llvm.Float64)",
}

#: Other traits: ``replace_shape_t``, and the enums.
MORE_TRAITS = {
    "replace_shape_t Array1f (3,-1)": "dr.replace_shape_t(llvm.Array1f, (3, -1))",
    "replace_shape_t Array3f (2,2,-1)": "dr.replace_shape_t(llvm.Array3f, (2, 2, -1))",
    "replace_shape_t Array3f (2,2,-1) matrix": "dr.replace_shape_t(llvm.Array3f, (2, 2, -1), 'matrix')",
    "replace_shape_t Float (-1,)": "dr.replace_shape_t(llvm.Float, (-1,))",
    "replace_shape_t Float (4,-1)": "dr.replace_shape_t(llvm.Float, (4, -1))",
    "replace_shape_t Array3u (2,-1)": "dr.replace_shape_t(llvm.Array3u, (2, -1))",
    "replace_shape_t int": "dr.replace_shape_t(1, (3, -1))",
    "replace_shape_t instance": "dr.replace_shape_t(llvm.Float(1), (3, -1))",
    "VarType members": "[(m.name, m.value) for m in dr.VarType]",
    "VarState members": "[(m.name, m.value) for m in dr.VarState]",
    "LogLevel members": "[(m.name, m.value) for m in dr.LogLevel]",
    "VarType is Enum": "isinstance(dr.VarType.Float32, enum.Enum) and not isinstance(dr.VarType.Float32, int)",
    "Dynamic": "dr.Dynamic", "newaxis": "dr.newaxis",
    "ArrayBase Float": "issubclass(llvm.Float, dr.ArrayBase)",
    "ArrayBase Array3f": "issubclass(llvm.Array3f, dr.ArrayBase)",
    "ArrayBase ad.Float": "issubclass(ad.Float, dr.ArrayBase)",
    "ArrayBase instance": "isinstance(llvm.Array3u(1), dr.ArrayBase)",
    "ArrayBase float": "isinstance(1.0, dr.ArrayBase)",
    "ArrayBase list": "issubclass(list, dr.ArrayBase)",
    "meta Float": "str(llvm.Float.__meta__)", "meta Array3f": "str(llvm.Array3f.__meta__)",
    "meta ad.Float": "str(ad.Float.__meta__)", "meta Array3b": "str(llvm.Array3b.__meta__)",
    "meta UInt64": "str(llvm.UInt64.__meta__)", "meta Float64": "str(llvm.Float64.__meta__)",
    "meta Int": "str(llvm.Int.__meta__)", "meta Matrix4f": "str(llvm.Matrix4f.__meta__)",
    "meta scalar.Array3f": "str(scalar.Array3f.__meta__)",
}

CONSTANTS = ("e", "log_two", "inv_log_two", "pi", "inv_pi", "sqrt_pi", "inv_sqrt_pi", "two_pi", "inv_two_pi",
             "sqrt_two_pi", "inv_sqrt_two_pi", "four_pi", "inv_four_pi", "sqrt_four_pi", "inv_sqrt_four_pi",
             "sqrt_two", "inv_sqrt_two", "inf", "nan", "Dynamic")

#: Properties of array handles (``.state``, ``.index``, ``.ndim``, ``.shape``, ``.label``).
PROPERTIES = {
    "state literal": "llvm.Float(1).state",
    "state evaluated": "llvm.Float(1, 2).state",
    "state unevaluated": "(llvm.Float(1, 2) + 1).state",
    "state evaluated after eval": "(lambda y: (dr.eval(y), y.state)[1])(llvm.Float(1, 2) + 1)",
    "state dirty": "(lambda x: (dr.scatter(x, 5.0, llvm.UInt(0)), x.state)[1])(llvm.Float(1, 2))",
    "state vector literal": "llvm.Array3f(1, 2, 3).state",
    "state vector mixed": "(lambda x: llvm.Array3f(x, x + 1, 1).state)(llvm.Float(1, 2))",
    "state vector evaluated": "(lambda x: llvm.Array3f(x, x, x).state)(llvm.Float(1, 2))",
    "state vector unevaluated": "(lambda x: llvm.Array3f(x + 1, x + 2, x + 3).state)(llvm.Float(1, 2))",
    "state empty": "llvm.Float().state",
    "state ad": "ad.Float(1, 2).state",
    "ndim Float": "llvm.Float(1, 2).ndim", "ndim Array3f": "llvm.Array3f(1).ndim",
    "shape Float": "llvm.Float(1, 2).shape", "shape Array3f": "llvm.Array3f(llvm.Float(1, 2), 1, 2).shape",
    "shape empty": "llvm.Float().shape",
    "index nonzero": "llvm.Float(1, 2).index > 0",
    "index is int": "type(llvm.Float(1, 2).index) is int",
    "index shared": "(lambda x: x.index == llvm.Float(x).index)(llvm.Float(1, 2))",
    "index same handle": "(lambda x: (lambda y: x.index == y.index)(x))(llvm.Float(1, 2))",
    "index differs": "(lambda x: x.index != (x + 1).index)(llvm.Float(1, 2))",
    "index stable across eval": "(lambda y: (lambda i: (dr.eval(y), y.index == i)[1])(y.index))(llvm.Float(1, 2) * 2)",
    "index vector": "llvm.Array3f(1, 2, 3).index",
    "index_ad plain": "llvm.Float(1).index_ad",
    "index_ad no grad": "ad.Float(1).index_ad",
    "index_ad grad": "(lambda x: (dr.enable_grad(x), x.index_ad > 0)[1])(ad.Float(1))",
    "label default": "llvm.Float(1, 2).label",
    "label set": "(lambda x: (setattr(x, 'label', 'foo'), x.label)[1])(llvm.Float(1, 2))",
    "label shared by alias": "(lambda x: (setattr(x, 'label', 'foo'), llvm.Float(x).label)[1])(llvm.Float(1, 2))",
    "label not inherited": "(lambda x: (setattr(x, 'label', 'foo'), (x + 1).label)[1])(llvm.Float(1, 2))",
    "label after eval": "(lambda x: (setattr(x, 'label', 'foo'), dr.eval(x), x.label)[2])(llvm.Float(1, 2) + 1)",
    "set_label": "(lambda x: (dr.set_label(x, 'bar'), x.label)[1])(llvm.Float(1, 2))",
    "set_label kwargs": "(lambda a, b: (dr.set_label(a=a, b=b), a.label, b.label)[1:])(llvm.Float(1), llvm.UInt(2))",
    "set_label vector": "(lambda v: (dr.set_label(v, 'v'), [c.label for c in v])[1])(llvm.Array3f(1, 2, 3))",
    "set_label tree": "(lambda t: (dr.set_label(t, 'tree'), t['k'].label, t['l'][0].label, t['l'][1].label)[1:])"
                      "({'k': llvm.Float(1), 'l': [llvm.Float(2), llvm.Float(3)]})",
    "set_label struct": "(lambda s: (dr.set_label(s, 'st'), s.x.label, s.y.x.label, s.y.z.label)[1:])(Struct(llvm)())",
    "set_label number": "dr.set_label(5, 'num')",
    "set_label non-str": "dr.set_label(llvm.Float(1), 5)",
    "set_label nothing": "dr.set_label()",
    "set_label 3 args": "dr.set_label(llvm.Float(1), 'a', 'b')",
    "label set non-str": "(lambda x: setattr(x, 'label', 5))(llvm.Float(1))",
    "label on ad": "(lambda x: (setattr(x, 'label', 'g'), x.label)[1])(ad.Float(1, 2))",
}

#: The Python scalars of the printing tests: float32 and float64 values whose %g forms differ
#: in every way the formatter can get wrong (rounding, exponents, signs, NaN signs, subnormals).
FLOAT_SAMPLES = (0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2 / 3, 0.5, 1.5, 100000.0, 999999.0, 999999.5, 1e6, 1234567.0,
                 1e-4, 1.5e-4, 1e-5, 9.99999e-5, 0.000123456789, 123456789.0, 3.14159265, 2.718281828,
                 1e10, 1e-10, 1e20, 1e-20, 1e30, 1e38, 3.4028234663852886e38, 1.1754943508222875e-38,
                 1.401298464324817e-45, 1e-40, 65504.0, 0.999999, 0.9999995, 9.9999949, 99999.95, 123.456,
                 -123.456, 5e-324, 1e300, 1.7976931348623157e308, 2.2250738585072014e-308, 1e16, 1e17,
                 12345.6789, -0.000001, 7.0, 1024.0, 4194304.0, 16777216.0, 16777217.0)

#: Printing and formatting (repr, str, dr.format, dr.print into a StringIO).
PRINTING = {
    "Float empty": "repr(llvm.Float())",
    "Float one": "repr(llvm.Float(1))",
    "Float mixed": "repr(llvm.Float(1.5, 2, 3))",
    "Float samples f32": "dr.format(llvm.Float(f32(FLOAT_SAMPLES)), limit=1000)",
    "Float samples f64": "dr.format(llvm.Float64(np.array(FLOAT_SAMPLES)), limit=1000)",
    "Float nan signs": "repr(llvm.Float(np.array([0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001], "
                       "dtype=np.uint32).view(np.float32)))",
    "Float64 nan signs": "repr(llvm.Float64(np.array([0x7ff8000000000000, 0xfff8000000000000], "
                         "dtype=np.uint64).view(np.float64)))",
    "Float inf": "repr(llvm.Float(float('inf'), -float('inf')))",
    "Float computed nan": "repr(llvm.Float(0.0) / llvm.Float(0.0, 0.0))",
    "Float str": "str(llvm.Float(1.5, 2, 3))",
    "Float16": "repr(llvm.Float16(1.5, 0.1, 65504))",
    "UInt": "repr(llvm.UInt(1, 2, 4294967295))",
    "Int": "repr(llvm.Int(-1, 5, -2147483648))",
    "Int64": "repr(llvm.Int64(-2**40, 2**62))",
    "UInt64": "repr(llvm.UInt64(2**63, 2**64 - 1))",
    "Bool": "repr(llvm.Bool(True, False))",
    "Bool str": "str(llvm.Bool(True, False, True))",
    "arange 20": "repr(dr.arange(llvm.Int, 20))",
    "arange 21": "repr(dr.arange(llvm.Int, 21))",
    "arange 30": "repr(dr.arange(llvm.Float, 30))",
    "arange 1000 float": "repr(dr.arange(llvm.Float, 1000) * 0.5)",
    "unevaluated": "repr(dr.arange(llvm.Float, 5) * 2 + 1)",
    "literal wide": "repr(dr.full(llvm.Float, 2.5, 4))",
    "literal wide long": "repr(dr.full(llvm.UInt, 7, 25))",
    "Array3f literal": "repr(llvm.Array3f(1, 2, 3))",
    "Array3f wide": "repr(llvm.Array3f([1, 2], [3, 4], [5, 6]))",
    "Array3f broadcast": "repr(llvm.Array3f(llvm.Float(1, 2), 3, llvm.Float(5, 6)))",
    "Array3f str": "str(llvm.Array3f(llvm.Float(1, 2), 3, llvm.Float(5, 6)))",
    "Array2u": "repr(llvm.Array2u(1, 2))",
    "Array3b": "repr(llvm.Array3b(True, False, True))",
    "Array4f64": "repr(llvm.Array4f64(1.5, 2, 3, 0.1))",
    "Array3f long": "repr(llvm.Array3f(dr.arange(llvm.Float, 30), dr.arange(llvm.Float, 30) * 2, 1))",
    "Array3f empty": "repr(llvm.Array3f())",
    "Array3f ad": "repr(ad.Array3f(1, 2, 3))",
    "Float ad": "repr(ad.Float(1, 2))",
    "Matrix2f": "repr(llvm.Matrix2f(1, 2, 3, 4))",
    "Matrix2f wide": "repr(llvm.Matrix2f(llvm.Float(1, 5), 2, 3, 4))",
    "Array22f": "repr(llvm.Array22f(1))",
    "Complex2f": "repr(llvm.Complex2f(llvm.Float(1, -2, 0), llvm.Float(-3, 0.5, -0.0)))",
    "Quaternion4f": "repr(llvm.Quaternion4f(llvm.Float(1, -2), -3, 0.5, -1))",
    "ArrayXf": "repr(llvm.ArrayXf(llvm.Float(1, 2), llvm.Float(3, 4)))",
    "scalar Array3f": "repr(scalar.Array3f(1, 2, 3))",
    "scalar ArrayXf": "repr(scalar.ArrayXf([1, 2, 3]))",
    "scalar Matrix2f": "repr(scalar.Matrix2f(1, 2, 3, 4))",
    "format value": "dr.format(llvm.Float(1, 2))",
    "format limit 30": "dr.format(dr.arange(llvm.Int, 30), limit=30)",
    "format limit 5": "dr.format(dr.arange(llvm.Int, 30), limit=5)",
    "format limit 1 of 7": "dr.format(dr.arange(llvm.Int, 7), limit=1)",
    "format limit 0": "dr.format(dr.arange(llvm.Int, 8), limit=0)",
    "format limit vector": "dr.format(llvm.Array2f(dr.arange(llvm.Float, 10), 1), limit=4)",
    "format dict": "dr.format({'a': llvm.Array3f(1, 2, 3)})",
    "format dict2": "dr.format({'a': llvm.Float(1, 2), 'b': 3, 'c': 'str', 'd': [llvm.Float(1), llvm.UInt(2)]})",
    "format list": "dr.format([llvm.Float(1, 2), llvm.Float(3)])",
    "format tuple": "dr.format((llvm.Float(1, 2), 5))",
    "format tuple1": "dr.format((llvm.Float(1),))",
    "format empty containers": "dr.format([[], {}, ()])",
    "format nested": "dr.format({'a': {'b': [llvm.Float(1), (llvm.Int(2), 'x')]}})",
    "format dataclass": "dr.format(Point(llvm.Float(1, 2), 3))",
    "format struct": "dr.format(Struct(llvm)())",
    "format int": "dr.format(5)", "format float": "dr.format(1.5)", "format float 1/3": "dr.format(1 / 3)",
    "format str": "dr.format('hello')", "format None": "dr.format(None)",
    "format bool": "dr.format(True)",
    "format numpy": "dr.format(np.array([1.0, 2.0]))",
    "format python list": "dr.format([0.1, 1 / 3, 1e20, True, None, 7])",
    "format strings in tuple": "dr.format(('a', \"b'c\"))",
    "format dict keys": "dr.format({1: 2.5, (1, 2): 'x'})",
    "format vectors in list": "dr.format([llvm.Array3f(1, 2, 3), llvm.Array3f([1, 2], [3, 4], [5, 6])])",
    "format fmt": "dr.format('{}:\\n{foo}', 'A', foo={'a': llvm.Array3f(1, 2, 3)})",
    "format eq": "dr.format('{foo=} {bar}', foo=1, bar=llvm.Float(1, 2))",
    "format eq expr": "dr.format('{x=}', x=llvm.Array2f(1, 2))",
    "format indexed": "dr.format('{0} {1} {0}', llvm.Float(1), 2)",
    "format extra args": "dr.format('x {} y {}', 1, 2, 3)",
    "format extra kwargs": "dr.format('x {a}', a=1, b=2)",
    "format escaped braces": "dr.format('{{}} {} }}', 1)",
    "format implicit then explicit": "dr.format('{} {0}', 1)",
    "format explicit then implicit": "dr.format('{0} {}', 1)",
    "format unmatched open": "dr.format('{', 1)",
    "format unmatched close": "dr.format('}', 1)",
    "format missing kwarg": "dr.format('{x}', 1)",
    "format missing index": "dr.format('{5}', 1)",
    "format missing implicit": "dr.format('{} {}', 1)",
    "format plain": "dr.format('plain')",
    "format no args": "dr.format()",
    "format array in text": "dr.format('x = {}!', llvm.Array3f(llvm.Float(1, 2), 3, 4))",
    "format nested in text": "dr.format('v: {}', [llvm.Float(1), 2])",
    "format active": "dr.format('{}', llvm.Float(1, 2, 3), active=llvm.Bool(True, False, True))",
    "format active vector": "dr.format('{}', llvm.Array2f(llvm.Float(1, 2, 3), 4), active=llvm.Bool(False, True, True))",
    "format active python": "dr.format('{} {}', llvm.Float(1, 2, 3), 7, active=llvm.Bool(True, False, False))",
    "format active none": "dr.format('{}', llvm.Float(1, 2, 3), active=llvm.Bool(False, False, False))",
    "format active False": "dr.format('{}', llvm.Float(1, 2, 3), active=False)",
    "format limit in fmt": "dr.format('{}', dr.arange(llvm.Int, 10), limit=4)",
    "print": "printed(lambda f: dr.print('a {}', llvm.Float(1, 2), file=f, end='!'))",
    "print value": "printed(lambda f: dr.print(llvm.Float(1, 2), file=f))",
    "print active": "printed(lambda f: dr.print('{x}', x=llvm.Float(1, 2, 3), active=llvm.Bool(True, False, True), file=f))",
    "print inactive": "printed(lambda f: dr.print('{x}', x=llvm.Float(1, 2, 3), active=llvm.Bool(False, False, False), file=f))",
    "print active False": "printed(lambda f: dr.print('{x}', x=llvm.Float(1, 2, 3), active=False, file=f))",
    "print limit": "printed(lambda f: dr.print(dr.arange(llvm.Int, 30), file=f, limit=100))",
    "print kwargs": "printed(lambda f: dr.print('{a} and {b}', a=1, b=llvm.UInt(2, 3), file=f))",
    "print python": "printed(lambda f: dr.print({'k': [1, 2.5]}, file=f))",
}

#: Helpers: results described as values (arrays as type + contents).
HELPERS = {
    "zeros_like Float": "dr.zeros_like(llvm.Float(1, 2))",
    "zeros_like Array3f": "dr.zeros_like(llvm.Array3f(llvm.Float(1, 2), 1, 1))",
    "zeros_like UInt": "dr.zeros_like(llvm.UInt(5, 6, 7))",
    "zeros_like Bool": "dr.zeros_like(llvm.Bool(True, True))",
    "zeros_like float": "dr.zeros_like(1.5)",
    "zeros_like int": "dr.zeros_like(3)",
    "zeros_like ad": "dr.zeros_like(ad.Float(1, 2, 3))",
    "zeros_like literal": "dr.zeros_like(llvm.Float(4))",
    "ones_like Float": "dr.ones_like(llvm.Float(1, 2))",
    "ones_like Array3f": "dr.ones_like(llvm.Array3f(llvm.Float(1, 2), 1, 1))",
    "ones_like Int64": "dr.ones_like(llvm.Int64(1, 2, 3))",
    "ones_like Bool": "dr.ones_like(llvm.Bool(False))",
    "ones_like float": "dr.ones_like(1.5)",
    "empty_like type": "type(dr.empty_like(llvm.UInt(1, 2, 3))).__name__",
    "empty_like size": "len(dr.empty_like(llvm.UInt(1, 2, 3)))",
    "empty_like Array3f shape": "dr.empty_like(llvm.Array3f(llvm.Float(1, 2), 1, 1)).shape",
    "copy Float": "dr.copy(llvm.Float(1, 2))",
    "copy tree": "dr.copy([llvm.Float(1), {'a': 2, 'b': (llvm.UInt(3), 'x')}])",
    "copy int": "dr.copy(5)",
    "copy is new": "(lambda x: dr.copy(x) is not x)(llvm.Float(1, 2))",
    "copy independent": "(lambda x: (lambda y: (dr.scatter(y, 9.0, llvm.UInt(0)), x[0], y[0])[1:])(dr.copy(x)))(llvm.Float(1, 2))",
    "copy vector": "dr.copy(llvm.Array3f(1, 2, 3))",
    "copy struct": "(lambda s: (lambda c: (type(c).__name__, c is not s, c.x[1], c.y.z[0]))(dr.copy(s)))(Struct(llvm)())",
    "copy keeps grad": "(lambda x: (dr.enable_grad(x), dr.grad_enabled(dr.copy(x)))[1])(ad.Float(1, 2))",
    "allclose equal": "dr.allclose(llvm.Float(1, 2), [1, 2.00001])",
    "allclose not": "dr.allclose(llvm.Float(1, 2), [1, 2.1])",
    "allclose scalars": "dr.allclose(1, 1.0000001)",
    "allclose scalars not": "dr.allclose(1, 1.001)",
    "allclose lists": "dr.allclose([1, 2], [1, 2])",
    "allclose list sizes": "dr.allclose([1, 2], [1, 2, 3])",
    "allclose list broadcast": "dr.allclose([1], [1, 1, 1])",
    "allclose nested lists": "dr.allclose([[1, 2], [3, 4]], [[1, 2], [3, 4.1]])",
    "allclose array sizes": "dr.allclose(llvm.Float(1, 2), llvm.Float(1, 2, 3))",
    "allclose mask": "dr.allclose(llvm.Bool(True), True)",
    "allclose mask not": "dr.allclose(llvm.Bool(True, False), True)",
    "allclose nan": "dr.allclose(llvm.Float(float('nan')), float('nan'))",
    "allclose nan equal": "dr.allclose(llvm.Float(float('nan')), float('nan'), equal_nan=True)",
    "allclose scalar nan": "dr.allclose(float('nan'), float('nan'), equal_nan=True)",
    "allclose inf": "dr.allclose(llvm.Float(float('inf'), 1), [float('inf'), 1])",
    "allclose rtol f32": "dr.allclose(llvm.Float(1000), 1000.9)",
    "allclose rtol f32 not": "dr.allclose(llvm.Float(1000), 1001.1)",
    "allclose rtol f64": "dr.allclose(llvm.Float64(1000), 1000.009)",
    "allclose rtol f64 not": "dr.allclose(llvm.Float64(1000), 1000.011)",
    "allclose atol": "dr.allclose(llvm.Float(0), 1e-6)",
    "allclose atol arg": "dr.allclose(llvm.Float(0), 0.1, atol=0.2)",
    "allclose rtol arg": "dr.allclose(llvm.Float(10), 11, rtol=0.2)",
    "allclose vector": "dr.allclose(llvm.Array3f(1, 2, 3), llvm.Array3f(1, 2, 3.0001))",
    "allclose vector list": "dr.allclose(llvm.Array3f(1, 2, 3), [1, 2, 3])",
    "allclose int arrays": "dr.allclose(llvm.UInt(1, 2), llvm.UInt(1, 2))",
    "allclose numpy": "dr.allclose(llvm.Float(1, 2), np.array([1.0, 2.0]))",
    "allclose ad": "dr.allclose(ad.Float(1, 2), ad.Float(1, 2))",
    "allclose type": "type(dr.allclose(llvm.Float(1, 2), llvm.Float(1, 2))).__name__",
    "assert_allclose ok": "dr.assert_allclose(llvm.Float(1, 2), [1, 2])",
    "assert_allclose fails": "dr.assert_allclose(llvm.Float(1, 2, 3), [1, 2.5, 3])",
    "assert_allclose fails msg": "dr.assert_allclose(llvm.Float(1, 2), [1, 3], err_msg='oops')",
    "assert_allclose scalars": "dr.assert_allclose(1.0, 2.0)",
    "assert_allclose vector": "dr.assert_allclose(llvm.Array2f(1, 2), llvm.Array2f(1, 2.5))",
    "assert_true off": "dr.assert_true(llvm.Bool(True, False))",
    "assert_true ok": "debug(lambda: dr.assert_true(llvm.Bool(True, True)))",
    "assert_true bool ok": "debug(lambda: dr.assert_true(True))",
    "assert_true bool fails": "debug(lambda: dr.assert_true(False))",
    "assert_true fails": "debug(lambda: dr.assert_true(llvm.Bool(True, False)))",
    "assert_true message": "debug(lambda: dr.assert_true(x >= 0, 'Found negative values: {}', x))",
    "assert_true kwargs": "debug(lambda: dr.assert_true(x >= 0, 'neg {v}', v=x))",
    "assert_false fails": "debug(lambda: dr.assert_false(x < 0, 'negative: {}', x))",
    "assert_false ok": "debug(lambda: dr.assert_false(x > 100))",
    "assert_false bool": "debug(lambda: dr.assert_false(True))",
    "assert_equal ok": "debug(lambda: dr.assert_equal(llvm.Float(1, 2), llvm.Float(1, 2)))",
    "assert_equal fails": "debug(lambda: dr.assert_equal(llvm.Float(1, 2, 3), llvm.Float(1, 5, 3)))",
    "assert_equal message": "debug(lambda: dr.assert_equal(llvm.Float(1, 2, 3), 2, 'not two: {}', llvm.Float(1, 2, 3)))",
    "assert_equal scalars": "debug(lambda: dr.assert_equal(1, 2))",
    "sqr": "dr.sqr(llvm.Float(3, -2))",
    "sqr int": "dr.sqr(llvm.Int(3, -2))",
    "sqr scalar": "dr.sqr(1.5)",
    "mulsign": "dr.mulsign(llvm.Float(1, 2, 3, 4), llvm.Float(-1, 0.0, -0.0, float('nan')))",
    "mulsign scalar": "dr.mulsign(llvm.Float(1, 2), -0.0)",
    "mulsign python": "dr.mulsign(2.0, -3.0)",
    "mulsign int": "dr.mulsign(llvm.Int(1, 2), llvm.Int(-1, 1))",
    "mulsign vector": "dr.mulsign(llvm.Array2f(1, 2), llvm.Float(-1, 1))",
    "sign": "dr.sign(llvm.Float(-0.0, 0.0, -1, 2, float('nan'), -float('inf')))",
    "sign int": "dr.sign(llvm.Int(-3, 0, 3))",
    "sign python": "dr.sign(-2.5)",
    "sign vector": "dr.sign(llvm.Array2f(-1, 1))",
    "all_nested": "dr.all_nested(llvm.Array3b(True, llvm.Bool(True, False), True))",
    "any_nested": "dr.any_nested(llvm.Array3b(False, llvm.Bool(True, False), False))",
    "none_nested": "dr.none_nested(llvm.Array3b(False, llvm.Bool(True, False), False))",
    "sum_nested": "dr.sum_nested(llvm.Array3f(llvm.Float(1, 2), 2, 3))",
    "prod_nested": "dr.prod_nested(llvm.Array3f(llvm.Float(1, 2), 2, 3))",
    "min_nested": "dr.min_nested(llvm.Array3f(llvm.Float(1, 2), 2, 3))",
    "max_nested": "dr.max_nested(llvm.Array3f(llvm.Float(1, 2), 2, 3))",
    "sum_nested Float": "dr.sum_nested(llvm.Float(1, 2, 3))",
    "nested warns": "warns(lambda: dr.sum_nested(llvm.Float(1)))",
    "clamp": "dr.clamp(llvm.Float(-1, 0.5, 2), 0, 1)",
    "clamp warns": "warns(lambda: dr.clamp(llvm.Float(1), 0, 1))",
    "inverse": "dr.inverse(llvm.Float(2, 4))",
    "inverse warns": "warns(lambda: dr.inverse(llvm.Float(2)))",
    "sqr warns": "warns(lambda: dr.sqr(llvm.Float(1)))",
    "kernel_history_clear": "dr.kernel_history_clear()",
    "kernel_history after clear": "(lambda: (dr.set_flag(dr.JitFlag.KernelHistory, True), dr.eval(dr.arange(llvm.Float, 7) + 1), "
                                  "dr.kernel_history_clear(), dr.kernel_history(), dr.set_flag(dr.JitFlag.KernelHistory, False))[3])()",
    "flush_thread": "dr.flush_thread()",
    "sync_thread": "dr.sync_thread()",
    "has_backend LLVM": "dr.has_backend(dr.JitBackend.LLVM)",
    "has_backend type": "type(dr.has_backend(dr.JitBackend.LLVM)).__name__",
    "has_backend CUDA": "dr.has_backend(dr.JitBackend.CUDA)",
    "has_backend Invalid": "dr.has_backend(dr.JitBackend.Invalid)",
    "has_backend str": "dr.has_backend('llvm')",
    "thread_count type": "type(dr.thread_count()).__name__",
    "thread_count set": "restore_threads(lambda: (dr.set_thread_count(3), dr.thread_count())[1])",
    "thread_count set 0": "restore_threads(lambda: (dr.set_thread_count(0), dr.thread_count())[1])",
    "thread_count set 1": "restore_threads(lambda: (dr.set_thread_count(1), dr.thread_count())[1])",
    "thread_count set -1": "restore_threads(lambda: dr.set_thread_count(-1))",
    "thread_count set float": "restore_threads(lambda: dr.set_thread_count(2.5))",
    "thread_count runs": "restore_threads(lambda: (dr.set_thread_count(2), dr.sum(dr.arange(llvm.UInt, 200000) & 1))[1])",
    "log_level default": "dr.log_level()",
    "log_level set": "restore_log(lambda: (dr.set_log_level(dr.LogLevel.Info), dr.log_level())[1])",
    "log_level set int": "restore_log(lambda: (dr.set_log_level(5), dr.log_level())[1])",
    "log_level set bad int": "restore_log(lambda: dr.set_log_level(17))",
    "log_level set str": "restore_log(lambda: dr.set_log_level('Warn'))",
    "log_level set Disable": "restore_log(lambda: (dr.set_log_level(dr.LogLevel.Disable), dr.log_level())[1])",
    "whos string": "type(dr.whos(as_string=True)).__name__",
    "whos label": "(lambda x: (setattr(x, 'label', 'my_whos_label'), 'my_whos_label' in dr.whos(as_string=True))[1])(llvm.Float(1, 2))",
    "whos prints": "(lambda f: f() is None)(lambda: dr.whos())",
    "graphviz string": "dr.graphviz(as_string=True).lstrip().startswith('digraph')",
    "graphviz label": "(lambda x: (setattr(x, 'label', 'my_gv_label'), 'my_gv_label' in dr.graphviz(as_string=True))[1])(llvm.Float(1, 2) + 1)",
    "newaxis": "dr.newaxis is None",
}

#: Numerical helpers: compared within a float32 tolerance (their transcendental functions are
#: not Dr.Jit's to the last bit).
NUMERIC = {
    "abs_dot": "dr.abs_dot(llvm.Array3f(1, 2, 3), llvm.Array3f(-1, -1, llvm.Float(-1, 2)))",
    "unit_angle": "dr.unit_angle(llvm.Array3f(1, 0, 0), llvm.Array3f(llvm.Float(0, 1, -1, 0.6), "
                  "llvm.Float(1, 0, 0, 0.8), 0))",
    "unit_angle nearly parallel": "dr.unit_angle(llvm.Array3f(1, 0, 0), dr.normalize(llvm.Array3f(1, 1e-4, 0)))",
    "unit_angle nearly opposite": "dr.unit_angle(llvm.Array3f(1, 0, 0), dr.normalize(llvm.Array3f(-1, 1e-4, 0)))",
    "sphdir": "dr.sphdir(llvm.Float(0, 0.5, 3.0), llvm.Float(1.0, 2.0, 6.0))",
    "srgb_to_linear": "dr.srgb_to_linear(llvm.Float(-0.3, 0, 0.01, 0.04045, 0.5, 1, 1.2))",
    "srgb_to_linear no clip": "dr.srgb_to_linear(llvm.Float(-0.3, 0, 0.01, 0.5, 1.2), clip=False)",
    "linear_to_srgb": "dr.linear_to_srgb(llvm.Float(-0.3, 0, 0.001, 0.0031308, 0.5, 1, 1.2))",
    "linear_to_srgb no clip": "dr.linear_to_srgb(llvm.Float(-0.3, 0, 0.001, 0.5, 1.2), clip=False)",
    "srgb vector": "dr.srgb_to_linear(llvm.Array3f(0.1, 0.5, 0.9))",
    "oklab": "dr.linear_srgb_to_oklab(llvm.Array3f(llvm.Float(0.2, 1, 0, 0.5), llvm.Float(0.5, 1, 0, 0.1), "
             "llvm.Float(0.7, 1, 1, 0.0)))",
    "oklab rgba": "dr.linear_srgb_to_oklab(llvm.Array4f(0.2, 0.5, 0.7, 0.25))",
    "oklab inverse": "dr.oklab_to_linear_srgb(llvm.Array3f(llvm.Float(0.5, 1, 0.3), llvm.Float(0.1, 0, -0.1), "
                     "llvm.Float(-0.05, 0, 0.2)))",
    "oklab round trip": "dr.oklab_to_linear_srgb(dr.linear_srgb_to_oklab(llvm.Array3f(0.2, 0.5, 0.7)))",
    "step": "dr.step(llvm.Float(1, 2, 3), 2)",
    "step python": "dr.step(1, 2)",
    "step vector": "dr.step(llvm.Array2f(1, 3), llvm.Float(2))",
    "step int": "dr.step(llvm.UInt(1, 5), 3)",
    "relative_grad": "(lambda x: (dr.enable_grad(x), dr.backward(dr.relative_grad(x)), dr.grad(x))[2])"
                     "(ad.Float(2.0, 0.0, -4.0))",
    "relative_grad value": "dr.relative_grad(ad.Float(2.0, 0.0))",
}

# The reference sessions each case runs in expect these names (see namespace()).
X_VALUES = "llvm.Float(1, -4, -2, 3)"


@dataclasses.dataclass
class Point:
    """A dataclass (a PyTree for both systems; printed with its own repr by dr.format)."""
    x: object
    y: object


def Struct(mod):
    """A ``DRJIT_STRUCT`` class over the array types of ``mod`` (one class per module)."""
    cls = _structs.get(mod)
    if cls is None:
        class Struct:
            DRJIT_STRUCT = {"x": mod.Float, "y": mod.Array3f}

            def __init__(self, x=None, y=None):
                self.x = mod.Float(1, 2) if x is None else x
                self.y = mod.Array3f(1, 2, 3) if y is None else y
        cls = _structs[mod] = Struct
    return cls


_structs: dict = {}


def namespace(dr, numpy_module=np) -> dict:
    """The names the case expressions see, for package ``dr`` (drjit or frostjit)."""
    import enum
    import io
    import warnings

    def printed(f):
        buf = io.StringIO()
        f(buf)
        return buf.getvalue()

    def debug(f):
        old = dr.flag(dr.JitFlag.Debug)
        dr.set_flag(dr.JitFlag.Debug, True)
        try:
            return f()
        finally:
            dr.set_flag(dr.JitFlag.Debug, old)

    def warns(f):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f()
        return sorted({c.category.__name__ for c in w})

    def restore_threads(f):
        old = dr.thread_count()
        try:
            return f()
        finally:
            dr.set_thread_count(old)

    def f32(values):
        with numpy_module.errstate(over="ignore"):      # 1e300 -> inf, on purpose
            return numpy_module.array(values).astype(numpy_module.float32)

    def restore_log(f):
        old = dr.log_level()
        try:
            return f()
        finally:
            dr.set_log_level(old)

    ns = {"dr": dr, "llvm": dr.llvm, "ad": dr.llvm.ad, "scalar": getattr(dr, "scalar", _Missing("scalar")),
          "np": numpy_module, "enum": enum, "Struct": Struct, "Point": Point, "FLOAT_SAMPLES": FLOAT_SAMPLES,
          "printed": printed, "debug": debug, "warns": warns, "restore_threads": restore_threads,
          "restore_log": restore_log, "f32": f32}
    try:
        ns["x"] = eval(X_VALUES, ns)
    except Exception:       # noqa: BLE001  (a package without llvm.Float: the cases using x report it)
        pass
    return ns


class _Missing:
    """Stands for a module the package lacks: every attribute is missing."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, item):
        raise AttributeError(f"module {self._name!r} does not exist")


def resolve(path: str, root):
    """The object at dotted ``path`` (``"llvm.ad.Float"``) under package ``root``."""
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def type_name(tp, root) -> str:
    """A class as ``"T:llvm.Float"``: its module under the package, and its shortest alias there.

    Two systems agree on a type when they give it the same path, whatever the class's
    ``__name__`` (Dr.Jit's ``Float`` class is ``Float32`` in frostjit: both are ``llvm.Float``).
    """
    pkg = root.__name__
    mod = getattr(tp, "__module__", "") or ""
    if getattr(root, getattr(tp, "__name__", ""), None) is tp:
        return f"T:{tp.__name__}"       # a public class of the package (VarType, ArrayBase, ...)
    if mod == pkg or mod.startswith(pkg + "."):
        rel = mod[len(pkg) + 1:] if mod != pkg else ""
        module = resolve(rel, root) if rel else root
        names = [n for n, v in vars(module).items() if v is tp and not n.startswith("_")]
        if names:
            best = min(names, key=lambda n: (len(n), n))
            return f"T:{rel + '.' if rel else ''}{best}"
        return f"T:{rel}?{tp.__name__}"
    if mod == "builtins":
        return f"T:{tp.__name__}"
    return f"T:{mod}.{getattr(tp, '__qualname__', tp.__name__)}"


def describe(value, root):
    """``value`` as JSON-able data, the same way for Dr.Jit and frostjit (see module docstring)."""
    import enum
    if isinstance(value, type):
        return type_name(value, root)
    if isinstance(value, enum.Enum):
        return f"E:{type(value).__name__}.{value.name}"
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return "F:" + repr(value)
    if isinstance(value, (list, tuple)):
        return [describe(v, root) for v in value]
    if isinstance(value, dict):
        return {"dict": [[describe(k, root), describe(v, root)] for k, v in value.items()]}
    if hasattr(value, "__array__") and type(value).__module__.startswith(root.__name__):
        a = np.asarray(value)
        if a.ndim > 1 and ".scalar" not in type(value).__module__:
            a = np.moveaxis(a, -1, 0)       # lanes first, as both systems print them
        return {"array": type_name(type(value), root), "values": _values(a)}
    return {"other": type(value).__name__}


def _values(a: np.ndarray):
    """An array's values as nested lists, floats by repr (exact, NaN and -0 included)."""
    if a.ndim == 0:
        v = a.item()
        if isinstance(v, complex):
            return ["F:" + repr(v.real), "F:" + repr(v.imag)]
        return "F:" + repr(float(v)) if isinstance(v, float) else v
    return [_values(x) for x in a]


def run(expr: str, ns: dict, root):
    """Evaluate ``expr``; the described result, or ``{"raises": ExceptionName}``."""
    try:
        value = eval(expr, ns)
    except Exception as e:      # noqa: BLE001  (the exception type is the result)
        out = {"raises": type(e).__name__}
        if isinstance(e, AssertionError):
            out["message"] = str(e)
        return out
    return describe(value, root)


def float_close(a, b) -> bool:
    """Two described floats ("F:..."): equal, or both NaN."""
    x, y = float(a[2:]), float(b[2:])
    return x == y and math.copysign(1, x) == math.copysign(1, y) or (x != x and y != y)
