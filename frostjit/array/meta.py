"""What an array type is, declared once per class: :class:`ArrayMeta` (Dr.Jit's ``__meta__``).

Every frostjit array class carries ``__meta__``, an :class:`ArrayMeta` naming its element type,
backend, AD status, kind (plain array, matrix, complex, quaternion, tensor) and static shape.
The type traits (:mod:`frostjit.traits`), the type registry (:mod:`.registry`), printing and
the constants read it; nothing else decides what a class is.  An array family (the static,
nested, dynamic, matrix, complex and quaternion types of :mod:`.families`, tensors, the scalar
backend's: :mod:`frostjit.scalar`) plugs in by giving its classes a ``__meta__`` and registering them with
:func:`.registry.register_type`.

Also here: the public enumerations Dr.Jit exposes for types and variables, :class:`VarType`
and :class:`VarState`, and :data:`Dynamic`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from ..trace.dtypes import VarType as ElementType
from ..trace.state import JitBackend

#: Size of a dimension that is not fixed by the type (a JIT array's lanes, ``ArrayXf``).
Dynamic = -1


class VarType(enum.Enum):
    """Dr.Jit's scalar types, with Dr.Jit 1.5's values (``frostjit.VarType.Float32``).

    The members are names, not the engine's element types: ``frostjit.type_v(x)`` returns one.
    ``Int16``, ``UInt16`` and ``Pointer`` exist for compatibility; frostjit has no arrays of them.
    """

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``VarType.Member``

    Void = 0
    Bool = 1
    Int8 = 3
    UInt8 = 4
    Int16 = 5
    UInt16 = 6
    Int32 = 7
    UInt32 = 8
    Int64 = 9
    UInt64 = 10
    Pointer = 11
    Float16 = 13
    Float32 = 14
    Float64 = 15


class VarState(enum.Enum):
    """The state of the JIT variable behind an array (``x.state``), with Dr.Jit 1.5's values.

    ``Literal``: a constant folded into kernels; ``Evaluated``: in memory; ``Unevaluated``: a
    pending computation; ``Dirty``: in memory with pending scatters into it; ``Mixed``: a static
    vector whose components differ; ``Invalid``: an empty array.  ``Undefined`` and
    ``Symbolic`` exist for compatibility (frostjit creates no such variables).
    """

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``VarState.Member``

    Invalid = 0
    Literal = 2
    Undefined = 1
    Unevaluated = 3
    Evaluated = 4
    Dirty = 5
    Symbolic = 6
    Mixed = 7

    # frostjit's ``x.state`` used to be a lowercase word ("literal", "evaluated", "unevaluated");
    # a member still compares equal to its word, so code written against it keeps working.
    def __eq__(self, other):
        if isinstance(other, str):
            return other == self.name.lower()
        return self is other

    __hash__ = enum.Enum.__hash__


#: Size in bytes, signedness and kind of each VarType (the element-size traits read this).
VARTYPE_INFO = {
    VarType.Bool: (1, "bool"), VarType.Int8: (1, "int"), VarType.UInt8: (1, "uint"),
    VarType.Int16: (2, "int"), VarType.UInt16: (2, "uint"), VarType.Int32: (4, "int"),
    VarType.UInt32: (4, "uint"), VarType.Int64: (8, "int"), VarType.UInt64: (8, "uint"),
    VarType.Float16: (2, "float"), VarType.Float32: (4, "float"), VarType.Float64: (8, "float"),
}


def vartype_of(vt: ElementType) -> VarType:
    """The public :class:`VarType` of an engine element type."""
    return VarType[vt.name]


@dataclass(frozen=True, slots=True)
class ArrayMeta:
    """The type-level facts of one array class (Dr.Jit's ``ArrayMeta``).

    Attributes
    ----------
    vt : frostjit.trace.dtypes.VarType
        Element type of the innermost values.
    backend : JitBackend
        ``JitBackend.LLVM`` for ``frostjit.llvm`` types, ``JitBackend.Invalid`` for
        non-JIT (scalar) types.
    is_jit, is_diff : bool
        Traced by the JIT; AD-capable (``frostjit.llvm.ad``).
    is_vector, is_complex, is_quaternion, is_matrix, is_tensor : bool
        The kind: a static or dynamic vector of arrays (``Array3f``, ``ArrayXf``), a special
        arithmetic type, or a tensor.  All ``False``: a 1-D JIT array (``Float``).
    shape : tuple of int
        Sizes, outermost first, :data:`Dynamic` for a size the type leaves open: ``Float`` is
        ``(-1,)``, ``Array3f`` is ``(3, -1)``, ``Matrix4f`` ``(4, 4, -1)``, a scalar
        ``Array3f`` ``(3,)``, a tensor ``()``.

    Examples
    --------
    >>> frostjit.llvm.Array3f.__meta__.shape
    (3, -1)
    """

    vt: ElementType
    backend: JitBackend
    is_jit: bool = True
    is_diff: bool = False
    is_vector: bool = False
    is_complex: bool = False
    is_quaternion: bool = False
    is_matrix: bool = False
    is_tensor: bool = False
    shape: tuple = (Dynamic,)

    @property
    def kind(self) -> str:
        """``"array"``, ``"matrix"``, ``"complex"``, ``"quaternion"`` or ``"tensor"``."""
        return ("matrix" if self.is_matrix else "complex" if self.is_complex else
                "quaternion" if self.is_quaternion else "tensor" if self.is_tensor else "array")

    @property
    def is_special(self) -> bool:
        """Matrices, complex numbers and quaternions multiply differently from plain arrays."""
        return self.is_matrix or self.is_complex or self.is_quaternion

    def with_(self, **changes) -> "ArrayMeta":
        """A copy with some fields changed; ``kind="array"|"matrix"|...`` sets the kind flags."""
        kind = changes.pop("kind", None)
        if kind is not None:
            changes.update(is_matrix=kind == "matrix", is_complex=kind == "complex",
                           is_quaternion=kind == "quaternion", is_tensor=kind == "tensor",
                           # (a JIT type's last dimension is its lanes; a scalar type has none)
                           is_vector=kind == "array" and len(changes.get("shape", self.shape)) >
                           (1 if changes.get("is_jit", self.is_jit) else 0))
        return replace(self, **changes)

    def __contains__(self, text) -> bool:
        """``"shape=(3, *)" in Array3f.__meta__``: a substring test on :meth:`__str__`.

        Dr.Jit's ``__meta__`` is that string itself, and code selects types by matching
        fragments of it (its test suite's type queries do).
        """
        if not isinstance(text, str):
            raise TypeError(f"'in <ArrayMeta>' requires a str as left operand, not {type(text).__name__}")
        return text in str(self)

    def __str__(self) -> str:
        # Dr.Jit's layout: the fields that are set, one per line.
        lines = [f"type={self.vt.name.lower()}"]
        if self.backend is not JitBackend.Invalid:
            lines.append(f"backend={self.backend.name.lower()}")
        # (Dr.Jit's order: the kind flag before is_diff)
        for flag in ("is_jit", "is_vector", "is_complex", "is_quaternion", "is_matrix", "is_tensor",
                     "is_diff"):
            if getattr(self, flag):
                lines.append(f"{flag}=1")
        lines.append("shape=(" + ", ".join("*" if s == Dynamic else str(s) for s in self.shape) + ")")
        return "ArrayMeta[\n" + "".join(f"  {x},\n" for x in lines[:-1]) + f"  {lines[-1]}\n]"


def meta_of(tp) -> ArrayMeta | None:
    """The :class:`ArrayMeta` of an array class, or ``None`` for anything else."""
    m = getattr(tp, "__meta__", None)
    return m if isinstance(m, ArrayMeta) else None
