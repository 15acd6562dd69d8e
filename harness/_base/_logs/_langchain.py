"""LangChain message dumps: ``messages_to_dict`` (``[{"type": "human", "data": {...}}]``) and ``dumpd``
(``[{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}]``), as a list or under
``"messages"``. An AI message's calls are its ``tool_calls`` (``{"id", "name", "args"}``), or, in dumps from
before LangChain had them, OpenAI's ``additional_kwargs.tool_calls``; a tool message answers one by
``tool_call_id`` (``status: "error"`` marks a failed call, whose text is kept)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from harness._base._errors import SchemaError
from harness._base._model import Role, ToolCall, Turn
from harness._base._logs._records import LoggedTurn, SessionLog, left_out_of

__all__ = ["is_langchain_message", "langchain_messages_of", "read_langchain"]

#: A message's role by its ``messages_to_dict`` type or its class name (a chunk is read as its message).
_ROLES = {"human": Role.USER, "ai": Role.ASSISTANT, "system": Role.SYSTEM, "tool": Role.TOOL,
          "HumanMessage": Role.USER, "AIMessage": Role.ASSISTANT, "SystemMessage": Role.SYSTEM,
          "ToolMessage": Role.TOOL}
_CHAT_ROLES = {"user": Role.USER, "human": Role.USER, "assistant": Role.ASSISTANT, "ai": Role.ASSISTANT,
               "system": Role.SYSTEM, "developer": Role.SYSTEM}
_KNOWN = ("human", "ai", "system", "tool", "chat", "HumanMessage", "AIMessage", "SystemMessage", "ToolMessage",
          "ChatMessage")


def is_langchain_message(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("lc") == 1 or (isinstance(value.get("data"), dict)
                                                                 and isinstance(value.get("type"), str)))


def langchain_messages_of(data: Any) -> tuple[str, list[Any]] | None:
    """The dumped messages of a document and the field holding them, or None when it holds none."""
    field, messages = ("messages", data.get("messages")) if isinstance(data, dict) else ("", data)
    if isinstance(messages, list) and messages and all(is_langchain_message(m) for m in messages):
        return field, messages
    return None


def read_langchain(messages: list[Any], *, source: str, field: str = "") -> SessionLog:
    turns: list[LoggedTurn] = []
    left_out: Counter = Counter()
    for i, value in enumerate(messages):
        at = f"{field}[{i}]"
        kind, data, data_at = _unwrapped(value, at, source)
        left_out_of(data.get("content"), left_out)
        turn = _turn(kind, data, data_at, source)
        tie = f"{data_at}.tool_call_id" if turn.role is Role.TOOL else f"{data_at}.tool_calls" if turn.tool_calls else ""
        turns.append(LoggedTurn(turn, source, at, tie))
    if not turns:
        raise SchemaError(field or "<root>", "at least one message", messages, source=source)
    return SessionLog("langchain", source, tuple(turns), tuple(sorted(left_out.items())))


def _unwrapped(value: Any, at: str, source: str) -> tuple[str, dict[str, Any], str]:
    """(kind, fields, their path): a ``dumpd`` constructor's class name and kwargs, or a dict's type and data."""
    if value.get("lc") == 1:
        ids, kwargs = value.get("id"), value.get("kwargs")
        if not isinstance(ids, list) or not ids or not isinstance(ids[-1], str):
            raise SchemaError(f"{at}.id", "the message's class path, e.g. ['langchain', 'schema', 'messages', "
                                          "'AIMessage']", ids, source=source)
        if not isinstance(kwargs, dict):
            raise SchemaError(f"{at}.kwargs", "the message's fields (an object)", kwargs, source=source)
        return ids[-1].removesuffix("Chunk"), kwargs, f"{at}.kwargs"
    return value["type"].removesuffix("Chunk"), value["data"], f"{at}.data"


def _turn(kind: str, data: dict[str, Any], at: str, source: str) -> Turn:
    if kind in ("chat", "ChatMessage"):
        role = _CHAT_ROLES.get(data.get("role"))
        if role is None:
            raise SchemaError(f"{at}.role", f"a chat message's role ({', '.join(_CHAT_ROLES)})", data.get("role"),
                              source=source)
    elif kind in _ROLES:
        role = _ROLES[kind]
    else:
        raise SchemaError(at.rsplit(".", 1)[0] + (".id" if at.endswith("kwargs") else ".type"),
                          f"a message type LangChain dumps ({', '.join(_KNOWN)})", kind, source=source)
    text = _text(data.get("content"), f"{at}.content", source)
    if role is Role.TOOL:
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise SchemaError(f"{at}.tool_call_id", "the id of the call it answers (a non-empty string)", call_id,
                              source=source)
        return Turn(Role.TOOL, text, (), call_id)
    calls = _calls(data, at, source) if role is Role.ASSISTANT else ()
    return Turn(role, text, calls)


def _text(content: Any, at: str, source: str) -> str:
    """A message's content: a string, or content blocks whose text is joined (a call block repeats a
    ``tool_calls`` entry, an image or a thinking block carries no text)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise SchemaError(at, "a string or a list of content blocks", content, source=source)
    texts = []
    for j, block in enumerate(content):
        if isinstance(block, str):
            texts.append(block)
        elif not isinstance(block, dict):
            raise SchemaError(f"{at}[{j}]", "a content block (an object) or a string", block, source=source)
        elif block.get("type") == "text":
            if not isinstance(block.get("text"), str):
                raise SchemaError(f"{at}[{j}].text", "a string", block.get("text"), source=source)
            texts.append(block["text"])
    return "\n".join(texts)


def _calls(data: dict[str, Any], at: str, source: str) -> tuple[ToolCall, ...]:
    calls = data.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise SchemaError(f"{at}.tool_calls", "a list of tool calls", calls, source=source)
        return tuple(_call(c, f"{at}.tool_calls[{j}]", source) for j, c in enumerate(calls))
    legacy = (data.get("additional_kwargs") or {}).get("tool_calls") if isinstance(
        data.get("additional_kwargs"), dict) else None
    if not legacy:
        return ()
    if not isinstance(legacy, list):
        raise SchemaError(f"{at}.additional_kwargs.tool_calls", "a list of tool calls", legacy, source=source)
    out = []
    for j, call in enumerate(legacy):
        where = f"{at}.additional_kwargs.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise SchemaError(where, "an OpenAI tool call ({id, function: {name, arguments}})", call, source=source)
        out.append(_call({"id": call.get("id"), "name": function.get("name"),
                          "args": function.get("arguments", "{}")}, where, source))
    return tuple(out)


def _call(call: Any, at: str, source: str) -> ToolCall:
    if not isinstance(call, dict):
        raise SchemaError(at, "a tool call ({id, name, args})", call, source=source)
    call_id, name, args = call.get("id"), call.get("name"), call.get("args", {})
    if not isinstance(call_id, str) or not call_id:
        raise SchemaError(f"{at}.id", "the call's id (a non-empty string)", call_id, source=source)
    if not isinstance(name, str) or not name:
        raise SchemaError(f"{at}.name", "the tool's name (a non-empty string)", name, source=source)
    if isinstance(args, str):
        return ToolCall(call_id, name, args)
    try:
        return ToolCall(call_id, name, json.dumps(args, ensure_ascii=False))
    except (TypeError, ValueError):
        raise SchemaError(f"{at}.args", "JSON data", args, source=source) from None
