"""Helpers shared by the plan-cache tests (test_plans.py, test_plan_scatters.py)."""
import numpy as np

import frostjit as fj


def data(T, values):
    """An evaluated array of type ``T`` holding ``values`` (a data node, not a literal)."""
    x = T(np.asarray(values, dtype=T._vt.np_dtype))
    fj.eval(x)
    return x
