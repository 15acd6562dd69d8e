"""A compactor's own floor: it keeps its newest N messages verbatim, whatever the budget, so it drops nothing
from N messages or fewer.

Shrinking cannot take a loss such a compactor shows below N + 1 turns, and each check at that floor
replays every round for nothing, so the shrinker stops deleting turns there and the report says so. A
window of tokens has no such floor: at a lower budget it keeps fewer messages, so the shrinker asks once,
at half the budget, before it believes a window is the compactor's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness._base._model import Transcript, Turn
from harness._base._result_codec import result_from_dict

__all__ = ["FLOOR_SLACK", "FLOOR_WINDOW", "kept_verbatim", "near_window", "own_window"]

#: A minimal transcript at most this many turns longer than the window its compactor kept verbatim is at
#: that compactor's floor, when the window is at least ``FLOOR_WINDOW`` messages (a smaller one is
#: indistinguishable from a compactor that happened to keep a few turns).
FLOOR_SLACK = 3
FLOOR_WINDOW = 8


def kept_verbatim(transcript: Transcript, boundary: int | None, messages: Sequence[Turn]) -> int:
    """How many of ``messages`` (a compaction's result) are source messages from before ``boundary``."""
    if boundary is None:
        return 0
    source = set(transcript.turns[:boundary])
    return sum(message in source for message in messages)


def near_window(transcript: Transcript, boundary: int | None, context: dict[str, Any] | None,
                slack: int = FLOOR_SLACK) -> int | None:
    """The window the failing compaction (``context``, its result) kept verbatim, when it is at least
    ``FLOOR_WINDOW`` messages and ``transcript`` is at most ``slack`` turns longer; None otherwise."""
    if context is None:
        return None
    kept = kept_verbatim(transcript, boundary, result_from_dict(context).messages)
    return kept if kept >= FLOOR_WINDOW and len(transcript.turns) - kept <= slack else None


def own_window(shrinker, slack: int = FLOOR_SLACK) -> int | None:
    """The window of messages the compactor keeps whatever the budget, when the shrinker's best transcript is
    at most ``slack`` turns longer than it: the failing compaction kept that many source messages verbatim,
    and the session's last round kept as many at half the budget. One check (memoized by the shrinker)."""
    _, _, boundary, context = shrinker.violation
    transcript, budget = shrinker.transcript, shrinker.budget
    kept = near_window(transcript, boundary, context, slack)
    if kept is None or budget // 2 < 1:
        return None
    at_half = shrinker.evaluate(transcript, budget // 2).last_messages
    return kept if kept_verbatim(transcript, len(transcript.turns), at_half) >= kept else None
