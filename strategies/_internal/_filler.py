"""Cheap, deterministic filler turns: the ordinary work between obligations.

The text comes from ``_tools`` and ``_worklog`` (code, diffs, test runs, traces,
shell output, chatter, full of numbers and identifiers), rendered once into fixed
pools and picked with a ``random.Random`` seeded per transcript, so thousands of
turns cost a few milliseconds and the same seed always gives the same text.

Two pools of tool results: the classic one (mostly a screenful, what
``transcripts()`` without a budget has always drawn), and the sized one, whose
results are as big as a production session's (``_tools.sized_tool_unit``: tens to
tens of thousands of tokens, heavy-tailed), cut at an ``output_cap`` a session's
window sets, as a runtime cuts a tool's output to fit.

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
from harness._base._tokens import count_tokens, message_tokens
from harness._base._wholetoken import has_token
from harness.strategies._internal import _worklog as W
from harness.strategies._internal._tools import sized_tool_unit, tool_unit

__all__ = ["FillerPlan", "filler_units", "pool_texts", "unit_tokens"]

_POOL_SIZE = 1024
_SIZED_POOL_SIZE = 2048
_CHAT_POOL_SIZE = 768
# The share of filler units that are a tool call and its result: in a sized session, as in a real agent's, most.
_CALL_SHARE, _SIZED_CALL_SHARE = 0.4, 0.55
# What the agent says beside a call, sometimes: most calls carry no text at all.
_CALL_NOTES = ("", "", "", "Let me check.", "Looking at this next.", "Running that now.", "One moment.")


@functools.cache
def _pools() -> tuple[tuple[tuple[str, str, str], ...], tuple[str, ...], tuple[str, ...]]:
    """(tool units, user lines, assistant lines), rendered once per process from fixed seeds (immutable)."""
    tools_rng, users_rng, assistants_rng = random.Random(1), random.Random(2), random.Random(3)
    tools = tuple(tool_unit(tools_rng) for _ in range(_POOL_SIZE))
    users = tuple(W.user_line(users_rng) for _ in range(_CHAT_POOL_SIZE))
    assistants = tuple(W.assistant_line(assistants_rng) for _ in range(_CHAT_POOL_SIZE))
    return tools, users, assistants


@functools.cache
def _sized_pool() -> tuple[tuple[tuple[str, str, str], ...], tuple[int, ...]]:
    """The sized tool units and each result's tokens, rendered once per process from a fixed seed (about 0.15 s)."""
    rng = random.Random(4)
    units = tuple(sized_tool_unit(rng) for _ in range(_SIZED_POOL_SIZE))
    return units, tuple(count_tokens(result) for _, _, result in units)


@functools.lru_cache(maxsize=64)
def _within(cap: int) -> tuple[int, ...]:
    """The sized pool's entries whose result fits ``cap`` tokens (never none: the smallest are tens)."""
    _, tokens = _sized_pool()
    return tuple(i for i, t in enumerate(tokens) if t <= cap) or (min(range(len(tokens)), key=tokens.__getitem__),)


def pool_texts() -> Iterable[str]:
    """Every text the filler can emit (call arguments and results included): what tests check shapes on."""
    tools, users, assistants = _pools()
    for name, arguments, result in (*tools, *_sized_pool()[0]):
        yield name
        yield arguments
        yield result
    yield from users
    yield from assistants
    yield from _CALL_NOTES


@functools.lru_cache(maxsize=8192)
def _entries_with(literal: str) -> tuple[frozenset[int], ...]:
    """Indices of (tool, user, assistant, sized tool) pool entries that contain ``literal`` as a token."""
    tools, users, assistants = _pools()
    return (
        frozenset(i for i, (n, a, r) in enumerate(tools) if any(has_token(x, literal) for x in (n, a, r))),
        frozenset(i for i, text in enumerate(users) if has_token(text, literal)),
        frozenset(i for i, text in enumerate(assistants) if has_token(text, literal)),
        frozenset(i for i, (n, a, r) in enumerate(_sized_pool()[0]) if literal in r or literal in a
                  if any(has_token(x, literal) for x in (n, a, r))),
    )


def unit_tokens(unit: tuple[Turn, ...]) -> int:
    """What a filler unit adds to a context, as the session runner counts it."""
    return sum(message_tokens(turn) for turn in unit)


class FillerPlan:
    """Draws filler units from one seeded stream; not shared, not global.

    ``avoid`` holds literals no emitted turn may contain (the transcript's ledger):
    an entry that holds one is skipped for the next that does not. ``output_cap``
    (tokens, 0 for the classic pool) draws tool results from the sized pool, none
    over the cap.
    """

    __slots__ = ("_random", "_calls", "_pools", "_banned", "_sized", "_call_share")

    def __init__(self, seed: int, avoid: Iterable[str] = (), *, output_cap: int = 0):
        self._random = random.Random(seed).random
        self._calls = 0
        self._pools = _pools()
        self._sized = _within(output_cap) if output_cap else ()
        self._call_share = _SIZED_CALL_SHARE if output_cap else _CALL_SHARE
        banned: list[set[int]] = [set(), set(), set(), set()]
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

    def _tool(self) -> tuple[str, str, str]:
        if not self._sized:
            tools = self._pools[0]
            return tools[self._pick(0, len(tools))]
        k = self._pick_sized()
        return _sized_pool()[0][k]

    def _pick_sized(self) -> int:
        eligible, banned = self._sized, self._banned[3]
        at = int(self._random() * len(eligible))
        for step in range(len(eligible)):
            index = eligible[(at + step) % len(eligible)]
            if index not in banned:
                return index
        return eligible[at]  # every result that fits holds a literal: cannot happen with thousands of entries

    def unit(self, room: int) -> tuple[Turn, ...]:
        """One or two filler turns (a tool call and its result never split), at most ``room``."""
        rnd = self._random
        roll = rnd()
        _, users, assistants = self._pools
        if room >= 2 and roll < self._call_share:
            self._calls += 1
            name, arguments, result = self._tool()
            # Filler call ids share no shape with fact call ids ("call_" + 12 hex).
            call = ToolCall(f"fill-{self._calls:05d}", name, arguments)
            note = _CALL_NOTES[int(rnd() * len(_CALL_NOTES))]
            return (Turn(Role.ASSISTANT, note, (call,)), Turn(Role.TOOL, result, (), call.id))
        if roll < self._call_share + 0.3:
            return (Turn(Role.USER, users[self._pick(1, len(users))]),)
        return (Turn(Role.ASSISTANT, assistants[self._pick(2, len(assistants))]),)


def filler_units(seed: int, count: int, avoid: Iterable[str] = (), *, output_cap: int = 0,
                 tokens: int = 0) -> list[tuple[Turn, ...]]:
    """Filler units that must not be split, none containing ``avoid``: exactly ``count`` turns, or, with
    ``tokens``, units until they hold that many tokens (at most ``count`` turns)."""
    plan = FillerPlan(seed, avoid, output_cap=output_cap)
    units: list[tuple[Turn, ...]] = []
    left, held = count, 0
    while left > 0 and (not tokens or held < tokens):
        unit = plan.unit(left)
        units.append(unit)
        left -= len(unit)
        if tokens:
            held += unit_tokens(unit)
    return units
