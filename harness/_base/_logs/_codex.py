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
from harness._base._logs._responses import RESPONSES_ITEM_TYPES, is_responses_item, read_responses_items

__all__ = ["CODEX_RECORDS", "is_codex_line", "read_codex"]

#: The record types a rollout line has had; only ``response_item`` and ``compacted`` carry the conversation.
CODEX_RECORDS = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state",
                           "token_usage_record"})


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
    first_number, first = lines[0]
    if isinstance(first, dict) and "payload" in first and first.get("type") != "session_meta":
        raise SchemaError("type", "'session_meta' (a rollout opens with its session's metadata)", first.get("type"),
                          source=at_line(source, first_number))
    for number, value in lines:
        where = at_line(source, number)
        if not isinstance(value, dict):
            raise SchemaError("<root>", "a rollout record (an object)", value, source=where)
        kind = value.get("type")
        if "payload" in value:
            payload = value["payload"]
            if not isinstance(kind, str):
                raise SchemaError("type", "a rollout record type (session_meta, response_item, event_msg ...)", kind,
                                  source=where)
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
            # any other record (event_msg, turn_context, world_state, token_usage_record...) is bookkeeping
        elif is_responses_item(value) or kind == "message":
            items.append(value)  # an earlier rollout's bare item
            origins.append((where, ""))
        elif isinstance(kind, str):
            raise SchemaError("type", f"a Responses item type ({', '.join(sorted(RESPONSES_ITEM_TYPES))})", kind,
                              source=where)
        elif not is_codex_line(value):
            raise SchemaError("<root>", "a rollout record ({\"timestamp\", \"type\", \"payload\"}) or a Responses item",
                              value, source=where)
    if not items:
        raise SchemaError("<root>", "at least one response_item line", "none", source=source)
    return read_responses_items(items, source=source, locate=origins.__getitem__, format="codex")
