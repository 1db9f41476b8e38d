"""Shared test configuration: the hypothesis profiles.

``ci`` (the default): bounded examples, no deadline, seeds printed so a failure
reproduces with ``--hypothesis-seed``.  ``dev``: the same, fewer examples, for
quick local runs.  ``stress``: many more examples, for a long hunt before a
release.  Choose with ``HYPOTHESIS_PROFILE``.
"""
import os

from hypothesis import HealthCheck, settings, Verbosity

settings.register_profile(
    "ci", max_examples=40, deadline=None, print_blob=True, derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    verbosity=Verbosity.normal,
)
settings.register_profile(
    "dev", max_examples=15, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "stress", max_examples=400, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
