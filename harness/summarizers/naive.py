"""The truncations many agents ship: keep the tail (or the head and the tail) within budget."""

from __future__ import annotations

from typing import Any

from harness._base._tokens import count_tokens


def _cost(message: dict[str, Any]) -> int:
    return count_tokens(message.get("content") or "") + 4


def tail(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """The most recent messages that fit, oldest dropped first (what `trim_messages` does)."""
    kept, used = [], 0
    for message in reversed(messages):
        used += _cost(message)
        if used > budget:
            break
        kept.append(dict(message))
    return kept[::-1]


def head_tail(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """The first messages (task setup) and the most recent ones, half the budget each."""
    head, used = [], 0
    for message in messages:
        used += _cost(message)
        if used > budget // 2:
            break
        head.append(dict(message))
    rest = messages[len(head):]
    return head + tail(rest, budget - sum(_cost(m) for m in head))
