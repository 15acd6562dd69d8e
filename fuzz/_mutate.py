"""Damage a valid document a few places at a time, as a Hypothesis strategy.

Random bytes almost never get past ``json.loads``, and a random JSON value fails at its first
field. A valid document (made by the project's own strategies and writers) with up to four
drawn mutations passes most checks and breaks, if at all, deep inside a loader.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = ["Make", "EXTREME_NUMBERS", "BIG_INTS", "extreme_numbers", "odd_strings", "json_values", "mutated", "to_text",
           "vocabulary"]


@dataclass
class Make:
    """A recipe for a Python value JSON cannot hold (``fuzz._odd.realise`` builds it).

    A recipe, not the value, is what Hypothesis draws: it never has to copy or show an
    object whose ``__repr__`` raises. Its ``parts`` are mutated like any list.
    """

    kind: str
    parts: list[Any] = field(default_factory=list)


#: Numbers at the edges: sizes, signs, floats JSON cannot spell, a float where an int belongs.
EXTREME_NUMBERS = (0, -1, 1, 2, 2**31 - 1, -(2**63), 2**64, 10**100, 10**4299, float("nan"), float("inf"),
                   float("-inf"), -0.0, 0.5, 1.0, 1e308, 5e-324, True, False)
#: Integers over Python's 4300-digit limit for int <-> text: a file may spell them, ``json.loads`` refuses.
BIG_INTS = (10**4300, -(10**5000))

_ODD = ("", " ", "\x00", "\ud800", "a\udfffb", "\udc80\udc80", "\u2028\u2029", "\x1b[2J", "\r\n", "\t",
        "NaN", "-1", "1e999", "\U0001f600", "\u202e", "\ufeff", "\\u0000", '"', "{", "null", "true",
        "x" * 100_000, "[" * 2000, "é" * 3000)


_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
_INTS = st.integers()
_PICK = st.integers(0, 65535)  # one strategy, taken modulo the choices: cheaper than a new one per draw


def _pick(draw, options: tuple[Any, ...] | list[Any]) -> Any:
    return options[draw(_PICK) % len(options)]


def odd_strings(names: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Strings that break naive code: empty, control characters, lone surrogates, very long, field names."""
    @st.composite
    def strings(draw) -> str:
        which = draw(_PICK) % 3
        return _pick(draw, _ODD) if which == 0 else _pick(draw, names) if which == 1 else draw(_TEXT)

    return strings()


def extreme_numbers(python_only: bool) -> st.SearchStrategy[Any]:
    """``EXTREME_NUMBERS`` (and ``BIG_INTS``), drawn by index: Hypothesis cannot show an int of 5,000 digits."""
    numbers = EXTREME_NUMBERS + (BIG_INTS if python_only else ())

    @st.composite
    def number(draw) -> Any:
        return _pick(draw, numbers)

    return number()


def json_values(names: tuple[str, ...], *, python_only: bool = False) -> st.SearchStrategy[Any]:
    """Small arbitrary JSON values, at most two containers deep (with ``python_only``, also ints
    ``json.loads`` refuses to read back). Hand-rolled: ``st.recursive`` costs several times the draws."""
    strings, numbers = odd_strings(names), extreme_numbers(python_only)

    def value(draw, depth: int) -> Any:
        kind = draw(_PICK) % (8 if depth < 2 else 6)
        if kind < 2:
            return None if kind == 0 else bool(draw(_PICK) % 2)
        if kind < 4:
            return draw(_INTS) if kind == 2 else draw(numbers)
        if kind < 6:
            return draw(strings)
        size = draw(_PICK) % 3
        if kind == 6:
            return [value(draw, depth + 1) for _ in range(size)]
        return {_pick(draw, names): value(draw, depth + 1) for _ in range(size)}

    @st.composite
    def values(draw) -> Any:
        return value(draw, 0)

    return values()


def vocabulary(docs: list[Any], extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every key and short string value in ``docs``: field names and enum values to put where they do not belong."""
    found: set[str] = set(extra)
    stack = list(docs)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found.update(k for k in value if isinstance(k, str))
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, Make):
            stack.extend(value.parts)
        elif isinstance(value, str) and len(value) <= 40:
            found.add(value)
    return tuple(sorted(found))


def _children(value: Any) -> Any:
    """The container whose items a mutation may reach inside ``value``, or None for a scalar."""
    if isinstance(value, dict | list):
        return value
    return value.parts if isinstance(value, Make) else None


def _retyped(value: Any) -> list[Any]:
    """The same information in the wrong type, or one step off."""
    if isinstance(value, bool):
        return [int(value), str(value).lower(), None, not value]
    if isinstance(value, int):
        return [value - 1, value + 1, -value, str(value) if abs(value) < 10**100 else "1", bool(value), [value],
                float(value) if abs(value) < 10**300 else float("inf")]
    if isinstance(value, float):
        return [str(value), 0, [value], None]
    if isinstance(value, str):
        return [len(value), [value], {"text": value}, None, value.upper(), value + value, value[:1], value[1:]]
    if isinstance(value, list):
        return [dict(zip(map(str, range(len(value))), value)), len(value), "", None, value[:1], value[::-1],
                value + value, []]
    if isinstance(value, dict):
        return [list(value.values()), list(value), {}, None, "", [value]]
    return [None, "", 0, [], {}, False]


def _walk(draw, box: list[Any]) -> tuple[Any, Any]:
    """A (container, key) slot: from the root down, each container is stopped at one time in four.

    A walk costs a few draws whatever the document's size, where listing every slot costs its size.
    """
    container, key = box, 0
    while True:
        children = _children(container[key])
        if not children or draw(_PICK) % 4 == 0:
            return container, key
        keys = list(children) if isinstance(children, dict) else range(len(children))
        container, key = children, _pick(draw, keys)


def nested(value: Any, depth: int) -> Any:
    """``value`` under ``depth`` levels of objects and lists, alternately."""
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


_COUNT = st.integers(0, 255)
#: How deep "nest" buries a value: a little, a lot, and around the interpreter's recursion limit (1000).
_DEPTHS = (2, 64, 3000, *range(900, 1000, 4))
_OPS = ("delete", "replace", "retype", "number", "string", "wrap", "duplicate", "nest", "add", "extra")


def mutated(docs: list[Any], names: tuple[str, ...], *, texts: bool = True, python_only: bool = False,
            extra: Callable[[Any], st.SearchStrategy[Any]] | None = None, max_mutations: int = 4) -> st.SearchStrategy:
    """One of ``docs`` (JSON ``texts``, parsed afresh, or objects, deep-copied) with 0..max_mutations mutations.

    ``extra(current)``, when given, draws a replacement JSON could not hold (a recipe ``Make``).
    A closure rather than a composite with arguments: Hypothesis would otherwise show the whole pool in its repr.
    """
    values = json_values(names, python_only=python_only)
    numbers = extreme_numbers(python_only)
    ops = _OPS if extra is not None else _OPS[:-1]

    @st.composite
    def damaged(draw) -> Any:
        chosen = _pick(draw, docs)
        box = [json.loads(chosen) if texts else copy.deepcopy(chosen)]
        for _ in range(draw(_COUNT) % (max_mutations + 1)):
            container, key = _walk(draw, box)
            _mutate(draw, container, key, container is box, _pick(draw, ops))
        return box[0]

    def _mutate(draw, container: Any, key: Any, at_root: bool, op: str) -> None:
        current = container[key]
        if op == "delete" and not at_root:
            del container[key]
        elif op == "retype":
            container[key] = _pick(draw, _retyped(current))
        elif op == "number":
            container[key] = draw(numbers)
        elif op == "string":
            container[key] = draw(odd_strings(names))
        elif op == "wrap":
            container[key] = [current]
        elif op == "duplicate" and isinstance(container, list) and not at_root:
            container.insert(key, current)
        elif op == "duplicate" and isinstance(container, dict):
            container[_pick(draw, names)] = current
        elif op == "nest":
            container[key] = nested(current, _pick(draw, _DEPTHS))
        elif op == "add" and isinstance(current, dict):
            current[_pick(draw, names)] = draw(values)
        elif op == "add" and isinstance(current, list):
            current.insert(draw(_PICK) % (len(current) + 1), draw(values))
        elif op == "extra":
            container[key] = draw(extra(current))
        else:
            container[key] = draw(values)

    return damaged()


def to_text(value: Any) -> str | None:
    """``value`` as the JSON text a file could hold, however deep or long its numbers; None if it has none."""
    limit, digits = sys.getrecursionlimit(), sys.get_int_max_str_digits()
    try:
        sys.setrecursionlimit(max(limit, 20_000))
        sys.set_int_max_str_digits(0)
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    finally:
        sys.setrecursionlimit(limit)
        sys.set_int_max_str_digits(digits)
