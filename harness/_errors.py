"""The project's exception hierarchy: one base class, builtin-compatible subclasses."""

from __future__ import annotations

__all__ = ["HarnessError", "SchemaError", "InvalidArgument"]


class HarnessError(Exception):
    """Base class of every error compaction-harness raises on purpose."""


class SchemaError(HarnessError, ValueError):
    """A document (transcript, skeleton, corpus entry) does not match its schema.

    The message names the source (file or "<document>"), the field path and what
    was expected, so a user can fix the file without reading our code.
    """

    def __init__(self, field: str, expected: str, got: object, *, source: str = "<document>"):
        self.source = source
        self.field = field
        self.expected = expected
        self.got = got
        super().__init__(f"{source}: field {field!r}: expected {expected}, got {_short(got)}")


class InvalidArgument(HarnessError, ValueError):
    """A public function or strategy was called with an argument it cannot accept."""


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
