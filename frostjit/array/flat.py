"""1-D JIT arrays (``Float``, ``UInt32``, ...): construction, operators, conversion.

An array is a thin handle on a trace :class:`~frostjit.trace.node.Node`.  Every
operation goes through :func:`apply`, which types the operands by the op table's rules
(Dr.Jit's promotion, :mod:`.promotion`), creates the node through the trace's one door
(:mod:`frostjit.trace.ops`) and, for AD arrays, tells the AD graph; the Python operators
take a fast path for operands that need no conversion (decided once per operation,
class and operand kind).  Reading values (``x[i]``, ``.numpy()``, printing) evaluates.
"""
from __future__ import annotations

import numpy as np

from ..backend import current_backend as _backend
from ..errors import (ComponentError, ConversionOverflowError, NotComplexError, UnsupportedOperandError,
                      out_of_memory)
from ..schedule.evaluate import evaluate as _evaluate
from ..trace import ops
from ..trace.dtypes import Bool, Float32, Float64, VarType, promote, from_numpy_dtype
from ..trace.node import Node
from ..trace.optable import COMPARISONS, OPS, ROUNDING, SAME_TYPE, TypeRule, node_op
from ..trace.state import state
from . import eager, export, promotion, registry, variables
from .foreign import foreign_operand, foreign_to_numpy, is_foreign_array
from .labels import label_of, set_label_of
from .printing import format_array

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _type_name(x) -> str:
    return type(x).__name__


class ArrayBase:
    """Base class of every 1-D JIT array type.

    Class attributes set by the concrete types: ``_vt`` (element
    :class:`~frostjit.trace.dtypes.VarType`), ``_backend``
    (:class:`~frostjit.JitBackend`) and ``_is_ad`` (AD-enabled type).
    """

    __slots__ = ("_node", "_ad")
    _eager_flat = False     # (True on the scalar backend's ArrayX*: memory functions test it, cheaply)
    _vt: VarType = None
    _backend = None
    _is_ad = False
    IsJIT = True
    IsVector = False
    IsTensor = False    # (a class attribute: the engine's "is it a tensor" checks never raise)
    Depth = 1

    # -- construction ---------------------------------------------------
    def __init__(self, *args):
        self._ad = None
        vt = self._vt
        if len(args) == 0:
            self._node = _data_from_numpy(np.zeros(0, vt.np_dtype), vt)
            return
        if len(args) > 1:
            self._node = _data_from_sequence(args, vt)
            return
        v = args[0]
        if isinstance(v, ArrayBase):
            if v._backend is not self._backend:
                raise TypeError(f"{type(self).__name__}(): cannot convert a {type(v).__name__} of backend "
                                f"{v._backend} to backend {self._backend}")
            self._node = ops.cast(v._node, vt)
            if self._is_ad and v._ad is not None and vt.is_float:
                state.ad_hook.on_op("cast", self, (v,))
        elif isinstance(v, _SCALARS):
            self._node = ops.literal(vt, _scalar_value(v, vt, type(self).__name__))
        elif isinstance(v, np.ndarray):
            self._node = _data_from_numpy(v, vt)
        elif getattr(type(v), "IsTensor", False) and isinstance(getattr(v, "array", None), ArrayBase):
            # a JIT tensor: its flat array, derivatives kept (as Dr.Jit; read through NumPy as a
            # foreign array they were dropped); a 2-D one is refused, as in Dr.Jit
            if len(v.shape) > 1:
                raise TypeError(f"{type(self).__name__}(): dimensionality mismatch (target has 1, source has "
                                f"{len(v.shape)} dimensions)")
            self.__init__(v.array)
        elif is_foreign_array(v):
            self._node = _data_from_numpy(foreign_to_numpy(v), vt)
        elif isinstance(v, (list, tuple, range)):
            self._node = _data_from_sequence(v, vt)
        elif hasattr(v, "__array__"):
            self._node = _data_from_numpy(np.asarray(v), vt)
        elif hasattr(v, "__symbolic_size__"):   # a width inside a frozen function (frostjit.freeze)
            self._node = ops.literal(vt, v)
        elif _is_iterable(v):                   # a generator, an iterator, ... (Dr.Jit takes them)
            self._node = _data_from_sequence(list(v), vt)
        else:
            raise TypeError(f"{type(self).__name__}(): cannot construct from an object of type {_type_name(v)}")

    @classmethod
    def _from_node(cls, node: Node):
        out = cls.__new__(cls)
        out._node = node
        out._ad = None
        return out

    # -- introspection --------------------------------------------------
    @property
    def Type(self) -> VarType:
        return self._vt

    # Dr.Jit's view of the variable behind the handle (frostjit.array.variables keeps it).
    @property
    def state(self):
        """The :class:`frostjit.VarState` of the variable: ``Literal``, ``Evaluated``, ``Dirty``,
        ``Unevaluated``, or ``Invalid`` when the array is empty."""
        return variables.state_of(self._node)

    @property
    def index(self) -> int:
        """The variable's number (a positive int, shared by every handle on the variable)."""
        return variables.index_of(self._node)

    @property
    def index_ad(self) -> int:
        """The AD variable's number, 0 when the array carries no gradient."""
        return 0 if self._ad is None else self._ad.id

    @property
    def label(self) -> str | None:
        """The variable's label (``None`` if it has none), shown by ``fj.graphviz``/``fj.whos``."""
        return label_of(self._node)

    @label.setter
    def label(self, value: str) -> None:
        set_label_of(self._node, value)

    @property
    def ndim(self) -> int:
        """1: a 1-D array has one axis."""
        return 1

    @property
    def array(self) -> "ArrayBase":
        """Dr.Jit's ``.array``: a 1-D array is its own (a tensor's is its flat storage)."""
        return self

    def item(self):
        """The only element as a Python scalar (``RuntimeError`` unless the size is 1)."""
        return self._scalar("item()")

    # -- AD and debugging (Dr.Jit's properties; the AD package answers through state.ad_hook)
    @property
    def grad(self):
        """The gradient (``fj.grad(self)``: zeros if none); assigning it calls ``fj.set_grad``."""
        return state.ad_hook.grad(self)

    @grad.setter
    def grad(self, value) -> None:
        state.ad_hook.set_grad(self, value)

    @property
    def label(self) -> str | None:
        """The variable's label (``None`` if it has none), shown by ``fj.graphviz_ad``/``fj.whos_ad``."""
        return label_of(self._node)

    @label.setter
    def label(self, value: str) -> None:
        set_label_of(self._node, value)

    def __len__(self) -> int:
        rec = state.recorder
        if rec is not None:
            return rec.on_len(self._node)   # a frozen function guards the width it leaks
        return self._node.size

    @property
    def shape(self) -> tuple:
        return (len(self),)

    # -- conversion back to Python / NumPy --------------------------------
    def _buffer_node(self) -> Node:
        """Evaluate (flushing pending scatters into this array) and return the data or literal node."""
        node = self._node
        if node.op != "data" and node.op != "literal" or node in state.dirty:
            _evaluate((node,))
        return self._node

    def numpy(self) -> np.ndarray:
        """Evaluate and return a writable NumPy view of the contents (Dr.Jit's LLVM backend: a
        write into it changes the array; a later scatter into the array copies first, so the
        view keeps its values; see :mod:`.export`).  A literal (``fj.zeros``) is first made
        memory (``make_opaque``), as Dr.Jit evaluates it."""
        node = self._buffer_node()
        if node.op == "literal":
            try:
                literal_to_memory(self)
            except MemoryError:
                raise out_of_memory(self._vt.name, node.size, self._vt.itemsize, "export to NumPy") from None
        return self._values()

    def _values(self) -> np.ndarray:
        """The contents for reading (printing, iteration): :meth:`numpy`'s view, except that a
        literal stays a literal and gives a new array (Dr.Jit's ``print``, ``list(x)`` leave it)."""
        node = self._buffer_node()
        rec = state.recorder
        if rec is not None:
            rec.on_read(node, "numpy()")
        if node.op == "literal":
            try:
                return np.full(node.size, node.value, dtype=node.vt.np_dtype)
            except MemoryError:
                raise out_of_memory(self._vt.name, node.size, self._vt.itemsize, "copy to NumPy") from None
        return export.share(node)

    def torch(self):
        """A ``torch.Tensor`` sharing the evaluated buffer (DLPack, as a tensor's ``.torch()``
        and Dr.Jit's: a write into it changes the array; needs PyTorch).  A literal (``fj.full``)
        is made memory first, as for :meth:`numpy`."""
        import torch        # optional dependency
        return torch.from_dlpack(self)

    def jax(self):
        """A ``jax.Array`` with the contents, shaped as :meth:`numpy` (Dr.Jit's ``.jax()``; needs JAX)."""
        import jax.numpy as jnp     # optional dependency
        return jnp.asarray(self.numpy())

    def __array__(self, dtype=None, copy=None):
        return export.to_numpy(self, dtype, copy)     # (NumPy 2 protocol: a view unless asked)

    def __dlpack__(self, *args, **kwargs):
        return self.numpy().__dlpack__(*args, **kwargs)      # (the view keeps the buffer alive)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            size = self._node.size
            i = int(index)
            if i < 0:
                i += size
            if size == 1:
                i = 0   # a size-1 array broadcasts: any index reads its entry (Dr.Jit: Float(7)[3] is 7)
            if not 0 <= i < size:
                raise IndexError(f"{type(self).__name__}[{index}]: entry {i} is out of bounds "
                                 f"(the array is of size {size}).")
            node = self._buffer_node()
            rec = state.recorder
            if rec is not None:
                rec.on_read(node, f"[{index}]")
            if node.op == "literal":
                v = node.value
            else:
                v = _backend().element(node.value, i)
            return v
        if isinstance(index, ArrayBase) and index._vt is Bool:
            # x[mask] is x's value (Dr.Jit), as a new handle: in `x[mask] += v` the in-place
            # += then changes that handle only, and the assignment selects it where mask holds
            out = type(self).__new__(type(self))
            out._node, out._ad = self._node, self._ad
            return out
        if isinstance(index, slice) or (isinstance(index, ArrayBase) and index._vt.is_integral):
            return _item_index[0].get(self, index)      # a gather (Dr.Jit: x[1:3], x[UInt32(...)])
        raise TypeError(f"{type(self).__name__} indices must be integers, slices, masks or integer arrays, "
                        f"not {_type_name(index)}")

    def __setitem__(self, index, value):
        if isinstance(index, (int, np.integer)):
            size = self._node.size
            i = int(index) + (size if index < 0 else 0)
            if not 0 <= i < size:
                raise IndexError(f"{type(self).__name__}[{index}] = ...: entry {i} is out of bounds "
                                 f"(the array is of size {size}).")
            _item_scatter[0](self, value, i)
            return
        if isinstance(index, ArrayBase) and index._vt is Bool:
            self._become(masked_assign(self, index, value))
            return
        if isinstance(index, slice) or (isinstance(index, ArrayBase) and index._vt.is_integral):
            _item_index[0].set(self, index, value)      # a scatter (Dr.Jit: x[1:3] = v, x[UInt32(...)] = v)
            return
        raise TypeError(f"{type(self).__name__} indices must be integers, slices, masks or integer arrays, "
                        f"not {_type_name(index)}")

    def _become(self, other: "ArrayBase") -> None:
        """Make this handle refer to ``other``'s variable (in-place assignment, ``x[mask] = v``)."""
        self._node = other._node
        self._ad = other._ad

    def __iter__(self):
        a = self._values()
        return iter(a.tolist())

    def _scalar(self, what: str):
        if self._node.size != 1:
            raise not_one_entry(what, self, self._node.size)
        return self[0]

    def __bool__(self) -> bool:
        # (Dr.Jit's wording in both errors, as its test suite matches it)
        if self._vt is not Bool:
            raise TypeError(f"bool({type(self).__name__}): implicit conversion to 'bool' is only supported "
                            "for scalar mask arrays (only Bool arrays of size 1 have a truth value)")
        n = self._node.size
        if n != 1:
            raise RuntimeError(f"bool({type(self).__name__}): implicit conversion to 'bool' requires an array "
                               f"with at most 1 element (this one has {n} elements).")
        return bool(self._scalar("bool()"))

    def __float__(self) -> float:
        return float(self._scalar("float()"))

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def __index__(self) -> int:
        if not self._vt.is_integral:
            raise TypeError(f"{type(self).__name__} cannot be used as an index")
        return int(self._scalar("index"))

    def __repr__(self) -> str:
        return format_array(self)

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    # -- operators -------------------------------------------------------
    # Binary operators are generated below (see _binary_operator): a fast path for
    # same-type operands and plain Python scalars, and apply() for everything else.
    def __neg__(self): return apply("neg", self)
    def __pos__(self): return self
    def __invert__(self): return apply("not", self)
    def __abs__(self): return apply("abs", self)

    # In-place operators rebind the handle (other references keep the old value, as in Dr.Jit).
    # A result of another type (Int += 1.5 is a Float) is returned instead, so Python binds the
    # name to it and ``self`` keeps its value (Dr.Jit: ``a += b`` is then ``a = a + b``).
    def _inplace(self, op, o):
        r = apply(op, self, o)
        if type(r) is not type(self):
            return r
        self._node = r._node
        self._ad = r._ad
        return self

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __itruediv__(self, o): return self._inplace("truediv", o)
    def __ifloordiv__(self, o): return self._inplace("floordiv", o)
    def __imod__(self, o): return self._inplace("mod", o)
    def __ipow__(self, o): return self._inplace("pow", o)
    def __iand__(self, o): return self._inplace("and", o)
    def __ior__(self, o): return self._inplace("or", o)
    def __ixor__(self, o): return self._inplace("xor", o)
    def __ilshift__(self, o): return self._inplace("shl", o)
    def __irshift__(self, o): return self._inplace("shr", o)


def _missing_component(name: str):
    """``.x``/``.y``/``.z``/``.w``/``.imag`` of a 1-D array: none exist, as in Dr.Jit.

    Properties rather than ``__slots__``' plain ``AttributeError`` so that the error says what
    Dr.Jit's does (and is the ``RuntimeError``/``TypeError`` it raises) while staying an
    ``AttributeError`` (``hasattr(Float(1), "x")`` is ``False``). Only these names pay for it.
    """
    if name == "imag":
        def fail(self, *value):
            raise NotComplexError(f"{type(self).__name__}.imag: the array is not complex-valued")
    else:
        def fail(self, *value):
            raise ComponentError(f"{type(self).__name__} does not have a '{name}' component")
    return property(fail, fail)


for _name in ("x", "y", "z", "w", "imag"):
    setattr(ArrayBase, _name, _missing_component(_name))
del _name


# ``x[i] = v`` is a scatter: functions/memory.py (a layer above) registers frostjit.scatter here.
def masked_assign(x: ArrayBase, mask: ArrayBase, value) -> ArrayBase:
    """``select(mask, value, x)`` in ``x``'s type: what ``x[mask] = value`` makes ``x`` (Dr.Jit)."""
    r = apply("select", mask, value, x)
    return r if type(r) is type(x) else type(x)(r)


_item_scatter = [None]


def register_item_scatter(scatter) -> None:
    """Install ``scatter(target, value, index)``, which ``x[i] = v`` calls."""
    _item_scatter[0] = scatter


# ``x[1:3]``, ``x[index_array]`` and their assignments are gathers and scatters: an object with
# ``get(x, index)`` and ``set(x, index, value)``, installed by functions/memory.py.
_item_index = [None]


def register_item_index(access) -> None:
    """Install the gathers/scatters behind slice and index-array items of 1-D arrays."""
    _item_index[0] = access


# ---------------------------------------------------------------------------
# Fast path for operators
#
# Tracing cost per operation is what a user of an unfrozen loop pays, so the
# common cases (both operands of one class, or an array and a Python int/float
# that does not change the type) skip apply()'s general promotion logic.  The
# decision for each (operation, class, operand kind) is made once from the op
# table (promotion.fast_result_type) and kept in a per-operator dict.

class _FastRule:
    """What ``cls <op> kind`` does when it needs no promotion (made once per combination)."""

    __slots__ = ("node_op", "out_cls", "out_vt", "literals", "lit_vt", "lo", "hi")

    def __init__(self, node_op, out_cls, lit_vt):
        self.node_op = node_op
        self.out_cls = out_cls
        self.out_vt = out_cls._vt
        self.lit_vt = lit_vt                        # type of a Python-number operand
        self.literals = ops.literal_cache(lit_vt)   # its shared literal nodes
        # Python ints this type takes without widening (beyond: apply() promotes to Int64)
        self.lo, self.hi = promotion.int_range(lit_vt)


def _fast_rule(op: str, cls, kind, rules: dict):
    """The :class:`_FastRule` of ``cls <op> kind`` (None: take apply()), remembered in ``rules``."""
    vt = cls._vt
    rule = None
    if vt is not None:
        category = promotion.SAME if kind is cls else promotion.FLOAT if kind is float else \
            promotion.INT if kind is int else None
        out_vt = None if category is None else promotion.fast_result_type(OPS[op], vt, category, True)
        if out_vt is not None:
            # A result of the operand's type keeps its class (a user's subclass of Float too).
            out_cls = cls if out_vt is vt else registry.flat_type(cls._backend, out_vt, cls._is_ad)
            rule = _FastRule(node_op(op, vt), out_cls, vt)
    rules.setdefault(cls, {})[kind] = rule
    return rule


def _binary_operator(op: str, reflected: bool):
    """The Python operator ``__<op>__`` (or ``__r<op>__``) of every 1-D array class."""
    rules: dict = {}        # cls -> {operand kind -> _FastRule or None}
    refusable = op in promotion.REFUSABLE_OPERATORS

    def operator(self, other):
        kind = type(other)
        try:
            rule = rules[type(self)][kind]
        except KeyError:
            rule = _fast_rule(op, type(self), kind, rules)
            if refusable and rule is not None and \
                    (operator_refuses(op, other, self) if reflected else operator_refuses(op, self, other)):
                rule = rules[type(self)][kind] = None      # (refused: decided on the slow path below)
        if rule is None or self._ad is not None:
            if (refusable or rule is None and numpy_element(other)) and \
                    (operator_refuses(op, other, self) if reflected else operator_refuses(op, self, other)):
                return NotImplemented       # Dr.Jit refuses these operands (Int / Int, Float // Float)
            if rule is None and getattr(kind, "IsTensor", False):
                return NotImplemented       # a tensor's own operator broadcasts (frostjit/tensor)
            return apply(op, other, self) if reflected else apply(op, self, other)
        if kind is float or kind is int:
            if kind is int and not rule.lo <= other <= rule.hi:
                return apply(op, other, self) if reflected else apply(op, self, other)
            b = rule.literals.get(other) if _state.recorder is None else None
            if b is None:
                b = _operand_literal(rule.lit_vt, other)
        elif other._ad is not None:
            return apply(op, other, self) if reflected else apply(op, self, other)
        else:
            b = other._node
            # (sizes that differ: the check where it can act, an empty operand or a recording
            # to guard; equal sizes, the hot case, pay one comparison)
            if b.size != self._node.size and (b.size == 0 or self._node.size == 0 or _state.recorder is not None):
                _check_array_operands(rule.node_op, (self._node, b))
        out = _new(rule.out_cls)
        out._node = _make_binary(rule.node_op, rule.out_vt, b, self._node) if reflected else \
            _make_binary(rule.node_op, rule.out_vt, self._node, b)
        out._ad = None
        return out
    operator.__name__ = operator.__qualname__ = f"__{'r' if reflected else ''}{_OPERATOR_NAMES.get(op, op)}__"
    return operator


# Bound once: the operators above are the hottest code of tracing (a global lookup each).
_new = object.__new__
_make_binary = ops.make_binary
_make_unary = ops.make_unary
_make_ternary = ops.make_ternary
_operand_literal = ops.operand_literal
_check_array_operands = ops.check_array_operands
_state = state


def operand_kind(x):
    """What :func:`~.promotion.operator_refused` knows of operand ``x``: its element type (a 1-D
    or static array, a tensor), else its Python type (a number, or anything else)."""
    t = x.__class__
    vt = getattr(t, "_vt", None)
    if vt is None:
        inner = getattr(t, "_leaf", None) or getattr(t, "_array_type", None)
        vt = getattr(inner, "_vt", None)
    return t if vt is None else vt


_refusals: dict = {}


def literal_to_memory(a) -> None:
    """Give the evaluated array ``a``, whose node is a literal, a buffer filled with its value
    (``make_opaque``'s step per array; ``.numpy()``'s view needs memory).  A frozen function's
    recording sees the fill and keeps the literal's symbolic size."""
    node = a._node
    new = ops.data(node.vt, _backend().full(node.vt, node.value, node.size), node.size)
    rec = state.recorder
    if rec is not None:
        new.sym = node.sym      # a frozen function's symbolic size of the literal
        rec.on_memop("fill", node.value, [], [new])
    a._node = new


def numpy_element(x) -> bool:
    """Whether ``x`` is a NumPy scalar (``np.float32(2.5)``, ``np.float64``, ``np.bool_``) or a 0-d
    NumPy array: Dr.Jit converts such an operand to the element type of the array beside it before
    its operator decides, so ``Int(3, 4) / np.float32(1.5)`` is ``Int / Int``, refused (NumPy then
    computes ``[2, 2.67]``), and ``Bool(True, False) * np.array(2)`` is ``Bool * Bool``, refused."""
    return isinstance(x, np.generic) or type(x) is np.ndarray and x.ndim == 0


def numpy_scalar_operand(o, vt: VarType, op: str):
    """The NumPy scalar ``o`` as an operand of arrays of type ``vt``: beside masks a mask value
    (Dr.Jit: ``Bool(True, False) == np.int32(2)`` compares with ``True``, ``Bool & np.float32(1.5)``
    keeps the mask), beside integer arrays a NumPy float or bool scalar an element of their type,
    as a 0-d array is (``Int(1, 2, 3) + np.float32(2.5)`` is ``Int(3, 4, 5)``, ``Int & np.True_``
    is ``Int & 1``).  Beside float arrays it types as a Python number would (the same result) and
    stays what fj.freeze tracks as an input; a NumPy int beside integer arrays types as a Python
    int (widening where Dr.Jit raises: docs/types.md).  A float that no value of ``vt`` holds after
    truncation raises (:func:`.promotion.check_integral_element`).  Other values are returned
    unchanged."""
    if not isinstance(o, np.generic):
        return o
    if vt is Bool:
        return bool(o)
    if vt.is_integral and isinstance(o, np.bool_):
        return int(o)
    if vt.is_integral and isinstance(o, np.floating):
        promotion.check_integral_element(op, float(o), vt)
        return int(o)
    return o


def operator_refuses(op: str, left, right) -> bool:
    """Whether the Python operator ``left <op> right`` refuses these operands as Dr.Jit's do
    (``Int / Int``, ``Float // Float``, ``Float & Float``: the caller returns ``NotImplemented``).
    A NumPy scalar or 0-d array counts as an element of the array beside it (:func:`numpy_element`).
    Remembered per (op, operand classes), except for NumPy arrays (0-d or not: the same class).
    (``__class__``, not ``type()``: a recording's symbolic number stands for its value's class,
    e.g. ``np.float32``, which these refuse as a plain call does: r14, ``Int // p`` replayed where
    the plain call went to NumPy.)"""
    key = (op, left.__class__, right.__class__)
    r = _refusals.get(key)
    if r is None:
        a, b = operand_kind(left), operand_kind(right)
        element = False
        if isinstance(a, VarType) and numpy_element(right):
            b, element = a, True
        elif isinstance(b, VarType) and numpy_element(left):
            a, element = b, True
        known = all(isinstance(k, VarType) or issubclass(k, (bool, int, float, np.number)) for k in (a, b))
        r = known and (promotion.operator_refused(op, a, b)
                       or element and a is Bool and op in promotion.MASK_REFUSED_OPERATORS)
        if type(left) is not np.ndarray and type(right) is not np.ndarray:
            _refusals[key] = r
    return r


def refusing_operator(operator, op: str, reflected: bool):
    """``operator`` (a binary dunder) returning ``NotImplemented`` where Dr.Jit's refuses its operands."""
    refusals = _refusals

    def checked(self, other):
        r = refusals.get((op, type(other), type(self)) if reflected else (op, type(self), type(other)))
        if r is None:
            r = operator_refuses(op, other, self) if reflected else operator_refuses(op, self, other)
        return NotImplemented if r else operator(self, other)
    checked.__name__ = checked.__qualname__ = operator.__name__
    checked.__doc__ = operator.__doc__
    return checked


_OPERATOR_NAMES = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv",
                   "mod": "mod", "pow": "pow", "and": "and", "or": "or", "xor": "xor", "shl": "lshift",
                   "shr": "rshift"}
for _op, _name in _OPERATOR_NAMES.items():
    for _reflected in (False, True):
        _operator = _binary_operator(_op, _reflected)
        setattr(ArrayBase, _operator.__name__, _operator)
for _op in COMPARISONS:
    setattr(ArrayBase, f"__{_op}__", _binary_operator(_op, False))
del _op, _name, _reflected, _operator


# ---------------------------------------------------------------------------
# Construction helpers

def not_one_entry(what: str, array, size) -> RuntimeError:
    """The error of ``array.item()`` (and ``int()``, ``float()``) for an array of ``size`` != 1."""
    return RuntimeError(f"{what}: only a size-1 array converts to a Python scalar (this {type(array).__name__} "
                        f"has size {size}; Dr.Jit: can only convert arrays of length 1 to Python scalars)")


def _scalar_value(v, vt: VarType, who: str):
    """A constructor's scalar argument as ``vt`` stores it; out of range raises (no silent wrap)."""
    return ops.convert_scalar(vt, v, f"{who}()")


def _data_from_numpy(a: np.ndarray, vt: VarType) -> Node:
    src = a
    if a.ndim != 1:
        if a.ndim == 0:
            a = a.reshape(1)
        else:
            raise ValueError(f"expected a 1-D array, got one of shape {a.shape}")
    try:
        if a.dtype != vt.np_dtype:
            a = a.astype(vt.np_dtype)
        a = np.ascontiguousarray(a)
    except MemoryError:
        raise out_of_memory(vt.name, a.shape[0], vt.itemsize, "convert a NumPy array into") from None
    node = ops.data(vt, _backend().from_numpy(a), a.shape[0])
    rec = state.recorder
    if rec is not None:
        rec.on_upload(src, node)    # a frozen function re-reads NumPy inputs at every replay
    return node


def _is_iterable(v) -> bool:
    """An iterable a constructor takes as a sequence of values (not a string, not a mapping)."""
    return hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict))


def _data_from_sequence(seq, vt: VarType) -> Node:
    items = []
    plain = True        # (only Python floats and ints: the fast conversion below may take them)
    checked = seq
    if vt.is_float and seq and _NP_FLOAT_SCALARS.issuperset(map(type, seq)):
        # NumPy float scalars into a float type (``Float([xs[k] for k in kept])`` over a NumPy
        # array's items): none needs the per-item checks below (~2 us each), and they convert
        # as the general path converts them (to float64, then to the type)
        items = seq
        plain = False
        checked = ()
    for v in checked:
        t = type(v)
        if t is not float and t is not int:
            plain = False
            if isinstance(v, ArrayBase):
                v = v[0] if len(v) == 1 else _bad_element(v)
            elif not isinstance(v, _SCALARS):
                # (NumPy would read None as NaN and "1.5" as 1.5; Dr.Jit refuses both)
                raise TypeError(f"{vt.name}(): Could not construct from sequence (invalid type in input): "
                                f"an entry of type {_type_name(v)}")
        items.append(v)
    who = f"{vt.name}()"
    try:
        if vt.is_integral:
            # Each element as the scalar constructor converts it: out of range raises instead of
            # wrapping.  A list of Python ints (the common case) is checked by its extremes.
            lo, hi = ops.int_range(vt)
            if all(type(v) is int for v in items) and (not items or lo <= min(items) and max(items) <= hi):
                a = np.array(items, dtype=vt.np_dtype) if items else np.zeros(0, vt.np_dtype)
            else:
                a = np.array([ops.convert_scalar(vt, v, who) for v in items], dtype=vt.np_dtype)
        elif plain and 0 < len(items) <= _SHORT and (top := _FINITE_MAX.get(vt)) is not None \
                and -top <= min(items) and max(items) <= top:
            # A few Python numbers within the range of a float type (Float(1.0, 2.0)): no
            # conversion can overflow, so no np.errstate (a context manager: ~1 us, a fifth of
            # building the array).  A NaN first makes min/max NaN (the path below); one later
            # is skipped by them and converts without a warning.  (Python numbers only: NumPy
            # scalars compare with a Python float in their own type, 3.5e38 > np.float32(1)
            # casts 3.5e38 to float32 and warns of the overflow.)
            a = np.array(items, dtype=np.float64).astype(vt.np_dtype)
        else:
            with np.errstate(over="ignore"):     # 1e40 -> Float32 is +inf, as Float32(1e40) is
                a = np.array(items, dtype=np.float64 if vt.is_float else None)
                if vt.compute is not None:      # Python floats reach Float16 through float32 (Dr.Jit)
                    a = a.astype(vt.compute.np_dtype)
                a = a.astype(vt.np_dtype)
    except (TypeError, ValueError) as e:
        if isinstance(e, ConversionOverflowError) or "NaN" in str(e):
            raise
        raise TypeError(f"cannot build a {vt.name} array from {seq!r}: {e}") from None
    return _data_from_numpy(a, vt)


# The item types a float array takes from a sequence without per-item checks.
_NP_FLOAT_SCALARS = frozenset((np.float16, np.float32, np.float64))
_SHORT = 16        # (longer sequences: a Python min/max over them would cost what errstate saves)
# The largest finite value of each float type without a compute type (Float32, Float64).
_FINITE_MAX = {vt: float(np.finfo(vt.np_dtype).max) for vt in (Float32, Float64)}


def _bad_element(v):
    raise TypeError(f"cannot build an array from a sequence containing an array of size {len(v)}")


# ---------------------------------------------------------------------------
# The one door for elementwise operations

def scalar_type_of(v, like: VarType) -> VarType:
    """Type a Python scalar takes when combined with an array of type ``like``."""
    return promotion.scalar_type_of(v, like)


def apply(op: str, *operands):
    """Apply the lane-wise operation ``op`` (a name of the op table) to arrays and Python
    scalars, with Dr.Jit's promotion.

    Returns the result array (a static vector if an operand is one).  Raises ``TypeError``
    for operand types the op's type rule rejects, ``ValueError`` for incompatible sizes.
    """
    if op == "pow" and len(operands) == 2 and isinstance(operands[1], (int, float)) \
            and not isinstance(operands[1], bool) and isinstance(operands[0], ArrayBase):
        special = _pow_by_literal(operands[0], operands[1])
        if special is not None:
            return special
    cls = type(operands[0])
    rule = _same_type_rules.get((op, cls), False)
    if rule is False:
        rule = _same_type_rule(op, cls)
    if rule is not None:
        out = _apply_same_type(rule, cls, operands)
        if out is not None:
            return out
    if op == "select" and len(operands) == 3 and isinstance(operands[0], ArrayBase):
        out = apply_select(*operands)
        if out is not None:
            return out
    entry = OPS.get(op)
    if entry is None or not entry.lanewise:
        raise TypeError(f"frostjit: {op!r} is not an element-wise operation")
    arrays = [o for o in operands if isinstance(o, ArrayBase)]
    if len(arrays) != len(operands):
        for o in operands:
            if getattr(o, "IsVector", False):
                # A static vector operand: the operation applies component by component.
                return type(o)._apply(op, *operands)
        if not arrays:
            if all(isinstance(o, _SCALARS) for o in operands):
                # Python numbers only (components of the scalar backend's arrays): computed now.
                return eager.python_numbers(op, operands)
            raise TypeError(f"frostjit.{op}(): expected at least one frostjit array, got "
                            + ", ".join(_type_name(o) for o in operands))
    first = arrays[0]
    backend = first._backend
    vt = None
    ad = False
    for a in arrays:
        if a._backend is not backend:
            raise TypeError(f"frostjit.{op}(): cannot mix arrays of backends {backend} and {a._backend}")
        if op == "select" and a is operands[0]:
            continue
        vt = a._vt if vt is None else promote(vt, a._vt)
        ad = ad or a._is_ad
    no_float_promotion = entry.types in (TypeRule.BITWISE, TypeRule.SHIFT)
    # Python scalars (and NumPy arrays) adopt the array type.
    cast_operands = []
    for k, o in enumerate(operands):
        if isinstance(o, ArrayBase):
            cast_operands.append(o)
            continue
        if not isinstance(o, _SCALARS):     # (the common Python number skips the call)
            o = foreign_operand(o)      # (Dr.Jit: Float(1, 2) + torch.tensor(1.0), Int * np.array(3))
        elif type(o) is not float and type(o) is not int and type(o) is not bool and vt is not None \
                and not (op == "select" and k == 0):
            o = numpy_scalar_operand(o, vt, op)
        if vt is Bool and type(o) is np.ndarray and o.ndim == 0 and not (op == "select" and k == 0):
            o = bool(o)     # (beside masks a 0-d array is a mask value too: numpy_scalar_operand)
        if isinstance(o, _SCALARS):
            if op == "select" and k == 0 or (isinstance(o, (bool, np.bool_)) and op in ("and", "or")
                                             and vt is not None and vt.is_float) \
                    or (op == "and" and k == 1 and isinstance(o, (bool, np.bool_)) and vt is not None
                        and vt is not Bool):
                # (a Python bool beside a float array is a mask: Float & True keeps the values;
                # so is one right of an integer array's '&': Int(-3, 5) & True is [-3, 5], Dr.Jit)
                cast_operands.append(flat_of(backend, Bool, False)(bool(o)))
                continue
            if op == "and" and vt is Bool and isinstance(o, (float, np.floating)):
                vt = Float32        # 2.5 & mask: 2.5 where mask, else 0 (Dr.Jit), not a mask
                cast_operands.append(o)
                continue
            vt = promotion.with_python_scalar(op, vt, o, no_float_promotion)
            cast_operands.append(o)
            continue
        if hasattr(o, "__symbolic_size__"):
            # A width inside a frozen function (frostjit.freeze): typed like the number it stands for.
            v = o.__symbolic_size__
            if vt is None:
                vt = promotion.scalar_type_of(v, None)
            elif isinstance(v, float) and not vt.is_float and not no_float_promotion:
                vt = Float32 if vt.rank < Float32.rank else vt
            cast_operands.append(o)
            continue
        if isinstance(o, np.ndarray) and o.ndim == 0:
            # of the array operands' type (Dr.Jit: Int(1, 2) * np.array(2.5) is Int(2, 4)); a
            # one-element array read from NumPy: fj.freeze records it as an input, not a constant
            if vt is None or vt is Bool or op == "select" and k == 0:
                vt = promotion.with_python_scalar(op, vt, o.item(), no_float_promotion)
            cast_operands.append(flat_of(backend, vt, ad)(promotion.zero_dim_operand(op, o, vt)))
            continue
        if isinstance(o, np.ndarray):
            cast_operands.append(flat_of(backend, from_numpy_dtype(o.dtype), ad)(o))
            vt = promote(vt, cast_operands[-1]._vt)
            continue
        if type(o) in _SEQUENCES:
            if any(isinstance(e, ArrayBase) or type(e) in _SEQUENCES for e in o):
                # arrays or lists inside: one static vector component each (Dr.Jit 1.5:
                # Float(1, 2) + [1.0, Float(2.0)] is an Array2f, lane by component)
                vec = _vector_operand(op, vt, o, no_float_promotion, backend, ad)
                return type(vec)._apply(op, *operands[:k], vec, *operands[k + 1:])
            # Dr.Jit converts a list or tuple operand to the array type (Float + (1, 2)); its
            # Python numbers promote that type as a scalar operand would (Int + [1, 2.5]: Float).
            vt = sequence_type(op, vt, o, no_float_promotion)
            cast_operands.append(flat_of(backend, vt, ad)(o))
            continue
        raise UnsupportedOperandError(f"frostjit.{op}(): unsupported operand type {_type_name(o)} "
                                      f"(combined with {type(first).__name__})")
    if entry.types is TypeRule.ROUNDING and vt is not Bool and not vt.is_float:
        # Integers are already rounded: fj.floor(Int32 array) is the array itself.
        return flat_of(backend, vt, ad)._from_node(_to_node(first, vt))
    names = ", ".join(type(o).__name__ for o in cast_operands)
    operand_vts = [o._vt if isinstance(o, ArrayBase) else None for o in cast_operands]
    in_vt, out_vt, targets = promotion.operand_types(entry, vt, operand_vts, names)
    nodes = tuple([o._node if t is None else _to_node(o, t) for o, t in zip(cast_operands, targets)])
    name = node_op(op, in_vt)
    # (arrays, and the lists, tuples and NumPy arrays converted to one, as Dr.Jit: not numbers)
    arrays = [n for n, o in zip(nodes, operands) if isinstance(o, _ARRAY_LIKE) or type(o) in _SEQUENCES]
    if len(arrays) > 1:
        _check_sizes_of_arrays(name, arrays)
    node = ops.make(name, out_vt, nodes)
    cls = flat_of(backend, out_vt, ad)
    out = cls.__new__(cls)
    out._node = node
    out._ad = None
    if ad and out_vt.is_float and any(isinstance(o, ArrayBase) and o._ad is not None for o in cast_operands):
        state.ad_hook.on_op(name, out, tuple(cast_operands))      # (name: node.op is 'literal' once folded)
    return out



_SEQUENCES = (list, tuple)
_ARRAY_LIKE = (ArrayBase, np.ndarray)


def _vector_operand(op: str, vt: VarType, seq, no_float_promotion: bool, backend, ad: bool):
    """A list/tuple operand holding arrays or lists as the static vector (``ArrayXf`` past four)
    with one component per item, of ``vt`` promoted by the items' types."""
    for e in seq:
        if isinstance(e, ArrayBase):
            vt = promote(vt, e._vt)
            ad = ad or e._is_ad
    vt = sequence_type(op, vt, seq, no_float_promotion)
    flat = flat_of(backend, vt, ad)
    cls = registry.vector_type(backend, vt, len(seq), ad) or registry.array_type(flat, None, "dynamic")
    if cls is None:
        raise UnsupportedOperandError(f"frostjit.{op}(): no static array of {len(seq)} {vt.name} components "
                                      f"for the operand {_type_name(seq)}")
    return cls(*seq)


def sequence_type(op: str, vt: VarType, seq, no_float_promotion: bool = False) -> VarType:
    """The element type a list/tuple operand of ``op`` takes beside arrays of type ``vt``: ``vt``
    promoted by each Python number in it (nested lists included), as a scalar operand promotes it."""
    for x in seq:
        if type(x) in _SEQUENCES:
            vt = sequence_type(op, vt, x, no_float_promotion)
        elif isinstance(x, _SCALARS):
            vt = promotion.with_python_scalar(op, vt, x, no_float_promotion)
    return vt


def is_flat(x) -> bool:
    """Whether ``x`` is a 1-D array: a JIT :class:`ArrayBase` or a 1-D array of the scalar backend
    (``frostjit.scalar.ArrayXf``..., which the engine's memory functions handle through hooks)."""
    return isinstance(x, ArrayBase) or getattr(type(x), "_eager_flat", False)


def is_flat_type(cls) -> bool:
    """Whether the class ``cls`` is a 1-D array type (see :func:`is_flat`)."""
    return isinstance(cls, type) and (issubclass(cls, ArrayBase) or getattr(cls, "_eager_flat", False))

# (op, class) -> (node op, result class, operand type) when every operand of that class (or a
# Python number it takes as it is) needs no conversion; None: the general path decides.
_same_type_rules: dict = {}


def same_type_rule(op: str, cls):
    """``(node op, result class, operand type)`` of ``op`` on operands of class ``cls`` that need
    no conversion (``None``: the operation promotes or changes the type; the general path decides)."""
    rule = _same_type_rules.get((op, cls), False)
    return _same_type_rule(op, cls) if rule is False else rule


def _same_type_rule(op: str, cls):
    vt = getattr(cls, "_vt", None) if issubclass(cls, ArrayBase) else None     # (scalar ArrayXf has a _vt too)
    rule = None
    compare = op in COMPARISONS
    if vt is not None and (op in SAME_TYPE or (op in ROUNDING and vt.is_float) or compare):
        out_vt = promotion.fast_result_type(OPS[op], vt, promotion.SAME, False)
        if out_vt is not None:
            # A result of the operand's type keeps its class (a user's subclass of Float too);
            # a comparison's is the registry's mask class, as on the general path (also of a
            # Bool subclass).  (Comparisons come here from static arrays' components:
            # Array3f < Array3f is three of them, each ~4x the cost on the general path.)
            out_cls = cls if out_vt is vt and not compare else flat_of(cls._backend, out_vt, cls._is_ad)
            # (then, for _apply_same_type: the Python ints the type takes as they are (promotion.
            # int_range: any on a float type; none on Bool), its shared literals, and the result type)
            lo, hi = (1, 0) if vt is Bool else promotion.int_range(vt)
            rule = (node_op(op, vt), out_cls, vt, lo, hi, ops.literal_cache(vt), out_cls._vt)
    _same_type_rules[(op, cls)] = rule
    return rule


def _apply_same_type(rule, cls, operands):
    """``apply`` when every operand is of class ``cls`` or a Python number it takes as it is;
    None otherwise (the general path decides).

    The door of the engine's own lane-wise code (texture lookups, clamps, index arithmetic)
    and of arithmetic on grad-enabled arrays: two-operand results go straight to
    ``make_binary`` and the sizes are compared while the operands are read (a bilinear
    lookup's trace makes a dozen nodes here).  An operand with a gradient gets the general
    path's AD hook call, with the same operands."""
    node_op_, out_cls, vt, lo, hi, literals, out_vt = rule
    nodes = []
    size = -1
    ragged = False
    ad = False
    for o in operands:
        t = type(o)
        if t is cls:
            if o._ad is not None:
                ad = True
            n = o._node
            if n.size != size:
                if size < 0:
                    size = n.size
                else:
                    ragged = True
            nodes.append(n)
        elif (t is float and vt.is_float) or (t is int and lo <= o <= hi):
            b = literals.get(o) if _state.recorder is None else None
            nodes.append(b if b is not None else _operand_literal(vt, o))
        else:
            return None
    if ragged:
        _check_sizes_of_arrays(node_op_, [o._node for o in operands if type(o) is cls])
    out = _new(out_cls)
    k = len(nodes)
    # (the doors of one, two and three operands: ``make`` less its dispatch on the count)
    out._node = _make_binary(node_op_, out_vt, nodes[0], nodes[1]) if k == 2 else \
        _make_ternary(node_op_, out_vt, nodes[0], nodes[1], nodes[2]) if k == 3 else \
        _make_unary(node_op_, out_vt, nodes[0]) if k == 1 else ops.make(node_op_, out_vt, tuple(nodes))
    out._ad = None
    if ad and out_vt.is_float:
        _state.ad_hook.on_op(node_op_, out, tuple(operands))
    return out


def apply_select(condition, a, b):
    """``apply("select", condition, a, b)`` (``condition`` a 1-D array) when ``condition`` is a Bool array of the backend of
    ``a`` and ``b``, and these are of one array class (or one of them a Python number that class
    takes as it is); None otherwise (the general path decides).  Same nodes, result class and
    AD hook call as the general path, without its promotion machinery (loops, random number
    generators and masked updates make a select per step)."""
    cls = type(a) if isinstance(a, ArrayBase) else type(b)
    if not issubclass(cls, ArrayBase) or type(condition)._vt is not Bool:
        return None
    rule = _select_rules.get(cls, False)
    if rule is False:
        rule = _select_rule(cls)
    if rule is None or condition._backend is not cls._backend:
        return None
    node_op_, out_cls, vt, lo, hi, literals = rule
    nodes = [condition._node]
    ad = False
    for o in (a, b):
        t = type(o)
        if t is cls:
            ad = ad or o._ad is not None
            nodes.append(o._node)
        elif (t is float and vt.is_float) or (t is int and lo <= o <= hi):
            n = literals.get(o) if _state.recorder is None else None
            nodes.append(n if n is not None else _operand_literal(vt, o))
        else:
            return None
    c, x, y = nodes
    arrays = [c] + [n for n, o in zip(nodes[1:], (a, b)) if type(o) is cls]
    _check_sizes_of_arrays(node_op_, arrays)
    out = _new(out_cls)
    out._node = _make_ternary(node_op_, vt, c, x, y)
    out._ad = None
    if ad and vt.is_float:
        _state.ad_hook.on_op(node_op_, out, (condition, a, b))
    return out


_select_rules: dict = {}        # array class -> select's rule (as _same_type_rules) or None


def _select_rule(cls):
    vt = getattr(cls, "_vt", None)
    rule = None
    if isinstance(vt, VarType):
        lo, hi = (1, 0) if vt is Bool else promotion.int_range(vt)
        # (the general path's result class: the registry's, also for a user's subclass of cls)
        rule = (node_op("select", vt), flat_of(cls._backend, vt, cls._is_ad), vt, lo, hi, ops.literal_cache(vt))
    _select_rules[cls] = rule
    return rule


def _check_sizes_of_arrays(op: str, nodes: list) -> None:
    """:func:`~frostjit.trace.ops.check_array_operands` where the sizes of ``nodes`` differ."""
    size = nodes[0].size
    for n in nodes:
        if n.size != size:
            _check_array_operands(op, nodes)
            return


def _pow_by_literal(x: "ArrayBase", e):
    """``x ** e`` for the exponents NumPy computes exactly (0, 1, 2, 0.5, -1) on float arrays."""
    if not x._vt.is_float:
        return None
    if e == 2:
        return apply("mul", x, x)
    if e == 1:
        # A new handle (in-place operators on the result must not change x); x * 1 keeps -0.
        return apply("mul", x, 1.0) if x._ad is not None else type(x)._from_node(x._node)
    if e == 0.5:
        return apply("sqrt", x)
    if e == -1:
        return apply("truediv", 1.0, x)
    if e == 0:
        # 1 everywhere (also for inf and NaN, like NumPy); a constant, not grad-enabled (Dr.Jit).
        one = ops.literal(x._vt, 1.0, x._node.size)
        if one.size != 1 and x._node.sym is not None:
            one.sym = x._node.sym       # inside a frozen function: x's symbolic width
        return type(x)._from_node(one)
    return None


def flat_of(backend, vt, ad):
    return registry.flat_type(backend, vt, ad)


def _to_node(o, vt: VarType) -> Node:
    if isinstance(o, ArrayBase):
        return ops.cast(o._node, vt)
    return ops.literal(vt, o)
