"""When a literal counts as present: as a whole token, never as part of a longer one.

"6.24.1" is not in "6.24.13" or "v-6.24.1", nor "call_ab" in "call_abc". The oracles read a
context with this rule, and the generator keeps filler and decoys clear of the ledger's literals
with the same rule, so "the filler never states a literal" means what the oracles would see.
"""

from __future__ import annotations

import functools
import re

__all__ = ["literal_pattern", "has_token", "token_spans"]


@functools.lru_cache(maxsize=4096)
def literal_pattern(literal: str) -> re.Pattern[str]:
    """``literal`` as a whole token: no word character, nor one joined by "." or "-", on either side."""
    body = re.escape(literal)
    if literal[:1].isalnum() or literal[:1] == "_":
        body = r"(?<![\w])(?<![\w][.\-])" + body
    if literal[-1:].isalnum() or literal[-1:] == "_":
        body += r"(?![\w])(?![.\-:/]\w)"
    return re.compile(body)


def has_token(text: str, literal: str) -> bool:
    """Whether ``literal`` occurs in ``text`` as a whole token (see ``literal_pattern``)."""
    return next(token_spans(text, literal), None) is not None


def token_spans(text: str, literal: str, start: int = 0, end: int | None = None):
    """Each ``(start, end)`` where ``literal`` occurs in ``text[start:end]`` as a whole token, in order.

    ``str.find`` locates candidates and the pattern only checks the boundaries at each: a pattern that
    begins with a lookbehind cannot use the regex engine's fast literal scan, and is ~50x slower on a
    megabyte of context where the literal is absent. Like ``finditer``, occurrences do not overlap.
    """
    end = len(text) if end is None else end
    if not literal:  # matches everywhere; find() would never advance
        yield from (m.span() for m in literal_pattern(literal).finditer(text, start, end))
        return
    at = text.find(literal, start, end)
    if at < 0:
        return  # the usual case, decided without the pattern
    pattern = literal_pattern(literal)
    while at >= 0:
        if pattern.match(text, at, end):
            yield at, at + len(literal)
            at = text.find(literal, at + len(literal), end)
        else:
            at = text.find(literal, at + 1, end)
