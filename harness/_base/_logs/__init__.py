"""Teams' own agent session logs, read as the tools that wrote them write them.

``read_log(raw, source=...)`` recognises a file's format by its content, never by its name, and reads each
session in it into turns (``SessionLog``): tool calls with their results, parallel calls as one turn, a
failed call's text kept. Anything it cannot read is a ``SchemaError`` naming the file, the line (for a
log written a line per event) and the field. The formats, in ``LOG_FORMATS``:

- ``claude-code``: Claude Code's session JSONL, an event per line;
- ``codex``: Codex CLI's rollout JSONL, a record per line;
- ``openai-responses``: Responses items as the OpenAI Agents SDK keeps a session (a list, ``{"input": [...]}``
  or ``{"items": [...]}``);
- ``anthropic``: an Anthropic Messages API request body;
- ``langchain``: LangChain's ``messages_to_dict`` or ``dumpd`` of a list of messages;
- ``chat``: OpenAI chat-completions messages (a list or ``{"messages": [...]}``; in a ``.jsonl`` file, a session
  per line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness._base._errors import SchemaError
from harness._base._files import parse_json
from harness._base._logs._anthropic import is_anthropic_body, read_anthropic_body
from harness._base._logs._chat import chat_messages_of, read_chat
from harness._base._logs._claude_code import is_claude_code_event, read_claude_code
from harness._base._logs._codex import is_codex_line, read_codex
from harness._base._logs._langchain import langchain_messages_of, read_langchain
from harness._base._logs._records import LoggedTurn, SessionLog, at_line
from harness._base._logs._responses import is_responses_item, read_responses_items, responses_items_of

__all__ = ["LOG_FORMATS", "LogFormat", "LoggedTurn", "SessionLog", "read_log"]


@dataclass(frozen=True, slots=True)
class LogFormat:
    """A format ``read_log`` recognises: its name (what a ``SessionLog`` says it was read as) and what it is."""

    name: str
    title: str
    written_by: str


LOG_FORMATS = (
    LogFormat("claude-code", "Claude Code session JSONL", "~/.claude/projects/<project>/<session id>.jsonl"),
    LogFormat("codex", "Codex CLI rollout JSONL", "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl"),
    LogFormat("openai-responses", "OpenAI Responses items (Agents SDK sessions)",
              "result.to_input_list(), a session store's items, a Responses request's input"),
    LogFormat("anthropic", "Anthropic Messages API request body", "the JSON body sent to /v1/messages"),
    LogFormat("langchain", "LangChain message dump", "messages_to_dict(messages) or dumpd(messages)"),
    LogFormat("chat", "OpenAI chat-completions messages", "the messages list sent to /v1/chat/completions"),
)
_NAMES = ", ".join(f.title for f in LOG_FORMATS)


def read_log(raw: bytes, *, source: str) -> list[SessionLog]:
    """Every session of one log file (its bytes), its format recognised by content."""
    text = _decoded(raw, source)
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if not lines:
        raise SchemaError("<root>", f"a session log ({_NAMES})", "an empty file", source=source)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = _NOT_JSON
    if document is not _NOT_JSON:
        session = _document(document, source, line=None)
        if session is not None:
            return [session]
        if len(lines) > 1 or not (is_claude_code_event(document) or is_codex_line(document)):
            raise _unrecognised(document, source)
    elif len(lines) == 1 or not _parses(lines[0][1]):
        parse_json(text, source=source, expected="valid JSON (one document, or one JSON value per line)")
    return _line_log([(n, parse_json(line, source=at_line(source, n), expected="valid JSON (one value per line)"))
                      for n, line in lines], source)


_NOT_JSON = object()


def _decoded(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SchemaError("<root>", "UTF-8 text", f"an invalid byte at offset {exc.start}",
                          source=at_line(source, line)) from None


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _document(data: Any, source: str, *, line: int | None) -> SessionLog | None:
    """One document's session, by which format it is, or None when it is none of them."""
    where = at_line(source, line)
    if isinstance(data, dict) and data.get("messages") == []:
        raise SchemaError("messages", "at least one message", [], source=where)
    found = langchain_messages_of(data)
    if found is not None:
        return read_langchain(found[1], source=where, field=found[0])
    if is_anthropic_body(data) or (isinstance(data, list) and is_anthropic_body({"messages": data})):
        body = data if isinstance(data, dict) else {"messages": data}
        return read_anthropic_body(body, source=where)
    items = responses_items_of(data)
    if items is not None and (items[0] or any(is_responses_item(i) for i in items[1])):
        instructions = data.get("instructions") if isinstance(data, dict) else None
        return read_responses_items(items[1], source=where, field=items[0], instructions=instructions)
    if chat_messages_of(data) is not None:
        return read_chat(data, source=where)
    return None


def _line_log(values: list[tuple[int, Any]], source: str) -> list[SessionLog]:
    """A log of one JSON value per line: a Claude Code session, a Codex rollout, Responses items, or a session
    per line (chat messages, an Anthropic body...), by what its first line is."""
    first = values[0][1]
    if any(is_codex_line(v) for _, v in values[:2]):
        return [read_codex(values, source=source)]
    if is_claude_code_event(first):
        return [read_claude_code(values, source=source)]
    if is_responses_item(first):
        items = [v for _, v in values]
        origins = [(at_line(source, n), "") for n, _ in values]
        return [read_responses_items(items, source=source, locate=origins.__getitem__)]
    sessions = []
    for number, value in values:
        session = _document(value, source, line=number)
        if session is None:
            raise _unrecognised(value, at_line(source, number), per_line=number > values[0][0])
        sessions.append(session)
    return sessions


def _unrecognised(value: Any, source: str, per_line: bool = False) -> SchemaError:
    where = " (one per line, as on the lines before it)" if per_line else ""
    return SchemaError("<root>", f"a session log{where}: {_NAMES}", value, source=source)
