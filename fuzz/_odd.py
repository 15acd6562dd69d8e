"""Python values a summarizer may return that JSON cannot hold, built from ``Make`` recipes.

Frozen dataclasses with fields of the wrong type (or never set), bytes, generators that raise
half-way, and objects whose ``__iter__``, ``__eq__``, ``__str__``, ``get`` ... raise, some of
them with an exception that cannot even be printed.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from fuzz._mutate import Make
from harness._base._model import Role, ToolCall, Turn
from harness._base._protocol import CompactionResult, LedgerEntry

__all__ = ["realise", "odd_values", "raised", "METHODS", "EXCEPTIONS"]


class Unprintable(Exception):
    """An exception whose message cannot be read: ``str()`` of it raises."""

    def __str__(self) -> str:
        raise ValueError("this exception cannot be shown")


EXCEPTIONS = {e.__name__: e for e in (ValueError, TypeError, KeyError, IndexError, RuntimeError, RecursionError,
                                      ZeroDivisionError, StopIteration, MemoryError, SystemExit, Unprintable)}
METHODS = ("__iter__", "__len__", "__getitem__", "__eq__", "__hash__", "__bool__", "__str__", "__repr__",
           "__contains__", "__lt__", "get", "items", "keys", "encode")
_FROZEN = {"turn": Turn, "tool_call": ToolCall, "ledger_entry": LedgerEntry, "result": CompactionResult}
_SIMPLE = ("object", "complex", "range", "bytes", "bytearray", "role", "str_subclass", "nan_str", "ellipsis")


def raised(parts: list[Any]) -> BaseException:
    """The exception a ``Make("raise", [name, *args])`` recipe raises (a ValueError if the name is not known)."""
    name = parts[0] if parts and isinstance(parts[0], str) else "ValueError"
    return EXCEPTIONS.get(name, ValueError)(*parts[1:])


@functools.cache
def _hostile_class(base: type, method: str, exc_name: str) -> type:
    exc = EXCEPTIONS.get(exc_name, ValueError)

    def boom(self, *args, **kwargs):
        raise exc(f"hostile {method}")

    body: dict[str, Any] = {method: boom}
    if method == "__eq__":  # defining __eq__ alone would make the class unhashable
        body["__hash__"] = base.__hash__
    return type(f"Hostile_{base.__name__}", (base,), body)


def _hostile(parts: list[Any]) -> Any:
    method = parts[0] if parts and parts[0] in METHODS else "__iter__"
    exc_name = parts[1] if len(parts) > 1 and isinstance(parts[1], str) else "ValueError"
    inner = parts[2] if len(parts) > 2 else None
    base = next((b for b in (list, dict, str) if isinstance(inner, b)), object)
    cls = _hostile_class(base, method, exc_name)
    return cls() if base is object else cls(inner)


def _frozen(cls: type, parts: list[Any]) -> Any:
    """An instance whose fields are whatever the parts are, unchecked; fields with no part stay unset."""
    obj = object.__new__(cls)
    for name, value in zip(cls.__slots__, parts):
        object.__setattr__(obj, name, value)
    return obj


def _raising_generator(parts: list[Any]):
    yield from parts[1:]
    raise raised([parts[0] if parts else "ValueError", "the generator broke"])


class _Text(str):
    """A str subclass, as an SDK's string-like type would be."""


def _build(kind: str, parts: list[Any]) -> Any:
    if kind in _FROZEN:
        return _frozen(_FROZEN[kind], parts)
    if kind == "hostile":
        return _hostile(parts)
    if kind == "tuple":
        return tuple(parts)
    if kind == "set":
        try:
            return frozenset(parts)
        except TypeError:
            return tuple(parts)
    if kind == "generator":
        return (p for p in parts)
    if kind == "raising_generator":
        return _raising_generator(parts)
    if kind == "raise":
        return raised(parts)
    if kind == "role":
        return Role(parts[0]) if parts and parts[0] in {r.value for r in Role} else Role.USER
    if kind == "str_subclass":
        return _Text(parts[0]) if parts and isinstance(parts[0], str) else _Text("summary")
    if kind == "mutate_input":
        return parts[0] if parts else None
    return {"object": object, "complex": lambda: 1 + 2j, "range": lambda: range(3), "bytes": lambda: b"summary",
            "bytearray": lambda: bytearray(b"summary"), "nan_str": lambda: float("nan"),
            "ellipsis": lambda: ...}.get(kind, object)()


def realise(value: Any) -> Any:
    """``value`` with every ``Make`` recipe built, innermost first; iterative, so any depth works."""
    box = [value]
    found: list[tuple[Any, Any, Make]] = []
    stack: list[Any] = [box]
    seen: set[int] = set()
    while stack:
        container = stack.pop()
        if id(container) in seen:
            continue
        seen.add(id(container))
        for key in (list(container) if isinstance(container, dict) else range(len(container))):
            item = container[key]
            if isinstance(item, Make):
                found.append((container, key, item))
                stack.append(item.parts)
            elif isinstance(item, dict | list):
                stack.append(item)
    for container, key, make in reversed(found):  # descendants were found after their ancestors
        container[key] = _build(make.kind, make.parts)
    return box[0]


def odd_values(current: Any) -> st.SearchStrategy[Make]:
    """What may replace ``current`` in a returned value: a hostile wrapper of it, an object of the wrong type..."""
    names = st.sampled_from(tuple(EXCEPTIONS))
    options = [
        st.sampled_from(_SIMPLE).map(lambda kind: Make(kind, [])),
        st.tuples(st.sampled_from(METHODS), names).map(lambda me: Make("hostile", [me[0], me[1], current])),
        st.sampled_from(tuple(_FROZEN)).map(lambda kind: Make(kind, [current])),
        names.map(lambda name: Make("raise", [name, "the summarizer failed"])),
        st.just(Make("mutate_input", [current])),
    ]
    if isinstance(current, list):
        options += [st.sampled_from(("tuple", "set", "generator")).map(lambda kind: Make(kind, current)),
                    names.map(lambda name: Make("raising_generator", [name, *current]))]
    if isinstance(current, str):
        options.append(st.just(Make("str_subclass", [current])))
    return st.one_of(options)
