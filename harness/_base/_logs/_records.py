"""What reading a team's log gives: its sessions, each turn with where it stood in the file."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from harness._base._errors import MalformedResult, SchemaError
from harness._base._model import Turn

__all__ = ["LoggedTurn", "SessionLog", "at_line", "malformed", "left_out_of"]


@dataclass(frozen=True, slots=True)
class LoggedTurn:
    """One turn read from a log, and where it stood: the file (with its line, for a log written a line per
    event), the field path of its message there, and of the id that ties it to a call (a result's
    ``tool_call_id``, ``tool_use_id`` or ``call_id``; a call turn's list of calls). A problem found later, a
    result that answers no call, names that field."""

    turn: Turn
    source: str
    field: str
    id_field: str = ""

    @property
    def tie(self) -> str:
        """The field a pairing problem names: the id field, or the message's own."""
        return self.id_field or self.field


@dataclass(frozen=True, slots=True)
class SessionLog:
    """One session of a team's log: its turns in conversation order, the format it was read as
    (``harness._base._logs.LOG_FORMATS``), and what it held that no turn of ours carries, counted by kind
    (thinking blocks, images, reasoning items), so a reader of the session can say what it left out."""

    format: str
    source: str
    turns: tuple[LoggedTurn, ...]
    left_out: tuple[tuple[str, int], ...] = ()


def at_line(source: str, line: int | None) -> str:
    """The source a problem is named in: the file, and its line for a log written a line per event."""
    return source if line is None else f"{source}, line {line}"


def malformed(exc: MalformedResult, source: str, prefix: str = "") -> SchemaError:
    """A provider-shape reader's ``MalformedResult`` ("WHERE: problem") as the file's ``SchemaError``,
    the field path under ``prefix`` (the message's own path in the file)."""
    where, _, problem = str(exc).partition(": ")
    field = (f"{prefix}.{where}" if prefix and where and not where.startswith("[") else f"{prefix}{where}") or "<root>"
    error = SchemaError(field, "", None, source=source)
    error.args = (f"{source}: field {field!r}: {problem}",)
    return error


#: Content a turn of ours has no place for, by the ``type`` a provider gives it, and how a report names it.
_UNCARRIED = {
    "thinking": "thinking blocks", "redacted_thinking": "thinking blocks", "reasoning": "reasoning items",
    "image": "images", "input_image": "images", "image_url": "images", "document": "documents",
    "input_file": "documents", "file": "documents", "input_audio": "audio", "compaction": "opaque compaction items",
    "compaction_summary": "opaque compaction items",
}


def left_out_of(value: Any, counts: Counter | None = None) -> Counter:
    """What ``value`` (a message, an item, a block list) holds that a turn cannot carry, counted (an item a log
    recorded twice under one ``id``, as Codex re-records an aborted turn's, once)."""
    counts = Counter() if counts is None else counts
    seen: set[tuple[str, str]] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str) and kind in _UNCARRIED:
                key = (kind, node.get("id"))
                if not isinstance(key[1], str) or key not in seen:
                    counts[_UNCARRIED[kind]] += 1
                    seen.add(key)
                continue
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return counts
