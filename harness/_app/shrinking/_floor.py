"""A compactor's own floor: it keeps its newest N messages verbatim, so it drops nothing from fewer.

Shrinking cannot take a failure such a compactor shows below N + 1 turns, and each check at that floor
replays every round for nothing, so the shrinker stops deleting turns there and the report says so.
"""

from __future__ import annotations

from typing import Any

from harness._base._model import Transcript
from harness._base._protocol import result_from_dict

__all__ = ["FLOOR_SLACK", "FLOOR_WINDOW", "kept_verbatim", "window_floor"]

#: A minimal transcript at most this many turns longer than the window its compactor kept verbatim is at
#: that compactor's floor, when the window is at least ``FLOOR_WINDOW`` messages (a smaller one is
#: indistinguishable from a compactor that happened to keep a few turns).
FLOOR_SLACK = 3
FLOOR_WINDOW = 8


def kept_verbatim(transcript: Transcript, boundary: int | None, context: dict[str, Any] | None) -> int:
    """How many of the source messages before ``boundary`` the failing compaction's result kept verbatim."""
    if context is None or boundary is None:
        return 0
    source = set(transcript.turns[:boundary])
    return sum(message in source for message in result_from_dict(context).messages)


def window_floor(transcript: Transcript, boundary: int | None, context: dict[str, Any] | None,
                 slack: int = FLOOR_SLACK) -> int | None:
    """The window the failing compaction kept verbatim, when ``transcript`` is at most ``slack`` turns longer
    than it and it is at least ``FLOOR_WINDOW`` messages; None otherwise."""
    kept = kept_verbatim(transcript, boundary, context)
    return kept if kept >= FLOOR_WINDOW and len(transcript.turns) - kept <= slack else None
