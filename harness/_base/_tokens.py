"""The default token counter: dependency-free and stable across machines.

It counts words (runs of letters, digits and underscores) plus each other
non-space character. That over-counts punctuation against a BPE tokenizer and
under-counts long words, so it is a budget *proxy*; pass your own counter
(any ``str -> int``) where the real tokenizer matters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from harness._base._result_codec import turn_from_message

__all__ = ["TokenCounter", "count_tokens", "message_tokens", "context_tokens"]

TokenCounter = Callable[[str], int]

_TOKEN = re.compile(r"\w+|[^\w\s]")

# ASCII text is counted without a regex: each character is mapped to its class (word, space, other)
# by a table derived from the very pattern above, so the two paths cannot disagree. A token is then a
# run of word characters (counted where one starts) or one other character. Three C-level passes
# instead of a match object per token: judging counts every context, and contexts run to megabytes.
_WORD_BYTE, _SPACE_BYTE, _OTHER_BYTE = b"w", b" ", b"o"
_CLASSES = bytes(
    (_WORD_BYTE if re.fullmatch(r"\w", chr(b)) else _SPACE_BYTE if re.fullmatch(r"\s", chr(b)) else _OTHER_BYTE)[0]
    for b in range(128)
) + _OTHER_BYTE * 128


def count_tokens(text: str) -> int:
    """Words (runs of letters, digits, underscores) plus every other non-space character."""
    if not text.isascii():
        return len(_TOKEN.findall(text))
    classes = text.encode("ascii").translate(_CLASSES)
    word_starts = classes.count(b" w") + classes.count(b"ow") + classes.startswith(_WORD_BYTE)
    return word_starts + classes.count(_OTHER_BYTE)


def message_tokens(turn: Any, counter: TokenCounter = count_tokens) -> int:
    """What one message costs in a context: its text, each tool call's name, arguments and id, the
    id a tool result answers, and one token of framing. The session runner (when to compact) and the
    budget oracle (did it fit) both count this way, so a compactor budgeting with our counter agrees.

    ``turn`` is a ``Turn`` or a chat message as a messages summarizer gets it (``role``, ``content``,
    ``tool_calls``, ``tool_call_id``). Turns are immutable, and a session counts the same source turns
    at every compaction (the loss ratio, the budget), so counts are remembered per (turn, counter)."""
    if isinstance(turn, dict):  # read exactly as the harness reads a returned message (a bad one raises)
        turn = turn_from_message(turn, 0)
    try:
        return _remembered_tokens(turn, counter)
    except TypeError:  # an unhashable turn-like object or counter: count it afresh
        return _message_tokens(turn, counter)


def _message_tokens(turn: Any, counter: TokenCounter) -> int:
    if counter is count_tokens:  # additive over whitespace: one count of the parts joined by spaces
        parts = [turn.text, *(p for c in turn.tool_calls for p in (c.name, c.arguments, c.id))]
        return count_tokens(" ".join([*parts, turn.tool_call_id or ""])) + 1
    calls = sum(counter(c.name) + counter(c.arguments) + counter(c.id) for c in turn.tool_calls)
    answered = counter(turn.tool_call_id) if turn.tool_call_id else 0
    return counter(turn.text) + calls + answered + 1


_remembered_tokens = functools.lru_cache(maxsize=1 << 16)(_message_tokens)


def context_tokens(messages: Iterable[Any], ledger: Iterable[Any] | None = None,
                   counter: TokenCounter = count_tokens) -> int:
    """A context's size: its messages, plus a structured ledger as the agent would see it rendered."""
    rendered = "\n".join(entry.render() for entry in ledger or ())
    return sum(message_tokens(t, counter) for t in messages) + (counter(rendered) if rendered else 0)
