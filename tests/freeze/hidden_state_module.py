"""Module state that helpers of a frozen function read and mutate
(tests/freeze/test_freeze_hidden_state.py loads two copies: one for the frozen function, one for
the plain calls it is compared with)."""
import array
import collections
import copy
import ctypes
import dataclasses
import functools
import heapq
import itertools

import numpy as np

TABLE = {"k": 1.0}
VALUES = [1.0, 2.0]
STACK = [float(i) for i in range(1, 40)]
HEAP = []
QUEUE = collections.deque(float(i) for i in range(1, 40))
GROUPS = {}
DATA = np.zeros(3, dtype=np.float32)
COUNTER = itertools.count(1)
ITEMS = iter([float(i) for i in range(1, 40)])
RNG = np.random.default_rng(7)
LOG = []


class Settings:
    scale = 1.0

    def __init__(self):
        self.gain = 1.0

    def scaled(self, x):
        return x * type(self).scale


@dataclasses.dataclass
class Record:
    gain: float = 1.0


SETTINGS = Settings()
RECORD = Record()
PACKED = array.array("f", [1.0, 2.0])
C_VALUES = (ctypes.c_float * 2)(1.0, 2.0)
C_SCALE = ctypes.c_double(1.0)
_OPTIONS = {"gain": 1.0}
OPTIONS = __import__("types").MappingProxyType(_OPTIONS)
OPTION_VALUES = _OPTIONS.values()
_BYTES = bytearray(b"\x01\x02")
BYTES_VIEW = memoryview(_BYTES)


# --- container methods that read the contents (nothing mutated by the function) ---------------
def table_get(x):
    return x * TABLE.get("k", 1.0)


def table_keys(x):
    return x * len(list(TABLE.keys()))


def table_items(x):
    s = 0.0
    for _, v in TABLE.items():
        s += v
    return x * s


def values_index(x):
    return x * VALUES.index(2.0)


def values_count(x):
    return x * VALUES.count(2.0)


def values_copy(x):
    return x * sum(VALUES.copy())


# --- hidden objects read by library code, or through type() ---------------------------------
def copied_settings(x):
    return x * copy.copy(SETTINGS).gain


def deep_copied_settings(x):
    return x * copy.deepcopy(SETTINGS).gain


def record_as_dict(x):
    return x * dataclasses.asdict(RECORD)["gain"]


def record_as_tuple(x):
    return x * dataclasses.astuple(RECORD)[0]


def class_attribute_through_type(x):
    return SETTINGS.scaled(x)


@functools.singledispatch
def gain_of(obj):
    return 1.0


def dispatched_gain(x):
    return x * gain_of(SETTINGS)


# --- mutable objects whose data lives in C ---------------------------------------------------
def packed_item(x):
    return x * PACKED[1]


def c_array_item(x):
    return x * C_VALUES[1]


def c_scalar_value(x):
    return x * C_SCALE.value


def options_item(x):
    return x * OPTIONS["gain"]


def option_values_sum(x):
    return x * sum(OPTION_VALUES)


def bytes_view_item(x):
    return x * BYTES_VIEW[1]


# --- state the function mutates, then reads ------------------------------------------------------
def stack_pop(x):
    return x + STACK.pop()


def stack_pop_then_read(x):
    STACK.pop()
    return x + STACK[-1]


def heap_push_then_len(x):
    heapq.heappush(HEAP, 1.0)
    return x + len(HEAP)


def queue_popleft(x):
    return x + QUEUE.popleft()


def groups_setdefault_append(x):
    GROUPS.setdefault("k", []).append(1)
    return x + len(GROUPS["k"])


def data_item_add_then_sum(x):
    DATA[0] += 1.0
    return x + float(DATA.sum())


def data_ufunc_out_then_read(x):
    np.add(DATA, 1.0, out=DATA)
    return x + float(DATA[0])


def accumulate_default(x, acc=[]):  # noqa: B006 - the mutable default is the point
    acc.append(1)
    return x + len(acc)


def log_only(x):
    LOG.append(1)
    return x + 1


# --- state no guard can see ---------------------------------------------------------------------
def next_count(x):
    return x + next(COUNTER)


def next_item(x):
    return x + next(ITEMS)


def generator_random(x):
    return x + RNG.random()


def generator_normal_via_bit_generator(x):
    return x + float(RNG.bit_generator.random_raw() % 1000)
