"""Hidden state read in C or past the static attribute lookup (docs/freeze.md, "What freeze
watches"): each program replayed a stale result (decimal) or crashed (a forwarding proxy) before;
now every frozen call equals the plain call at widths 1, 7 and 1000."""
import decimal
import warnings
from decimal import Decimal

import pytest

import frostjit as fj
from freeze_helpers import ramp, same

WIDTHS = (1, 7, 1000)
SCALE = Decimal("1.1")


def by_input(x, p):             # a Decimal input: the arithmetic names nothing of decimal
    return x * float(p / 3)


def by_class(x):                # the Decimal class, from the globals
    return x * float(Decimal(1) / Decimal(7))


def by_module(x):               # the decimal module
    return x * float(decimal.Decimal(2).sqrt())


def by_global(x):               # a Decimal global
    return x * float(SCALE / 3)


def own_context(x):             # a context of its own: the outer settings do not matter
    with decimal.localcontext() as c:
        c.prec = 5
        return x * float(Decimal(1) / Decimal(3))


def _settings(i):
    """The thread's decimal context before call ``i``: precision and rounding change."""
    c = decimal.getcontext()
    c.prec = (28, 3, 28, 6)[i % 4]
    c.rounding = (decimal.ROUND_HALF_EVEN, decimal.ROUND_DOWN)[i // 2 % 2]


@pytest.fixture
def default_context():
    saved = decimal.getcontext().copy()
    yield
    decimal.setcontext(saved)


@pytest.mark.parametrize("fn, extra", [(by_input, (Decimal(1),)), (by_class, ()), (by_module, ()),
                                       (by_global, ()), (own_context, ())])
def test_decimal_context_is_guarded(default_context, fn, extra):
    frozen = fj.freeze(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)       # guarded, not given up on
        for n in WIDTHS:
            for i in range(6):
                _settings(i)
                got, ref = frozen(ramp(n, 1), *extra), fn(ramp(n, 1), *extra)
                assert same(got, ref), (fn.__name__, n, i, got, ref)
    if fn is not own_context:
        assert frozen.n_recordings > 1         # traced again when the settings changed


def test_a_function_without_decimal_ignores_the_context(default_context):
    frozen = fj.freeze(lambda x: x * 2)
    for i in range(4):
        _settings(i)
        frozen(ramp(7))
    assert frozen.n_recordings == 1


class Target:
    pass


class Proxy:
    """Forwards every attribute (``__dict__`` too) to the object in its slot."""
    __slots__ = ("_target",)

    def __init__(self, target):
        object.__setattr__(self, "_target", target)

    def __getattribute__(self, name):
        return getattr(object.__getattribute__(self, "_target"), name)


TARGET = Target()
TARGET.k = 3.0
PROXY = Proxy(TARGET)
TABLE = {"scale": 2.0}


class Shadowed:
    """An instance attribute that ``__getattribute__`` hides behind another value."""

    def __init__(self):
        self.scale = 1.0

    def __getattribute__(self, name):
        if name == "scale":
            return TABLE["scale"]
        return object.__getattribute__(self, name)


SHADOWED = Shadowed()


def through_proxy(x):
    return x * PROXY.k


def through_shadow(x):
    return x * SHADOWED.scale


@pytest.mark.parametrize("fn, change", [(through_proxy, lambda v: setattr(TARGET, "k", v)),
                                        (through_shadow, lambda v: TABLE.__setitem__("scale", v))])
def test_getattribute_overrides_give_the_plain_result(fn, change):
    frozen = fj.freeze(fn)
    with warnings.catch_warnings():
        # (the proxy's getattr with a computed name falls back to the plain call: allowed)
        warnings.simplefilter("ignore", fj.FreezeWarning)
        for n in WIDTHS:
            for v in (2.0, 5.0, 2.0):
                change(v)
                got, ref = frozen(ramp(n, 1)), fn(ramp(n, 1))
                assert same(got, ref), (fn.__name__, n, v, got, ref)
