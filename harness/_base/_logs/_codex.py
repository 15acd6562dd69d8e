"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): a line per record.

Since mid-2025 each line is ``{"timestamp", "type", "payload"}``: ``session_meta`` first, then
``response_item`` (the conversation: Responses items), ``event_msg`` (the same turns again as UI events),
``turn_context`` and, where Codex compacted, ``compacted`` (its summary, which the model saw next as a user
message). Earlier rollouts hold the items bare, after a first line of session metadata, with
``{"record_type": "state"}`` lines between. The conversation is read from the items alone.
"""

from __future__ import annotations

from typing import Any

from harness._base._errors import SchemaError
from harness._base._logs._records import SessionLog, at_line
from harness._base._logs._responses import is_responses_item, read_responses_items

__all__ = ["CODEX_RECORDS", "is_codex_line", "read_codex"]

#: The record types of a rollout line; only ``response_item`` and ``compacted`` carry the conversation.
CODEX_RECORDS = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def is_codex_line(value: Any) -> bool:
    """A rollout line: a record with a ``payload``, or the bare session metadata an earlier rollout opens with."""
    if not isinstance(value, dict):
        return False
    if value.get("type") in CODEX_RECORDS and "payload" in value:
        return True
    return "record_type" in value or ({"id", "timestamp"} <= set(value) and "instructions" in value)


def read_codex(lines: list[tuple[int, Any]], *, source: str) -> SessionLog:
    """One rollout (its parsed lines, each with its number) as one session."""
    items: list[Any] = []
    origins: list[tuple[str, str]] = []
    for number, value in lines:
        where = at_line(source, number)
        if not isinstance(value, dict):
            raise SchemaError("<root>", "a rollout record (an object)", value, source=where)
        kind = value.get("type")
        if "payload" in value:
            payload = value["payload"]
            if kind == "response_item":
                items.append(payload)
                origins.append((where, "payload"))
            elif kind == "compacted":
                message = payload.get("message") if isinstance(payload, dict) else None
                if not isinstance(message, str):
                    raise SchemaError("payload.message", "the summary Codex compacted to (a string)", message,
                                      source=where)
                items.append({"type": "message", "role": "user", "content": message})
                origins.append((where, "payload.message"))
            elif kind not in CODEX_RECORDS:
                raise SchemaError("type", f"a rollout record type ({', '.join(sorted(CODEX_RECORDS))})", kind,
                                  source=where)
        elif is_responses_item(value) or kind == "message":
            items.append(value)  # an earlier rollout's bare item
            origins.append((where, "<root>"))
        elif not is_codex_line(value):
            raise SchemaError("<root>", "a rollout record ({\"timestamp\", \"type\", \"payload\"}) or a Responses item",
                              value, source=where)
    if not items:
        raise SchemaError("<root>", "at least one response_item line", "none", source=source)
    return read_responses_items(items, source=source, locate=origins.__getitem__, format="codex")
