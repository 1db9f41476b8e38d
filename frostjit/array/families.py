"""Every array type family of a backend, made from one table (Dr.Jit 1.5's names).

The names are built as Dr.Jit builds them: an element suffix (``f`` Float32, ``f16``,
``f64``, ``i`` Int32, ``u`` UInt32, ``i64``, ``u64``, ``i8``, ``u8``, ``b`` Bool) after the
static sizes, outermost first:

========================  =========================================================
``Array{0..4}{suffix}``   static arrays of 1-D arrays, every element type
``Array{22,..,444}{s}``   nested static arrays (:data:`NESTED`), ``f``/``f16``/``f64``/``b``
``ArrayX{suffix}``        dynamic arrays (a Python-side list of 1-D arrays), every type
``Matrix{2,3,4}{s}``      square matrices whose rows are ``Array{n}{s}``
``Matrix{34,43,41,44}{s}``  ``n x n`` matrices whose entries are ``Array{m}{s}`` (a batch of
                          ``m`` matrices in one: ``Matrix34f``'s rows are ``Array34f``)
``Complex2{s}``           complex numbers (``f``, ``f64``)
``Quaternion4{s}``        quaternions ``xi + yj + zk + w`` (``f``, ``f16``, ``f64``)
========================  =========================================================

:func:`make_families` creates the classes of one backend and AD status after the 1-D
classes exist; AD modules share the classes whose leaves are not floats (``Array3b``).
Every class declares what it is in ``__meta__`` (kind, static shape: ``Matrix34f`` is
``(3, 3, 4, Dynamic)``) and is registered by it, so the type traits and printing know it.
"""
from __future__ import annotations

from ..trace import dtypes as dt
from . import registry
from .complex import ComplexBase
from .dynamic import DynamicBase
from .matrix import MatrixBase
from .meta import ArrayMeta, Dynamic
from .quaternion import QuaternionBase
from .vector import VectorBase

#: Element type -> the suffix of its array names.
SUFFIX = {dt.Float32: "f", dt.Float16: "f16", dt.Float64: "f64", dt.Int32: "i", dt.UInt32: "u", dt.Int64: "i64",
          dt.UInt64: "u64", dt.Int8: "i8", dt.UInt8: "u8", dt.Bool: "b"}
#: Sizes of the static arrays of 1-D arrays.
STATIC_SIZES = (0, 1, 2, 3, 4)
#: Nested static arrays (sizes outermost first) and the element types they exist for.
NESTED = ((2, 2), (3, 3), (4, 4), (3, 4), (4, 3), (4, 1), (3, 3, 4), (4, 4, 1), (4, 4, 3), (4, 4, 4))
NESTED_TYPES = (dt.Float32, dt.Float16, dt.Float64, dt.Bool)
#: Matrices: the sizes after ``Matrix`` (one digit: square matrices of 1-D entries; two digits
#: ``nm``: ``n x n`` matrices of ``Array{m}`` entries) and their element types.
MATRICES = ((2,), (3,), (4,), (3, 4), (4, 3), (4, 1), (4, 4))
MATRIX_TYPES = (dt.Float32, dt.Float16, dt.Float64)
COMPLEX_TYPES = (dt.Float32, dt.Float64)
QUATERNION_TYPES = (dt.Float32, dt.Float16, dt.Float64)


def _make(name: str, base: type, elem: type, n, family: str, module: str, ad: bool, doc: str) -> type:
    """The class ``name``: new, or (AD module, non-float leaves) the non-AD module's class."""
    leaf = elem if not issubclass(elem, VectorBase) else elem._leaf
    if ad and not leaf._vt.is_float:
        return registry.array_type(elem, n, family)      # shared with the non-AD module (elem is too)
    depth = 2 if leaf is elem else elem.Depth + 1
    inner = (Dynamic,) if leaf is elem else elem.__meta__.shape
    meta = ArrayMeta(leaf._vt, leaf._backend, is_jit=True, is_diff=ad, shape=(Dynamic if n is None else n,) + inner,
                     is_vector=family in ("array", "dynamic"), is_matrix=family == "matrix",
                     is_complex=family == "complex", is_quaternion=family == "quaternion")
    cls = type(name, (base,), {"__slots__": (), "_elem": elem, "_n": n, "_leaf": leaf, "_family": family,
                               "Depth": depth, "__module__": module, "__meta__": meta, "__doc__": doc})
    registry.register_array(family, elem, n, cls)
    registry.register_type(cls)
    return cls


def make_families(backend, module: str, ad: bool, flat: dict) -> dict:
    """Create (and register) the static, nested, dynamic, matrix, complex and quaternion types.

    Parameters
    ----------
    backend : JitBackend
    module : str
        The module the classes belong to (``frostjit.llvm`` or ``frostjit.llvm.ad``).
    ad : bool
        AD status: only types with float leaves are new classes; the others are shared
        with the non-AD module.
    flat : dict
        The 1-D classes by element type (``{VarType: class}``).

    Returns
    -------
    dict
        ``{name: class}``.
    """
    out: dict = {}
    for vt, s in SUFFIX.items():
        leaf = flat[vt]
        for n in STATIC_SIZES:
            name = f"Array{n}{s}"
            out[name] = _make(name, VectorBase, leaf, n, "array", module, ad, f"Static array of {n} {vt.name} arrays.")
            registry.register_vector(backend, vt, ad, n, out[name])
        name = f"ArrayX{s}"
        out[name] = _make(name, DynamicBase, leaf, None, "dynamic", module, ad,
                          f"Dynamic array of {vt.name} arrays (a Python-side list of them).")
    for vt in NESTED_TYPES:
        s = SUFFIX[vt]
        for sizes in NESTED:
            name = "Array" + "".join(map(str, sizes)) + s
            inner = out["Array" + "".join(map(str, sizes[1:])) + s]
            out[name] = _make(name, VectorBase, inner, sizes[0], "array", module, ad,
                              f"Static array of {sizes[0]} {inner.__name__}.")
    for vt in MATRIX_TYPES:
        s = SUFFIX[vt]
        for sizes in MATRICES:
            n = sizes[0]
            name = "Matrix" + "".join(map(str, sizes)) + s
            row = out["Array" + "".join(map(str, (n,) + sizes[1:])) + s]
            entries = "" if len(sizes) == 1 else f" of Array{sizes[1]}{s} entries"
            out[name] = _make(name, MatrixBase, row, n, "matrix", module, ad,
                              f"{n} x {n} matrix{entries}, row-major (rows: {row.__name__}).")
    for vt in COMPLEX_TYPES:
        name = f"Complex2{SUFFIX[vt]}"
        out[name] = _make(name, ComplexBase, flat[vt], 2, "complex", module, ad,
                          f"Complex numbers of {vt.name} (real part, imaginary part).")
    for vt in QUATERNION_TYPES:
        name = f"Quaternion4{SUFFIX[vt]}"
        out[name] = _make(name, QuaternionBase, flat[vt], 4, "quaternion", module, ad,
                          f"Quaternions xi + yj + zk + w of {vt.name} (components x, y, z, w).")
    return out
