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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness._base._errors import MalformedResult, _short
from harness._base._messages import to_messages
from harness._base._model import Role, ToolCall, Turn

__all__ = ["DIALECTS", "DEFAULT_DIALECT", "render", "read", "merged_messages"]

DIALECTS = ("chat", "anthropic", "openai-responses")
DEFAULT_DIALECT = "chat"

#: Where the arguments of a call whose JSON text is not an object go in a ``tool_use`` ``input``.
_RAW_ARGUMENTS = "arguments"


def render(turns: Sequence[Turn], dialect: str) -> Any:
    """``turns`` as ``dialect`` writes them: a list of chat messages, an Anthropic body, or Responses items."""
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
        if turn.role is Role.TOOL:
            block = {"type": "tool_result", "tool_use_id": turn.tool_call_id, "content": turn.text}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "user" and isinstance(last["content"], list) and all(
                    b["type"] == "tool_result" for b in last["content"]):
                last["content"].append(block)  # the results of one assistant message share one user message
            else:
                messages.append({"role": "user", "content": [block]})
        elif turn.role is Role.ASSISTANT and turn.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": _input_of(c.arguments)}
                       for c in turn.tool_calls]
            messages.append({"role": "assistant", "content": blocks})
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
    """A ``tool_result``'s content: a string, or text blocks (other blocks, images, carry no text)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for j, block in enumerate(content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise MalformedResult(f"{where}.content[{j}]: expected a block with a 'type', got {_short(block)}")
            if block["type"] == "text":
                texts.append(_block_text(block, f"{where}.content[{j}]"))
        return "\n".join(texts)
    raise MalformedResult(f"{where}.content: expected a string or a list of blocks, got {_short(content)}")


def _system_text(system: Any) -> str | None:
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
    system = _system_text(body.get("system"))
    if system is not None:
        turns.append(Turn(Role.SYSTEM, system))
    for i, message in enumerate(messages):
        turns.extend(_anthropic_message(message, f"messages[{i}]"))
    return tuple(turns)


def _anthropic_message(message: Any, where: str) -> list[Turn]:
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

    def flush_text() -> None:
        if texts:
            turns.append(Turn(Role(role), "\n".join(texts)))
            texts.clear()

    for j, block in enumerate(content):
        at = f"{where}.content[{j}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(_block_text(block, at))
        elif kind == "tool_use" and role == "assistant":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{at}.id: a tool_use needs a non-empty string id, got {_short(call_id)}")
            if not isinstance(name, str) or not name:
                raise MalformedResult(f"{at}.name: a tool_use needs a non-empty string name, got {_short(name)}")
            calls.append(ToolCall(call_id, name, _arguments_of(block.get("input", {}), at)))
        elif kind == "tool_result" and role == "user":
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{at}.tool_use_id: a tool_result needs a non-empty string, got {_short(call_id)}")
            flush_text()
            turns.append(Turn(Role.TOOL, _result_text(block.get("content"), at), (), call_id))
        elif kind in ("image", "document", "thinking", "redacted_thinking"):
            continue  # carries nothing the oracles read
        else:
            allowed = "text, tool_use" if role == "assistant" else "text, tool_result"
            raise MalformedResult(f"{at}.type: expected one of {allowed} in a {role} message, got {_short(kind)}")
    if role == "assistant":
        text = "\n".join(texts)
        return [Turn(Role.ASSISTANT, text, tuple(calls))] if (text or calls or not content) else []
    flush_text()
    return turns


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
    for turn in turns:
        if turn.role is Role.TOOL:
            items.append({"type": "function_call_output", "call_id": turn.tool_call_id, "output": turn.text})
            continue
        if turn.text or not turn.tool_calls:
            part = "output_text" if turn.role is Role.ASSISTANT else "input_text"
            items.append({"type": "message", "role": turn.role.value,
                          "content": [{"type": part, "text": turn.text}]})
        items += [{"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
                  for c in turn.tool_calls]
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


def _responses_turns(items: Any) -> tuple[Turn, ...]:
    if isinstance(items, dict | str) or not isinstance(items, Sequence):
        raise MalformedResult(f"expected a list of Responses input items, got {_short(items)}")
    turns: list[Turn] = []
    for i, item in enumerate(items):
        where = f"items[{i}]"
        kind = item.get("type", "message" if isinstance(item, dict) and "role" in item else None) \
            if isinstance(item, dict) else None
        if kind == "message":
            role = item.get("role")
            if role not in ("system", "developer", "user", "assistant"):
                raise MalformedResult(f"{where}.role: expected system, developer, user or assistant, got {_short(role)}")
            turns.append(Turn(Role.SYSTEM if role == "developer" else Role(role), _message_text(item, where)))
        elif kind == "function_call":
            call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments", "{}")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{where}.call_id: a function_call needs a non-empty string, got {_short(call_id)}")
            if not isinstance(name, str) or not name:
                raise MalformedResult(f"{where}.name: a function_call needs a non-empty string, got {_short(name)}")
            if not isinstance(arguments, str):
                raise MalformedResult(f"{where}.arguments: expected JSON text, got {_short(arguments)}")
            call = ToolCall(call_id, name, arguments)
            last = turns[-1] if turns else None
            if last is not None and last.role is Role.ASSISTANT and _open_for_calls(items, i):
                turns[-1] = Turn(Role.ASSISTANT, last.text, (*last.tool_calls, call))
            else:
                turns.append(Turn(Role.ASSISTANT, "", (call,)))
        elif kind == "function_call_output":
            call_id, output = item.get("call_id"), item.get("output")
            if not isinstance(call_id, str) or not call_id:
                raise MalformedResult(f"{where}.call_id: a function_call_output needs a non-empty string, "
                                      f"got {_short(call_id)}")
            if isinstance(output, list):
                output = _message_text({"content": output}, f"{where}.output")
            if not isinstance(output, str):
                raise MalformedResult(f"{where}.output: expected a string, got {_short(output)}")
            turns.append(Turn(Role.TOOL, output, (), call_id))
        elif kind in ("reasoning",):
            continue
        else:
            raise MalformedResult(f"{where}.type: expected message, function_call or function_call_output, "
                                  f"got {_short(kind)}")
    return tuple(turns)


def _open_for_calls(items: Sequence[Any], i: int) -> bool:
    """Whether item ``i`` (a function call) directly follows an assistant message or another call of it."""
    previous = items[i - 1] if i > 0 else None
    return isinstance(previous, dict) and (previous.get("type") == "function_call" or (
        previous.get("type", "message") == "message" and previous.get("role") == "assistant"))
