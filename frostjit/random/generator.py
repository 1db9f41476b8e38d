"""``fj.rng()``: NumPy-style generators (``random``, ``uniform``, ``normal``, ``integers``) over
Philox4x32, bit-exact with Dr.Jit 1.5's ``dr.rng()``.

Every call of a sampling method maps the counter ``(counter, lane, 0, 0)`` under the key
``seed`` for each lane of the requested width, takes the block's outputs from the last one
down (one per leaf of the requested type, a fresh block with the next counter when a block is
used up), and advances the generator's counter by the number of blocks used.  So a call never
depends on the width of earlier calls, and differently seeded generators are independent.
"""
from __future__ import annotations

import math
import numbers
from typing import Union

from ..array.flat import ArrayBase, is_flat
from ..array.vector import VectorBase
from ..errors import AxisError, ShapeMismatchError
from ..functions.creation import arange, full
from ..functions.evaluation import make_opaque, width
from ..functions.math import fma, reinterpret_array, select
from ..functions.memory import gather
from ..functions.reduce import max as fj_max
from ..functions.sorting import argsort
from ..trace import ops
from ..trace.dtypes import Bool, Float16, Float32, Float64, Int32, UInt32, UInt64
from ..trace.state import JitBackend
from ..array import registry
from ._types import new_handle, philox_class
from .rejection import generator_loop


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _literal_value(v):
    """The Python value of a number or of a size-1 literal array, else None."""
    if _is_number(v):
        return v
    if isinstance(v, ArrayBase) and v._node.op == "literal" and v._node.size == 1 and v._ad is None:
        return v._node.value
    return None


def _is_zero(v) -> bool:
    x = _literal_value(v)
    return x is not None and x == 0 and math.copysign(1.0, x) > 0   # +0 only: -0 + x is not x


def _is_one(v) -> bool:
    x = _literal_value(v)
    return x is not None and x == 1


def _affine(x, scale, offset):
    """``fma(x, scale, offset)`` with Dr.Jit's folding of literals: a 0 offset is not added
    (``-0`` stays ``-0``), a 1 scale not multiplied, and a 0 scale gives ``offset`` itself
    (even where ``x`` is NaN).  The folds decide signs of zeros and NaNs, so they matter for
    bit-exactness."""
    if _is_zero(scale):
        return _broadcast(offset, x)
    if _is_zero(offset):
        return x if _is_one(scale) else x * scale
    if _is_one(scale):
        return x + offset
    return fma(x, scale, offset)


def _broadcast(v, like):
    """``v`` (a number or an array) as an array of ``like``'s type and width, bits unchanged."""
    cls = type(like)
    if _is_number(v):
        return full(cls, v, width(like))
    v = v if type(v) is cls else cls(v)
    return v if len(v) == len(like) else select(full(registry.flat_type(like._backend, Bool), True, width(like)), v, v)


class Generator:
    """Base class of the generators :func:`frostjit.rng` returns (Dr.Jit's
    ``drjit.random.Generator``): NumPy-style sampling of JIT arrays of a given type and shape."""

    def random(self, dtype, shape):
        """Uniform variates on ``[0, 1)`` of type ``dtype`` (a ``Float16``/``Float32``/``Float64`` array,
        static array or tensor type, e.g. ``Float``, ``Array3f``, ``Matrix4f``, ``TensorXf``) and
        ``shape`` (the width; ``(3, width)`` for an ``Array3f``, ``(4, 4, width)`` for a
        ``Matrix4f``; a tensor's shape)."""
        return self._sample(dtype, shape, "uniform", "random")

    def uniform(self, dtype, shape, low=0.0, high=1.0):
        """Uniform variates on ``[low, high)``: ``fma(random(), high - low, low)`` (``low`` and
        ``high`` may be numbers or arrays)."""
        return self._sample(dtype, shape, "uniform", "uniform", lambda c: _affine(c, high - low, low))

    def normal(self, dtype, shape, loc=0.0, scale=1.0):
        """Normal variates with mean ``loc`` and standard deviation ``scale``:
        ``fma(z, scale, loc)`` of standard normal ``z`` (Box-Muller)."""
        return self._sample(dtype, shape, "normal", "normal", lambda c: _affine(c, scale, loc))

    def integers(self, dtype, shape, low=0, high=None, endpoint=False):
        """Uniform integers of type ``dtype`` (``Int32`` or ``UInt32``) on ``[low, high)``
        (``[low, high]`` with ``endpoint=True``; ``[0, low)`` when ``high`` is None), unbiased
        (Lemire's multiply-shift method with rejection)."""
        return self._integers(dtype, shape, low, high, endpoint)

    def permutation(self, x, /, *args, **kwargs):
        """A random permutation, as Dr.Jit 1.5's ``Generator.permutation``.

        ``permutation(dtype, n)`` permutes ``arange(UInt32, n)`` (``dtype`` picks the backend);
        ``permutation(x)`` shuffles a copy of a 1-D array; ``permutation(x, axis=0)`` shuffles a
        tensor's slices along ``axis``, each slice kept whole.  The order is the ``argsort`` of
        ``random(Float32, n)`` keys, so the same seed gives Dr.Jit's permutation.

        Examples
        --------
        >>> fj.rng(seed=42).permutation(UInt32, 4)      # some order of 0, 1, 2, 3
        >>> fj.rng(seed=7).permutation(Float(10, 20, 30))
        """
        who = "Generator.permutation()"
        if isinstance(x, type):
            n = args[0] if args else kwargs.get("n")
            if not _is_int(n):
                raise TypeError(f"{who}: 'n' must be an int when the first argument is a type, got {n!r}")
            if n < 0:
                raise ValueError(f"{who}: 'n' must be >= 0, got {n}")
            backend = _backend_of_type(x, who)
            u32 = registry.flat_type(backend, UInt32)
            if n <= 1:
                return arange(u32, n)
            return argsort(self.random(registry.flat_type(backend, Float32), n))
        axis = args[0] if args else kwargs.get("axis", 0)
        if getattr(type(x), "IsTensor", False) and not isinstance(x, (ArrayBase, VectorBase)):
            ndim = len(x.shape)
            if not (_is_int(axis) and -ndim <= axis < ndim):
                raise AxisError(f"{who}: axis {axis!r} is out of bounds for a tensor with {ndim} dimensions")
            axis %= ndim
            n = x.shape[axis]
            if n <= 1:
                return type(x)(x)
            perm = argsort(self.random(registry.flat_type(x.array._backend, Float32), n))
            return x[tuple(perm if i == axis else slice(None) for i in range(ndim))]
        if isinstance(x, ArrayBase):
            if axis not in (0, -1):
                raise AxisError(f"{who}: a 1-D array has only axis 0, got axis={axis!r}")
            n = width(x)
            if n <= 1:
                return type(x)(x)
            perm = argsort(self.random(registry.flat_type(x._backend, Float32), n))
            return gather(type(x), x, perm)
        raise TypeError(f"{who}: the first argument must be a frostjit array type, a 1-D array or a "
                        f"tensor, got {type(x).__name__}")


class Philox4x32Generator(Generator):
    """The generator :func:`frostjit.rng` returns: a seed and a call counter over
    :class:`~frostjit.random.Philox4x32`.

    ``_seed`` (a Python int, or a ``UInt64`` array after the first call) and ``_counter``
    (likewise, a ``UInt32`` array) form the ``DRJIT_STRUCT``, so a generator is a PyTree: an
    input of a frozen function advances on every replay.  Unless ``symbolic``, both are kept in
    memory (never folded into kernels), so generating again compiles nothing new.
    """

    DRJIT_STRUCT = {"_seed": Union[int, ArrayBase], "_counter": Union[int, ArrayBase]}

    def __init__(self, seed=0, symbolic: bool = False):
        self._seed = seed
        self._counter = 0
        self._symbolic = bool(symbolic)

    def __repr__(self) -> str:
        """Dr.Jit's form, ``Philox4x32Generator[seed=3, counter=2]`` (lane 0 of an array seed or
        counter: reading it evaluates the array)."""
        seed, counter = (v if isinstance(v, numbers.Integral) else int(v[0]) for v in (self._seed, self._counter))
        return f"Philox4x32Generator[seed={seed}, counter={counter}]"

    # -- freeze protocol: 'symbolic' is a Python value of the key --------------------------------
    def __fj_traverse__(self) -> dict:
        return {"_seed": self._seed, "_counter": self._counter, "_symbolic": self._symbolic}

    def __fj_assign__(self, values: dict) -> None:
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def __fj_construct__(cls, values: dict):
        out = cls.__new__(cls)
        out._symbolic = False
        out.__fj_assign__(values)
        return out

    def clone(self) -> "Philox4x32Generator":
        """An independent copy in the same state (the same future variates)."""
        out = type(self).__new__(type(self))
        out._symbolic = self._symbolic
        out._seed = new_handle(self._seed) if is_flat(self._seed) else self._seed
        out._counter = new_handle(self._counter) if is_flat(self._counter) else self._counter
        return out

    # -- state ------------------------------------------------------------------------------------
    def _state(self, backend, who: str):
        """``(seed, counter)`` as ``UInt64`` / ``UInt32`` arrays of ``backend``, stored back."""
        u64 = registry.flat_type(backend, UInt64)
        u32 = registry.flat_type(backend, UInt32)
        seed, counter = self._seed, self._counter
        if is_flat(seed):
            if seed._backend is not backend or not seed._vt.is_integral:
                raise TypeError(f"{who}: the seed is a {type(seed).__name__}; expected an integer "
                                f"array of the {backend.name} backend")
            seed = seed if type(seed) is u64 else u64(seed)
        else:
            seed = u64(ops.convert_scalar(UInt64, seed, who))
        counter = counter if type(counter) is u32 else u32(counter & 0xFFFFFFFF if _is_int(counter) else counter)
        if not self._symbolic:
            make_opaque(seed, counter)
        if isinstance(backend, JitBackend):       # (not the scalar backend's arrays)
            self._seed, self._counter = seed, counter
        return seed, counter

    def _keep_counter(self, counter) -> None:
        """Store the counter after a draw.  The scalar backend's is kept as a Python int and its
        seed as it was (as Dr.Jit keeps a scalar draw's), so a later draw of a JIT type converts
        them to that backend's arrays (a scalar ``ArrayXu`` stored there made it raise)."""
        scalar = is_flat(counter) and not isinstance(counter._backend, JitBackend)
        self._counter = int(counter[0]) if scalar else counter

    @staticmethod
    def _next_counter(counter):
        """``counter + 1``; a literal stays a literal (as Dr.Jit folds it), so a symbolic
        generator's counter never becomes a growing chain of additions."""
        node = getattr(counter, "_node", None)     # (None: the scalar backend's ArrayXu)
        if node is not None and node.op == "literal" and node.size == 1:
            return type(counter)((node.value + 1) & 0xFFFFFFFF)
        return counter + 1

    # -- sampling ---------------------------------------------------------------------------------
    def _layout(self, dtype, shape, who: str, kinds):
        """``(leaf class, number of leaves, width, build)`` of a request, checking ``dtype`` and
        ``shape``; ``build(leaves)`` makes the ``dtype`` instance of the leaves (outermost first).

        A 1-D type takes the width (or a 1-tuple); a static array type (nested, a matrix, complex
        number, quaternion, ``ArrayXf``) its static sizes then the width (``(3, 3, width)`` for an
        ``Array33f``; a dynamic size is free); a tensor type its shape.
        """
        if getattr(dtype, "IsTensor", False) and isinstance(dtype, type) and not issubclass(dtype, VectorBase):
            leaf = dtype._array_type
            dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            for d in dims:
                if not _is_int(d) or d < 0:
                    raise ValueError(f"{who}: shape {shape!r} of a {dtype.__name__} must hold ints >= 0")
            width, n = math.prod(dims), 1
            build = lambda leaves: dtype._from_array(leaves[0], dims)     # noqa: E731
        elif isinstance(dtype, type) and issubclass(dtype, VectorBase) and not dtype.IsJIT:
            # The scalar backend: no lanes, 'shape' is the static shape (an ArrayXf's is free); one
            # lane of 1-D scalar arrays underneath, so the numbers are lane 0's of the JIT types.
            static = _static_sizes(dtype)
            dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            if not (len(dims) == len(static) and
                    all(d is None and _is_int(s) and s >= 0 or s == d for s, d in zip(dims, static))):
                expected = "(" + ", ".join("n" if d is None else str(d) for d in static) + ")"
                raise ShapeMismatchError(f"{who}: shape {shape!r} does not fit {dtype.__name__}: expected {expected} "
                                         "(could not construct output: the provided \"shape\" and \"dtype\" "
                                         "parameters are incompatible.)")
            leaf = registry.array_type(dtype._leaf, None, "dynamic")      # the scalar ArrayXf of its type
            n, width = math.prod(dims), 1
            build = lambda leaves: _nest(dtype, dims, [v[0] for v in leaves])     # noqa: E731
        elif dtype is float and kinds[0].is_float:
            # Dr.Jit 1.5: one Python float, lane 0 of a Float64 draw (the scalar backend's);
            # 'shape' is an int or a 1-tuple and does not change the number drawn
            if isinstance(shape, (tuple, list)) and len(shape) > 1:
                raise ShapeMismatchError(f"{who}: shape {tuple(shape)!r} for dtype float: could not construct output: "
                                         "the provided \"shape\" and \"dtype\" parameters are incompatible.")
            leaf = registry.array_type(registry.flat_type(JitBackend.Invalid, Float64), None, "dynamic")
            n, width = 1, 1
            build = lambda leaves: float(leaves[0][0])     # noqa: E731
        elif isinstance(dtype, type) and issubclass(dtype, ArrayBase):
            leaf, n = dtype, 1
            if isinstance(shape, tuple):
                if len(shape) != 1:
                    raise ShapeMismatchError(f"{who}: shape {shape} has {len(shape)} dimensions; a "
                                             f"{dtype.__name__} has 1 (tensors take more: TensorXf, ...; could not "
                                             f"construct output: the provided \"shape\" and \"dtype\" parameters "
                                             f"are incompatible.)")
                shape = shape[0]
            width = shape
            build = lambda leaves: leaves[0]      # noqa: E731
        elif isinstance(dtype, type) and issubclass(dtype, VectorBase):
            leaf, static = dtype._leaf, _static_sizes(dtype)
            expected = "(" + ", ".join("n" if d is None else str(d) for d in static) + ", width)"
            if not (isinstance(shape, tuple) and len(shape) == len(static) + 1 and
                    all(d is None and _is_int(s) and s >= 0 or s == d for s, d in zip(shape, static))):
                raise ShapeMismatchError(f"{who}: shape {shape!r} does not fit {dtype.__name__}: expected {expected} "
                                         "(could not construct output: the provided \"shape\" and \"dtype\" "
                                         "parameters are incompatible.)")
            dims, width = shape[:-1], shape[-1]
            n = math.prod(dims)
            build = lambda leaves: _nest(dtype, dims, leaves)     # noqa: E731
        else:
            raise TypeError(f"{who}: 'dtype' must be a frostjit array type, not {dtype!r}")
        if leaf._vt not in kinds:
            names = "/".join(k.name for k in kinds)
            raise TypeError(f"{who}: unsupported dtype {dtype.__name__}: must be a {names} array"
                            + (", static array or tensor type" if kinds[0].is_float else " type"))
        if not (_is_int(width) or hasattr(width, "__symbolic_size__")):
            raise TypeError(f"{who}: the width must be an int, not {type(width).__name__}")
        if _is_int(width) and width < 0:
            raise ValueError(f"{who}: the width must be >= 0, got {width}")
        return leaf, n, width, build

    def _blocks(self, backend, width, who: str):
        """A function returning the next block's output words (a new counter each time), and one
        returning the counter after the blocks drawn so far."""
        seed, counter = self._state(backend, who)
        philox = philox_class(backend)
        lane = arange(registry.flat_type(backend, UInt32), width)
        box = [counter]

        def next_block(at=None):
            """The next block; or, with ``at``, the block of counter ``at`` (a per-lane array,
            as a rejection loop's ``base + i``), leaving the counter alone."""
            if at is not None:
                return philox(seed, at, lane)
            p = philox(seed, box[0], lane)
            box[0] = self._next_counter(box[0])
            return p
        return next_block, lambda: box[0]

    def _sample(self, dtype, shape, kind: str, name: str, transform=None):
        """Variates of ``kind`` (``"uniform"``, ``"normal"``) for ``dtype``/``shape``, passed
        through ``transform`` (an affine map)."""
        who = f"Generator.{name}()"
        leaf, n, width, build = self._layout(dtype, shape, who, (Float32, Float64, Float16))
        if type(width) is int and width == 0:
            # No lane draws (the key's size-1 words do not broadcast to an empty counter); the
            # counter still moves past the blocks a draw would take, as before session r11
            # (Dr.Jit 1.5 raises for an empty draw)
            _, counter = self._state(leaf._backend, who)
            for _ in range(-(-n // (2 if leaf._vt is Float64 else 4))):
                counter = self._next_counter(counter)
            self._keep_counter(counter)
            out = build([leaf() for _ in range(n)])
            return out if transform is None else transform(out)
        backend = leaf._backend
        next_block, counter = self._blocks(backend, width, who)
        double = leaf._vt is Float64
        pool, values = [], []
        for _ in range(n):
            if not pool:
                p = next_block()
                if kind == "uniform":
                    block = p._float64x2(True, who) if double else p._float32x4(True, who)
                else:
                    block = list(p.next_float64x2_normal() if double else p.next_float32x4_normal())
                pool = list(block)
            values.append(pool.pop())      # Dr.Jit takes a block's outputs from the last one down
        self._keep_counter(counter())
        # (Float16: the Float32 variates rounded, as Dr.Jit 1.5 draws them; measured bit for bit)
        values = [v if type(v) is leaf else leaf(v) for v in values]
        out = build(values)
        # (on the whole value, with its family's arithmetic, as Dr.Jit: a matrix's offset lands on
        # its diagonal, a complex number's on its real part)
        return out if transform is None else transform(out)

    def _integers(self, dtype, shape, low, high, endpoint):
        who = "Generator.integers()"
        leaf, n, width, build = self._layout(dtype, shape, who, (Int32, UInt32))
        if not issubclass(dtype, ArrayBase):
            raise TypeError(f"{who}: unsupported dtype {dtype.__name__}: must be a 1-D Int32 or "
                            "UInt32 array type")
        backend = leaf._backend
        u32 = registry.flat_type(backend, UInt32)
        u64 = registry.flat_type(backend, UInt64)
        if high is None:
            low, high = 0, low
        extra = 1 if endpoint else 0
        if _is_int(low) and _is_int(high):
            span = int(high) - int(low) + extra
            if not 1 <= span <= 0xFFFFFFFF:
                raise ValueError(f"{who}: the range [{low}, {high}{']' if endpoint else ')'} holds "
                                 f"{span} integers; it must hold 1 to 2^32 - 1")
            bound = span
            threshold = ((1 << 32) - span) % span
        else:
            for name, v in (("low", low), ("high", high)):
                if not (_is_int(v) or is_flat(v) and v._vt.is_integral):
                    raise TypeError(f"{who}: '{name}' must be an int or an integer array, not {type(v).__name__}")
            bound = u32(high - low + extra)         # wraps like Dr.Jit's UInt32(high - low)
            threshold = (0 - bound) % bound         # 2^32 mod bound: draws below it are biased
        offset = u32(low & 0xFFFFFFFF) if _is_int(low) else u32(low)    # added modulo 2^32
        if type(width) is int and width == 0:
            # no lane draws (see _sample); the counter moves past the one block a draw takes
            _, counter = self._state(backend, who)
            self._keep_counter(self._next_counter(counter))
            return leaf()
        next_block, counter = self._blocks(backend, width, who)

        m = u64(next_block()._block(True)[3]) * bound      # Lemire: the high word is the value
        if _is_int(threshold) and threshold == 0:
            self._keep_counter(counter())
        else:
            # Dr.Jit's rejection loop: a lane-shaped round count ``i`` picks the block of counter
            # ``base + i``, so a lane redraws from its own next block and the generator's counter
            # moves on by the most rounds any lane took
            base = counter()

            def cond(m, i):
                return u32(m) < threshold

            def body(m, i):
                return u64(next_block(base + i)._block(True)[3]) * bound, i + 1
            m, rounds = generator_loop((m, u32(0)), cond, body, who, True)
            self._keep_counter(base + fj_max(rounds))
        result = u32(m >> 32)
        return reinterpret_array(leaf, result + offset)


def _backend_of_type(dtype, who: str):
    """The backend of a frostjit array type (1-D, static, tensor)."""
    leaf = getattr(dtype, "_array_type", None) or getattr(dtype, "_leaf", None) or dtype
    backend = getattr(leaf, "_backend", None)
    if backend is None:
        raise TypeError(f"{who}: expected a frostjit array type, got {dtype!r}")
    return backend


def _static_sizes(dtype) -> tuple:
    """The static sizes of a static array type, outermost first (``None``: a dynamic size)."""
    sizes = []
    while isinstance(dtype, type) and issubclass(dtype, VectorBase):
        sizes.append(dtype._n)
        dtype = dtype._elem
    return tuple(sizes)


def _nest(dtype, dims: tuple, leaves: list):
    """The ``dtype`` instance (static sizes ``dims``) of ``leaves``, outermost component first."""
    if not dims:
        return leaves[0]
    per = len(leaves) // dims[0] if dims[0] else 0
    return dtype._from_components([_nest(dtype._elem, dims[1:], leaves[k * per:(k + 1) * per])
                                   for k in range(dims[0])])


def rng(seed=0, method: str = "philox4x32", symbolic: bool = False) -> Generator:
    """A seeded random number generator (Dr.Jit 1.5's ``dr.rng``).

    Parameters
    ----------
    seed : int or UInt64 array
        Differently seeded generators give independent streams; the default 0 makes runs
        deterministic.  An array seeds each lane separately.
    method : str
        Only ``"philox4x32"``.
    symbolic : bool
        Keep the seed and counter as kernel constants (never evaluated).  By default they are
        kept in memory, so that each call reuses the same compiled kernels.

    Returns
    -------
    Philox4x32Generator

    Examples
    --------
    >>> import frostjit as fj
    >>> from frostjit.llvm import Float, Array3f
    >>> g = fj.rng(seed=1)
    >>> g.random(Float, 3)          # the same numbers as dr.rng(seed=1).random(Float, 3)
    [0.51747394, 0.41366374, 0.9913105]
    >>> g.normal(Array3f, (3, 1000))
    """
    if method != "philox4x32":
        raise ValueError(f"frostjit.rng(): unknown method {method!r}; only 'philox4x32' is supported")
    if _is_int(seed):
        ops.convert_scalar(UInt64, seed, "frostjit.rng()")     # 0 <= seed < 2^64
    elif not (is_flat(seed) and seed._vt.is_integral):
        raise TypeError(f"frostjit.rng(): 'seed' must be a Python int or an integer array, not {type(seed).__name__}")
    return Philox4x32Generator(seed, symbolic)
