"""Each protocol's versions, and what changed in each for a compactor's author.

A request says the version it is written in; a compactor may say the version it was written for
(``compaction_protocol_version``). An older one is warned once, in a run's report, of every change since
(``version_warning``); a newer one than this harness knows is refused (``declared_version``). The changelog
is defined here once: docs/reference/protocol-changes.md quotes it, and a test fails on a bump without an entry.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness._base._errors import SpecError

__all__ = ["RICH_PROTOCOL_VERSION", "MESSAGES_PROTOCOL_VERSION", "PROTOCOL_VERSIONS", "ProtocolChange",
           "PROTOCOL_CHANGES", "changes_since", "declared_version", "version_warning", "known_versions"]

RICH_PROTOCOL_VERSION = 5
#: The messages protocol's own version: the shape ``fn(messages, budget)`` is given and answers in.
MESSAGES_PROTOCOL_VERSION = 4
#: The version of each protocol this harness speaks (a bump wants an entry in ``PROTOCOL_CHANGES``).
PROTOCOL_VERSIONS: Mapping[str, int] = types.MappingProxyType(
    {"messages": MESSAGES_PROTOCOL_VERSION, "rich": RICH_PROTOCOL_VERSION})


@dataclass(frozen=True, slots=True)
class ProtocolChange:
    """One version of a protocol as a compactor's author meets it: what it added, and what it changed the
    meaning of (what a compactor written before it can get wrong while still running)."""

    protocol: str
    version: int
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


#: Every version of each protocol, oldest first: the changelog (docs/reference/protocol-changes.md quotes each
#: line and says more) and what a run warns a compactor written for an older version about.
PROTOCOL_CHANGES: tuple[ProtocolChange, ...] = (
    ProtocolChange("messages", 1, added=(
        "fn(messages, budget) is given chat messages and a token budget, and returns chat messages or one string",
        "with --dialect, the messages come as an Anthropic Messages body or OpenAI Responses items, "
        "and the answer is read in the same shape",
        "on the wire, each request says its protocol_version",
    )),
    ProtocolChange("messages", 2, added=(
        "in the anthropic and openai-responses dialects, assistant messages carry the provider's opaque parts: "
        "thinking and redacted_thinking blocks, reasoning items and compaction items; pass each back byte-exact, "
        "keep the reasoning of a call still awaiting its result, and keep a compaction item",
    )),
    ProtocolChange("messages", 3, added=(
        "in the anthropic and openai-responses dialects, user messages and tool results carry images and "
        "documents (image and document blocks; input_image and input_file parts, a tool output as a list of parts); "
        "pass each back byte-exact, and a message kept word for word keeps its attachments (or says in its own "
        "words that they are gone)",
        "in the openai-responses dialect, mcp_approval_request items follow an assistant's message and "
        "mcp_approval_response items precede the user message that answers them; keep a request still waiting for "
        "its answer byte-exact, and never keep an answer without its request",
    )),
    ProtocolChange("messages", 4, added=(
        "in the anthropic and openai-responses dialects, a call may run on an MCP server the provider calls itself: "
        "an mcp_tool_use block answered by an mcp_tool_result block in the same assistant message, or one mcp_call "
        "item holding its output; keep each result in the assistant's message after its use (never as a user "
        "tool_result), and keep or drop the pair whole",
    )),
    ProtocolChange("rich", 1, added=(
        "fn(request) is given a CompactionRequest: the turns, the budget, and the live obligations as tags",
        "it returns a CompactionResult: messages, and optionally a structured ledger and a self_report",
    )),
    ProtocolChange("rich", 2, added=(
        "the request says the digest tier it writes (tier), who reads the result (consumers), how many leading "
        "turns are the previous compaction's output (previous_output), the provider dialect the context goes to "
        "(dialect) and its own protocol_version",
        "the result may carry a recovery marker (marker), an edit journal (journal) and the invariant classes "
        "the compactor verified (verified)",
        "a retraction or supersession tag names the kind of the fact it ended (detail target_kind)",
    ), changed=(
        "an in_flight_call tag whose detail mode is background is a background job: its literal is the job "
        "handle, not a call id; the call that started the job is already answered by its placeholder, so "
        "carry the handle as text or a ledger entry and never rebuild a tool call with the handle as its id",
    )),
    ProtocolChange("rich", 3, added=(
        "a Turn may carry opaque parts (Turn.parts: harness.Part, kind reasoning or compaction) when the dialect is "
        "anthropic or openai-responses; keep a kept turn's parts byte-exact, and on the wire they are each "
        "message's parts",
    )),
    ProtocolChange("rich", 4, added=(
        "user and tool turns may carry attachments (Turn.parts: harness.Part, kind image or document: data is the "
        "base64 content, text the media type, id the file's name) in the anthropic and openai-responses dialects; "
        "keep them byte-exact, and a turn kept word for word keeps its attachments (or says in its own words that "
        "they are gone)",
        "an assistant turn may carry an approval request and a user turn the approval answering it (harness.Part, "
        "kind approval_request or approval, paired by id) in the openai-responses dialect; keep a request still "
        "waiting for its answer byte-exact, and never an answer without its request",
    )),
    ProtocolChange("rich", 5, added=(
        "a call the provider runs itself on an MCP server (harness.Part, kind server_tool: data is the server's "
        "label, id the call's id) marks both the assistant turn making the call and the tool turn holding its "
        "result, in the anthropic and openai-responses dialects; keep the marks on the turns you keep, and keep "
        "or drop the call and its result together",
    )),
)


def known_versions(protocol: str) -> str:
    """The versions of ``protocol`` this harness knows, as a message says them."""
    latest = PROTOCOL_VERSIONS[protocol]
    return f"version {latest}" if latest == 1 else f"versions 1 to {latest}"


def changes_since(protocol: str, version: int) -> tuple[ProtocolChange, ...]:
    """The versions of ``protocol`` after ``version``, oldest first: what a compactor written for it has not seen."""
    return tuple(c for c in PROTOCOL_CHANGES if c.protocol == protocol and c.version > version)


def declared_version(fn: Callable[..., Any], protocol: str, *, spec: str | None = None) -> int | None:
    """The version of ``protocol`` that ``fn`` says it was written for (``fn.compaction_protocol_version``), or
    None when it says none. A version this harness does not know raises ``SpecError``: a compactor written
    for changes the harness has never heard of would be judged by rules it was not written for."""
    value = getattr(fn, "compaction_protocol_version", None)
    if value is None:
        return None
    where = f"{f'summarizer {spec!r}: ' if spec else ''}compaction_protocol_version = {value!r}"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(f"{where}: expected a whole number, a {protocol} protocol version ({known_versions(protocol)})")
    if value > PROTOCOL_VERSIONS[protocol]:
        raise SpecError(f"{where} is newer than this harness knows: it speaks the {protocol} protocol "
                        f"{known_versions(protocol)}; upgrade compaction-harness, or declare the version the compactor "
                        f"was written for")
    return value


def version_warning(protocol: str, declared: int | None) -> str | None:
    """What a run says of a compactor written for an older version of its protocol: each later version's
    changed meanings, then its additions (``PROTOCOL_CHANGES``). None when it declared none, or the current one."""
    current = PROTOCOL_VERSIONS[protocol]
    if declared is None or declared >= current:
        return None
    said = []
    for change in changes_since(protocol, declared):
        said += [f"Version {change.version} changed: {'; '.join(change.changed)}."] if change.changed else []
        said += [f"Version {change.version} added: {'; '.join(change.added)}."] if change.added else []
    return (f"the summarizer was written for {protocol} protocol version {declared} (compaction_protocol_version = "
            f"{declared}); this harness speaks version {current}. {' '.join(said)} See the protocol changes page "
            f"(reference/protocol-changes.md).")
