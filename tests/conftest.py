"""Test-suite settings: no deadlines (shared CI machines are noisy), derandomized under CI."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "harness-tests",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=bool(os.environ.get("CI")),
    database=None if os.environ.get("CI") else settings.default.database,
)
settings.load_profile("harness-tests")
