"""Claude Code sessions (``~/.claude/projects/<project>/<session id>.jsonl``): a line per event.

``user`` and ``assistant`` events hold a Messages API ``message``; everything else (``summary``,
``system``, ``file-history-snapshot``, ``queue-operation``, ``progress`` and the kinds later versions add)
is the tool's own bookkeeping and is skipped. Claude Code writes one assistant message over several lines,
a content block each, all with the message's ``id``; they are read back as one turn, with the tool
results that arrived between them after it. A sub-agent's events (``isSidechain``) are a conversation of
their own and are skipped; a summary Claude Code compacted to (``isCompactSummary``) is kept, as the user
message the model saw.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from harness._base._errors import SchemaError
from harness._base._model import Role, Turn
from harness._base._logs._anthropic import message_turns
from harness._base._logs._records import LoggedTurn, SessionLog, at_line, left_out_of

__all__ = ["is_claude_code_event", "read_claude_code"]

_CONVERSATION = ("user", "assistant")
#: Keys every Claude Code event of the conversation carries (one is enough to recognise a line).
_EVENT_KEYS = frozenset({"uuid", "parentUuid", "sessionId", "leafUuid", "isSidechain"})


def is_claude_code_event(value: Any) -> bool:
    """A Claude Code event: a ``type`` and one of its bookkeeping keys, and no Codex ``payload``."""
    return (isinstance(value, dict) and isinstance(value.get("type"), str) and "payload" not in value
            and (bool(_EVENT_KEYS & set(value)) or (value["type"] in _CONVERSATION and "message" in value)))


def read_claude_code(lines: list[tuple[int, Any]], *, source: str) -> SessionLog:
    """One session file (its parsed lines, each with its number) as one session."""
    out: list[LoggedTurn] = []
    left_out: Counter = Counter()
    open_id: str | None = None  # the assistant message still being written, line by line
    open_at = -1  # where its turn stands in ``out``
    seen: set[str] = set()  # after /compact Claude Code writes a kept line again, with its uuid
    for number, event in lines:
        where = at_line(source, number)
        if not is_claude_code_event(event):
            if isinstance(event, dict) and "payload" in event:  # a line of a Codex rollout, or the like
                raise SchemaError("type", "a Claude Code event type (user, assistant, system, summary ...)",
                                  event.get("type"), source=where)
            raise SchemaError("<root>", "a Claude Code event (an object with a 'type' and its 'uuid', 'sessionId' ...)",
                              event, source=where)
        if event["type"] not in _CONVERSATION or event.get("isSidechain") is True:
            continue
        uuid = event.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        message = event.get("message")
        if not isinstance(message, dict):
            raise SchemaError("message", "a Messages API message (an object)", message, source=where)
        left_out_of(message.get("content"), left_out)
        turns = message_turns(message, source=where, field="message")
        if event["type"] == "assistant":
            message_id = message.get("id")
            if message_id is not None and message_id == open_id and out[open_at].turn.role is Role.ASSISTANT:
                _continue_message(out, open_at, turns)
                continue
            open_id, open_at = message_id, len(out)
            if not turns or turns[0].turn.role is not Role.ASSISTANT:  # a line of thinking only: its turn comes later
                turns.insert(0, LoggedTurn(Turn(Role.ASSISTANT, ""), where, "message"))
        elif not all(t.turn.role is Role.TOOL for t in turns):
            open_id = None  # a person spoke: the message before is over
        out += turns
    out = [t for t in out if t.turn.role is not Role.ASSISTANT or t.turn.text or t.turn.tool_calls]
    if not out:
        raise SchemaError("<root>", "at least one user or assistant event", "none", source=source)
    return SessionLog("claude-code", source, tuple(out), tuple(sorted(left_out.items())))


def _continue_message(out: list[LoggedTurn], at: int, turns: list[LoggedTurn]) -> None:
    """A further line of the assistant message at ``out[at]``: its text and calls join that turn, and any
    server-side tool result it holds follows the results already there."""
    head = out[at].turn
    for logged in turns:
        turn = logged.turn
        if turn.role is Role.ASSISTANT:
            text = "\n".join(t for t in (head.text, turn.text) if t)
            head = replace(head, text=text, tool_calls=(*head.tool_calls, *turn.tool_calls))
        else:
            out.append(logged)
    out[at] = replace(out[at], turn=head, id_field=out[at].id_field or ("message.content" if head.tool_calls else ""))
