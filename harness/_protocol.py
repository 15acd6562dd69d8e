"""What passes between the harness and a summarizer under test.

Two protocols (DESIGN section 5): a *messages* summarizer takes chat messages
and a budget and returns messages or a string; a *rich* one takes a
``CompactionRequest`` and returns a ``CompactionResult`` that may add a
self-report and a structured ledger. Both end up as a ``CompactionResult``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness._errors import HarnessError
from harness._messages import to_messages
from harness._model import Fact, Role, ToolCall, Turn

__all__ = [
    "CompactionRequest",
    "CompactionResult",
    "LedgerEntry",
    "MalformedResult",
    "result_from_return",
    "result_to_dict",
    "result_from_dict",
    "request_key_material",
]


class MalformedResult(HarnessError, TypeError):
    """A summarizer returned something that is not a valid post-compaction context."""


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


def _turn_from_message(message: Any, index: int) -> Turn:
    if not isinstance(message, dict):
        raise MalformedResult(f"message [{index}]: expected a dict, got {type(message).__name__}")
    role = message.get("role")
    try:
        role = Role(role)
    except ValueError:
        raise MalformedResult(f"message [{index}].role: expected one of system, user, assistant, tool, got {role!r}") from None
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise MalformedResult(f"message [{index}].content: expected a string, got {type(content).__name__}")
    calls = []
    for j, call in enumerate(message.get("tool_calls") or ()):
        fn = call.get("function", {}) if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(call.get("id"), str) or not isinstance(fn.get("name"), str):
            raise MalformedResult(f"message [{index}].tool_calls[{j}]: expected {{id, function: {{name, arguments}}}}")
        calls.append(ToolCall(call["id"], fn["name"], str(fn.get("arguments", "{}"))))
    call_id = message.get("tool_call_id")
    try:
        return Turn(role, content, tuple(calls), call_id if isinstance(call_id, str) else None)
    except ValueError as exc:
        raise MalformedResult(f"message [{index}]: {exc}") from None


def result_from_return(value: Any) -> CompactionResult:
    """Normalise what a summarizer returned: a CompactionResult, a string, or a list of messages."""
    if isinstance(value, CompactionResult):
        return value
    if isinstance(value, str):
        return CompactionResult((Turn(Role.SYSTEM, value),))
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return CompactionResult(tuple(_turn_from_message(m, i) for i, m in enumerate(value)))
    raise MalformedResult(
        f"expected a string, a list of message dicts or a CompactionResult, got {type(value).__name__}"
    )


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


def result_from_dict(data: dict[str, Any]) -> CompactionResult:
    base = result_from_return(data["messages"])
    ledger = None
    if data.get("ledger") is not None:
        ledger = tuple(
            LedgerEntry(e["kind"], tuple(e["literals"]), e.get("polarity"), e.get("status", "open"),
                        tuple(sorted(e.get("details", {}).items())), e.get("fact_id"))
            for e in data["ledger"]
        )
    report = tuple(data["self_report"]) if data.get("self_report") is not None else None
    return CompactionResult(base.messages, ledger=ledger, self_report=report)


def request_key_material(request: CompactionRequest) -> dict[str, Any]:
    """Everything a summarizer's answer may depend on, in a canonical JSON-ready form."""
    from harness._codec import _fact_to_dict  # local: the codec imports the model, not the protocol

    return {
        "messages": request.messages(),
        "budget": request.budget,
        "tags": [_fact_to_dict(f) for f in request.tags],
    }
