"""When a literal counts as present: as a whole token, never as part of a longer one.

"6.24.1" is not in "6.24.13" or "v-6.24.1", nor "call_ab" in "call_abc". The oracles read a
context with this rule, and the generator keeps filler and decoys clear of the ledger's literals
with the same rule, so "the filler never states a literal" means what the oracles would see.
"""

from __future__ import annotations

import functools
import re

__all__ = ["literal_pattern", "has_token"]


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
    return literal in text and literal_pattern(literal).search(text) is not None
