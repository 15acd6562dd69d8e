"""Opaque provider parts on a generated transcript: the reasoning a provider signs or encrypts, a compaction
item, and the images and documents users and tools attach, as Anthropic and OpenAI Responses histories carry
them.

A compactor must pass these back byte-exact (the provider checks the signature or decrypts the content and
refuses an edit), keep the reasoning of a call still awaiting its result, keep a compaction item, which stands
for everything before it, and keep the attachments of a message it keeps word for word. The parts are drawn
from the transcript's seed, never from text, so the same transcript always carries the same parts; they change
no text and no token count, so every ground truth stays as it was.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json

from harness._base._model import ATTACHMENTS, Part, PartKind, Role, Transcript
from harness.strategies._internal import _phrasing as P

__all__ = ["with_provider_parts", "REDACTED_EVERY", "ATTACHED_EVERY", "APPROVAL_EVERY", "SERVER_EVERY",
           "PART_DIALECTS"]

#: The dialects whose histories carry these parts: a run in one of them generates sources with them.
PART_DIALECTS = ("anthropic", "openai-responses")

#: Every this many reasoning parts one is redacted (Anthropic's redacted_thinking: data, no text).
REDACTED_EVERY = 4

#: One user turn or tool result in this many carries an attachment (an image, or every third one a document).
ATTACHED_EVERY = 3

#: One assistant turn in this many that speaks right before a user turn asks for an approval, which that user turn
#: gives or refuses (Responses writes them as MCP approval items; Anthropic and chat drop them).
APPROVAL_EVERY = 2

#: One assistant turn in this many that makes a single call, answered by the next turn, makes it on an MCP server
#: the provider runs (Anthropic ``mcp_tool_use`` and ``mcp_tool_result`` in one message; a Responses ``mcp_call``).
SERVER_EVERY = 3

#: What an attachment is, by kind: its media type and the name's extension.
_MEDIA = {PartKind.IMAGE: ("image/png", "png"), PartKind.DOCUMENT: ("application/pdf", "pdf")}


def _opaque(seed: int, index: int, what: str, size: int = 48) -> str:
    """A stand-in for a signature or encrypted content: base64 of a digest, as long as ``size`` characters."""
    digest = b"".join(hashlib.sha256(f"{what}:{seed}:{index}:{n}".encode()).digest() for n in range(size // 32 + 1))
    return base64.b64encode(digest).decode()[:size]


def _drawn(seed: int, index: int) -> int:
    """A number drawn from the seed for turn ``index``, unrelated to the turn's place in a call's pattern."""
    return hashlib.sha256(f"attach:{seed}:{index}".encode()).digest()[0]


def _attachment(seed: int, index: int, count: int) -> Part:
    """An image (every third one a document) named as a user would name the file."""
    kind = PartKind.DOCUMENT if count % 3 == 0 else PartKind.IMAGE
    media, extension = _MEDIA[kind]
    stem = P.pick(P.ATTACHMENT_NAMES, seed + index)
    return Part(kind, _opaque(seed, index, kind.value, 64), media, f"{stem}-{index}.{extension}")


def with_provider_parts(transcript: Transcript) -> Transcript:
    """``transcript`` with a reasoning part on every assistant turn that makes a call (and on every third one
    that only speaks), a compaction part on its first assistant turn that speaks, an attachment on one user
    turn or tool result in ``ATTACHED_EVERY``, and an approval request on one assistant turn in
    ``APPROVAL_EVERY`` that speaks right before a user turn, which that user turn answers; and one call in
    ``SERVER_EVERY`` of those that can be made on an MCP server the provider runs (``_server_side``)."""
    seed = transcript.seed or 0
    turns, reasoned, compacted, attached = list(transcript.turns), 0, False, 0
    for i, turn in enumerate(turns):
        if turn.role in (Role.USER, Role.TOOL) and _drawn(seed, i) % ATTACHED_EVERY == 0:
            attached += 1
            turns[i] = turn = dataclasses.replace(turn, parts=(*turn.parts, _attachment(seed, i, attached)))
        if turn.role is not Role.ASSISTANT:
            continue
        parts: list[Part] = []
        if turn.text and not compacted:
            parts.append(Part(PartKind.COMPACTION, _opaque(seed, i, "compaction", 96), "", f"cmp_{_opaque(seed, i, 'id', 12)}"))
            compacted = True
        if turn.tool_calls or i % 3 == 0:
            reasoned += 1
            text = "" if reasoned % REDACTED_EVERY == 0 else P.pick(P.REASONING, seed + i)
            parts.append(Part(PartKind.REASONING, _opaque(seed, i, "reasoning"), text, f"rs_{_opaque(seed, i, 'rs', 12)}"))
        if turn.text and i + 1 < len(turns) and turns[i + 1].role is Role.USER and _drawn(seed, -i) % APPROVAL_EVERY == 0:
            request, answer = _approval(seed, i)
            parts.append(request)
            turns[i + 1] = dataclasses.replace(turns[i + 1], parts=(answer, *turns[i + 1].parts))
        if parts:
            turns[i] = dataclasses.replace(turn, parts=tuple(parts))
    _server_side(turns, transcript)
    _refer_to_attachments(turns, seed)
    return dataclasses.replace(transcript, turns=tuple(turns))


def _refer_to_attachments(turns: list, seed: int) -> None:
    """Name each attachment in the first user turn after the one carrying it (a sentence appended to its text),
    so a compactor that keeps that turn and drops the attachment leaves it asking about a file that is gone."""
    for i, turn in enumerate(list(turns)):
        for part in (p for p in turn.parts if p.kind in ATTACHMENTS):
            later = next((j for j in range(i + 1, len(turns)) if turns[j].role is Role.USER), None)
            if later is not None:
                sentence = P.pick(P.ATTACHMENT_REFERENCES, seed + i).format(name=part.id)
                turns[later] = dataclasses.replace(turns[later], text=f"{turns[later].text} {sentence}".lstrip())


def _server_side(turns: list, transcript: Transcript) -> None:
    """Mark one in ``SERVER_EVERY`` of the calls that can be server-side as made on an MCP server: a turn's only
    call, answered by the next turn (a result with no attachment: an MCP result is text), with no compaction point
    between them (the provider returns both in one response) and no obligation naming the call (a server-side call
    is never in flight)."""
    seed = transcript.seed or 0
    named = {literal for fact in transcript.facts for literal in fact.literals} | {e.call_id for e in transcript.effects}
    for i, turn in enumerate(turns[:-1]):
        result = turns[i + 1]
        if len(turn.tool_calls) != 1 or result.role is not Role.TOOL or result.parts \
                or result.tool_call_id != turn.tool_calls[0].id or i + 1 in transcript.compaction_points \
                or turn.tool_calls[0].id in named or _drawn(seed, i + 104729) % SERVER_EVERY:
            continue
        mark = Part(PartKind.SERVER_TOOL, P.pick(P.MCP_SERVERS, seed + i), "", turn.tool_calls[0].id)
        turns[i] = dataclasses.replace(turn, parts=(*turn.parts, mark))
        turns[i + 1] = dataclasses.replace(result, parts=(mark,))


def _approval(seed: int, index: int) -> tuple[Part, Part]:
    """A call waiting for approval on turn ``index``, and the approval or refusal the next user turn gives."""
    tool = P.pick(P.APPROVAL_TOOLS, seed + index)
    target = P.pick(P.APPROVAL_TARGETS, seed + 2 * index)
    verdict = "approve" if _drawn(seed, index + 7919) % 2 else "deny"
    request_id = f"mcpr_{_opaque(seed, index, 'approval', 16)}".replace("+", "A").replace("/", "B")
    return (Part(PartKind.APPROVAL_REQUEST, json.dumps({"target": target}), tool, request_id),
            Part(PartKind.APPROVAL, verdict, P.pick(P.APPROVAL_REASONS[verdict], seed + index), request_id))
