"""The bundled example: an extractive summarizer of the kind many agents ship.

It keeps the sentences that look important and smooths them for fluency,
which is exactly how obligations get bent: "never" becomes "preferably not",
"at most 3" becomes "a few", tool calls are dropped, and the last couple of
messages are kept verbatim whether or not they start with a tool result.
"""

from __future__ import annotations

import re
from typing import Any

_IMPORTANT = re.compile(r"\d|_|never|must|don't|do not|will|limit|error|reject|fail", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_FLUENT = (
    (re.compile(r"\bnever\b", re.IGNORECASE), "preferably not"),
    (re.compile(r"\b(at most|no more than|up to|capped at|never more than)\s+\d+\b", re.IGNORECASE), "a few"),
    (re.compile(r"\b(must not|do not ever|don't)\b", re.IGNORECASE), "would rather not"),
    (re.compile(r"\brejected\b", re.IGNORECASE), "explored"),
)


def _smooth(sentence: str) -> str:
    for pattern, replacement in _FLUENT:
        sentence = pattern.sub(replacement, sentence)
    return sentence


def summarize(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    kept: list[str] = []
    for message in messages[:-2]:
        for sentence in _SENTENCE.split(message.get("content") or ""):
            if _IMPORTANT.search(sentence):
                kept.append(_smooth(sentence.strip()))
    words = " ".join(kept).split()[: max(10, budget // 3)]
    summary = {"role": "system", "content": "Summary of earlier work: " + " ".join(words)}
    return [summary] + [dict(m) for m in messages[-2:]]
