"""Cheap, deterministic filler turns: the ordinary work between obligations.

The text comes from ``_worklog`` (code, diffs, test runs, traces, shell output,
chatter, full of numbers and identifiers), rendered once into fixed pools and
picked with a ``random.Random`` seeded per transcript, so thousands of turns cost
a few milliseconds and the same seed always gives the same text.

Filler must never restate an obligation. Its vocabulary keeps clear of every
literal shape but one (see ``_worklog``); for whatever a transcript's literals
still share with the pools (a version string, a team's own kind of literal),
``FillerPlan`` is told the literals and never picks an entry that contains one
as a whole token. That is checked against the ledger, not assumed from shapes.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable

from harness._base._model import Role, ToolCall, Turn
from harness._base._wholetoken import has_token
from strategies._internal import _worklog as W

__all__ = ["FillerPlan", "filler_units", "pool_texts"]

_POOL_SIZE = 1024
_CHAT_POOL_SIZE = 768
# What the agent says beside a call, sometimes: most calls carry no text at all.
_CALL_NOTES = ("", "", "", "Let me check.", "Looking at this next.", "Running that now.", "One moment.")


@functools.cache
def _pools() -> tuple[tuple[tuple[str, str, str], ...], tuple[str, ...], tuple[str, ...]]:
    """(tool units, user lines, assistant lines), rendered once per process from fixed seeds (immutable)."""
    tools_rng, users_rng, assistants_rng = random.Random(1), random.Random(2), random.Random(3)
    tools = tuple(W.tool_unit(tools_rng) for _ in range(_POOL_SIZE))
    users = tuple(W.user_line(users_rng) for _ in range(_CHAT_POOL_SIZE))
    assistants = tuple(W.assistant_line(assistants_rng) for _ in range(_CHAT_POOL_SIZE))
    return tools, users, assistants


def pool_texts() -> Iterable[str]:
    """Every text the filler can emit (call arguments and results included): what tests check shapes on."""
    tools, users, assistants = _pools()
    for name, arguments, result in tools:
        yield name
        yield arguments
        yield result
    yield from users
    yield from assistants
    yield from _CALL_NOTES


@functools.lru_cache(maxsize=8192)
def _entries_with(literal: str) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    """Indices of (tool, user, assistant) pool entries that contain ``literal`` as a token."""
    tools, users, assistants = _pools()
    return (
        frozenset(i for i, (n, a, r) in enumerate(tools) if any(has_token(x, literal) for x in (n, a, r))),
        frozenset(i for i, text in enumerate(users) if has_token(text, literal)),
        frozenset(i for i, text in enumerate(assistants) if has_token(text, literal)),
    )


class FillerPlan:
    """Draws filler units from one seeded stream; not shared, not global.

    ``avoid`` holds literals no emitted turn may contain (the transcript's ledger):
    an entry that holds one is skipped for the next that does not.
    """

    __slots__ = ("_random", "_calls", "_pools", "_banned")

    def __init__(self, seed: int, avoid: Iterable[str] = ()):
        self._random = random.Random(seed).random
        self._calls = 0
        self._pools = _pools()
        banned: list[set[int]] = [set(), set(), set()]
        for literal in {a for a in avoid if a and not a.isdigit()}:
            for mine, hits in zip(banned, _entries_with(literal)):
                mine |= hits
        self._banned = banned

    def _pick(self, which: int, size: int) -> int:
        index = int(self._random() * size)
        banned = self._banned[which]
        while index in banned:  # the pools are large and a literal hits a handful of entries at most
            index = (index + 1) % size
        return index

    def unit(self, room: int) -> tuple[Turn, ...]:
        """One or two filler turns (a tool call and its result never split), at most ``room``."""
        rnd = self._random
        roll = rnd()
        tools, users, assistants = self._pools
        if room >= 2 and roll < 0.4:
            self._calls += 1
            name, arguments, result = tools[self._pick(0, len(tools))]
            # Filler call ids share no shape with fact call ids ("call_" + 12 hex).
            call = ToolCall(f"fill-{self._calls:05d}", name, arguments)
            note = _CALL_NOTES[int(rnd() * len(_CALL_NOTES))]
            return (Turn(Role.ASSISTANT, note, (call,)), Turn(Role.TOOL, result, (), call.id))
        if roll < 0.7:
            return (Turn(Role.USER, users[self._pick(1, len(users))]),)
        return (Turn(Role.ASSISTANT, assistants[self._pick(2, len(assistants))]),)


def filler_units(seed: int, count: int, avoid: Iterable[str] = ()) -> list[tuple[Turn, ...]]:
    """Exactly ``count`` filler turns, grouped into units that must not be split, none containing ``avoid``."""
    plan = FillerPlan(seed, avoid)
    units: list[tuple[Turn, ...]] = []
    left = count
    while left > 0:
        unit = plan.unit(left)
        units.append(unit)
        left -= len(unit)
    return units
