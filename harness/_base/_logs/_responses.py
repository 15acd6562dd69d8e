"""OpenAI Responses items as the Agents SDK keeps a session (``result.to_input_list()``, a session store's
items) and as a Responses request sends them: a list, ``{"input": [...]}`` (with ``instructions``) or
``{"items": [...]}``. Read by the openai-responses dialect's own item reader."""

from __future__ import annotations

import dataclasses

from collections import Counter
from typing import Any

from harness._base._responses_items import responses_turns
from harness._base._errors import MalformedResult, SchemaError
from harness._base._model import ATTACHMENTS, Role, Turn
from harness._base._logs._records import LoggedTurn, SessionLog, left_out_of, malformed

__all__ = ["RESPONSES_ITEM_TYPES", "is_responses_item", "responses_items_of", "read_responses_items"]

#: The item types only the Responses API writes (a message alone is ambiguous: chat messages have roles too).
RESPONSES_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
                                  "custom_tool_call_output", "local_shell_call", "computer_call",
                                  "computer_call_output", "web_search_call", "file_search_call", "mcp_call",
                                  "code_interpreter_call", "image_generation_call", "compaction", "item_reference"})
_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})


def is_responses_item(value: Any) -> bool:
    """An item only the Responses API writes: a typed one, or a message whose parts are Responses parts."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind in RESPONSES_ITEM_TYPES - {"message"}:
        return True
    content = value.get("content")
    return (kind == "message" or "role" in value) and isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in _PARTS for p in content)


def responses_items_of(data: Any) -> tuple[str, list[Any]] | None:
    """The items of a Responses document and the field holding them (``""`` for a bare list), or None."""
    for key in ("input", "items"):
        if isinstance(data, dict) and isinstance(data.get(key), list):
            return key, data[key]
    if isinstance(data, list):
        return "", data
    return None


def read_responses_items(items: list[Any], *, source: str, field: str = "", instructions: Any = None,
                         locate=None, format: str = "openai-responses") -> SessionLog:
    """``items`` as one session (``instructions``, a request's system prompt, first). ``locate(i)`` gives the
    (source, field) of item ``i`` where the items came from several lines of a file (a Codex rollout)."""
    where = locate or (lambda i: (source, f"{field}[{i}]"))
    turns: list[LoggedTurn] = []
    if isinstance(instructions, str) and instructions:
        turns.append(LoggedTurn(Turn(Role.SYSTEM, instructions), source, "instructions"))
    try:
        read_turns = responses_turns(items)
    except MalformedResult as exc:
        index, rest = _item_index(str(exc))
        at_source, at_field = where(index) if index is not None else (source, field)
        raise malformed(MalformedResult(rest), at_source, at_field) from None
    for turn, i in read_turns:
        opaque = [p for p in turn.parts if p.kind not in ATTACHMENTS]
        if opaque:  # a team's reasoning and compaction items are not filler: generated sources carry their own
            if not (turn.text or turn.tool_calls):
                continue
            turn = dataclasses.replace(turn, parts=tuple(p for p in turn.parts if p.kind in ATTACHMENTS))
        at_source, at_field = where(i)
        field_ = at_field or "<root>"
        tie = ".".join(p for p in (at_field, "call_id") if p) if turn.role is Role.TOOL else field_ if turn.tool_calls else ""
        turns.append(LoggedTurn(turn, at_source, field_, tie))
    if not turns:
        raise SchemaError(field or "<root>", "at least one message or call item", items, source=source)
    return SessionLog(format, source, tuple(turns), tuple(sorted(left_out_of(items, Counter()).items())))


def _item_index(message: str) -> tuple[int | None, str]:
    """``items[3].call_id: problem`` as (3, ``call_id: problem``)."""
    if message.startswith("items[") and "]" in message:
        number, _, rest = message[len("items["):].partition("]")
        if number.isdigit():
            return int(number), rest.removeprefix(".")
    return None, message
