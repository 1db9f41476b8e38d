"""Exception types of the array API.

Each derives from the built-in exceptions that NumPy and Dr.Jit raise in the
same situation, so code written against either keeps catching them.
"""
from __future__ import annotations


class AxisError(ValueError, IndexError, RuntimeError):
    """An ``axis=`` argument outside ``[-ndim, ndim)`` of the array it reduces
    (like ``numpy.exceptions.AxisError``; a ``RuntimeError`` as Dr.Jit raises, "out-of-bounds
    axis")."""


class KeepdimsError(ValueError, RuntimeError):
    """``keepdims=True`` for a reduction that would have to keep a static axis (an ``Array3f``'s
    components, a Python sequence's items): a ``ValueError``, and a ``RuntimeError`` as Dr.Jit
    raises ("'keepdims=True' is only supported for tensor types or reductions of a trailing
    dynamic axis")."""


class ConversionOverflowError(OverflowError, TypeError, RuntimeError):
    """A Python scalar that does not fit the element type it is converted to,
    e.g. ``UInt32(2**40)`` or ``UInt32(-1)``, or an operand that fits no type (``Int8(1) + 300``,
    ``Array3i(1) + 2**100``).

    An ``OverflowError`` as in Python and NumPy 2 (``np.uint32(2**40)``), and a
    ``TypeError`` as in Dr.Jit, which rejects such a value as not convertible (a
    ``RuntimeError`` where Dr.Jit's operators raise one: "Could not promote type 'int'").
    """


class UnsupportedOperandError(TypeError, RuntimeError):
    """An operand of an arithmetic operator or function that is no array, number or sequence
    (``Float(1) + "a"``).

    A ``TypeError`` as Python raises, and a ``RuntimeError`` as Dr.Jit raises ("Encountered an
    unsupported argument of type 'str'")."""


class FilterArgumentError(ValueError, RuntimeError):
    """An invalid argument of ``resample``/``convolve``/``upsample`` (an unknown filter or
    boundary mode, a missing or extra ``filter_radius``, an empty kernel, a shape of the wrong
    rank): a ``ValueError``, and a ``RuntimeError`` as Dr.Jit raises."""


class GradSizeError(RuntimeError, ValueError):
    """A gradient whose size fits neither the AD variable it is given to nor 1, e.g.
    ``set_grad(Float(1, 2), Float(1, 2, 3))``, or ``replace_grad`` of two arrays of
    incompatible sizes.

    A ``RuntimeError`` as in Dr.Jit, and a ``ValueError`` (a wrong value, not a
    wrong type) as frostjit raised before.
    """


class GradArgumentError(RuntimeError, TypeError):
    """Arguments of an AD function that do not go together, e.g. ``replace_grad`` of a
    ``Float`` and a ``UInt32`` or of two dicts with different keys.

    A ``RuntimeError`` as in Dr.Jit, and a ``TypeError`` as frostjit raised before.
    """


class OptimizerArgumentError(ValueError, RuntimeError):
    """A hyper-parameter of an optimizer (``frostjit.opt``) outside its range, e.g.
    ``Adam(lr=0.1, beta_1=1.5)``, or a parameter it cannot optimize.

    A ``ValueError`` (a wrong value), and a ``RuntimeError`` as Dr.Jit raises there.
    """


class IncompatibleArgumentsError(TypeError, ValueError, RuntimeError):
    """Operands that cannot combine: static arrays of different sizes (``Array3f + Array4f``), a
    complex number and an ``Array3f``.

    A ``TypeError`` (the sizes are part of the types) and a ``ValueError`` (dynamic arrays' sizes
    are values) as frostjit raised before, and a ``RuntimeError`` as Dr.Jit raises
    ("Incompatible arguments")."""


class ShapeMismatchError(ValueError, RuntimeError):
    """A ``shape=`` that does not fit the requested type (``zeros(Float, (100, 200))``).

    A ``ValueError`` as in NumPy, and a ``RuntimeError`` as Dr.Jit raises ('the provided "shape"
    and "dtype" parameters are incompatible')."""


class LayoutArgumentError(ValueError, RuntimeError):
    """A memory layout ``ravel``/``unravel``/``reshape`` cannot produce: an ``order`` other than
    ``"A"``, ``"C"``, ``"F"``, a ragged static vector, a size that is no multiple of the type's.

    A ``ValueError`` as frostjit raised before, and a ``RuntimeError`` as Dr.Jit raises ("order
    parameter must equal ...", "ragged input not allowed", "not divisible")."""


class RaggedArrayError(ValueError, RuntimeError):
    """An array or nested sequence whose entries do not have one shape (``shape([[1, 2], [3, 4, 5]])``,
    ``Array3f`` components of widths 2 and 3): sizes may differ only where one of them is 1.

    A ``ValueError`` as frostjit raised before, and a ``RuntimeError`` as Dr.Jit raises ("the input
    is ragged")."""


class SizeMismatchError(ValueError, TypeError):
    """An input whose number of entries does not fit what it initializes: a tensor's ``shape``
    for 4 values, a ragged nested list, a NumPy array of shape ``(4, 2)`` for an ``Array3f``.

    A ``ValueError`` as NumPy's ``reshape`` raises, and a ``TypeError`` as Dr.Jit's constructors
    raise ("Input array has the wrong number of entries")."""


class TensorIndexError(IndexError, RuntimeError):
    """A tensor index out of bounds or too many indices (``t[20]`` of 10 entries).

    An ``IndexError`` as NumPy's, and a ``RuntimeError`` as Dr.Jit's ``slice_index`` raises."""


class LocalIndexError(IndexError, RuntimeError):
    """A Python ``int`` index out of range of a ``fj.Local`` buffer (``buf[100]`` of 10 entries).

    An ``IndexError`` as Python's sequences raise, and a ``RuntimeError`` as Dr.Jit's
    ``Local.read``/``write`` raise ("out of bounds read (source size=10, offset=100)")."""


class TensorIndexTypeError(TypeError, RuntimeError):
    """An index of a type a tensor cannot be indexed with (a string, a float).

    A ``TypeError`` as NumPy's, and a ``RuntimeError`` as Dr.Jit's ``slice_index`` raises."""


class TensorRankError(TypeError, ValueError):
    """A tensor view defined only for some ranks: ``t.T`` of a tensor that is not 2-D, ``t.mT``
    of one with fewer than 2 dimensions.

    A ``TypeError`` as Dr.Jit 1.5 raises ("'.T' is only defined for 2-D tensors"), and a
    ``ValueError`` as frostjit raised before session r16."""


class ReductionTypeError(TypeError, RuntimeError):
    """An operand a reduction is not defined for: ``sum`` of a ``Bool`` array, ``all`` of a
    ``Float``, ``count`` of a ``Float``, ``compress`` of a non-mask.

    A ``TypeError`` as frostjit raised before, and a ``RuntimeError`` as Dr.Jit raises ("array
    type is not compatible with the requested reduction")."""


class ComponentError(AttributeError, RuntimeError):
    """A component the array does not have (``Array3f(...).w``, ``Float(...).x``).

    An ``AttributeError`` so that ``hasattr`` and ``getattr(v, "w", default)`` work, and a
    ``RuntimeError`` as Dr.Jit raises ("does not have a 'w' component")."""


class IncompatibleSizesError(ValueError, RuntimeError):
    """Operands of an elementwise operation whose sizes neither match nor broadcast
    (``Float(1, 2, 3) + Float()``). A ``ValueError``, and a ``RuntimeError`` as Dr.Jit raises
    ("operands have incompatible sizes")."""


class ReinterpretSizeError(TypeError, RuntimeError):
    """``reinterpret_array`` between element types of different bit widths (``Float32`` as
    ``UInt64``). A ``TypeError``, and a ``RuntimeError`` as Dr.Jit raises."""


class NotComplexError(AttributeError, TypeError):
    """``v.imag = ...`` on an array that is not complex-valued (``Array3f``, ``Float``).

    An ``AttributeError`` (the array has no ``imag``: ``hasattr`` is ``False``) and a
    ``TypeError`` as Dr.Jit raises ("... is not complex-valued")."""


def out_of_memory(type_name: str, count: int, itemsize: int, action: str = "allocate") -> MemoryError:
    """The ``MemoryError`` to raise when an array of ``count`` elements cannot be allocated:
    it names the frostjit type, the element count and the size in bytes (NumPy's own message
    names a ``uint8`` buffer and says nothing of the array the user asked for)."""
    nbytes = count * itemsize
    return MemoryError(f"frostjit: out of memory: cannot {action} a {type_name} array of {count:,} elements "
                       f"({_format_bytes(nbytes)}, {nbytes:,} bytes)")


def _format_bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.2f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
