"""A summarizer's answer read into a ``CompactionResult``, and a result written as the wire and the cache keep it.

Whatever a summarizer returns (messages, a string, a ``CompactionResult`` or its JSON form) is checked field by
field here, so a bad answer is a ``MalformedResult`` naming the field and what was expected, never a crash later.
A result written for a request may refer to the request's own turns by index (``given``), so a long context kept
word for word costs a number per turn on the wire and in the cache.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from harness._base._errors import MalformedResult, _short
from harness._base._messages import to_messages, turn_to_record
from harness._base._model import Part, PartKind, Role, ToolCall, Turn
from harness._base._protocol import CompactionResult, JournalEntry, LedgerEntry, RecoveryMarker

__all__ = ["result_from_return", "result_to_dict", "result_from_dict", "turn_from_message", "content_text"]

# OpenAI's newer name for the system role; both arrive from the chat APIs teams use.
_ROLE_ALIASES = {"developer": Role.SYSTEM}


def content_text(content: Any, where: str) -> str:
    """Message content as text: a string, or a list of parts (or blocks) whose text parts are joined; an image,
    reasoning or tool_use part carries no text the oracles read. Chat messages and LangChain messages alike."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                text = part.get("text")
                if text is not None and not isinstance(text, str):
                    raise MalformedResult(f"{where}.content[{j}].text: expected a string, got {type(text).__name__}")
                if text is not None:
                    texts.append(text)  # image and other non-text parts carry nothing the oracles can read
            else:
                raise MalformedResult(f"{where}.content[{j}]: expected a part object or a string, "
                                      f"got {type(part).__name__}")
        return "\n".join(texts)
    raise MalformedResult(f"{where}.content: expected a string or a list of parts, got {type(content).__name__}")


def turn_from_message(message: Any, index: int) -> Turn:
    where = f"message [{index}]"
    if isinstance(message, Turn):
        return _checked_turn(message, where)
    if not isinstance(message, dict):
        raise MalformedResult(f"{where}: expected a dict, got {type(message).__name__}")
    role = message.get("role")
    try:
        role = _ROLE_ALIASES.get(role) or Role(role)
    except (ValueError, TypeError):
        raise MalformedResult(f"{where}.role: expected one of system, developer, user, assistant, tool, "
                              f"got {_short(role)}") from None
    content = content_text(message.get("content"), where)
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list | tuple):
        raise MalformedResult(f"{where}.tool_calls: expected a list, got {type(raw_calls).__name__}")
    calls = []
    for j, call in enumerate(raw_calls or ()):
        fn = call.get("function", {}) if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(call.get("id"), str) or not isinstance(fn.get("name"), str):
            raise MalformedResult(f"{where}.tool_calls[{j}]: expected {{id, function: {{name, arguments}}}}")
        arguments = fn.get("arguments", "{}")
        if not isinstance(arguments, str):  # some clients hand arguments over already parsed
            try:
                arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
            except (TypeError, ValueError):
                raise MalformedResult(f"{where}.tool_calls[{j}].function.arguments: expected JSON text or a "
                                      f"JSON value, got {type(arguments).__name__}") from None
        calls.append(ToolCall(call["id"], fn["name"], arguments))
    call_id = message.get("tool_call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise MalformedResult(f"{where}.tool_call_id: expected a string, got {type(call_id).__name__}")
    try:
        return Turn(role, content, tuple(calls), call_id, _parts_of(message, where))
    except ValueError as exc:
        raise MalformedResult(f"{where}: {exc}") from None


def _checked_turn(turn: Turn, where: str) -> Turn:
    """A Turn a rich summarizer built itself: frozen dataclasses do not check field types, so we do."""
    if not isinstance(turn.role, Role):
        raise MalformedResult(f"{where}.role: expected a Role, got {_short(turn.role)}")
    if not isinstance(turn.text, str):
        raise MalformedResult(f"{where}.text: expected a string, got {type(turn.text).__name__}")
    if not isinstance(turn.tool_calls, tuple) or not all(
            isinstance(c, ToolCall) and isinstance(c.id, str) and isinstance(c.name, str)
            and isinstance(c.arguments, str) for c in turn.tool_calls):
        raise MalformedResult(f"{where}.tool_calls: expected a tuple of ToolCall with string fields")
    if turn.tool_call_id is not None and not isinstance(turn.tool_call_id, str):
        raise MalformedResult(f"{where}.tool_call_id: expected a string, got {type(turn.tool_call_id).__name__}")
    parts = getattr(turn, "parts", ())  # unset on a turn built with object.__new__
    if not isinstance(parts, tuple) or not all(
            isinstance(p, Part) and isinstance(p.kind, PartKind) and all(isinstance(f, str) for f in (p.data, p.text, p.id))
            for p in parts):
        raise MalformedResult(f"{where}.parts: expected a tuple of harness.Part with string fields")
    try:  # Turn's own checks, which object.__new__ and object.__setattr__ get past
        Turn(turn.role, turn.text, turn.tool_calls, turn.tool_call_id, parts)
    except ValueError as exc:
        raise MalformedResult(f"{where}: {exc}") from None
    return turn


def _str_tuple(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise MalformedResult(f"{where}: expected a list of strings, got {_short(value)}")
    return tuple(value)


def _optional_str(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise MalformedResult(f"{where}: expected a string or null, got {_short(value)}")
    return value


def _ledger_entry(value: Any, index: int) -> LedgerEntry:
    where = f"ledger[{index}]"
    if isinstance(value, LedgerEntry):
        raw = {"kind": value.kind, "literals": value.literals, "polarity": value.polarity, "status": value.status,
               "details": value.details, "fact_id": value.fact_id}
    elif isinstance(value, dict):
        raw = value
    else:
        raise MalformedResult(f"{where}: expected a LedgerEntry, got {type(value).__name__}")
    kind, status = raw.get("kind"), raw.get("status", "open")
    if not isinstance(kind, str) or not kind:
        raise MalformedResult(f"{where}.kind: expected a non-empty string, got {_short(kind)}")
    if not isinstance(status, str):
        raise MalformedResult(f"{where}.status: expected a string, got {_short(status)}")
    details = raw.get("details") or ()
    pairs = details.items() if isinstance(details, dict) else details
    try:
        pairs = tuple(sorted((k, v) for k, v in pairs))
    except (TypeError, ValueError):
        raise MalformedResult(f"{where}.details: expected string keys and values, got {_short(details)}") from None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in pairs):
        raise MalformedResult(f"{where}.details: expected string keys and values, got {_short(details)}")
    return LedgerEntry(kind, _str_tuple(raw.get("literals"), f"{where}.literals"),
                       _optional_str(raw.get("polarity"), f"{where}.polarity"), status, pairs,
                       _optional_str(raw.get("fact_id"), f"{where}.fact_id"))


def _messages(value: Any) -> tuple[Turn, ...]:
    if isinstance(value, str):
        return (Turn(Role.SYSTEM, value),)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return tuple(turn_from_message(m, i) for i, m in enumerate(value))
    raise MalformedResult(
        f"expected a string, a list of message dicts or a CompactionResult, got {type(value).__name__}"
    )


def _whole(value: Any, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MalformedResult(f"{where}: expected a whole number >= {minimum}, got {_short(value)}")
    return value


def _marker(value: Any) -> RecoveryMarker | None:
    if value is None:
        return None
    if isinstance(value, RecoveryMarker):
        value = {"tier": value.tier, "node": value.node, "resolved_calls": value.resolved_calls}
    if not isinstance(value, dict):
        raise MalformedResult(f"marker: expected a RecoveryMarker or an object, got {type(value).__name__}")
    node = value.get("node")
    if not isinstance(node, str) or not node:
        raise MalformedResult(f"marker.node: expected a non-empty string, got {_short(node)}")
    return RecoveryMarker(_whole(value.get("tier"), "marker.tier", minimum=1), node,
                          _str_tuple(value.get("resolved_calls", ()), "marker.resolved_calls"))


def _turns(value: Any, where: str) -> tuple[Turn, ...]:
    if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence):
        raise MalformedResult(f"{where}: expected a list of messages, got {type(value).__name__}")
    try:
        return tuple(turn_from_message(m, i) for i, m in enumerate(value))
    except MalformedResult as exc:
        raise MalformedResult(f"{where}: {exc}") from None


def _journal(value: Any) -> tuple[JournalEntry, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | dict) or not isinstance(value, Sequence):
        raise MalformedResult(f"journal: expected a list of entries or None, got {type(value).__name__}")
    entries = []
    for i, raw in enumerate(value):
        where = f"journal[{i}]"
        if isinstance(raw, JournalEntry):
            raw = {"start": raw.start, "end": raw.end, "inserted": raw.inserted, "removed": raw.removed,
                   "removed_sha256": raw.removed_sha256}
        if not isinstance(raw, dict):
            raise MalformedResult(f"{where}: expected a JournalEntry or an object, got {type(raw).__name__}")
        start, end = _whole(raw.get("start"), f"{where}.start"), _whole(raw.get("end"), f"{where}.end")
        if end < start:
            raise MalformedResult(f"{where}: end {end} is before start {start}")
        removed = raw.get("removed")
        entries.append(JournalEntry(start, end, _turns(raw.get("inserted"), f"{where}.inserted"),
                                    None if removed is None else _turns(removed, f"{where}.removed"),
                                    _optional_str(raw.get("removed_sha256"), f"{where}.removed_sha256")))
    return tuple(entries)


def _result(messages: Any, ledger: Any, self_report: Any, marker: Any = None, journal: Any = None,
            verified: Any = None) -> CompactionResult:
    if ledger is not None and (isinstance(ledger, str | dict) or not isinstance(ledger, Sequence)):
        raise MalformedResult(f"ledger: expected a list of entries or None, got {type(ledger).__name__}")
    return CompactionResult(
        _messages(messages),
        ledger=None if ledger is None else tuple(_ledger_entry(e, i) for i, e in enumerate(ledger)),
        self_report=None if self_report is None else _str_tuple(self_report, "self_report"),
        marker=_marker(marker),
        journal=_journal(journal),
        verified=None if verified is None else _str_tuple(verified, "verified"),
    )


def result_from_return(value: Any) -> CompactionResult:
    """Normalise what a summarizer returned: a CompactionResult, a string, or a list of messages.

    Every field is checked, since a summarizer may build a ``CompactionResult``
    with anything in it; a bad one raises ``MalformedResult`` naming the field.
    """
    if isinstance(value, CompactionResult):
        if isinstance(value.messages, str):
            raise MalformedResult("messages: expected a sequence of turns, got str")
        return _result(value.messages, value.ledger, value.self_report, value.marker, value.journal, value.verified)
    return CompactionResult(_messages(value))


def result_to_dict(result: CompactionResult, given: Sequence[Turn] = ()) -> dict[str, Any]:
    """JSON-ready form of a result (for the call cache and reports). A message equal to one of ``given`` (the
    turns the summarizer was given) is written as that turn's index: what a worker process sends back for a
    turn kept as it was, so neither side copies or reads it again (``result_from_dict`` with the same turns)."""
    index = _first_index(given) if given else None
    out: dict[str, Any] = {"messages": [turn_to_record(t) if index is None or (i := index.get(t)) is None
                                        or given[i].parts != t.parts else i for t in result.messages]}
    if result.ledger is not None:
        out["ledger"] = [
            {"kind": e.kind, "literals": list(e.literals), "polarity": e.polarity, "status": e.status,
             "details": dict(e.details), "fact_id": e.fact_id}
            for e in result.ledger
        ]
    if result.self_report is not None:
        out["self_report"] = list(result.self_report)
    if result.marker is not None:
        out["marker"] = {"tier": result.marker.tier, "node": result.marker.node,
                         "resolved_calls": list(result.marker.resolved_calls)}
    if result.journal is not None:
        out["journal"] = [{"start": e.start, "end": e.end, "inserted": to_messages(e.inserted),
                           "removed": None if e.removed is None else to_messages(e.removed),
                           "removed_sha256": e.removed_sha256} for e in result.journal]
    if result.verified is not None:
        out["verified"] = list(result.verified)
    return out


def _parts_of(message: dict[str, Any], where: str) -> tuple[Part, ...]:
    raw = message.get("parts")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        raise MalformedResult(f"{where}.parts: expected a list of part objects, got {_short(raw)}")
    parts = []
    for j, p in enumerate(raw):
        try:
            kind = PartKind(p.get("kind"))
        except ValueError:
            raise MalformedResult(f"{where}.parts[{j}].kind: expected one of {', '.join(PartKind)}, "
                                  f"got {_short(p.get('kind'))}") from None
        fields = [p.get(key, "") for key in ("data", "text", "id")]
        if not all(isinstance(f, str) for f in fields):
            raise MalformedResult(f"{where}.parts[{j}]: data, text and id must be strings")
        parts.append(Part(kind, *fields))
    return tuple(parts)


def result_from_dict(data: Any, given: Sequence[Turn] = ()) -> CompactionResult:
    """Inverse of ``result_to_dict`` (an index in ``messages`` stands for that turn of ``given``, the very
    object); anything else (a damaged cache file, an index out of range) raises ``MalformedResult``."""
    if not isinstance(data, dict) or "messages" not in data:
        raise MalformedResult(f"expected an object with 'messages', got {type(data).__name__}")
    messages = data["messages"]
    result = _result(() if given and isinstance(messages, list) else messages, data.get("ledger"),
                     data.get("self_report"), data.get("marker"), data.get("journal"), data.get("verified"))
    if not given or not isinstance(messages, list):
        return result
    # The request's own turns as they are (checked when they were made); the rest read as any message is.
    turns = tuple(_given_turn(m, i, given) if isinstance(m, int) and not isinstance(m, bool)
                  else turn_from_message(m, i) for i, m in enumerate(messages))
    return dataclasses.replace(result, messages=turns)


def _first_index(turns: Sequence[Turn]) -> dict[Turn, int]:
    index: dict[Turn, int] = {}
    for i, turn in enumerate(turns):
        index.setdefault(turn, i)
    return index


def _given_turn(ref: int, position: int, given: Sequence[Turn]) -> Turn:
    if not 0 <= ref < len(given):
        raise MalformedResult(f"message [{position}]: refers to turn {ref} of the request, which has {len(given)}")
    return given[ref]
