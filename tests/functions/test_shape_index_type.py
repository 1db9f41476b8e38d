"""The index type the reshaping helpers use reaches every element they address."""
from frostjit.functions.memory import _check_index_width
from frostjit.functions.shape import _index_type
from frostjit.llvm import Float, UInt32, UInt64
from frostjit.trace import ops


def test_index_type_switches_to_64_bits_where_32_bit_gathers_stop():
    """Regression: ravel() of more than 2**31 elements made UInt32 indices, which the scatter
    into its result (larger than 2**31) rejects; the switch was at 2**32."""
    x = Float(1)
    assert _index_type(x, 2**31) is UInt32
    assert _index_type(x, 2**31 + 1) is UInt64
    idx = ops.literal(_index_type(x, 3 * 2**30)._vt, 0)
    _check_index_width("scatter", idx, 3 * 2**30)          # accepted: no ValueError
