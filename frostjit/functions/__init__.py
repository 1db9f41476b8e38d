"""User-facing operations, re-exported at the top level of :mod:`frostjit`."""
