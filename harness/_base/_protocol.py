"""What passes between the harness and a summarizer under test.

Two protocols (DESIGN section 5): a *messages* summarizer takes chat messages
and a budget and returns messages or a string; a *rich* one takes a
``CompactionRequest`` and returns a ``CompactionResult`` that may add a
self-report and a structured ledger. Both end up as a ``CompactionResult``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness._base._errors import MalformedResult, SpecError, _short
from harness._base._codec import fact_to_dict
from harness._base._messages import to_messages
from harness._base._model import Fact, Role, ToolCall, Turn

__all__ = [
    "CompactionRequest",
    "CompactionResult",
    "LedgerEntry",
    "MalformedResult",
    "result_from_return",
    "result_to_dict",
    "result_from_dict",
    "request_key_material",
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
    summarizer never does.
    """

    turns: tuple[Turn, ...]
    budget: int
    tags: tuple[Fact, ...] = ()

    def messages(self) -> list[dict[str, Any]]:
        return to_messages(self.turns)


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

    def detail(self, key: str) -> str | None:
        return dict(self.details).get(key)

    def render(self) -> str:
        """The entry as the agent would see it in its context."""
        extra = "".join(f" {k}={v}" for k, v in self.details)
        polarity = f" {self.polarity}" if self.polarity else ""
        return f"[{self.kind}{polarity} {self.status}] " + " | ".join(self.literals) + extra


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The post-compaction context: messages (summary and any kept turns), plus side channels.

    ``self_report`` lists fact ids (or literals) the compactor claims it kept;
    oracles check it against the source, never trust it.
    """

    messages: tuple[Turn, ...]
    ledger: tuple[LedgerEntry, ...] | None = None
    self_report: tuple[str, ...] | None = None

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
        return Turn(role, content, tuple(calls), call_id)
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
    try:  # Turn's own checks, which object.__new__ and object.__setattr__ get past
        Turn(turn.role, turn.text, turn.tool_calls, turn.tool_call_id)
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


def _result(messages: Any, ledger: Any, self_report: Any) -> CompactionResult:
    if ledger is not None and (isinstance(ledger, str | dict) or not isinstance(ledger, Sequence)):
        raise MalformedResult(f"ledger: expected a list of entries or None, got {type(ledger).__name__}")
    return CompactionResult(
        _messages(messages),
        ledger=None if ledger is None else tuple(_ledger_entry(e, i) for i, e in enumerate(ledger)),
        self_report=None if self_report is None else _str_tuple(self_report, "self_report"),
    )


def result_from_return(value: Any) -> CompactionResult:
    """Normalise what a summarizer returned: a CompactionResult, a string, or a list of messages.

    Every field is checked, since a summarizer may build a ``CompactionResult``
    with anything in it; a bad one raises ``MalformedResult`` naming the field.
    """
    if isinstance(value, CompactionResult):
        if isinstance(value.messages, str):
            raise MalformedResult("messages: expected a sequence of turns, got str")
        return _result(value.messages, value.ledger, value.self_report)
    return CompactionResult(_messages(value))


def result_to_dict(result: CompactionResult) -> dict[str, Any]:
    """JSON-ready form of a result (for the call cache and reports)."""
    out: dict[str, Any] = {"messages": to_messages(result.messages)}
    if result.ledger is not None:
        out["ledger"] = [
            {"kind": e.kind, "literals": list(e.literals), "polarity": e.polarity, "status": e.status,
             "details": dict(e.details), "fact_id": e.fact_id}
            for e in result.ledger
        ]
    if result.self_report is not None:
        out["self_report"] = list(result.self_report)
    return out


def result_from_dict(data: Any) -> CompactionResult:
    """Inverse of ``result_to_dict``; anything else (a damaged cache file) raises ``MalformedResult``."""
    if not isinstance(data, dict) or "messages" not in data:
        raise MalformedResult(f"expected an object with 'messages', got {type(data).__name__}")
    return _result(data["messages"], data.get("ledger"), data.get("self_report"))


def request_key_material(request: CompactionRequest) -> dict[str, Any]:
    """Everything a summarizer's answer may depend on, in a canonical JSON-ready form."""
    return {
        "messages": request.messages(),
        "budget": request.budget,
        "tags": [fact_to_dict(f) for f in request.tags],
    }


def resolve_protocol(fn: Callable[..., Any], explicit: str | None = None, *, recorded: str | None = None,
                     option: str = "--protocol") -> str:
    """The protocol to call ``fn`` with: the one given explicitly, else the function's own
    ``compaction_protocol`` attribute, else the one recorded with it (a corpus entry saved from
    this same summarizer), else ``messages``."""
    for value, where in ((explicit, option), (getattr(fn, "compaction_protocol", None), "compaction_protocol"),
                         (recorded, "the corpus entry's protocol")):
        if value is None:
            continue
        if value not in PROTOCOLS:
            raise SpecError(f"{where} {value!r}: expected one of {', '.join(PROTOCOLS)}")
        return value
    return "messages"
