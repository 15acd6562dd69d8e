"""Hypothesis settings profiles for the harness: ``dev``, ``ci`` and ``nightly``.

They are registered as ``compaction-harness-<name>`` so Hypothesis's own
``ci`` profile (loaded whenever the CI variable is set: derandomized, no
database) never stands in for ours: ``nightly`` stays random, keeps a
database and runs many examples even under ``CI=true``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

__all__ = ["PROFILE_NAMES", "DATABASE_DIR", "register_profiles", "profile"]

PROFILE_NAMES = ("dev", "ci", "nightly")
DATABASE_DIR = ".hypothesis/compaction-harness"


def register_profiles(database_dir: str = DATABASE_DIR) -> None:
    common = dict(deadline=None, suppress_health_check=list(HealthCheck))
    settings.register_profile("compaction-harness-dev", max_examples=20, derandomize=False, database=None, **common)
    settings.register_profile("compaction-harness-ci", max_examples=100, derandomize=True, database=None, **common)
    settings.register_profile("compaction-harness-nightly", max_examples=1000, derandomize=False,
                              database=DirectoryBasedExampleDatabase(database_dir), **common)


def profile(name: str) -> settings:
    register_profiles()
    return settings.get_profile(f"compaction-harness-{name}")
