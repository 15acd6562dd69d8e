"""What passes between the harness and a summarizer under test.

Two protocols (DESIGN section 5): a *messages* summarizer takes chat messages
and a budget and returns messages or a string; a *rich* one takes a
``CompactionRequest`` and returns a ``CompactionResult``. Both end up as a
``CompactionResult``.

Each protocol is versioned (``PROTOCOL_VERSIONS``; the rich one's is ``RICH_PROTOCOL_VERSION``) and a request
says the version it is written in. What each version added and changed for a compactor's author is
``PROTOCOL_CHANGES``, written once here: docs/reference/protocol-changes.md says it at length, and a run warns a
compactor that declares an older version (``compaction_protocol_version``) of what changed since.

A messages summarizer is given the turns in the request's *dialect* (``harness._base._dialects``): chat
messages by default, or an Anthropic Messages body, or OpenAI Responses items, and answers in the same
shape. A rich summarizer reads the turns themselves; the dialect tells it which provider its context goes
to, and ``provider-valid`` judges the result by that provider's rules.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._dialects import DEFAULT_DIALECT, DIALECTS, render
from harness._base._errors import InvalidArgument, MalformedResult, SpecError, _short
from harness._base._kinds import kind_def
from harness._base._codec import fact_to_dict
from harness._base._messages import to_messages, turn_to_record
from harness._base._model import Consumer, Fact, Part, PartKind, Role, ToolCall, Turn
from harness._base._versions import (MESSAGES_PROTOCOL_VERSION, PROTOCOL_CHANGES, PROTOCOL_VERSIONS,
                                     RICH_PROTOCOL_VERSION, ProtocolChange, changes_since, declared_version,
                                     known_versions, version_warning)

__all__ = [
    "RICH_PROTOCOL_VERSION",
    "MESSAGES_PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "ProtocolChange",
    "PROTOCOL_CHANGES",
    "changes_since",
    "declared_version",
    "version_warning",
    "CompactionRequest",
    "CompactionResult",
    "LedgerEntry",
    "RecoveryMarker",
    "JournalEntry",
    "payload_sha256",
    "consumers_to_wire",
    "MalformedResult",
    "result_from_return",
    "result_to_dict",
    "result_from_dict",
    "request_key_material",
    "request_digest",
    "PROTOCOLS",
    "resolve_protocol",
]

PROTOCOLS = ("messages", "rich")

# OpenAI's newer name for the system role; both arrive from the chat APIs teams use.
_ROLE_ALIASES = {"developer": Role.SYSTEM}


@dataclass(frozen=True, slots=True)
class CompactionRequest:
    """One compaction: the turns to compact, the token budget, and optional obligation tags.

    ``tags`` are the facts a runtime would have tagged at write time (the live
    ledger at this point). Only rich summarizers see them; a plain messages
    summarizer never does. ``previous_output`` says how many leading turns are
    the previous compaction's own output (0 on a session's first compaction), so
    a compactor can tell its earlier summary from the source turns that followed.
    """

    turns: tuple[Turn, ...]
    budget: int
    tags: tuple[Fact, ...] = ()
    tier: int = 1  # the depth of the digest this compaction writes: 1 a summary of turns, 2 a digest of those...
    consumers: tuple[Consumer, ...] = ()  # who reads the result, and the invariant classes each relies on
    previous_output: int = 0  # turns[:previous_output] are what the previous compaction returned
    dialect: str = DEFAULT_DIALECT  # the provider shape a messages summarizer is given the turns in (``--dialect``)
    protocol_version: int = RICH_PROTOCOL_VERSION  # the rich protocol version the request is written in

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise InvalidArgument(f"dialect={self.dialect!r}: expected one of {', '.join(DIALECTS)}")
        version = self.protocol_version
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= RICH_PROTOCOL_VERSION:
            raise InvalidArgument(f"protocol_version={version!r}: expected a rich protocol version this harness "
                                  f"knows, {known_versions('rich')}")

    def messages(self) -> list[dict[str, Any]]:
        return to_messages(self.turns)

    def payload(self) -> Any:
        """The turns as the request's dialect writes them: what a messages summarizer is given."""
        return render(self.turns, self.dialect)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One obligation carried verbatim in a structured side channel.

    It counts as keeping a fact only if ``kind`` and every literal match the
    source byte-exact (and polarity / operator / disposition where the fact has one).
    """

    kind: str
    literals: tuple[str, ...]
    polarity: str | None = None
    status: str = "open"
    details: tuple[tuple[str, str], ...] = ()
    fact_id: str | None = None

    @classmethod
    def verbatim(cls, fact: Fact) -> LedgerEntry:
        """``fact`` copied as a correct ledger keeps it: its literals, polarity and the details its kind names
        (``KindDef.ledger_details``), open."""
        keys = kind_def(fact.kind).ledger_details
        return cls(kind=str(fact.kind), literals=fact.literals, polarity=fact.polarity.value if fact.polarity else None,
                   status="open", details=tuple((k, v) for k, v in fact.details if k in keys), fact_id=fact.id)

    def detail(self, key: str) -> str | None:
        return dict(self.details).get(key)

    def render(self) -> str:
        """The entry as the agent would see it in its context."""
        extra = "".join(f" {k}={v}" for k, v in self.details)
        polarity = f" {self.polarity}" if self.polarity else ""
        return f"[{self.kind}{polarity} {self.status}] " + " | ".join(self.literals) + extra


@dataclass(frozen=True, slots=True)
class RecoveryMarker:
    """A pointer plus a promise (reference 001): resume from summary node ``node`` at tier ``tier``.

    ``resolved_calls`` are the tool-call ids the marker declares resolved; a
    marker is valid only at the tier of the digest framing the session.
    """

    tier: int
    node: str
    resolved_calls: tuple[str, ...] = ()


def payload_sha256(turns: Sequence[Turn]) -> str:
    """The hash a journal entry records of the turns it removed: SHA-256 of their messages as compact,
    key-sorted UTF-8 JSON."""
    text = json.dumps(to_messages(tuple(turns)), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One reversible edit of the context (reference 002): messages ``start:end`` of what the
    compaction was given were replaced by ``inserted``.

    ``removed`` is the payload rollback restores; ``removed_sha256`` optionally
    its hash (``payload_sha256``). A journal is the entries in the order they
    were applied; rolling back undoes them in reverse.
    """

    start: int
    end: int
    inserted: tuple[Turn, ...]
    removed: tuple[Turn, ...] | None
    removed_sha256: str | None = None

    @classmethod
    def replacing(cls, turns: Sequence[Turn], start: int, end: int, inserted: Sequence[Turn]) -> JournalEntry:
        """The entry for replacing ``turns[start:end]`` with ``inserted``, payload and hash recorded."""
        removed = tuple(turns[start:end])
        return cls(start, end, tuple(inserted), removed, payload_sha256(removed))


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The post-compaction context: messages (summary and any kept turns), plus side channels.

    ``self_report`` lists fact ids (or literals) the compactor claims it kept;
    ``verified`` the invariant classes (oracle ids) it claims to have verified.
    Oracles check both against the source, never trust them. ``marker`` and
    ``journal`` are the recovery marker and edit journal of rich protocol 2.
    """

    messages: tuple[Turn, ...]
    ledger: tuple[LedgerEntry, ...] | None = None
    self_report: tuple[str, ...] | None = None
    marker: RecoveryMarker | None = None
    journal: tuple[JournalEntry, ...] | None = None
    verified: tuple[str, ...] | None = None

    @property
    def summary_text(self) -> str:
        return "\n".join(t.text for t in self.messages)


def _content_text(content: Any, where: str) -> str:
    """Message content as text: a string, or a list of parts whose text parts are joined."""
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


def _turn_from_message(message: Any, index: int) -> Turn:
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
    content = _content_text(message.get("content"), where)
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
        return tuple(_turn_from_message(m, i) for i, m in enumerate(value))
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
        return tuple(_turn_from_message(m, i) for i, m in enumerate(value))
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
                  else _turn_from_message(m, i) for i, m in enumerate(messages))
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


def resolve_protocol(fn: Callable[..., Any], explicit: str | None = None, *, recorded: str | None = None,
                     option: str = "--protocol", spec: str | None = None) -> str:
    """The protocol to call ``fn`` with: the one given explicitly, else the function's own
    ``compaction_protocol`` attribute, else the one recorded with it (a corpus entry saved from
    this same summarizer), else ``messages``. A function that cannot be called the way that protocol
    calls it is refused now, before any example, naming the protocol and how to choose the other, and so is
    one declaring a version of that protocol this harness does not know (``declared_version``)."""
    chosen, source = "messages", "the default"
    for value, where in ((explicit, option), (getattr(fn, "compaction_protocol", None), "compaction_protocol"),
                         (recorded, "the corpus entry's protocol")):
        if value is None:
            continue
        if value not in PROTOCOLS:
            raise SpecError(f"{where} {value!r}: expected one of {', '.join(PROTOCOLS)}")
        chosen, source = value, where
        break
    _check_signature(fn, chosen, source, option, spec)
    declared_version(fn, chosen, spec=spec)
    return chosen


#: How each protocol calls the summarizer, with stand-ins for the arguments.
_CALLED_AS = {"messages": ("fn(messages, budget)", ([], 0)), "rich": ("fn(request)", (None,))}


def _check_signature(fn: Callable[..., Any], protocol: str, source: str, option: str, spec: str | None) -> None:
    """Raise ``SpecError`` when ``fn``'s parameters cannot take the arguments ``protocol`` passes."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: the first call will tell
        return
    shown, arguments = _CALLED_AS[protocol]
    if _binds(signature, arguments):
        return
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    other = next(p for p in PROTOCOLS if p != protocol)
    hint = ""
    if _binds(signature, _CALLED_AS[other][1]):
        hint = (f"; it fits the {other!r} protocol, {_CALLED_AS[other][0]}: pass {option} {other}, or set "
                f"{name}.compaction_protocol = {other!r}")
    raise SpecError(f"{f'summarizer {spec!r}: ' if spec else ''}{name}{signature} cannot be called as {shown}, "
                    f"which the {protocol!r} protocol does (chosen by {source}){hint}")


def _binds(signature: inspect.Signature, arguments: tuple) -> bool:
    try:
        signature.bind(*arguments)
    except TypeError:
        return False
    return True
