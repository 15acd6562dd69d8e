"""OpenAI Responses ``input`` items and our turns: the ``openai-responses`` dialect (``harness._base._dialects``).

A message item is a turn; a call item (``function_call`` and every ``*_call`` with a ``call_id``) joins the
assistant message right before it, and its ``*_call_output`` is a tool turn. A server-side call item (an
``mcp_call``, a ``web_search_call``) holds its call and its result in one. Reasoning and compaction items are
parts of the assistant turn they precede, approvals parts of the turns that ask and answer
(``harness._base._part_shapes``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness._base._errors import MalformedResult, _short
from harness._base._model import ATTACHMENTS, Part, PartKind, Role, ToolCall, Turn, server_calls
from harness._base._part_shapes import (approval_item, approval_part, json_text, opaque_item, opaque_part,
                                        responses_content, responses_content_parts, server_label)

__all__ = ["responses_items", "responses_turns", "turns_of_items", "UNREAD_ITEMS"]

#: The parts a Responses turn writes as items of their own before its message (and calls), and after them.
_ITEMS_BEFORE = (PartKind.REASONING, PartKind.COMPACTION, PartKind.APPROVAL)


def responses_items(turns: Sequence[Turn]) -> list[dict[str, Any]]:
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


def turns_of_items(items: Any) -> tuple[Turn, ...]:
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
            mark = (Part(PartKind.SERVER_TOOL, server_label(item.get("server_label"), f"{where}.server_label"),
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
        return json_text(value, f"{where}.{key}")
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
    return json_text(output, where)


def _open_for_calls(items: Sequence[Any], i: int) -> bool:
    """Whether item ``i`` (a call) directly follows an assistant message or another call of it."""
    previous = items[i - 1] if i > 0 else None
    return isinstance(previous, dict) and ((_call_item(previous.get("type")) and "call_id" in previous) or (
        previous.get("type", "message") == "message" and previous.get("role") == "assistant"))
