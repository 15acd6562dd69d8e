"""The default token counter: dependency-free and stable across machines.

It counts words (runs of letters, digits and underscores) plus each other
non-space character. That over-counts punctuation against a BPE tokenizer and
under-counts long words, so it is a budget *proxy*; pass your own counter
(any ``str -> int``) where the real tokenizer matters.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["TokenCounter", "count_tokens"]

TokenCounter = Callable[[str], int]

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))
