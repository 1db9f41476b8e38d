"""Static arrays (``Array3f``, ``Array22f``, ``Array0u``, ...): a fixed number of components.

A static array of size ``n`` holds ``n`` components: 1-D JIT arrays (``Array3f``: three
``Float``) or, when nested, static arrays themselves (``Array33f``: three ``Array3f``).
Operations apply component by component; an operand of lower depth (a Python number, a 1-D
array, a smaller static array) is broadcast to every component, as in Dr.Jit
(``Array22f + Array2f`` adds the ``Array2f`` to each row).

Matrices, complex numbers and quaternions (``matrix.py``, ``complex.py``, ``quaternion.py``)
are static arrays whose class gives some operations another meaning (:attr:`VectorBase._ops`:
``Matrix4f * Matrix4f`` is a matrix product); dynamic arrays (``dynamic.py``) have their
number of components per instance.  The classes are made from one table (``families.py``).

Components are copied on construction and assignment (a new handle on the same trace node),
never shared: ``Array3f(f)`` followed by ``v.x += 1`` changes neither ``v.y`` nor ``f``.
Reading a component (``v.x``, ``v[1]``) returns the component itself, so ``v.x += 1`` updates
``v``, as in Dr.Jit.
"""
from __future__ import annotations

import sys

import itertools

import numpy as np

from ..errors import (ComponentError, IncompatibleArgumentsError, IncompatibleSizesError, NotComplexError,
                      RaggedArrayError, SizeMismatchError)
from ..schedule.evaluate import evaluate
from ..trace.dtypes import Bool, Float32, from_numpy_dtype, promote, round_to
from ..trace.state import state
from . import direct, export, registry, variables
from .promotion import MASK_REFUSED_OPERATORS, zero_dim_operand
from .flat import (ArrayBase, apply, masked_assign, numpy_element, numpy_scalar_operand, refusing_operator,
                   sequence_type, _SCALARS)
from .foreign import foreign_to_numpy, is_foreign_array
from .printing import format_array

# Operations defined outside this module that static arrays call (registered at import by
# the module that defines them, so this layer does not import it): ``"matmul"``.
HOOKS: dict = {}


class VectorBase:
    """Base class of static arrays; see the module docstring.

    Class attributes (set by ``families.py``):

    ``_elem``
        The component class (a 1-D array class, or a static array class when nested).
    ``_n``
        The number of components (``None`` for dynamic arrays).
    ``_leaf``
        The 1-D array class at the bottom of the nesting (``Float`` for ``Array33f``).
    ``_family``
        ``"array"``, ``"matrix"``, ``"complex"``, ``"quaternion"`` or ``"dynamic"``.
    ``_ops``
        ``{op name: implementation}``: operations the family defines differently from the
        component-wise default (``"mul"`` of a matrix, ``"exp"`` of a complex number).
    ``Depth``
        Nesting depth counting the 1-D level (``Array3f``: 2, ``Array33f``: 3), as Dr.Jit's
        ``depth_v``.
    """

    __slots__ = ("_c",)
    _elem = None
    _n = 0
    _leaf = None
    _family = "array"
    _ops: dict = {}
    _swizzle = True       # .x .xy .zyx ... (not on matrices, complex numbers, dynamic arrays)
    # ``_leafwise(op, operands, columns) -> (components, component class)``: set by a backend
    # whose components are plain numbers (frostjit.scalar) to compute a lane-wise op on them.
    _leafwise = None
    _eager_flat = False     # (True on the scalar backend's ArrayX*, see array.flat.is_flat)
    IsJIT = True
    IsVector = True
    IsTensor = False
    IsMatrix = False
    IsComplex = False
    IsQuaternion = False
    IsDynamic = False
    Depth = 2

    # -- construction ----------------------------------------------------
    def __init__(self, *args, flip_axes: bool = False):
        if flip_axes and len(args) == 1 and getattr(type(args[0]), "IsTensor", False):
            # Dr.Jit's flip_axes: the tensor's axes reversed (a (width, 3) tensor is an Array3f)
            # (fj.transpose, not .T: .T is Dr.Jit's 2-D-only transpose; imported here, the tensor
            # package imports this one)
            from ..tensor.axes import transpose
            args = (transpose(args[0]),)
        self._c = self._components(args)

    @classmethod
    def _components(cls, args) -> list:
        """The components of ``cls(*args)`` (Dr.Jit's construction forms)."""
        n, elem = cls._n, cls._elem
        if not args:
            return [elem() for _ in range(n)]
        if n == 0 and (len(args) > 1 or not hasattr(args[0], "__len__") or len(args[0]) != 0):
            raise TypeError(f"{cls.__name__}(): a static array of 0 components takes no value, got "
                            f"{', '.join(type(a).__name__ for a in args)}")
        if len(args) == 1:
            return cls._from_one(args[0])
        if len(args) == n:
            return [_component(elem, a) for a in args]
        raise TypeError(f"{cls.__name__}(): Input has the wrong size (expected {n} elements, got {len(args)}).")

    @classmethod
    def _from_one(cls, v) -> list:
        """The components of ``cls(v)`` for one argument ``v``."""
        n, elem = cls._n, cls._elem
        if isinstance(v, VectorBase):
            if v.Depth == cls.Depth or (cls.IsJIT and not v.IsJIT):
                # (a scalar-backend array converts like the nested sequence of its values, as in
                # Dr.Jit: entry k makes component k, whatever the depths)
                if len(v) != n:
                    raise TypeError(f"{cls.__name__}(): cannot convert a {type(v).__name__} of {len(v)} components "
                                    f"(expected {n})")
                return [_component(elem, c) for c in v._c]
            if v.Depth == cls.Depth - 1 and cls.IsJIT and not v.IsJIT and len(v) == n:
                # a scalar-backend array of as many components (Array3f(scalar.Array3f(1, 2, 3)):
                # its components, as Dr.Jit; not broadcast as a lower-depth JIT array would be)
                return [_component(elem, c) for c in v._c]
            if v.Depth < cls.Depth:
                return [_component(elem, v) for _ in range(n)]
            raise TypeError(f"{cls.__name__}(): cannot convert a {type(v).__name__} (nested {v.Depth} deep, "
                            f"{cls.__name__} {cls.Depth})")
        if isinstance(v, (ArrayBase,) + _SCALARS) or hasattr(v, "__symbolic_size__"):
            return cls._broadcast(v)
        if isinstance(v, np.ndarray):
            return cls._from_numpy(v)
        rows = tensor_rows(cls, v)
        if rows is not None:
            return rows
        if is_foreign_array(v):
            return cls._from_numpy(foreign_to_numpy(v))
        if isinstance(v, (list, tuple, range)):
            if len(v) != n:
                raise TypeError(f"{cls.__name__}(): Input has the wrong size (expected {n} elements, got {len(v)}).")
            return [_component(elem, x) for x in v]
        if hasattr(v, "__array__"):
            return cls._from_numpy(np.asarray(v))
        if hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict)):
            return cls._from_one(list(v))       # a generator, an iterator, ... (Dr.Jit takes them)
        raise TypeError(f"{cls.__name__}(): cannot construct from an object of type {type(v).__name__}")

    @classmethod
    def _broadcast(cls, v) -> list:
        """``cls(v)`` for a number or 1-D array ``v``: every component (and every entry of a
        nested one) is ``v`` (matrices put it on the diagonal, complex numbers in the real part)."""
        return [_component(cls._elem, v) for _ in range(cls._n)]

    @classmethod
    def _from_numpy(cls, a: np.ndarray) -> list:
        """Components from a NumPy array of shape ``(n, ...)``: entry ``k`` makes component ``k``."""
        n, elem = cls._n, cls._elem
        if a.ndim == 0:
            return cls._broadcast(a.item())
        if a.shape[0] != n:
            raise SizeMismatchError(f"{cls.__name__}(): expected a NumPy array of shape ({n}, ...), got {a.shape}")
        return [_component(elem, a[k] if a.ndim > 1 or issubclass(elem, VectorBase) else a[k].item())
                for k in range(n)]

    @classmethod
    def _from_components(cls, comps):
        out = cls.__new__(cls)
        out._c = list(comps)
        return out

    @classmethod
    def _apply(cls, op: str, *operands):
        """``apply(op, *operands)`` when an operand is a static array (called by the 1-D door)."""
        return apply_vector(op, *operands)

    # -- components ------------------------------------------------------
    def __len__(self) -> int:
        return len(self._c)

    def __getitem__(self, k):
        if type(k) is int:
            # (the hot case, v[1] in cross() and user code: a component; out of bounds, below)
            try:
                return self._c[k]
            except IndexError:
                pass
        if type(k) is tuple and k:
            # v[i, j] is v[i][j] (Dr.Jit); an index the component refuses raises TypeError
            head = self[k[0]]
            if len(k) == 1:
                return head
            try:
                return head[k[1:] if len(k) > 2 else k[1]]
            except (TypeError, IndexError) as e:
                raise TypeError(f"{type(self).__name__}[{k}]: Item retrieval failed ({e})") from e
        if _is_mask(k):
            return _copy(self)  # v's value, a new handle (see ArrayBase.__getitem__): v[mask] += w
        if isinstance(k, slice):
            comps = self._c[k]
            cls = _array_class(type(self), type(self)._elem, len(comps), "array")
            return cls._from_components([_copy(c) for c in comps])
        try:
            return self._c[k]
        except IndexError:
            n = len(self._c)
            if n == 1:
                return self._c[0]   # one component broadcasts to any index (Dr.Jit: Array1f(4)[2])
            i = k + n if isinstance(k, (int, np.integer)) and k < 0 else k
            raise IndexError(f"{type(self).__name__}[{k}]: entry {i} is out of bounds "
                             f"(the array is of size {n}).") from None
        except TypeError:
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, not {type(k).__name__}") \
                from None

    def __setitem__(self, k, v):
        if type(k) is tuple and k:
            if len(k) == 1:
                self[k[0]] = v
                return
            # v[i, j] = x assigns entry j of component i (Dr.Jit): the component is updated in place
            head = self[k[0]]
            head[k[1:] if len(k) > 2 else k[1]] = v
            return
        if _is_mask(k):
            # v[mask] = w: each component selected, with the mask's component (a vector mask) or
            # the whole mask (a Bool array, every component); new components, never shared ones
            n = len(self._c)
            if isinstance(k, VectorBase) and len(k) != n:
                raise ValueError(f"{type(self).__name__}[mask] = ...: a mask of {len(k)} components for {n}")
            if isinstance(v, VectorBase) and len(v) != n:
                raise ValueError(f"{type(self).__name__}[mask] = ...: {len(v)} values for {n} components")
            for i in range(n):
                m = k._c[i] if isinstance(k, VectorBase) else k
                w = v._c[i] if isinstance(v, VectorBase) else v
                c = self._c[i]
                if isinstance(c, VectorBase):
                    c = _copy(c)
                    c[m] = w
                    self._c[i] = c
                else:
                    self._c[i] = masked_assign(c, m, w)
            return
        if isinstance(k, slice):
            idx = range(len(self._c))[k]
            values = v._c if isinstance(v, VectorBase) and v.Depth == self.Depth else [v] * len(idx)
            if len(values) != len(idx):
                raise ValueError(f"{type(self).__name__}[{k}] = ...: {len(values)} values for {len(idx)} components")
            for i, x in zip(idx, values):
                self._c[i] = _component(self._elem, x)
            return
        if not -len(self._c) <= k < len(self._c):
            n = len(self._c)
            raise IndexError(f"{type(self).__name__}[{k}] = ...: entry {k + n if k < 0 else k} is out of "
                             f"bounds (the array is of size {n}).")
        self._c[k] = _component(self._elem, v)

    def __iter__(self):
        return iter(self._c)

    @property
    def Type(self):
        """The element type (:class:`~frostjit.trace.dtypes.VarType`) of the leaves."""
        return self._leaf._vt

    # Dr.Jit's view of the variables: a static vector is not one variable but several.
    @property
    def state(self):
        """The leaves' common :class:`frostjit.VarState`, ``Mixed`` when they differ."""
        return variables.combined_state(variables.state_of(c._node) for c in _leaves(self))

    @property
    def index(self) -> int:
        """0: a static vector holds one variable per component (``v.x.index``, ...)."""
        return 0

    @property
    def index_ad(self) -> int:
        """0, as :attr:`index`."""
        return 0

    @property
    def label(self) -> str | None:
        """``"p"`` if the components are labelled ``p_0``, ``p_1``, ... (else ``None``)."""
        names = [c.label for c in self._c]
        p = names[0][:-2] if names and names[0] and names[0].endswith("_0") else None
        return p if p is not None and names == [f"{p}_{k}" for k in range(len(self._c))] else None

    @label.setter
    def label(self, value: str) -> None:
        for k, c in enumerate(self._c):       # Dr.Jit: the components get "<label>_<index>"
            c.label = f"{value}_{k}" if isinstance(value, str) else value

    @property
    def grad(self):
        """The gradient (``fj.grad(self)``, same type); assigning it calls ``fj.set_grad``."""
        return state.ad_hook.grad(self)

    @grad.setter
    def grad(self, value) -> None:
        state.ad_hook.set_grad(self, value)

    @property
    def shape(self) -> tuple:
        """``(n, ..., width)``: the static sizes, then the width (size-1 leaves broadcast;
        other unequal widths raise ``RaggedArrayError``, a ``ValueError``: the array is ragged)."""
        return (len(self._c),) + _inner_shape(self)

    @property
    def ndim(self) -> int:
        """The number of dimensions: the static ones and the lanes (``Array3f``: 2, ``Array33f``: 3)."""
        return self.Depth

    @property
    def array(self):
        """Dr.Jit's ``.array``: for a complex number, quaternion or matrix a copy with ordinary
        (component-wise) array semantics (``Complex2f`` -> ``Array2f``, ``Matrix2f`` ->
        ``Array22f``; differentiable: gradients flow back), otherwise the array itself."""
        if self.IsComplex or self.IsQuaternion or self.IsMatrix:
            # (traits.array_t's lookup, without importing traits, which sits above array/)
            return registry.find_type(type(self).__meta__.with_(kind="array"))(self)
        return self

    def numpy(self) -> np.ndarray:
        """Evaluate and return a NumPy array of shape :attr:`shape` (complex numbers: one
        complex entry per lane, as Dr.Jit)."""
        return self._static_numpy()

    def _static_numpy(self) -> np.ndarray:
        """The contents as a real NumPy array of shape :attr:`shape`."""
        leaves = list(_leaves(self))
        evaluate([c._node for c in leaves])
        shape = self.shape
        out = np.empty(shape, dtype=self._leaf._vt.np_dtype)
        for index, leaf in zip(np.ndindex(*shape[:-1]), leaves):
            out[index] = np.broadcast_to(leaf._values(), shape[-1:])
        return out

    def _values(self) -> np.ndarray:
        """:meth:`numpy` (a new array, leaving literal components literals)."""
        return self.numpy()

    def torch(self):
        """A ``torch.Tensor`` with the contents, shaped as :meth:`numpy` (Dr.Jit's ``.torch()``;
        needs PyTorch).  A copy, as :meth:`numpy` is, and as Dr.Jit 1.5's (checked side by side: a
        write into ``Array3f(...).torch()`` leaves the array unchanged there too; the components
        live in separate buffers)."""
        import torch        # optional dependency
        return torch.from_numpy(np.ascontiguousarray(self.numpy()))

    def jax(self):
        """A ``jax.Array`` with the contents, shaped as :meth:`numpy` (Dr.Jit's ``.jax()``; needs JAX)."""
        import jax.numpy as jnp     # optional dependency
        return jnp.asarray(self.numpy())

    def __array__(self, dtype=None, copy=None):
        # (a static array's .numpy() is a new array, as Dr.Jit's: copy=False gives it, as there)
        return export.to_numpy(self, dtype, copy)

    def __dlpack__(self, *args, **kwargs):
        """DLPack export of the :attr:`shape` array (a copy: components live in separate buffers)."""
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __repr__(self) -> str:
        try:
            return format_array(self)
        except ValueError:
            return "[ragged array]"

    __str__ = __repr__

    def __bool__(self):
        # Dr.Jit's rule: only a mask of at most one dimension and one element has a truth value;
        # a scalar-backend ArrayXb/Array1b of one entry does (one dimension), a JIT Array1b does not.
        meta = type(self).__meta__
        name = type(self).__name__
        if meta.vt.name != "Bool":
            # (IncompatibleArgumentsError: Dr.Jit's TypeError, and the RuntimeError/ValueError
            # frostjit raised here before)
            raise IncompatibleArgumentsError(f"bool({name}): implicit conversion to 'bool' is only supported "
                                             "for scalar mask arrays.")
        ndim = len(meta.shape)
        if ndim > 1:
            # (a RuntimeError too, as Dr.Jit raises)
            raise IncompatibleArgumentsError(
                f"bool({name}) is ambiguous (implicit conversion to 'bool' requires an array with at most "
                f"1 dimension (this one has {ndim} dimensions).): use frostjit.all() or frostjit.any()")
        if len(self._c) != 1:
            raise IncompatibleArgumentsError(
                f"bool({name}) is ambiguous (implicit conversion to 'bool' requires an array with at most "
                f"1 element (this one has {len(self._c)} elements).): use frostjit.all() or frostjit.any()")
        return bool(self._c[0])

    # -- operators --------------------------------------------------------
    def __add__(self, o): return apply_vector("add", self, o)
    def __radd__(self, o): return apply_vector("add", o, self)
    def __sub__(self, o): return apply_vector("sub", self, o)
    def __rsub__(self, o): return apply_vector("sub", o, self)
    def __mul__(self, o): return apply_vector("mul", self, o)
    def __rmul__(self, o): return apply_vector("mul", o, self)
    def __truediv__(self, o): return apply_vector("truediv", self, o)
    def __rtruediv__(self, o): return apply_vector("truediv", o, self)
    def __floordiv__(self, o): return apply_vector("floordiv", self, o)
    def __rfloordiv__(self, o): return apply_vector("floordiv", o, self)
    def __mod__(self, o): return apply_vector("mod", self, o)
    def __rmod__(self, o): return apply_vector("mod", o, self)
    def __pow__(self, o): return apply_vector("pow", self, o)
    def __rpow__(self, o): return apply_vector("pow", o, self)
    def __and__(self, o): return apply_vector("and", self, o)
    def __rand__(self, o): return apply_vector("and", o, self)
    def __or__(self, o): return apply_vector("or", self, o)
    def __ror__(self, o): return apply_vector("or", o, self)
    def __xor__(self, o): return apply_vector("xor", self, o)
    def __rxor__(self, o): return apply_vector("xor", o, self)
    def __lshift__(self, o): return apply_vector("shl", self, o)
    def __rshift__(self, o): return apply_vector("shr", self, o)
    def __rlshift__(self, o): return apply_vector("shl", o, self)
    def __rrshift__(self, o): return apply_vector("shr", o, self)
    def __eq__(self, o): return apply_vector("eq", self, o)
    def __ne__(self, o): return apply_vector("ne", self, o)
    def __lt__(self, o): return apply_vector("lt", self, o)
    def __le__(self, o): return apply_vector("le", self, o)
    def __gt__(self, o): return apply_vector("gt", self, o)
    def __ge__(self, o): return apply_vector("ge", self, o)
    def __neg__(self): return apply_vector("neg", self)
    def __pos__(self): return self
    def __invert__(self): return apply_vector("not", self)
    def __abs__(self): return apply_vector("abs", self)
    # (a Python sequence is no matrix operand: Python's TypeError, as Dr.Jit raises)
    def __matmul__(self, o): return NotImplemented if type(o) in _SEQUENCES else HOOKS["matmul"](self, o)
    def __rmatmul__(self, o): return NotImplemented if type(o) in _SEQUENCES else HOOKS["matmul"](o, self)

    def _inplace(self, op, o):
        # A result of another class (Array3i += 1.5 is an Array3f) is returned, not converted
        # back: Python binds the name to it and ``self`` keeps its value, as in Dr.Jit.
        r = apply_vector(op, self, o)
        if type(r) is not type(self):
            return r
        self._c = r._c
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

    def __imatmul__(self, o):
        # in place as the other operators (Dr.Jit: m @= n changes m's object, aliases see it)
        r = self.__matmul__(o)
        if r is NotImplemented or type(r) is not type(self):
            return r
        self._c = r._c
        return self

    __hash__ = object.__hash__


# Dr.Jit refuses some operand types (Int / Int, Float // Float, Float & Float): see
# promotion.operator_refused.
for _op, _name in (("truediv", "truediv"), ("floordiv", "floordiv"), ("mod", "mod"), ("and", "and"),
                   ("or", "or"), ("xor", "xor"), ("shl", "lshift"), ("shr", "rshift")):
    for _dunder, _reflected in ((f"__{_name}__", False), (f"__r{_name}__", True)):
        setattr(VectorBase, _dunder, refusing_operator(getattr(VectorBase, _dunder), _op, _reflected))
del _op, _name, _dunder, _reflected


# -- swizzles: .x .y .z .w and every combination of up to four of them (.xy, .zyx, .xxxx) ------

def _swizzle_property(name: str):
    idx = ["xyzw".index(ch) for ch in name]

    def check(self):
        if not type(self)._swizzle or max(idx) >= len(self._c):
            raise ComponentError(f"{type(self).__name__} does not have a '{name}' component")

    if len(idx) == 1:
        k = idx[0]

        def getter(self):
            check(self)
            return self._c[k]

        def setter(self, v):
            check(self)
            self._c[k] = _component(self._elem, v)
    else:
        def getter(self):
            check(self)
            cls = _array_class(type(self), type(self)._elem, len(idx), "array")
            return cls._from_components([_copy(self._c[k]) for k in idx])

        def setter(self, v):
            check(self)
            values = v._c if isinstance(v, VectorBase) and v.Depth == self.Depth else [v] * len(idx)
            if len(values) != len(idx):
                raise ValueError(f"{type(self).__name__}.{name} = ...: expected {len(idx)} components, "
                                 f"got {len(values)}")
            for k, x in zip(idx, values):
                self._c[k] = _component(self._elem, x)
    return property(getter, setter, doc=f"Components {', '.join(name)} (a swizzle).")


for _length in range(1, 5):
    for _name in itertools.product("xyzw", repeat=_length):
        setattr(VectorBase, "".join(_name), _swizzle_property("".join(_name)))
del _length, _name


def _not_complex_imag():
    """``.imag`` of an array that is not complex (the complex types override it)."""
    def getter(self):
        raise NotComplexError(f"'{type(self).__name__}' object has no attribute 'imag' "
                              "(the array is not complex-valued)")

    def setter(self, v):
        raise NotComplexError(f"{type(self).__name__}.imag = ...: the array is not complex-valued")
    return property(getter, setter)


VectorBase.imag = _not_complex_imag()


# -- helpers -----------------------------------------------------------------------------

def _is_mask(k) -> bool:
    """A Bool array or a vector of them (a mask index, ``v[mask] = w``)."""
    if isinstance(k, ArrayBase):
        return k._vt.is_bool
    return isinstance(k, VectorBase) and k._leaf._vt.is_bool


def _copy(c):
    """A new handle on component ``c`` (same node and AD vertex; a static array: deeply)."""
    if isinstance(c, ArrayBase):
        out = type(c).__new__(type(c))
        out._node = c._node
        out._ad = c._ad
        return out
    if not isinstance(c, VectorBase):
        return c        # a number (the scalar backend's components): immutable
    return type(c)._from_components([_copy(x) for x in c._c])


def component_class(c, leaf: type) -> type:
    """The class of component ``c``: its type, or for a Python number (a component of the
    scalar backend's arrays) the element class of ``leaf``'s backend that the number's kind
    promotes ``leaf`` to: ``leaf`` itself, a ``Float32`` element for a float computed from
    integers, the ``Bool`` element for a bool (as the JIT types the same expression)."""
    if isinstance(c, bool):
        return registry.flat_type(leaf._backend, Bool)
    if isinstance(c, float) and not leaf._vt.is_float:
        return registry.flat_type(leaf._backend, Float32)
    return leaf if isinstance(c, int) or isinstance(c, float) else type(c)


def tensor_rows(cls, v) -> list | None:
    """The components of ``cls(t)`` for a JIT tensor ``t`` with as many dimensions as ``cls`` is
    deep and ``cls``'s component count: its rows ``t[0], t[1], ...`` (tensor indexing keeps the
    derivatives, as Dr.Jit's conversion does; read through NumPy they were dropped).  ``None``
    for anything else (the NumPy route, unchanged)."""
    if not (cls.IsJIT and getattr(type(v), "IsTensor", False) and getattr(type(v), "IsJIT", False)):
        return None
    shape = v.shape
    if len(shape) != cls.Depth or (cls._n is not None and shape[0] != cls._n):
        return None
    return [_component(cls._elem, v[k]) for k in range(shape[0])]


def _component(elem, v):
    """``v`` as a component of class ``elem``: converted, or a copy of its handle."""
    if type(v) is elem:
        return _copy(v)
    return elem(v)


def _leaves(v):
    """The 1-D arrays of static array ``v``, outermost component first."""
    for c in v._c:
        if isinstance(c, ArrayBase):
            yield c
        else:
            yield from _leaves(c)


def _inner_shape(v) -> tuple:
    """The shape of ``v``'s components (equal for all of them up to width-1 broadcasting)."""
    shapes = [(len(c),) if isinstance(c, ArrayBase) else c.shape for c in v._c]
    if not shapes:
        return (0,) * (v.Depth - 1)
    static = {s[:-1] for s in shapes}
    widths = {s[-1] for s in shapes} - {1}
    if len(static) > 1 or len(widths) > 1:
        shown = ", ".join(str(s[0]) if len(s) == 1 else str(s) for s in shapes)
        raise RaggedArrayError(f"{type(v).__name__}.shape: the components have incompatible sizes ({shown}): "
                         "the array is ragged")
    width = widths.pop() if widths else 1
    return static.pop() + (width,)


def _array_class(like: type, elem: type, n, family: str):
    """The static array class with ``n`` components of class ``elem`` in ``family``
    (``"array"`` when ``family`` has no such class; a result nobody declared raises)."""
    cls = registry.array_type(elem, n, family)
    if cls is None and family != "array":
        cls = registry.array_type(elem, n, "array")
    if cls is None:
        cls = registry.array_type(elem, None, "dynamic")
    if cls is None:
        raise TypeError(f"frostjit: no static array type with {n} components of type {elem.__name__} "
                        f"(from {like.__name__})")
    return cls


def _divide_by_lower_depth(a, b):
    """``a / b`` as Dr.Jit 1.5 computes it when ``b`` has a lower depth than the JIT float static
    array ``a`` (``Array3f / Float``, ``Matrix2f / Float``, ``Array22f / Array2f``): ``a * rcp(b)``,
    one reciprocal for every component (the bits differ from component-wise division in the
    last place for about a quarter of the lanes; side by side, r16).  A complex number,
    quaternion or matrix takes the reciprocal of a Python number too (Dr.Jit does with
    ``ConstantPropagation`` cleared; set, the literal rule of ``trace/ops.py`` gives the same bits);
    a plain static array divides by a Python number (Dr.Jit's bits both ways).  ``None``: the
    default division applies."""
    cls = type(a)
    if not isinstance(a, VectorBase) or not cls.IsJIT or cls._leaf is None or not cls._leaf._vt.is_float:
        return None
    if isinstance(b, VectorBase):
        if b.Depth >= cls.Depth or not type(b).IsJIT:
            return None
        return apply_vector("mul", a, apply_vector("rcp", b))
    if isinstance(b, ArrayBase):
        if not b.IsJIT or getattr(b, "IsTensor", False) or not b._vt.is_float:
            return None
    elif cls._ops and (type(b) is float or type(b) is int):
        b = cls._leaf(b)
    else:
        return None
    return apply_vector("mul", a, apply("rcp", b))


def apply_vector(op: str, *operands):
    """Apply the lane-wise op ``op`` to operands of which at least one is a static array.

    The class of the first special operand (a matrix, complex number, quaternion) may define
    ``op`` differently (:attr:`VectorBase._ops`); otherwise the op applies component by
    component, operands of lower depth broadcasting to every component.
    """
    if len(operands) == 2:
        a, b = operands
        cls = type(a)
        if op == "truediv":
            out = _divide_by_lower_depth(a, b)
            if out is not None:
                return out
        if type(b) is cls and not cls._ops and cls.Depth == 2 and cls._n is not None:
            # Two plain static arrays of one class (Array3f + Array3f): a node per component
            # when every component is of the element class with no gradient (see .direct).
            e = cls._elem
            xs = direct.nodes(a._c, e) if direct.kit(e) is not None else None
            ys = None if xs is None else direct.nodes(b._c, e)
            comps = None if ys is None else direct.binary(op, e, xs, ys)
            if comps is not None:
                return cls._from_components(comps)
        elif type(b) is getattr(cls, "_elem", None) or cls is getattr(type(b), "_elem", None):
            out = _direct_broadcast(op, a, b)
            if out is not None:
                return out
        elif type(b) is float or type(b) is int:
            out = _direct_number(op, a, b, True)
            if out is not None:
                return out
        elif cls is float or cls is int:
            out = _direct_number(op, b, a, False)
            if out is not None:
                return out
    elif len(operands) == 3 and op == "fma":
        out = direct.fma(*operands)
        if out is not None:
            return out
    for o in operands:
        if isinstance(o, _NUMPY) and numpy_element(o):
            operands = _numpy_elements(op, operands)
            if operands is None:
                return NotImplemented       # (from an operator: Array3b * np.array(2), NumPy computes)
            break
    if type(operands[0]) in _CONVERTED or type(operands[-1]) in _CONVERTED or \
            (len(operands) > 2 and any(type(o) in _CONVERTED for o in operands[1:-1])):
        operands = _sequences_as_arrays(op, operands)
    depth = 0
    special = False
    for o in operands:
        if isinstance(o, VectorBase):
            if not o.IsJIT and mixes_backends(operands):
                # (before a JIT matrix's own ops see a scalar-backend one: llvm.Matrix2f + scalar.Matrix2f)
                return apply_vector(op, *_lift_scalar_arrays(operands))
            if o._ops:
                special = True
            if o.Depth > depth:
                depth = o.Depth
    if special:
        for o in operands:
            impl = o._ops.get(op) if isinstance(o, VectorBase) and o._ops else None
            if impl is not None:
                return impl(*operands)
    return componentwise(op, operands, depth)


def _direct_broadcast(op: str, a, b):
    """``a op b`` where one operand is a plain static array (``Array3f``) and the other a 1-D
    array of its element class (``Float``), which every component meets (``v * rsqrt(d)`` of
    ``normalize``): a node per component, as :func:`componentwise` makes them, or None where
    that one decides (a gradient, a special class, an op that changes the type)."""
    vec_first = isinstance(a, VectorBase)
    v, s = (a, b) if vec_first else (b, a)
    cls = type(v)
    if isinstance(s, VectorBase) or cls._ops or cls.Depth != 2 or cls._n is None:
        return None
    e = cls._elem
    if direct.kit(e) is None or s._ad is not None:
        return None
    xs = direct.nodes(v._c, e)
    y = s._node
    if xs is None or any(x.size != y.size for x in xs):
        return None     # (sizes that differ: componentwise broadcasts them or names the error)
    ys = [y] * len(xs)
    comps = direct.binary(op, e, xs, ys) if vec_first else direct.binary(op, e, ys, xs)
    return None if comps is None else cls._from_components(comps)


def _direct_number(op: str, v, num, vec_first: bool):
    """``v op num`` (``num op v`` unless ``vec_first``) where ``v`` is a plain static array of a
    floating-point element class (``Array3f * 1.5``, ``1.0 - v``) and ``num`` a Python float or
    int: each component's own operator (the 1-D arrays' fast path, its cached literal node), as
    :func:`componentwise` computes the same nodes through ``apply``; or None where that one
    decides (a gradient, another component class, an operation other than ``+ - *``)."""
    names = _NUMBER_OPERATORS.get(op)
    cls = type(v)
    if names is None or not isinstance(v, VectorBase) or cls._ops or cls.Depth != 2 or cls._n is None:
        return None
    e = cls._elem
    if direct.kit(e) is None or not e._vt.is_float:
        return None         # (an integer or mask class: a float number promotes, the general rules)
    for c in v._c:
        if type(c) is not e or c._ad is not None:
            return None
    f = getattr(e, names[0] if vec_first else names[1])
    comps = [f(c, num) for c in v._c]
    for c in comps:
        if type(c) is not e:        # (never for these operations; the general path decides)
            return None
    return cls._from_components(comps)


_NUMBER_OPERATORS = {"add": ("__add__", "__radd__"), "sub": ("__sub__", "__rsub__"), "mul": ("__mul__", "__rmul__")}


def mixes_backends(operands) -> bool:
    """Whether scalar-backend arrays meet JIT arrays among ``operands``."""
    return any(getattr(type(x), "IsJIT", False) for x in operands) and \
        any(isinstance(x, VectorBase) and not x.IsJIT for x in operands)


def _lift_scalar_arrays(operands) -> list:
    """The operands with every scalar-backend array converted to the JIT backend of the others
    (Dr.Jit promotes ``scalar.Array3i + llvm.Float`` to ``llvm.Array3f``): into the JIT type of
    its own shape, or, when a JIT operand is nested deeper, into that operand's type, entry k
    of the scalar array making component k (as a Python sequence would)."""
    deepest = None
    for x in operands:
        if getattr(type(x), "IsJIT", False) and (deepest is None or type(x).Depth > type(deepest).Depth):
            deepest = x
    target = type(deepest)
    module = sys.modules[getattr(target, "_leaf", target).__module__]      # frostjit.llvm(.ad)
    out = []
    for x in operands:
        if isinstance(x, VectorBase) and not type(x).IsJIT:
            same = getattr(module, type(x).__name__, None)
            x = same(x) if same is not None and same.Depth >= target.Depth else target(x)
        out.append(x)
    return out


def _value_arrays(op: str, operands) -> list:
    """The static arrays among ``operands`` that decide the type of the others: all of them, but
    for ``select`` those among its values, not its mask."""
    return [o for o in (operands[1:] if op == "select" else operands) if isinstance(o, VectorBase)]


def _numpy_elements(op: str, operands):
    """``operands`` with each NumPy scalar an element of the static arrays' type, as Dr.Jit converts
    it (:func:`.flat.numpy_scalar_operand`: ``ArrayXi(3, 4) + np.float32(1.5)`` is ``ArrayXi(4, 5)``);
    None where Dr.Jit's operator then refuses (a NumPy scalar or 0-d array in arithmetic beside
    masks: ``ArrayXb(True, False) * np.array(2)``, which NumPy computes)."""
    arrays = _value_arrays(op, operands)
    if not arrays:
        return operands
    vt = max(arrays, key=lambda o: o.Depth)._leaf._vt
    if vt is Bool and op in MASK_REFUSED_OPERATORS:
        return None
    return tuple(o if k == 0 and op == "select" else numpy_scalar_operand(o, vt, op)
                 for k, o in enumerate(operands))


def _sequences_as_arrays(op: str, operands) -> tuple:
    """``operands`` with each list/tuple or NumPy array converted to the class of the deepest
    static array among them, as Dr.Jit does (``Array3f + (1, 2, 3)``); a Python float in an
    integer array's operand makes it the float class (``Array3i + [1, 2.5, 3]`` is an
    ``Array3f``), a NumPy array's dtype its element type (``Array3f + np.array([1., 2., 3.])``
    is an ``Array3f64``, component k from entry k: not a 1-D array beside each component).
    A 0-d NumPy array is an element of the static array's type (``Array3i * np.array(2.5)``
    is ``Array3i * 2``, see :func:`.promotion.zero_dim_operand`).  A ``select``'s values take
    the class of its value operands, not of its mask (``select(ArrayXb, ArrayXf, np.array(5.5))``
    selects 5.5, not ``True``)."""
    arrays = _value_arrays(op, operands)
    like = max(arrays or [o for o in operands if isinstance(o, VectorBase)], key=lambda o: o.Depth)
    like_cls, leaf = type(like), type(like)._leaf
    out = []
    for o in operands:
        if type(o) in _CONVERTED:
            cls = like_cls
            if type(o) is not np.ndarray:
                vt = sequence_type(op, leaf._vt, o)
            elif o.ndim == 0:
                o = leaf(zero_dim_operand(op, o, leaf._vt))
                vt = None
            else:
                vt = from_numpy_dtype(o.dtype)
            if vt is not None and vt is not leaf._vt and cls._elem is leaf:   # (an array of 1-D arrays or numbers)
                elem = registry.flat_type(leaf._backend, vt, leaf._is_ad)
                cls = registry.array_type(elem, cls._n, cls._family) or cls
            if vt is not None:
                o = cls(o)
        out.append(o)
    return tuple(out)


_SEQUENCES = (list, tuple)
_CONVERTED = (list, tuple, np.ndarray)
_NUMPY = (np.generic, np.ndarray)


def componentwise(op: str, operands, depth: int | None = None):
    """``op`` applied component by component to the operands of the greatest depth (the
    others broadcast); the result keeps the family of the first of them (a matrix stays a
    matrix) unless it is a mask (comparisons of matrices give ``Array22b``, as in Dr.Jit)."""
    if depth is None:
        depth = max(o.Depth for o in operands if isinstance(o, VectorBase))
    first = None
    dynamic = None          # the first operand of dynamic size (ArrayXf): the result's family (Dr.Jit)
    n = 0
    columns = []            # per operand: its components, or None (broadcast whole)
    for o in operands:
        if isinstance(o, VectorBase) and o.Depth == depth:
            c = o._c
            if dynamic is None and o._n is None:
                dynamic = o
            if first is None:
                first, n = o, len(c)
            elif len(c) != n:
                # (a static size is part of the type; a dynamic array's is a value, and a
                # dynamic array of one component broadcasts, as in Dr.Jit, also against a
                # static one: ArrayXf(x) + Array3f(...) is an ArrayXf of 3 components)
                # (an empty dynamic array beside one of a single component or a number gives an
                # empty one, NumPy's rule, which the scalar tensors built on these arrays need;
                # Dr.Jit raises there: a deliberate difference, docs/types.md.  Beside a longer
                # one it is an error, as in NumPy and Dr.Jit.)
                if first._n is None and n == 1:
                    n = len(c)
                elif not (o._n is None and len(c) == 1 or first._n is None and o._n is None and not c and n == 1):
                    raise IncompatibleArgumentsError(
                        f"frostjit.{op}(): Incompatible arguments: incompatible sizes {n} and {len(c)} "
                        f"({', '.join(type(x).__name__ for x in operands)})")
            columns.append(c)
        else:
            columns.append(None)
    if dynamic is not None:
        columns = [c * n if c is not None and len(c) == 1 and n != 1 else c for c in columns]
    like = type(dynamic if dynamic is not None else first)
    if like._leafwise is not None:
        # Components that are plain numbers (the scalar backend): computed all at once.
        comps, elem = like._leafwise(op, operands, columns)
    else:
        try:
            if len(operands) == 2:
                (a, b), (ca, cb) = operands, columns
                comps = [apply(op, ca[k] if ca is not None else a, cb[k] if cb is not None else b) for k in range(n)]
            else:
                comps = [apply(op, *[c[k] if c is not None else o for o, c in zip(operands, columns)])
                         for k in range(n)]
        except IncompatibleSizesError as e:
            # Dr.Jit: the vector's error says a nested operation failed; the cause says why
            raise IncompatibleSizesError(f"frostjit.{op}(): nested operation failed ({e})") from e
        elem = type(comps[0]) if comps else like._elem
    if (not comps and like._leafwise is None) or elem is like._elem:     # (leafwise knows an empty result's type)
        return like._from_components(comps)
    family = like._family
    if family in _SPECIAL and getattr(elem, "_leaf", elem)._vt.is_bool:
        family = "array"        # comparisons of matrices, complex numbers: plain masks (Dr.Jit)
    cls = registry.array_type(elem, None if family == "dynamic" else n, family) or \
        _array_class(like, elem, n, family)
    return cls._from_components(comps)


_SPECIAL = ("matrix", "complex", "quaternion")


def from_parts(like: type, parts) -> VectorBase:
    """A static array of ``like``'s family and size with components ``parts`` (1-D arrays or
    Python numbers), of the element type their promotion gives (``Complex2f`` parts times a
    ``Float64`` make a ``Complex2f64``).  What complex numbers and quaternions build results with."""
    elem = like._elem
    vt, ad = elem._vt, elem._is_ad
    for p in parts:
        if isinstance(p, ArrayBase) and type(p) is not elem:
            vt, ad = promote(vt, p._vt), ad or p._is_ad
    if vt is not elem._vt or ad != elem._is_ad:
        elem = registry.flat_type(elem._backend, vt, ad)
    cls = like if elem is like._elem else registry.array_type(elem, like._n, like._family)
    if cls is None:
        raise TypeError(f"frostjit: no {like._family} type of {elem.__name__} (from {like.__name__})")
    return cls._from_components([_component(elem, p) for p in parts])     # (copies: no aliasing)


def scalar_result(like: type, value):
    """``value``, a Python ``float`` computed in double precision from the components of a
    scalar-backend ``like`` (a ``Complex2f``, a ``Quaternion4f16``), rounded to ``like``'s element
    type, as Dr.Jit's C++ computes it in that type (``abs(Complex2f(1, 2))`` is the float32
    2.2360680103302, not sqrt(5)); a 1-D array (the JIT backends' component) as it is."""
    return round_to(like._elem._vt, value) if isinstance(value, float) else value


def is_plain_static(v, n: int) -> bool:
    """Whether ``v`` is a plain (not a matrix, complex number or quaternion) static array of
    ``n`` components that are 1-D arrays or numbers: what Dr.Jit lets stand for a complex number
    (``n = 2``) or a quaternion (``n = 4``) in their arithmetic."""
    return (isinstance(v, VectorBase) and not type(v).__meta__.is_special and len(v._c) == n
            and not any(isinstance(c, VectorBase) for c in v._c))
