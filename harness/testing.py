"""Helpers for a team's own tests: stream a transcript through a summarizer and judge it.

Separate from ``harness`` itself because they sit on top of the oracles, which
sit on top of the model ``harness`` exports: importing ``harness`` stays cheap and
free of cycles.
"""

from harness._app._assertions import assert_compaction_holds
from harness._base._errors import CompactionViolation

__all__ = ["assert_compaction_holds", "CompactionViolation"]
