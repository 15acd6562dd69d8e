"""The transcript as chat messages (``role``/``content``/``tool_calls``/``tool_call_id``).

This is the shape most teams' summarizers already take, so it is the view the
harness hands them. Tool calls use the common function-call layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness._base._model import Part, Transcript, Turn

__all__ = ["to_messages", "turn_to_message", "turn_to_record", "part_record"]


def turn_to_message(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": turn.role.value, "content": turn.text}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    if turn.tool_call_id is not None:
        message["tool_call_id"] = turn.tool_call_id
    return message


def turn_to_record(turn: Turn) -> dict[str, Any]:
    """A turn as the harness passes it between its own processes and files: its chat message, with its opaque
    parts (``harness.Part``) under ``parts`` when it has any. Never what a chat summarizer is handed."""
    message = turn_to_message(turn)
    if turn.parts:
        message["parts"] = [part_record(p) for p in turn.parts]
    return message


def part_record(part: Part) -> dict[str, str]:
    """A part as every file and wire of ours writes it (a transcript's JSON, a request's messages)."""
    return {"kind": part.kind.value, "data": part.data, "text": part.text, "id": part.id}


def to_messages(source: Transcript | Sequence[Turn], start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
    """Fresh message dicts for ``turns[start:stop]``; mutating them never touches the source."""
    turns = source.turns if isinstance(source, Transcript) else source
    return [turn_to_message(t) for t in turns[start:stop]]
