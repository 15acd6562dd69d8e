"""Reading "<field> <operator> <number>" out of prose, shared by the numeric oracles."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from oracles._context import Clause, Context, phrase_pattern

__all__ = ["Mention", "value_mentions", "field_mentions", "operators_in"]

_WORDS = re.compile(r"\S+")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")


@dataclass(frozen=True, slots=True)
class Mention:
    """A field followed, within a few words, by a number; ``between`` is the text joining them."""

    clause: Clause
    number: str
    between: str
    before_number: str


def _number_after(text: str, value: str | None) -> re.Match[str] | None:
    pattern = r"(?<![\w.])" + (re.escape(value) if value else r"\d+(?:\.\d+)?") + r"(?![\w]|\.\d)"
    return re.search(pattern, text)


def field_mentions(ctx: Context, field: str, value: str | None = None) -> list[Mention]:
    """Each place ``field`` is followed within ``number_window`` words by ``value`` (or any number).

    Another identifier between them (``retry_limit 3, max_retries``) breaks the link,
    so the right number next to the wrong field does not count.
    """
    out = []
    for clause in ctx.clauses_with(field):
        start = 0
        text = clause.text
        while (at := text.find(field, start)) >= 0:
            start = at + len(field)
            # the next few words only: slicing or scanning the whole tail per occurrence would be quadratic
            words = list(itertools.islice(_WORDS.finditer(text, start), ctx.rules.number_window + 2))
            window = text[start: words[-1].end()] if words else ""
            m = _number_after(window, value)
            if m is None:
                continue
            between = window[: m.start()]
            if _another_field(between, ctx.rules.field_links) or (value is not None and field in between):
                continue
            after = " ".join(_WORDS.findall(window[m.end():])[:3])
            out.append(Mention(clause, m.group(0), between + " " + after, between))
    return out


def _another_field(between: str, links: tuple[str, ...]) -> bool:
    """A second field sits between: a snake_case name followed by one of the rules' field links."""
    return any(phrase_pattern(links).match(between[m.end():].lstrip()) for m in _SNAKE.finditer(between))


def value_mentions(ctx: Context, field: str, value: str) -> list[Mention]:
    return field_mentions(ctx, field, value)


def operators_in(text: str, ctx: Context) -> set[str]:
    """Strong operators stated in ``text`` (longest phrase wins, so "no more than" is not "more than")."""
    phrase_to_op = {p: op for op, ps in ctx.rules.operator_phrases for p in ps}
    pattern = phrase_pattern(tuple(phrase_to_op))
    return {phrase_to_op[m.group(0)] for m in pattern.finditer(text.lower())}
