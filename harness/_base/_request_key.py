"""What a summarizer's answer may depend on, as a canonical key: the call cache and the wire's digest use it."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from harness._base._codec import fact_to_dict
from harness._base._dialects import DEFAULT_DIALECT
from harness._base._messages import turn_to_record
from harness._base._model import Consumer, Part, Turn
from harness._base._protocol import CompactionRequest
from harness._base._versions import RICH_PROTOCOL_VERSION

__all__ = ["request_digest", "request_key_material", "consumers_to_wire"]


def request_digest(request: CompactionRequest) -> str:
    """A SHA-256 of everything a summarizer's answer may depend on (``request_key_material``), computed from
    each turn's own digest, remembered per turn: a session's requests share most of their turns, so a
    request costs what its new turns cost to hash, not what all of it does."""
    material = request_key_material(request, messages=False)
    digest = hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    for turn in request.turns:
        digest.update(_turn_digest(turn))
    return digest.hexdigest()


def _turn_digest(turn: Turn) -> bytes:
    """One turn's SHA-256 as a chat message in canonical JSON, its opaque parts included. Remembered by the turn
    and its parts, which turn equality leaves out: two requests that differ only in a thinking block's signature
    are two requests, never answered from each other's cache entry."""
    return _digest_of(turn, turn.parts)


@functools.lru_cache(maxsize=1 << 17)
def _digest_of(turn: Turn, parts: tuple[Part, ...]) -> bytes:
    # a turn changed in place (``object.__setattr__`` gets past frozen) hashes to another key
    text = json.dumps(turn_to_record(turn), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).digest()


def request_key_material(request: CompactionRequest, *, messages: bool = True) -> dict[str, Any]:
    """Everything a summarizer's answer may depend on, in a canonical JSON-ready form (without the messages
    when ``messages`` is False: ``request_digest`` hashes those turn by turn).

    Protocol 2's fields (and the request's ``protocol_version``) appear only when they differ from their
    defaults, so the keys (and cached answers) of sessions without tiers or consumers stay the same.
    """
    material: dict[str, Any] = {
        "budget": request.budget,
        "tags": [fact_to_dict(f) for f in request.tags],
    }
    if messages:
        material["messages"] = [turn_to_record(t) for t in request.turns]  # with each turn's opaque parts
    if request.tier != 1:
        material["tier"] = request.tier
    if request.consumers:
        material["consumers"] = consumers_to_wire(request.consumers)
    if request.previous_output:
        material["previous_output"] = request.previous_output
    if request.dialect != DEFAULT_DIALECT:
        material["dialect"] = request.dialect
    if request.protocol_version != RICH_PROTOCOL_VERSION:
        material["protocol_version"] = request.protocol_version
    return material


def consumers_to_wire(consumers: Sequence[Consumer]) -> list[dict[str, Any]]:
    return [{"name": c.name, "requires": list(c.requires)} for c in consumers]
