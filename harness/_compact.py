"""One compaction: hand a window of the transcript to a summarizer, normalise what comes back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness._errors import InvalidArgument
from harness._model import Transcript, live_facts
from harness._protocol import CompactionRequest, CompactionResult, result_from_return

__all__ = ["PROTOCOLS", "request_for", "compact_once"]

PROTOCOLS = ("messages", "rich")


def request_for(transcript: Transcript, boundary: int, budget: int) -> CompactionRequest:
    """The request for compacting turns ``0..boundary-1``, tagged with the facts live there."""
    return CompactionRequest(transcript.turns[:boundary], budget, live_facts(transcript, boundary))


def compact_once(summarize: Callable[..., Any], request: CompactionRequest, *, protocol: str = "messages") -> CompactionResult:
    """Call ``summarize`` the way its protocol says and return a normalised result."""
    if protocol == "messages":
        return result_from_return(summarize(request.messages(), request.budget))
    if protocol == "rich":
        return result_from_return(summarize(request))
    raise InvalidArgument(f"protocol={protocol!r}; expected one of {', '.join(PROTOCOLS)}")
