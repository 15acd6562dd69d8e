"""OpenAI chat-completions messages (``role``/``content``/``tool_calls``/``tool_call_id``), the shape most
teams keep: a list, or ``{"messages": [...]}``; a ``.jsonl`` file of them holds one session per line."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from harness._base._errors import MalformedResult, SchemaError
from harness._base._result_codec import result_from_return
from harness._base._logs._records import LoggedTurn, SessionLog, left_out_of, malformed

__all__ = ["chat_messages_of", "read_chat"]

_SHAPE = 'a non-empty list of chat messages (or {"messages": [...]})'


def chat_messages_of(data: Any) -> tuple[str, list[Any]] | None:
    """The chat messages of a document and the field holding them: a list of objects with a ``role``."""
    field, messages = ("messages", data.get("messages")) if isinstance(data, dict) else ("", data)
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
        return field, messages
    return None


def read_chat(data: Any, *, source: str) -> SessionLog:
    found = chat_messages_of(data)
    if found is None:
        raise SchemaError("messages" if isinstance(data, dict) else "<root>", _SHAPE, data, source=source)
    field, messages = found
    for i, message in enumerate(messages):
        _check_parts(message.get("content"), f"{field}[{i}].content", source)
        _check_arguments(message.get("tool_calls"), f"{field}[{i}].tool_calls", source)
    try:
        turns = result_from_return(messages).messages
    except MalformedResult as exc:  # "message [i].field: problem"
        where, _, problem = str(exc).partition(": ")
        raise malformed(MalformedResult(f"{where.replace('message [', '[', 1)}: {problem}"), source, field) from None
    located = tuple(LoggedTurn(t, source, f"{field}[{i}]", f"{field}[{i}].tool_call_id" if t.tool_call_id
                               else f"{field}[{i}].tool_calls" if t.tool_calls else "") for i, t in enumerate(turns))
    return SessionLog("chat", source, located, tuple(sorted(left_out_of(messages, Counter()).items())))


#: The content parts of the chat-completions API; any other (a ``tool_use`` block, a ``function_call``) belongs
#: to another format, whose calls a chat reading would lose.
_CHAT_PARTS = frozenset({"text", "image_url", "input_audio", "file", "refusal"})


def _check_parts(content: Any, at: str, source: str) -> None:
    if not isinstance(content, list):
        return
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, dict) and kind not in _CHAT_PARTS:
            raise SchemaError(f"{at}[{j}].type", f"a chat-completions content part ({', '.join(sorted(_CHAT_PARTS))})",
                              kind, source=source)


def _check_arguments(calls: Any, at: str, source: str) -> None:
    """A call's arguments, as the chat API sends them, are JSON text: a log cut in the middle of one is broken."""
    if not isinstance(calls, list):
        return
    for j, call in enumerate(calls):
        arguments = (call.get("function") or {}).get("arguments") if isinstance(call, dict) else None
        if isinstance(arguments, str):
            try:
                json.loads(arguments)
            except ValueError:
                raise SchemaError(f"{at}[{j}].function.arguments", "JSON text", arguments, source=source) from None
