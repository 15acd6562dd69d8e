"""Plain-prose statements of tagged obligations, and the rich protocol 2 side channels, shared by the
correct compactors and their mutants.

Protocol 2 (``RecoveryMarker``, ``JournalEntry``, ``verified``) is added by ``with_protocol2``: the
marker is written at the request's tier and names a node derived from that tier and the result's
messages, its ``resolved_calls`` are only calls whose result is in ``request.turns``; the journal is
one reversible entry replacing everything the compaction was given; ``verified`` claims only what
was checked here, on this very result (``SELF_CHECKED``: the journal replays and rolls back), never a
class whose judgment needs the source transcript, a team's reading rules or a whole session.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

from harness._base._errors import InvalidArgument
from harness._base._kinds import kind_def
from harness._base._messages import to_messages
from harness._base._dialects import DROPPED_PARTS
from harness._base._model import Fact, FactKind, Part, PartKind, Role, ToolCall, Turn
from harness._base._protocol import CompactionRequest, CompactionResult, JournalEntry, RecoveryMarker, payload_sha256

__all__ = ["state", "Renderer", "prose_result", "narrative", "resolved_calls", "in_flight_calls", "tagged_calls",
           "handle_turn", "carried_parts", "summary_role", "node_id", "marker_for", "journal_for", "replay", "roll_back",
           "journal_reversible",
           "with_protocol2", "SELF_CHECKED"]

Renderer = Callable[[Fact], str]


def state(fact: Fact) -> str:
    """One sentence that carries ``fact`` by reference: its kind's own statement (``KindDef.statement``)."""
    try:
        text = kind_def(fact.kind).statement(fact)
    except Exception as exc:  # a team's statement with a bug: say whose it is
        raise InvalidArgument(f"kind {str(fact.kind)!r}: its KindDef.statement raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise InvalidArgument(f"kind {str(fact.kind)!r}: its KindDef.statement returned {text!r}; expected a str")
    return text


def narrative(request: CompactionRequest) -> str:
    calls = sum(len(t.tool_calls) for t in request.turns)
    users = sum(1 for t in request.turns if t.role is Role.USER)
    return f"Summary of {len(request.turns)} earlier turns ({users} from the user, {calls} tool calls)."


def prose_result(request: CompactionRequest, render: Renderer = state, *, extra: str = "", preamble: str = "",
                 kept: tuple[Turn, ...] = (), self_report: tuple[str, ...] | None = None) -> CompactionResult:
    lines = [narrative(request)] + ([preamble] if preamble else [])
    lines += [line for line in (render(f) for f in request.tags) if line]
    if extra:
        lines.append(extra)
    return CompactionResult((Turn(summary_role(request), "\n".join(lines)), *kept), self_report=self_report)


def summary_role(request: CompactionRequest) -> Role:
    """The role a summary is written in: Anthropic keeps the system prompt apart and its messages open with the
    user's, so there the summary is the user's message; elsewhere a system message."""
    return Role.USER if request.dialect == "anthropic" else Role.SYSTEM


# -- rich protocol 2 --------------------------------------------------------------------------------

#: The classes ``with_protocol2`` may claim, each only after checking it on the result it returns.
#: Only ``journal-reversible`` is decided by the request and the result alone. The retention classes
#: are judged by reading prose under rules a team may change, the budget by a counter it may change,
#: ``tool-pairing`` against the source transcript; ``marker-depth`` and the other session classes are
#: judged over a whole session, so no single result can be verified for them.
SELF_CHECKED = ("journal-reversible",)


def resolved_calls(turns: Sequence[Turn]) -> tuple[str, ...]:
    """The ids of calls made in ``turns`` whose result (a tool message answering them) is in ``turns`` too,
    in the order the calls were made."""
    answered = {t.tool_call_id for t in turns if t.role is Role.TOOL}
    out: list[str] = []
    for turn in turns:
        for call in turn.tool_calls:
            if call.id in answered and call.id not in out:
                out.append(call.id)
    return tuple(out)


def in_flight_calls(request: CompactionRequest) -> tuple[ToolCall, ...]:
    """Every call still in flight at this compaction, as structured calls: each call made in
    ``request.turns`` (or re-attached there by a previous round) with no tool message answering it in
    ``request.turns``, copied as made (id, name, arguments byte-exact), in the order made; then each
    tagged in-flight call not made there (a previous round carried it only in a ledger), rebuilt from
    its tag's ``name`` and ``arguments``. A call whose result arrived is never among them.
    """
    answered = {t.tool_call_id for t in request.turns if t.role is Role.TOOL}
    out: dict[str, ToolCall] = {}
    for turn in request.turns:
        for call in turn.tool_calls:
            if call.id not in answered:
                out.setdefault(call.id, call)
    for call_id, fact in tagged_calls(request).items():
        if call_id not in answered and call_id not in out:
            out[call_id] = ToolCall(call_id, fact.detail("name") or "unknown_tool", fact.detail("arguments") or "{}")
    return tuple(out.values())


def tagged_calls(request: CompactionRequest) -> dict[str, Fact]:
    """The tagged in-flight calls: call id -> its fact (a background job is not a call: its literal is a handle)."""
    return {f.literals[0]: f for f in request.tags
            if f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") != "background"}


def handle_turn(calls: Sequence[ToolCall], request: CompactionRequest | None = None) -> tuple[Turn, ...]:
    """The assistant message re-attaching in-flight calls, with the provider parts the request's dialect wants
    carried (``carried_parts``); none if there is nothing to carry."""
    parts = carried_parts(request, calls) if request is not None else ()
    return (Turn(Role.ASSISTANT, "", tool_calls=tuple(calls), parts=parts),) if calls or parts else ()


def carried_parts(request: CompactionRequest, calls: Sequence[ToolCall]) -> tuple[Part, ...]:
    """What a provider needs kept of the parts of the turns a compactor replaces, byte-exact: every compaction
    item, every approval request still waiting for its answer, and the reasoning of the turns that made
    ``calls`` (a call carried without its reasoning is refused). Only what the request's dialect carries."""
    ids = {c.id for c in calls}
    answered = {p.id for t in request.turns for p in t.parts if p.kind is PartKind.APPROVAL}
    kept = [p for t in request.turns for p in t.parts
            if p.kind is PartKind.COMPACTION or (p.kind is PartKind.APPROVAL_REQUEST and p.id not in answered)
            or (p.kind is PartKind.REASONING and any(c.id in ids for c in t.tool_calls))]
    return tuple(p for p in dict.fromkeys(kept) if p.kind not in DROPPED_PARTS[request.dialect])


def node_id(tier: int, messages: Sequence[Turn]) -> str:
    """The summary node a result writes: its tier and a hash of its messages, so a node written at
    one tier is never the name of a node at another."""
    return f"tier{tier}-{payload_sha256(messages)[:16]}"


def marker_for(request: CompactionRequest, messages: Sequence[Turn]) -> RecoveryMarker:
    return RecoveryMarker(request.tier, node_id(request.tier, messages), resolved_calls(request.turns))


def journal_for(request: CompactionRequest, messages: Sequence[Turn]) -> tuple[JournalEntry, ...]:
    """One edit: everything the compaction was given replaced by the result's messages, payload recorded."""
    return (JournalEntry.replacing(request.turns, 0, len(request.turns), messages),)


def replay(turns: Sequence[Turn], journal: Sequence[JournalEntry]) -> tuple[Turn, ...] | None:
    """``turns`` with the journal applied in order; None if an entry does not fit what it claims to remove."""
    context = list(turns)
    for entry in journal:
        if not 0 <= entry.start <= entry.end <= len(context):
            return None
        if entry.removed is not None and _wire(context[entry.start:entry.end]) != _wire(entry.removed):
            return None
        context[entry.start:entry.end] = entry.inserted
    return tuple(context)


def roll_back(messages: Sequence[Turn], journal: Sequence[JournalEntry]) -> tuple[Turn, ...] | None:
    """``messages`` with the journal undone in reverse; None if an entry kept no payload to restore."""
    context = list(messages)
    for entry in reversed(journal):
        stop = entry.start + len(entry.inserted)
        if entry.removed is None or stop > len(context) or _wire(context[entry.start:stop]) != _wire(entry.inserted):
            return None
        context[entry.start:stop] = entry.removed
    return tuple(context)


def journal_reversible(turns: Sequence[Turn], messages: Sequence[Turn], journal: Sequence[JournalEntry]) -> bool:
    """Whether the journal turns ``turns`` into ``messages`` exactly and rolls back to ``turns`` byte-exact."""
    forward = replay(turns, journal)
    if forward is None or _wire(forward) != _wire(messages):
        return False
    back = roll_back(messages, journal)
    return back is not None and _wire(back) == _wire(turns)


def _wire(turns: Sequence[Turn]) -> str:
    return json.dumps(to_messages(tuple(turns)), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def with_protocol2(request: CompactionRequest, result: CompactionResult, *, marker: RecoveryMarker | None = None,
                   journal: tuple[JournalEntry, ...] | None = None) -> CompactionResult:
    """``result`` with a marker, a journal and the classes checked on it (``SELF_CHECKED``) added.

    ``marker`` and ``journal`` default to the correct ones; a mutant passes its own, and then
    claims ``journal-reversible`` only if its own journal passes the check.
    """
    marker = marker_for(request, result.messages) if marker is None else marker
    journal = journal_for(request, result.messages) if journal is None else journal
    checked = ("journal-reversible",) if journal_reversible(request.turns, result.messages, journal) else ()
    return dataclasses.replace(result, marker=marker, journal=journal, verified=checked or None)
