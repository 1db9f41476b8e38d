"""Hidden state that a frozen function's helpers reach in ways a plain attribute chain does not
name: a key or attribute name held in a variable, a call's result, a weak reference, a context
variable, an identity comparison.  ``tests/freeze/test_freeze_gaps.py`` and
``test_freeze_redteam.py`` load two copies (one for the frozen function, one for the plain calls
it is compared with), so both see the same sequence of states."""
import collections
import contextvars
import copy
import enum
import functools
import operator
import threading
import weakref

import numpy as np


class Box:
    def __init__(self, s):
        self.s = s


BOXES = {"a": Box(1.0), "b": Box(5.0)}
ROW = [Box(1.0), Box(2.0)]
NESTED = {"a": {"b": 1.0}}
CFG = Box(1.0)
SCALE = 1.0
TARGET = Box(1.0)
REF = weakref.ref(TARGET)
WEAK_VALUES = weakref.WeakValueDictionary({"w": TARGET})
FACTOR = contextvars.ContextVar("FACTOR", default=1.0)
LOCAL = threading.local()
LOCAL.v = 1.0
SENTINEL = None         # an array, set by the tests
GET_S = operator.attrgetter("s")


def make():
    return CFG


# --- dict keys and list indices held in variables -----------------------------------------
def dict_key_in_variable(x):
    k = "a"
    return x + BOXES[k].s


def list_index_in_variable(x):
    i = 1
    return x + ROW[i].s


def computed_index(x):
    return x + ROW[len(ROW) - 1].s


def nested_keys_in_variables(x):
    a, b = "a", "b"
    return x + NESTED[a][b]


# --- getattr / setattr by a name in a variable ---------------------------------------------
def getattr_by_variable(x):
    name = "s"
    return x * getattr(CFG, name)


def hasattr_by_variable(x):
    name = "extra"
    return x + (1.0 if hasattr(CFG, name) else 0.0)


# --- globals().get, another module's globals -----------------------------------------------
def globals_get(x):
    return x * globals().get("SCALE")


def globals_get_variable(x):
    name = "SCALE"
    return x * globals().get(name, 0.0)


def dict_get_then_attribute(x):
    return x + BOXES.get("a").s


# --- attributes of call results -------------------------------------------------------------
def call_result_attribute(x):
    return x + make().s


def iterator_result_attribute(x):
    return x + next(iter(BOXES.values())).s


def lambda_result_attribute(x):
    return x + (lambda: CFG)().s


def display_item_attribute(x):
    return x + [CFG][0].s


def attrgetter_on_hidden(x):
    return x + GET_S(CFG)


def attrgetter_made_inline(x):
    return x + operator.attrgetter("s")(CFG)


# --- weak references --------------------------------------------------------------------------
def weakref_referent(x):
    return x + REF().s


def weak_value_dict(x):
    return x + WEAK_VALUES["w"].s


# --- identities -------------------------------------------------------------------------------
def identity_of_input(x):
    return x + (1.0 if x is SENTINEL else 0.0)


IDS = set()


def id_of_input(x):
    return x + (1.0 if id(x) in IDS else 0.0)


# --- red team ---------------------------------------------------------------------------------
def context_variable(x):
    return x * FACTOR.get()


def context_variable_default(x):
    return x * FACTOR.get(2.0)


def thread_local(x):
    return x + LOCAL.v


def numpy_error_state(x):
    return x + (1.0 if np.geterr()["divide"] == "warn" else 0.0)


def numpy_print_options(x):
    return x + float(np.get_printoptions()["precision"])


CACHE_INPUT = [1.0]


@functools.lru_cache(maxsize=None)
def cached_value(n):
    return CACHE_INPUT[0] * n


@functools.lru_cache(maxsize=4)
def cached_object():
    return CFG


def lru_cached_value(x):
    return x + cached_value(2)


def lru_cached_object(x):
    return x + cached_object().s


class Holder:
    scale = 1.0

    @property
    def box(self):
        return CFG


HOLDER = Holder()


def property_result_attribute(x):
    return x + HOLDER.box.s


class Color(enum.Enum):
    RED = 1.0


def enum_member_value(x):
    return x + Color.RED.value


class Meta(type):
    tint = 1.0


class Painted(metaclass=Meta):
    pass


def metaclass_attribute(x):
    return x + Painted.tint


def metaclass_through_type(x):
    return x + type(Painted).tint


def scaled(x, scale=1.0):
    return x * scale


PARTIAL = functools.partial(scaled, scale=1.0)


def partial_keywords(x):
    return PARTIAL(x)


def import_inside(x):
    from gaps_settings import OFFSET
    return x + OFFSET


class Light:
    k = 1.0


class Heavy:
    k = 5.0


SWAPPED = Light()


def class_swapped(x):
    return x + SWAPPED.k


CHAIN = collections.ChainMap({"k": 1.0}, {"k": 9.0})
USER_DICT = collections.UserDict({"k": 1.0})


def chain_map_item(x):
    return x + CHAIN["k"]


def user_dict_item(x):
    return x + USER_DICT["k"]


def weak_value_rebound(x):
    return x + WEAK_VALUES["w"].s


class Base:
    k = 1.0

    def through_type(self, x):
        return x + type(self).k

    def through_class(self, x):
        return x + self.__class__.k


class Derived(Base):
    def through_super(self, x):
        return x + super().k


DERIVED = Derived()


def class_attribute_through_type(x):
    return DERIVED.through_type(x)


def class_attribute_through_dunder_class(x):
    return DERIVED.through_class(x)


def class_attribute_through_super(x):
    return DERIVED.through_super(x)


def _closure():
    v = 1.0

    def read(x):
        return x + v

    def set_(n):
        nonlocal v
        v = n
    return read, set_


CLOSURE_READ, CLOSURE_SET = _closure()


def closure_rebound(x):
    return CLOSURE_READ(x)


def with_default(x, d={"k": 1.0}):      # noqa: B006 - the mutable default is the point
    return x + d["k"]


def default_mutated(x):
    return with_default(x)


class Tinted:
    def __get__(self, obj, owner):
        return TINT[0]


TINT = [1.0]


class Described:
    tint = Tinted()

    @property
    def prop(self):
        return TINT[0]


DESCRIBED = Described()


def descriptor_reading_global(x):
    return x + DESCRIBED.tint


def property_reading_global(x):
    return x + DESCRIBED.prop


class Slots:
    __slots__ = ("v",)


SLOTS = [Slots()]
SLOTS[0].v = 1.0


def slots_by_index(x):
    i = 0
    return x + SLOTS[i].v


ROWS = [[1.0, 2.0], [3.0, 4.0]]


def numpy_of_nested(x):
    return x + float(np.array(ROWS, dtype=np.float32)[1, 0])


def sorted_nested(x):
    return x + sorted(ROWS)[1][0]


def deepcopy_nested(x):
    return x + copy.deepcopy(ROWS)[1][0]


def map_sum_nested(x):
    return x + sum(map(sum, ROWS))


MODE_TABLE = {Color.RED: 1.0}


def enum_key_in_variable(x):
    mode = Color.RED
    return x + MODE_TABLE[mode]


def enum_key_get(x):
    mode = Color.RED
    return x + MODE_TABLE.get(mode, 0.0)

