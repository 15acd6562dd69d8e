"""The shapes a provider API gives a conversation, and our turns in each of them.

A *dialect* is how a compactor sees a context and answers it (``--dialect``):

- ``chat``: OpenAI chat-completions messages (``role``/``content``/``tool_calls``/``tool_call_id``);
- ``anthropic``: an Anthropic Messages request body, ``{"system", "messages"}``, content a string or
  blocks (``text``, ``tool_use``, ``tool_result``), tool results in the user message after their call;
- ``openai-responses``: OpenAI Responses ``input`` items (``message``, ``function_call``,
  ``function_call_output``).

``render`` writes turns in a dialect; ``read`` reads a compactor's answer back into turns, which the
oracles judge alike whatever the dialect. Reading is strict: an unknown block or item type, or a call
without its id, is the compactor's malformed answer (``MalformedResult``, naming where).

Both directions keep every text, call id, tool name and argument. What a dialect has no place for is
merged, not lost: Anthropic has one ``system``, so every system turn goes there, in order; a
Responses assistant message and the function calls right after it read back as one assistant turn.

An assistant turn's opaque parts (``harness.Part``) go where the dialect has them: reasoning as Anthropic
``thinking`` (or ``redacted_thinking``, when it has no text) blocks first in the message, or as a Responses
``reasoning`` item before the turn's items; a compaction part as a Responses ``compaction`` item. A user
turn's or a tool result's attachments (images and documents) go in its content (``harness._base._part_shapes``).
A Responses assistant turn's approval requests go after its items as ``mcp_approval_request`` items, and a user
turn's approvals before its message as ``mcp_approval_response`` items. A call marked as run on an MCP server
(``PartKind.SERVER_TOOL``) is an Anthropic ``mcp_tool_use`` with its ``mcp_tool_result`` in the same assistant
message, or one Responses ``mcp_call`` item holding its output. Chat has no place for any of them in our
rendering and drops them (a server call is then an ordinary one); Anthropic drops compaction parts and approvals
(``DROPPED_PARTS``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness._base._part_shapes import (ANTHROPIC_BLOCKS, anthropic_block, anthropic_part, anthropic_result_parts,
                                        json_text, server_label, thinking_blocks)
from harness._base._responses_items import UNREAD_ITEMS, responses_items, responses_turns, turns_of_items
from harness._base._errors import MalformedResult, _short
from harness._base._messages import to_messages
from harness._base._model import ATTACHMENTS, Part, PartKind, Role, ToolCall, Turn, server_calls

__all__ = ["DIALECTS", "DEFAULT_DIALECT", "render", "read", "merged_messages", "anthropic_message", "responses_turns",
           "system_text", "UNREAD_BLOCKS", "UNREAD_ITEMS", "DROPPED_PARTS"]

DIALECTS = ("chat", "anthropic", "openai-responses")
DEFAULT_DIALECT = "chat"

#: The parts each dialect has no place for: written without them, so a compactor never sees them there.
DROPPED_PARTS = {"chat": frozenset(PartKind),
                 "anthropic": frozenset({PartKind.COMPACTION, PartKind.APPROVAL_REQUEST, PartKind.APPROVAL}),
                 "openai-responses": frozenset()}

#: Where the arguments of a call whose JSON text is not an object go in a ``tool_use`` ``input``.
_RAW_ARGUMENTS = "arguments"


def render(turns: Sequence[Turn], dialect: str) -> Any:
    """``turns`` as ``dialect`` writes them: a list of chat messages, an Anthropic body, or Responses items. A turn
    that is nothing but parts the dialect drops is not written (it would be an empty message)."""
    dropped = DROPPED_PARTS.get(dialect, frozenset())
    turns = [t for t in turns if not t.parts or t.text or t.tool_calls or any(p.kind not in dropped for p in t.parts)]
    if dialect == "chat":
        return to_messages(tuple(turns))
    if dialect == "anthropic":
        return _anthropic_body(turns)
    if dialect == "openai-responses":
        return responses_items(turns)
    raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")


def read(value: Any, dialect: str) -> tuple[Turn, ...] | Any:
    """A compactor's answer in ``dialect`` as turns; for ``chat``, the value itself (read by the protocol)."""
    if dialect == "chat":
        return value
    if dialect == "anthropic":
        return _anthropic_turns(value)
    if dialect == "openai-responses":
        return turns_of_items(value)
    raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")


# -- Anthropic Messages ---------------------------------------------------------------------------------

def _input_of(arguments: str) -> dict[str, Any]:
    """A call's JSON arguments as a ``tool_use`` input, which must be an object."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {_RAW_ARGUMENTS: arguments}
    return value if isinstance(value, dict) else {_RAW_ARGUMENTS: arguments}


def _arguments_of(value: Any, where: str) -> str:
    if not isinstance(value, dict):
        raise MalformedResult(f"{where}.input: expected an object, got {_short(value)}")
    if list(value) == [_RAW_ARGUMENTS] and isinstance(value[_RAW_ARGUMENTS], str):
        try:
            parsed = json.loads(value[_RAW_ARGUMENTS])
        except ValueError:
            return value[_RAW_ARGUMENTS]
        if not isinstance(parsed, dict):
            return value[_RAW_ARGUMENTS]
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise MalformedResult(f"{where}.input: expected JSON data") from None


def _anthropic_body(turns: Sequence[Turn]) -> dict[str, Any]:
    system = [t.text for t in turns if t.role is Role.SYSTEM]
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role is Role.SYSTEM:
            continue
        attached = [anthropic_block(p) for p in turn.parts if p.kind in ATTACHMENTS]
        if turn.role is Role.TOOL and turn.tool_call_id in server_calls(turn):
            block = {"type": "mcp_tool_result", "tool_use_id": turn.tool_call_id, "is_error": False,
                     "content": [{"type": "text", "text": turn.text}] if turn.text else []}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and isinstance(last["content"], list):
                last["content"].append(block)  # a server tool's result is in the message that made the call
            else:
                messages.append({"role": "assistant", "content": [block]})
        elif turn.role is Role.TOOL:
            content = [*([{"type": "text", "text": turn.text}] if turn.text else []), *attached]
            block = {"type": "tool_result", "tool_use_id": turn.tool_call_id, "content": content if attached else turn.text}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "user" and isinstance(last["content"], list) and all(
                    b["type"] == "tool_result" for b in last["content"]):
                last["content"].append(block)  # the results of one assistant message share one user message
            else:
                messages.append({"role": "user", "content": [block]})
        elif turn.role is Role.ASSISTANT and (turn.tool_calls or thinking_blocks(turn)):
            blocks: list[dict[str, Any]] = thinking_blocks(turn)
            blocks += [{"type": "text", "text": turn.text}] if turn.text else []
            server = {p.id: p.data for p in turn.parts if p.kind is PartKind.SERVER_TOOL}
            blocks += [{"type": "mcp_tool_use", "id": c.id, "name": c.name, "server_name": server[c.id],
                        "input": _input_of(c.arguments)} if c.id in server else
                       {"type": "tool_use", "id": c.id, "name": c.name, "input": _input_of(c.arguments)}
                       for c in turn.tool_calls]
            messages.append({"role": "assistant", "content": blocks})
        elif attached:  # a user turn's images and documents before its text, as the API's examples put them
            messages.append({"role": turn.role.value,
                             "content": [*attached, *([{"type": "text", "text": turn.text}] if turn.text else [])]})
        else:
            messages.append({"role": turn.role.value, "content": turn.text})
    body: dict[str, Any] = {"messages": messages}
    if system:
        body["system"] = "\n\n".join(system)
    return body



def _block_text(block: Any, where: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise MalformedResult(f"{where}.text: expected a string, got {_short(text)}")
    return text


def _result_text(content: Any, where: str) -> str:
    """A tool result's content as text: a string; text blocks joined; any other block but an image or a
    document (a search hit, a server tool's structured output) as its JSON, so what it held is kept."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):  # a server tool's single result object (code execution's stdout and stderr)
        return json_text(content, where)
    if isinstance(content, list):
        texts = []
        for j, block in enumerate(content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise MalformedResult(f"{where}.content[{j}]: expected a block with a 'type', got {_short(block)}")
            if block["type"] == "text":
                texts.append(_block_text(block, f"{where}.content[{j}]"))
            elif block["type"] not in (*UNREAD_BLOCKS, *ANTHROPIC_BLOCKS):
                texts.append(json_text(block, f"{where}.content[{j}]"))
        return "\n".join(texts)
    raise MalformedResult(f"{where}.content: expected a string, an object or a list of blocks, got {_short(content)}")



def system_text(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        texts = []
        for j, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                raise MalformedResult(f"system[{j}]: expected a text block, got {_short(block)}")
            texts.append(_block_text(block, f"system[{j}]"))
        return "\n\n".join(texts)
    raise MalformedResult(f"system: expected a string or a list of text blocks, got {_short(system)}")


def _anthropic_turns(body: Any) -> tuple[Turn, ...]:
    if not isinstance(body, dict):
        raise MalformedResult(f'expected a Messages API body {{"system", "messages": [...]}}, got {_short(body)}')
    unknown = sorted(set(body) - {"system", "messages"})
    if unknown:
        raise MalformedResult(f"expected only 'system' and 'messages' in the body, got {unknown}")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise MalformedResult(f"messages: expected a list, got {_short(messages)}")
    turns: list[Turn] = []
    system = system_text(body.get("system"))
    if system is not None:
        turns.append(Turn(Role.SYSTEM, system))
    for i, message in enumerate(messages):
        turns.extend(anthropic_message(message, f"messages[{i}]"))
    return tuple(turns)


#: Blocks that carry nothing the oracles read (and that no dialect of ours carries on): skipped when read.
UNREAD_BLOCKS = ("thinking", "redacted_thinking", "search_result", "container_upload")
#: Server-side tools (Anthropic runs them): the call in the assistant's content, its result right after it in the
#: same message, read as a call and its result. MCP connector blocks pair the same way.
_SERVER_CALLS = ("server_tool_use", "mcp_tool_use")


def _server_result(kind: Any) -> bool:
    return isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result"


def anthropic_message(message: Any, where: str) -> list[Turn]:
    """One Messages API message as turns: an assistant message is one turn with its calls (a server-side
    tool's result, which follows its call in the same message, ends that turn and is a tool turn of its own);
    a user message is its text and one tool turn per ``tool_result``, in order."""
    if not isinstance(message, dict):
        raise MalformedResult(f"{where}: expected a message object, got {_short(message)}")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise MalformedResult(f"{where}.role: expected 'user' or 'assistant', got {_short(role)}")
    content = message.get("content")
    if isinstance(content, str):
        return [Turn(Role(role), content)]
    if not isinstance(content, list):
        raise MalformedResult(f"{where}.content: expected a string or a list of blocks, got {_short(content)}")
    turns: list[Turn] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    parts: list[Part] = []

    def flush() -> None:
        if role == "assistant" and (texts or calls or parts):
            turns.append(Turn(Role.ASSISTANT, "\n".join(texts), tuple(calls), parts=tuple(parts)))
            calls.clear()
            parts.clear()
        elif texts or parts:
            turns.append(Turn(Role(role), "\n".join(texts), parts=tuple(parts)))
            parts.clear()
        texts.clear()

    for j, block in enumerate(content):
        at = f"{where}.content[{j}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(_block_text(block, at))
        elif role == "assistant" and kind in ("tool_use", *_SERVER_CALLS):
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{at}.id: a {kind} needs a non-empty string id, got {_short(call_id)}")
            if not isinstance(name, str) or not name:
                raise MalformedResult(f"{at}.name: a {kind} needs a non-empty string name, got {_short(name)}")
            calls.append(ToolCall(call_id, name, _arguments_of(block.get("input", {}), at)))
            if kind == "mcp_tool_use":
                parts.append(Part(PartKind.SERVER_TOOL, server_label(block.get("server_name"), f"{at}.server_name"),
                                  id=call_id))
        elif (role == "user" and kind == "tool_result") or (role == "assistant" and _server_result(kind)):
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{at}.tool_use_id: a {kind} needs a non-empty string, got {_short(call_id)}")
            server = [p for p in (*(q for t in turns for q in t.parts), *parts)  # the mcp_tool_use it answers
                      if kind == "mcp_tool_result" and p.kind is PartKind.SERVER_TOOL and p.id == call_id]
            flush()
            turns.append(Turn(Role.TOOL, _result_text(block.get("content"), at), (), call_id,
                              (*anthropic_result_parts(block.get("content"), at), *server[:1])))
        elif role == "assistant" and kind in ("thinking", "redacted_thinking"):
            _check_unread(block, kind, at)  # a thinking block without its signature is refused by the API
            parts.append(Part(PartKind.REASONING, block["signature"], block["thinking"]) if kind == "thinking"
                         else Part(PartKind.REASONING, block["data"]))
        elif kind in ANTHROPIC_BLOCKS:
            parts.append(anthropic_part(block, at))
        elif kind in UNREAD_BLOCKS:
            _check_unread(block, kind, at)  # carries nothing the oracles read, but must be a block the API takes
        else:
            allowed = "text, tool_use, a server tool's use or result" if role == "assistant" else "text, tool_result"
            raise MalformedResult(f"{at}.type: expected one of {allowed} in a {role} message, got {_short(kind)}")
    flush()
    if role == "assistant" and not turns and not content:
        return [Turn(Role.ASSISTANT, "")]
    return turns


#: What the Messages API requires of the blocks no turn of ours reads (a thinking block passed back without
#: its signature is refused, so a reader must refuse it too).
_REQUIRED = {"thinking": ("thinking", "signature"), "redacted_thinking": ("data",)}


def _check_unread(block: dict[str, Any], kind: str, at: str) -> None:
    for key in _REQUIRED.get(kind, ()):
        if not isinstance(block.get(key), str):
            raise MalformedResult(f"{at}.{key}: a {kind} block needs its {key} (a string), got {_short(block.get(key))}")


def merged_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The body's messages as the Messages API reads them: consecutive messages of one role joined."""
    out: list[dict[str, Any]] = []
    for message in body.get("messages", []):
        blocks = message["content"] if isinstance(message["content"], list) else (
            [{"type": "text", "text": message["content"]}])
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message["role"], "content": list(blocks)})
    return out
