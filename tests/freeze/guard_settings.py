"""A module whose attributes a frozen function reads (tests/freeze/test_freeze_guards.py)."""
scale = 2.0
offset = 1.0


def helper(x):
    return x * scale + offset
