"""Each provider part (``harness.Part``) as the dialect's history writes it, and back.

Reasoning parts as Anthropic ``thinking`` (or ``redacted_thinking``) blocks and Responses ``reasoning`` items;
compaction parts as Responses ``compaction`` items; approval requests and approvals as Responses
``mcp_approval_request`` and ``mcp_approval_response`` items; and images and documents, the attachments of a
user turn or a tool result:

- Anthropic Messages: an ``image`` block, ``{"source": {"type": "base64", "media_type", "data"}}``, or a
  ``document`` block with the same source and a ``title`` (an image has no name there); in a user message
  before its text, and inside a ``tool_result``'s content after its text.
- OpenAI Responses: an ``input_image`` part with a ``data:`` URL, or an ``input_file`` part with a
  ``filename`` and a ``data:`` URL as ``file_data``; in a user message, and in a ``function_call_output``'s
  ``output`` as a list of parts.

Chat carries neither in our rendering and drops them (``harness._base._dialects.DROPPED_PARTS``). An attachment
given by reference (a URL, a file id) is read with the reference as its data and the source's type as its media
type, so it still compares byte-exact with itself.
"""

from __future__ import annotations

import json
from typing import Any

from harness._base._errors import MalformedResult, _short
from harness._base._model import Part, PartKind, Turn

__all__ = ["anthropic_block", "anthropic_part", "anthropic_result_parts", "thinking_blocks", "responses_content",
           "responses_part", "responses_content_parts", "opaque_item", "opaque_part", "approval_item", "approval_part",
           "ANTHROPIC_BLOCKS", "RESPONSES_PARTS", "APPROVAL_SERVER", "json_text", "server_label"]

#: The MCP server an approval request is written as coming from (Responses requires a label; none is read back).
APPROVAL_SERVER = "tools"

#: The Anthropic block types read as attachments, and the Responses content parts.
ANTHROPIC_BLOCKS = {"image": PartKind.IMAGE, "document": PartKind.DOCUMENT}
RESPONSES_PARTS = {"input_image": PartKind.IMAGE, "input_file": PartKind.DOCUMENT}


def anthropic_block(part: Part) -> dict[str, Any]:
    """An attachment as the Messages API block carrying it."""
    block: dict[str, Any] = {"type": part.kind.value, "source": {"type": "base64", "media_type": part.text,
                                                                   "data": part.data}}
    if part.kind is PartKind.DOCUMENT and part.id:
        block["title"] = part.id
    return block


def anthropic_part(block: dict[str, Any], where: str) -> Part:
    """An ``image`` or ``document`` block as an attachment; its source must be one the API takes."""
    source = block.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("type"), str):
        raise MalformedResult(f"{where}.source: an {block['type']} block needs a source object with a type, got "
                              f"{_short(source)}")
    data = source.get("data", source.get("url", source.get("file_id", source.get("content"))))
    if isinstance(data, list):  # a content source: the document's own text blocks
        data = "\n".join(b.get("text", "") for b in data if isinstance(b, dict))
    if not isinstance(data, str):
        raise MalformedResult(f"{where}.source: expected its data, url or file_id (a string), got {_short(source)}")
    media = source.get("media_type", source["type"])
    title = block.get("title") or ""
    if not isinstance(media, str) or not isinstance(title, str):
        raise MalformedResult(f"{where}: an {block['type']} block's media_type and title must be strings")
    return Part(ANTHROPIC_BLOCKS[block["type"]], data, media, title)


def responses_content(part: Part) -> dict[str, Any]:
    """An attachment as the Responses content part carrying it."""
    url = f"data:{part.text};base64,{part.data}"
    if part.kind is PartKind.IMAGE:
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    return {"type": "input_file", "filename": part.id, "file_data": url}


def responses_part(content: dict[str, Any], where: str) -> Part:
    """An ``input_image`` or ``input_file`` part as an attachment: a ``data:`` URL is split into its media type
    and its base64 content; a URL or a file id is kept whole."""
    kind = RESPONSES_PARTS[content["type"]]
    value = content.get("image_url" if kind is PartKind.IMAGE else "file_data") or content.get("file_url") \
        or content.get("file_id")
    name = content.get("filename") or ""
    if not isinstance(value, str) or not isinstance(name, str):
        raise MalformedResult(f"{where}: an {content['type']} part needs its data URL, URL or file_id (a string), "
                              f"got {_short(content)}")
    media, sep, data = value.partition(";base64,")
    if value.startswith("data:") and sep:
        return Part(kind, data, media.removeprefix("data:"), name)
    return Part(kind, value, "", name)


def opaque_item(part: Part) -> dict[str, Any]:
    """A part as the Responses item carrying it: a reasoning item (its text as the summary) or a compaction item."""
    if part.kind is PartKind.COMPACTION:
        return {"type": "compaction", "id": part.id, "encrypted_content": part.data}
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return {"type": "reasoning", "id": part.id, "summary": summary, "encrypted_content": part.data}


def opaque_part(item: dict[str, Any], kind: str, where: str) -> Part:
    """A reasoning or compaction item as a part: its encrypted content is what the API checks, so it must be there."""
    data, item_id = item.get("encrypted_content") or "", item.get("id", "")  # a stored item may go by its id alone
    if not isinstance(data, str):
        raise MalformedResult(f"{where}.encrypted_content: expected a string, got {_short(data)}")
    if not isinstance(item_id, str):
        raise MalformedResult(f"{where}.id: expected a string, got {_short(item_id)}")
    if kind == "compaction":
        return Part(PartKind.COMPACTION, data, "", item_id)
    summary = item.get("summary") or []
    if not isinstance(summary, list) or any(not isinstance(s, dict) or not isinstance(s.get("text"), str) for s in summary):
        raise MalformedResult(f"{where}.summary: expected a list of summary_text parts, got {_short(summary)}")
    return Part(PartKind.REASONING, data, "\n".join(s["text"] for s in summary), item_id)


def approval_item(part: Part) -> dict[str, Any]:
    """An approval request or an approval as the Responses item carrying it."""
    if part.kind is PartKind.APPROVAL_REQUEST:
        return {"type": "mcp_approval_request", "id": part.id, "server_label": APPROVAL_SERVER, "name": part.text,
                "arguments": part.data}
    return {"type": "mcp_approval_response", "approval_request_id": part.id, "approve": part.data == "approve",
            **({"reason": part.text} if part.text else {})}


def approval_part(item: dict[str, Any], where: str) -> Part:
    """An ``mcp_approval_request`` or ``mcp_approval_response`` item as a part; the ids are what pairs them."""
    if item["type"] == "mcp_approval_request":
        fields = {key: item.get(key) for key in ("id", "name", "arguments")}
        bad = [key for key, value in fields.items() if not isinstance(value, str) or (key != "arguments" and not value)]
        if bad:
            raise MalformedResult(f"{where}.{bad[0]}: an mcp_approval_request needs a non-empty string {bad[0]}, got "
                                  f"{_short(fields[bad[0]])}")
        return Part(PartKind.APPROVAL_REQUEST, fields["arguments"], fields["name"], fields["id"])
    request_id, approve, reason = item.get("approval_request_id"), item.get("approve"), item.get("reason") or ""
    if not isinstance(request_id, str) or not request_id:
        raise MalformedResult(f"{where}.approval_request_id: expected the id of the request it answers, got "
                              f"{_short(request_id)}")
    if not isinstance(approve, bool) or not isinstance(reason, str):
        raise MalformedResult(f"{where}: an mcp_approval_response needs approve (true or false) and an optional "
                              f"reason (a string), got {_short(item)}")
    return Part(PartKind.APPROVAL, "approve" if approve else "deny", reason, request_id)


def thinking_blocks(turn: Turn) -> list[dict[str, Any]]:
    """A turn's reasoning parts as the thinking blocks that open its message (redacted when there is no text)."""
    return [{"type": "thinking", "thinking": p.text, "signature": p.data} if p.text else
            {"type": "redacted_thinking", "data": p.data} for p in turn.parts if p.kind is PartKind.REASONING]

def anthropic_result_parts(content: Any, where: str) -> tuple[Part, ...]:
    """The images and documents of a tool result's content."""
    if not isinstance(content, list):
        return ()
    return tuple(anthropic_part(block, f"{where}.content[{j}]") for j, block in enumerate(content)
                 if block["type"] in ANTHROPIC_BLOCKS)

def responses_content_parts(content: Any, where: str) -> tuple[Part, ...]:
    """The images and files of a message's content (or a call output's list of parts)."""
    if not isinstance(content, list):
        return ()
    return tuple(responses_part(part, f"{where}[{j}]") for j, part in enumerate(content)
                 if isinstance(part, dict) and part.get("type") in RESPONSES_PARTS)


def json_text(value: Any, where: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise MalformedResult(f"{where}: expected JSON data") from None


def server_label(label: Any, where: str) -> str:
    if not isinstance(label, str) or not label:
        raise MalformedResult(f"{where}: a server-side call needs its server's name (a non-empty string), got "
                              f"{_short(label)}")
    return label
