"""Anthropic Messages API request bodies (``{"model", "system", "messages": [...], "tools": ...}``), and the
messages inside a Claude Code log: read by the anthropic dialect's own message reader."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness._base._dialects import anthropic_message, system_text
from harness._base._errors import MalformedResult, SchemaError
from harness._base._model import Role, Turn
from harness._base._logs._records import LoggedTurn, SessionLog, left_out_of, malformed

__all__ = ["is_anthropic_body", "read_anthropic_body", "message_turns"]

#: Blocks only the Messages API writes: a body holding one of them is Anthropic's, not OpenAI chat.
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                              "web_search_tool_result", "mcp_tool_use", "mcp_tool_result", "document"})


def is_anthropic_body(data: Any) -> bool:
    """A dict with ``messages`` whose content blocks (or ``system`` blocks, or ``max_tokens``) are Anthropic's."""
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return False
    if "max_tokens" in data or isinstance(data.get("system"), list):
        return True
    return any(isinstance(m, dict) and isinstance(m.get("content"), list) and any(
        isinstance(b, dict) and b.get("type") in ANTHROPIC_BLOCKS for b in m["content"]) for m in data["messages"])


def message_turns(message: Any, *, source: str, field: str) -> list[LoggedTurn]:
    """One Messages API message as turns; a malformed one is a ``SchemaError`` naming ``source`` and the field.
    A result stands at its block (``content[j].tool_use_id``); a call turn at the message's content."""
    try:
        turns = anthropic_message(message, field)
    except MalformedResult as exc:
        raise malformed(exc, source) from None
    results = iter(j for j, b in enumerate(message["content"]) if isinstance(b, dict) and "tool_use_id" in b) \
        if isinstance(message.get("content"), list) else iter(())
    return [LoggedTurn(t, source, field, f"{field}.content[{next(results)}].tool_use_id" if t.role is Role.TOOL
                       else f"{field}.content" if t.tool_calls else "") for t in turns]


def read_anthropic_body(data: dict[str, Any], *, source: str) -> SessionLog:
    """A request body as one session: its ``system`` (a string or text blocks) first, then each message."""
    turns: list[LoggedTurn] = []
    try:
        system = system_text(data.get("system"))
    except MalformedResult as exc:
        raise malformed(exc, source) from None
    if system:
        turns.append(LoggedTurn(Turn(Role.SYSTEM, system), source, "system"))
    for i, message in enumerate(data["messages"]):
        field = f"messages[{i}]"
        turns += message_turns(message, source=source, field=field)
    if not turns:
        raise SchemaError("messages", "at least one message", [], source=source)
    return SessionLog("anthropic", source, tuple(turns), tuple(sorted(left_out_of(data["messages"], Counter()).items())))
