"""One compaction: hand a window of the transcript to a summarizer, normalise what comes back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness._base._errors import InvalidArgument
from harness._base._model import Transcript, live_facts
from harness._base._calling import call_once
from harness._base._protocol import PROTOCOLS, CompactionRequest, CompactionResult, resolve_protocol
from harness._base._result_codec import result_from_dict

__all__ = ["request_for", "compact_once"]


def request_for(transcript: Transcript, boundary: int, budget: int) -> CompactionRequest:
    """The request for compacting turns ``0..boundary-1``, tagged with the facts live there."""
    return CompactionRequest(transcript.turns[:boundary], budget, live_facts(transcript, boundary))


def compact_once(summarize: Callable[..., Any], request: CompactionRequest, *,
                 protocol: str | None = None) -> CompactionResult:
    """Call ``summarize`` the way its protocol says and return a normalised result.

    The same call as the CLI's (``call_once``): a summarizer that raises, returns
    garbage or mutates its input raises ``InfraError`` (chained to its own
    exception), so a team's ``@given`` test and a nightly run judge it alike.
    ``protocol`` None means the function's own ``compaction_protocol``, else messages.
    """
    if protocol is not None and protocol not in PROTOCOLS:
        raise InvalidArgument(f"protocol={protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    protocol = resolve_protocol(summarize, protocol, option="protocol")
    return result_from_dict(call_once(summarize, protocol, request))
