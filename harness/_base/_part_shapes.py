"""Images and documents as each provider's history writes them, and back: the attachments of a user turn or a
tool result (``harness.Part`` of kind ``image`` or ``document``).

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

from typing import Any

from harness._base._errors import MalformedResult, _short
from harness._base._model import Part, PartKind

__all__ = ["anthropic_block", "anthropic_part", "responses_content", "responses_part", "ANTHROPIC_BLOCKS",
           "RESPONSES_PARTS"]

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
