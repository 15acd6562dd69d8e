"""The window-edge move: a failure that depends on where a compactor's window ends (a tool result kept
without its call, a fact a later round pushed out), shrunk to the turns it is about at the budget that
puts the edge among them again.

Delta debugging at a fixed budget removes turns one by one and cannot make the edge fall in the same
place; this move merges or drops everything but the failure's subject and searches the budget (or the
length of the merged run before the subject) by bisection, steered by which subject turns the last
round still held.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from harness._base._model import Transcript, Turn
from harness._app.judging._judge import Evaluation, Violation
from harness._app.shrinking._moves import fact_units, ledger_turns, shortened, size, without_turns
from harness.oracles import select

__all__ = ["subject_window", "Shrinker", "SUBJECT_WINDOW_CHECKS", "FILLER_SEARCH_CHECKS"]

class Shrinker(Protocol):
    """What this move uses of ``harness._app.shrinking._shrinker.Shrinker``: the best failing transcript so
    far and its budget, the checks made, and the questions it can answer."""

    key: tuple[str, str | None]
    pairs: bool  # removing a turn takes its tool call's other half along
    transcript: Transcript
    violation: Violation
    budget: int
    checks: int
    merged: dict[Turn, int]  # merged filler turn -> how many source turns it stands for

    def evaluate(self, transcript: Transcript, budget: int | None = None) -> Evaluation: ...

    def still_fails(self, transcript: Transcript, budget: int | None = None) -> bool: ...

    def subject(self, transcript: Transcript) -> frozenset[int]: ...

    def budget_floor(self, transcript: Transcript | None = None) -> int: ...

    def merged_version(self, transcript: Transcript, keep: frozenset[int] = frozenset()) -> Transcript | None: ...


#: Candidates at most this many turns long are left to the other moves.
SMALL_ENOUGH = 4
_FRAMING_CHARS = 16  # what a message costs beyond its text (role, separators), in characters, about

# What a budget search for a window's edge found (``_edge_search``).
_FOUND, _HELD_AT_FLOOR, _NOT_FOUND = "found", "held at the lowest budget", "not found"

#: Checks the subject-window move may spend in all: a check of each candidate at the budget, then a
#: bisection over the budget (about log2 of the budget over a turn's tokens) for one that kept too much.
SUBJECT_WINDOW_CHECKS = 24

#: ... of which the search for a merged run's length may spend this many (bisecting a run of thousands of
#: characters to the few that move a window's edge; a window that keeps the newest tokens wastes them).
FILLER_SEARCH_CHECKS = 12


def subject_window(shrinker: Shrinker) -> None:
    """The turns the failure is about with everything else merged or gone, at the budget that puts
    a window's edge among them again: a tool result kept without its call, a fact a later round
    pushed out. Candidates, in one round: the subject alone, then with the filler before it, after
    it, both; in two (a round right after the subject, one at the end: a loss between rounds, an
    effect after a drop) with the filler after it, and both; a session invariant's first. Each is checked
    at the budget; one whose last round still held all of the subject is searched lower
    (``_edge_search``), and one with a single merged run is tried with that run cut to length
    (``_filler_search``). A window edge found this way costs a few small checks where delta debugging
    at a fixed budget removes turns one by one and cannot make the edge fall in the same place."""
    transcript = shrinker.transcript
    subject = shrinker.subject(transcript)
    if not subject or len(transcript.turns) <= SMALL_ENOUGH:
        return
    source = frozenset(transcript.turns)
    if not any(turn in source for turn in shrinker.evaluate(transcript).last_messages):
        return  # the compactor rewrites (a model's summary): no window's edge to search for
    first, last = min(subject), max(subject)
    others = set(ledger_turns(transcript)) - set(fact_units(transcript).get(shrinker.violation[0].fact_id, subject))
    others -= subject
    n = len(transcript.turns)
    before, after = set(range(first)), set(range(last + 1, n))
    one_round = [(before | after, False), (after, False), (before, False), (set(), False)]
    split_rounds = [(before, True), (set(), True)] if after else []
    # A session invariant (a loss between rounds, an effect after a drop) needs a round after the
    # subject and one later; a per-compaction one shows in one round.
    session = any(o.id == shrinker.key[0] and o.scope == "session" for o in select())
    spent = shrinker.checks
    for drop, two_rounds in (split_rounds + one_round if session else one_round + split_rounds):
        rest = without_turns(transcript, others | drop, pairs=shrinker.pairs)
        candidate = _subject_candidate(shrinker, rest, two_rounds)
        if candidate is None or size(candidate) >= size(shrinker.transcript):
            continue
        edge = _edge_search(shrinker, candidate, SUBJECT_WINDOW_CHECKS - (shrinker.checks - spent))
        if edge is _FOUND:
            return
        # A window that held the subject even at the lowest budget dropped the run before it instead
        # (it keeps the oldest tokens): the run's length is what moves its edge. Only for a failure
        # one round shows: for a session invariant's candidates each try replays more rounds.
        allowance = min(FILLER_SEARCH_CHECKS, SUBJECT_WINDOW_CHECKS - (shrinker.checks - spent))
        if edge is _HELD_AT_FLOOR and not session and _filler_search(shrinker, candidate, allowance):
            return
        if shrinker.checks - spent >= SUBJECT_WINDOW_CHECKS:
            return


def _subject_candidate(shrinker: Shrinker, transcript: Transcript, two_rounds: bool) -> Transcript | None:
    """``transcript`` with the filler around its subject merged, a round at its end, and with
    ``two_rounds`` one right after the subject too."""
    unpinned = dataclasses.replace(transcript, compaction_points=())
    subject = shrinker.subject(unpinned)
    if not subject:
        return None
    merged = shrinker.merged_version(unpinned, subject) or unpinned
    subject = shrinker.subject(merged)
    end = len(merged.turns)
    points = tuple(sorted({max(subject) + 1, end})) if two_rounds else (end,)
    return dataclasses.replace(merged, compaction_points=points)


def _edge_search(shrinker: Shrinker, candidate: Transcript, allowance: int) -> str:
    """Whether ``candidate`` fails at the budget or, if its last round held every turn of the
    subject there (the window is too wide) and did not at the lowest budget, at a budget between
    found by bisection: a round that held them all means lower, one that held none means higher,
    one that held some and did not fail means the window is not this failure's cause (stop).
    ``_FOUND``, ``_HELD_AT_FLOOR`` (the lowest budget held all of it too) or ``_NOT_FOUND``."""
    if allowance <= 0:
        return _NOT_FOUND
    subject = [candidate.turns[i] for i in sorted(shrinker.subject(candidate))]
    start = shrinker.checks

    def held(budget: int) -> int:
        kept = shrinker.evaluate(candidate, budget).last_messages
        return sum(turn in kept for turn in subject)

    high = shrinker.budget
    if shrinker.still_fails(candidate, high):
        return _FOUND
    if held(high) != len(subject):
        return _NOT_FOUND
    floor = shrinker.budget_floor(candidate)
    if floor >= high:
        return _NOT_FOUND
    if shrinker.still_fails(candidate, floor):
        return _FOUND
    if held(floor) == len(subject):
        return _HELD_AT_FLOOR  # no window edge at any budget falls among these turns
    low = floor
    while high - low > 1 and shrinker.checks - start < allowance:
        middle = (low + high) // 2
        if shrinker.still_fails(candidate, middle):
            return _FOUND
        count = held(middle)
        if count == len(subject):
            high = middle
        elif count == 0:
            low = middle
        else:
            return _NOT_FOUND
    return _NOT_FOUND


def _filler_search(shrinker: Shrinker, candidate: Transcript, allowance: int) -> bool:
    """Whether ``candidate``, with its one merged turn cut to some length, fails at the budget: a
    bisection over that length (in characters), steered by the last round: one that held the run
    and all of the subject means more filler; one that held none of the subject, or not the run
    (too long to keep at all), less. The budget search cannot find a window that keeps the oldest
    tokens: below the run's own length such a window drops the run, not the subject."""
    merged = [i for i, turn in enumerate(candidate.turns) if turn in shrinker.merged]
    if len(merged) != 1 or allowance <= 0:
        return False
    index, start = merged[0], shrinker.checks
    turn = candidate.turns[index]
    subject = [candidate.turns[i] for i in sorted(shrinker.subject(candidate))]
    # A failing length lies between one that held everything and one that did not hold the subject,
    # as wide as the shortest subject turn: narrower than half that, the search has missed nothing.
    resolution = max(1, (min(len(t.text) for t in subject) + _FRAMING_CHARS) // 2)
    low, high = 0, len(turn.text)
    while high - low > resolution and shrinker.checks - start < allowance:
        middle = (low + high) // 2
        shorter = shortened(turn, middle / len(turn.text))
        if shorter is None:
            return False
        shrinker.merged[shorter] = shrinker.merged[turn]
        turns = candidate.turns[:index] + (shorter,) + candidate.turns[index + 1:]
        trial = dataclasses.replace(candidate, turns=turns)
        if shrinker.still_fails(trial):
            return True
        kept = shrinker.evaluate(trial).last_messages
        count = sum(t in kept for t in subject)
        if count == len(subject) and shorter in kept:
            low = middle  # room for all of it: more filler
        elif count == 0 or shorter not in kept:
            high = middle  # the subject pushed out, or the run too long to keep at all: less
        else:
            return False
    return False
