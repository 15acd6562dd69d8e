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
                                        approval_item, approval_part, opaque_item, opaque_part, responses_content,
                                        responses_content_parts, thinking_blocks)
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
#: The parts a Responses turn writes as items of their own before its message (and calls), and after them.
_ITEMS_BEFORE = (PartKind.REASONING, PartKind.COMPACTION, PartKind.APPROVAL)

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
        return _responses_items(turns)
    raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")


def read(value: Any, dialect: str) -> tuple[Turn, ...] | Any:
    """A compactor's answer in ``dialect`` as turns; for ``chat``, the value itself (read by the protocol)."""
    if dialect == "chat":
        return value
    if dialect == "anthropic":
        return _anthropic_turns(value)
    if dialect == "openai-responses":
        return _responses_turns(value)
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
        return _json_text(content, where)
    if isinstance(content, list):
        texts = []
        for j, block in enumerate(content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise MalformedResult(f"{where}.content[{j}]: expected a block with a 'type', got {_short(block)}")
            if block["type"] == "text":
                texts.append(_block_text(block, f"{where}.content[{j}]"))
            elif block["type"] not in (*UNREAD_BLOCKS, *ANTHROPIC_BLOCKS):
                texts.append(_json_text(block, f"{where}.content[{j}]"))
        return "\n".join(texts)
    raise MalformedResult(f"{where}.content: expected a string, an object or a list of blocks, got {_short(content)}")



def _json_text(value: Any, where: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise MalformedResult(f"{where}: expected JSON data") from None


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
                parts.append(Part(PartKind.SERVER_TOOL, _server_label(block.get("server_name"), f"{at}.server_name"),
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


def _server_label(label: Any, where: str) -> str:
    if not isinstance(label, str) or not label:
        raise MalformedResult(f"{where}: a server-side call needs its server's name (a non-empty string), got "
                              f"{_short(label)}")
    return label


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


# -- OpenAI Responses ----------------------------------------------------------------------------------

def _responses_items(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    results = {t.tool_call_id: t for t in turns if t.role is Role.TOOL and t.tool_call_id in server_calls(t)}
    written: set[str] = set()  # server-side calls written as ``mcp_call`` items, their results in them
    for turn in turns:
        attached = [responses_content(p) for p in turn.parts if p.kind in ATTACHMENTS]
        if turn.role is Role.TOOL and turn.tool_call_id in written:
            continue
        if turn.role is Role.TOOL:
            output = [*([{"type": "input_text", "text": turn.text}] if turn.text else []), *attached]
            items.append({"type": "function_call_output", "call_id": turn.tool_call_id,
                          "output": output if attached else turn.text})
            continue
        items += [approval_item(p) if p.kind is PartKind.APPROVAL else opaque_item(p) for p in turn.parts
                  if p.kind in _ITEMS_BEFORE]
        if turn.text or attached or not (turn.tool_calls or turn.parts):
            part = "output_text" if turn.role is Role.ASSISTANT else "input_text"
            items.append({"type": "message", "role": turn.role.value,
                          "content": [*([{"type": part, "text": turn.text}] if turn.text or not attached else []),
                                      *attached]})
        server = {p.id: p.data for p in turn.parts if p.kind is PartKind.SERVER_TOOL}
        for c in turn.tool_calls:
            if c.id not in server:
                items.append({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments})
                continue
            result = results.get(c.id)
            items.append({"type": "mcp_call", "id": c.id, "server_label": server[c.id], "name": c.name,
                          "arguments": c.arguments, **({"output": result.text} if result is not None else {})})
            written.add(c.id)
        items += [approval_item(p) for p in turn.parts if p.kind is PartKind.APPROVAL_REQUEST]
    return items


_PARTS = {"input_text", "output_text", "text", "refusal"}


def _message_text(item: dict[str, Any], where: str) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise MalformedResult(f"{where}.content: expected a list of parts or a string, got {_short(content)}")
    texts = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _PARTS:
            text = part.get("text", part.get("refusal"))
            if not isinstance(text, str):
                raise MalformedResult(f"{where}.content[{j}].text: expected a string, got {_short(text)}")
            texts.append(text)
        elif kind not in ("input_image", "input_file"):
            raise MalformedResult(f"{where}.content[{j}].type: expected input_text or output_text, got {_short(kind)}")
    return "\n".join(texts)


#: Items that carry nothing the oracles read (a summary, a reference to an earlier item): skipped when read.
#: ``mcp_list_tools`` is bookkeeping of a connector, not the conversation.
UNREAD_ITEMS = ("compaction_summary", "item_reference", "ghost_snapshot", "mcp_list_tools")
#: Opaque items read as parts of the assistant turn they precede (``harness.Part``).
_OPAQUE_ITEMS = ("reasoning", "compaction")
#: The fields of a call item that say what it asked for, tried in order (``function_call`` has ``arguments``).
_CALL_INPUTS = ("arguments", "input", "action", "operation", "query", "queries", "code")
#: The fields of a server-side call item that hold its result.
_SERVER_OUTPUTS = ("output", "outputs", "results", "result", "error")


def _call_item(kind: Any) -> bool:
    return isinstance(kind, str) and kind.endswith("_call")


def _output_item(kind: Any) -> bool:
    return isinstance(kind, str) and kind.endswith("_call_output")


def _responses_turns(items: Any) -> tuple[Turn, ...]:
    return tuple(turn for turn, _ in responses_turns(items))


def responses_turns(items: Any) -> list[tuple[Turn, int]]:
    """Responses items as turns, each with the index of the item that opened it. A call item
    (``function_call``, ``custom_tool_call``, ``local_shell_call``, ``computer_call``, any ``*_call`` with a
    ``call_id``) is a call, joined to the assistant message or calls right before it; a ``*_call_output`` is
    its result. A server-side call (``web_search_call``, ``mcp_call``: no ``call_id``, its result in the item
    itself) is a call and its result."""
    if isinstance(items, dict | str) or not isinstance(items, Sequence):
        raise MalformedResult(f"expected a list of Responses input items, got {_short(items)}")
    turns: list[Turn] = []
    opened: list[int] = []  # per turn, the item it was read from (its first, for calls joined to one turn)
    pending: list[Part] = []  # reasoning and compaction items waiting for the assistant turn they precede
    answers: list[Part] = []  # approvals waiting for the user message they precede
    for i, item in enumerate(items):
        opened += [i - 1] * (len(turns) - len(opened))  # the turns the item before this one opened
        where = f"items[{i}]"
        kind = item.get("type", "message" if isinstance(item, dict) and "role" in item else None) \
            if isinstance(item, dict) else None
        assistant = kind == "message" and item.get("role") == "assistant" or (_call_item(kind) and "call_id" in item) \
            or kind == "mcp_approval_request"
        if pending and not assistant and kind not in _OPAQUE_ITEMS:  # nothing of the assistant's follows them
            turns.append(Turn(Role.ASSISTANT, "", parts=tuple(pending)))
            pending.clear()
            opened += [i - 1] * (len(turns) - len(opened))
        if answers and kind != "mcp_approval_response" and not (kind == "message" and item.get("role") == "user"):
            turns.append(Turn(Role.USER, "", parts=tuple(answers)))  # approvals no user message follows
            answers.clear()
            opened += [i - 1] * (len(turns) - len(opened))
        if kind in _OPAQUE_ITEMS:
            pending.append(opaque_part(item, kind, where))
        elif kind == "mcp_approval_response":
            answers.append(approval_part(item, where))
        elif kind == "mcp_approval_request":
            _request_to(turns, pending, approval_part(item, where))
        elif kind == "message":
            role = item.get("role")
            if role not in ("system", "developer", "user", "assistant"):
                raise MalformedResult(f"{where}.role: expected system, developer, user or assistant, got {_short(role)}")
            turns.append(Turn(Role.SYSTEM if role == "developer" else Role(role), _message_text(item, where),
                              parts=(*pending, *answers, *responses_content_parts(item.get("content"), f"{where}.content"))))
            pending.clear()
            answers.clear()
        elif _output_item(kind):
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{where}.call_id: a {kind} needs a non-empty string, got {_short(call_id)}")
            turns.append(Turn(Role.TOOL, _output_text(item.get("output"), f"{where}.output"), (), call_id,
                              responses_content_parts(item.get("output"), f"{where}.output")))
        elif _call_item(kind) and "call_id" in item:
            call = ToolCall(_nonempty(item, "call_id", kind, where), _call_name(item, kind, where),
                            _call_input(item, kind, where))
            last = turns[-1] if turns else None
            if last is not None and last.role is Role.ASSISTANT and _open_for_calls(items, i):
                turns[-1] = Turn(Role.ASSISTANT, last.text, (*last.tool_calls, call), parts=(*last.parts, *pending))
            else:
                turns.append(Turn(Role.ASSISTANT, "", (call,), parts=tuple(pending)))
            pending.clear()
        elif _call_item(kind):  # server-side: the call and its result in one item
            call_id = _nonempty(item, "id", kind, where)
            mark = (Part(PartKind.SERVER_TOOL, _server_label(item.get("server_label"), f"{where}.server_label"),
                         id=call_id),) if kind == "mcp_call" else ()
            call = ToolCall(call_id, _call_name(item, kind, where), _call_input(item, kind, where))
            last = turns[-1] if turns else None
            if mark and last is not None and last.role is Role.ASSISTANT and not last.tool_calls \
                    and _open_for_calls(items, i):  # an MCP call joins the assistant's message right before it
                turns[-1] = Turn(Role.ASSISTANT, last.text, (call,), parts=(*last.parts, *mark))
            else:
                turns.append(Turn(Role.ASSISTANT, "", (call,), parts=mark))
            result = {k: item[k] for k in _SERVER_OUTPUTS if item.get(k) is not None}
            shown = result["output"] if set(result) == {"output"} else result
            if result or not mark:  # an MCP call without its output has no result yet
                turns.append(Turn(Role.TOOL, _output_text(shown, where), (), call_id, mark))
        elif kind in UNREAD_ITEMS:
            continue
        else:
            raise MalformedResult(f"{where}.type: expected message, a call (function_call, custom_tool_call, ...) or "
                                  f"its output, got {_short(kind)}")
    if pending:
        turns.append(Turn(Role.ASSISTANT, "", parts=tuple(pending)))
    if answers:
        turns.append(Turn(Role.USER, "", parts=tuple(answers)))
    opened += [len(items) - 1] * (len(turns) - len(opened))
    return list(zip(turns, opened))


def _request_to(turns: list[Turn], pending: list[Part], request: Part) -> None:
    """An approval request joins the assistant turn it follows (with the reasoning before it, if any)."""
    if pending or not turns or turns[-1].role is not Role.ASSISTANT:
        turns.append(Turn(Role.ASSISTANT, "", parts=(*pending, request)))
        pending.clear()
    else:
        turns[-1] = Turn(Role.ASSISTANT, turns[-1].text, turns[-1].tool_calls, parts=(*turns[-1].parts, request))


def _nonempty(item: dict[str, Any], key: str, kind: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise MalformedResult(f"{where}.{key}: a {kind} needs a non-empty string, got {_short(value)}")
    return value


def _call_name(item: dict[str, Any], kind: str, where: str) -> str:
    """A call's tool name: its ``name`` where the item has one (a function, a custom tool, an MCP tool), else
    its type without ``_call`` (``local_shell``, ``computer``, ``web_search``)."""
    if kind in ("function_call", "custom_tool_call") or "name" in item:
        return _nonempty(item, "name", kind, where)
    return kind.removesuffix("_call")


def _call_input(item: dict[str, Any], kind: str, where: str) -> str:
    """What a call asked for, as text: a function's JSON arguments (which must parse: the API sends JSON) and a
    custom tool's input as they are, any other item's action (or query, code) as JSON."""
    for key in _CALL_INPUTS:
        value = item.get(key)
        if value is None:
            continue
        if isinstance(value, str) and key == "arguments" and kind == "function_call":
            _check_json(value, f"{where}.arguments")
        if isinstance(value, str) and key in ("arguments", "input"):
            return value
        if key == "arguments" and kind == "function_call":
            raise MalformedResult(f"{where}.arguments: expected JSON text, got {_short(value)}")
        return _json_text(value, f"{where}.{key}")
    return "{}"


def _check_json(text: str, where: str) -> None:
    try:
        json.loads(text)
    except ValueError as exc:
        raise MalformedResult(f"{where}: expected JSON text, got {_short(text)} ({exc.msg})") from None



def _output_text(output: Any, where: str) -> str:
    """A call's output as text: a string, content parts (text joined, images left out), or JSON."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    if isinstance(output, list):
        return _message_text({"content": output}, where)
    return _json_text(output, where)


def _open_for_calls(items: Sequence[Any], i: int) -> bool:
    """Whether item ``i`` (a call) directly follows an assistant message or another call of it."""
    previous = items[i - 1] if i > 0 else None
    return isinstance(previous, dict) and ((_call_item(previous.get("type")) and "call_id" in previous) or (
        previous.get("type", "message") == "message" and previous.get("role") == "assistant"))
