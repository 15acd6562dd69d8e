"""A tiny typed reader for JSON documents that reports the exact failing field.

Every loader in the project (transcripts, skeletons, corpus entries) goes
through this so a bad file always gets the same kind of error: source, field
path, what was expected, what was there.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypeVar

from harness._base._errors import SchemaError

E = TypeVar("E", bound=Enum)

_MISSING = object()


class Reader:
    """A view of one JSON object at a field path, e.g. ``turns[3].tool_calls[0]``."""

    __slots__ = ("_obj", "_path", "_source")

    def __init__(self, obj: Any, *, path: str = "", source: str = "<document>"):
        self._path = path
        self._source = source
        if not isinstance(obj, dict):
            self.fail("", "an object", obj)
        self._obj = obj

    def fail(self, key: str, expected: str, got: object) -> None:
        raise SchemaError(self._join(key) or "<root>", expected, got, source=self._source) from None

    def _join(self, key: str) -> str:
        if not key:
            return self._path
        return f"{self._path}.{key}" if self._path else key

    def _get(self, key: str, default: Any) -> Any:
        value = self._obj.get(key, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                self.fail(key, "a value (the field is required)", "nothing")
            return default
        return value

    def int(self, key: str, *, default: Any = _MISSING, minimum: int | None = None) -> int:
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, "an integer", value)
        if minimum is not None and value < minimum:
            self.fail(key, f"an integer >= {minimum}", value)
        return value

    def optional_int(self, key: str) -> int | None:
        if self._obj.get(key) is None:
            return None
        return self.int(key)

    def str(self, key: str, *, default: Any = _MISSING, nonempty: bool = False) -> str:
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, str) or (nonempty and not value):
            self.fail(key, "a non-empty string" if nonempty else "a string", value)
        _check_unicode(self, key, value)
        return value

    def optional_str(self, key: str) -> str | None:
        if self._obj.get(key) is None:
            return None
        return self.str(key)

    def enum(self, key: str, enum: type[E], *, default: Any = _MISSING) -> E:
        value = self._get(key, default)
        if value is default and default is not _MISSING:
            return value
        try:
            return enum(value)
        except (ValueError, TypeError):
            choices = ", ".join(repr(m.value) for m in enum)
            self.fail(key, f"one of {choices}", value)
            raise  # unreachable; fail() raises

    def list(self, key: str, *, default: Any = _MISSING) -> list[Any]:
        value = self._get(key, default)
        if not isinstance(value, list):
            self.fail(key, "a list", value)
        return value

    def str_list(self, key: str, *, default: Any = _MISSING, nonempty_items: bool = False) -> tuple[str, ...]:
        items = self.list(key, default=default)
        for i, item in enumerate(items):
            if not isinstance(item, str) or (nonempty_items and not item):
                self.fail(f"{key}[{i}]", "a non-empty string" if nonempty_items else "a string", item)
            _check_unicode(self, f"{key}[{i}]", item)
        return tuple(items)

    def int_list(self, key: str, *, default: Any = _MISSING) -> tuple[int, ...]:
        items = self.list(key, default=default)
        for i, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, int):
                self.fail(f"{key}[{i}]", "an integer", item)
        return tuple(items)

    def str_map(self, key: str) -> dict[str, str]:
        value = self._get(key, {})
        if not isinstance(value, dict):
            self.fail(key, "an object of strings", value)
        for k, v in value.items():
            _check_unicode(self, key, k)
            if not isinstance(v, str):
                self.fail(f"{key}.{k}", "a string", v)
            _check_unicode(self, f"{key}.{k}", v)
        return value

    def child(self, key: str, *, optional: bool = False) -> Reader | None:
        value = self._get(key, None if optional else _MISSING)
        if value is None and optional:
            return None
        return Reader(value, path=self._join(key), source=self._source)

    def children(self, key: str, *, default: Any = _MISSING) -> list[Reader]:
        return [
            Reader(item, path=f"{self._join(key)}[{i}]", source=self._source)
            for i, item in enumerate(self.list(key, default=default))
        ]

    def only(self, *keys: str) -> None:
        """Fail on the first field that is not one of ``keys`` (a typo such as "detail" is named)."""
        for key in self._obj:
            if key not in keys:
                self.fail(key, f"one of the fields {', '.join(keys)}", "an unknown field")

    def wrap(self, build, *args):
        """Run a constructor, turning its own validation error into a SchemaError here."""
        try:
            return build(*args)
        except SchemaError:
            raise
        except ValueError as exc:
            self.fail("", "a consistent value", str(exc))
            raise  # unreachable


def _check_unicode(reader: Reader, key: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        reader.fail(key, "valid Unicode text", f"a lone surrogate at character {exc.start}")


def check_version(reader: Reader, expected: int) -> None:
    version = reader.int("schema_version")
    if version != expected:
        reader.fail("schema_version", f"{expected} (this release reads only that version)", version)
