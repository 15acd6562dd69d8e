"""A domain minimizer: delta debugging over a transcript's turns.

Hypothesis shrinks the skeletons it generated; this reduces any failing
transcript, including one a user hands in as JSON, to the few turns the
failure needs. Removing a turn keeps the ledger true: a fact whose origin is
removed goes, a fact whose fate turn is removed becomes open again.
"""

from __future__ import annotations

from collections.abc import Callable

from harness._base._model import Fate, Transcript

__all__ = ["without_turns", "minimize"]


def without_turns(transcript: Transcript, drop: set[int]) -> Transcript:
    """The transcript minus the turns at ``drop``, with the ledger and cut points re-indexed."""
    keep = [i for i in range(len(transcript.turns)) if i not in drop]
    new_index = {old: new for new, old in enumerate(keep)}
    facts = []
    for fact in transcript.facts:
        if fact.origin_turn not in new_index:
            continue
        fate = fact.fate
        if fate.turn is not None:
            fate = Fate(fate.status, new_index[fate.turn], fate.by) if fate.turn in new_index else Fate()
        facts.append(type(fact)(fact.id, fact.kind, fact.literals, new_index[fact.origin_turn], fact.polarity, fate,
                                fact.details))
    points = sorted({sum(1 for i in keep if i < p) for p in transcript.compaction_points} - {0})
    return Transcript(tuple(transcript.turns[i] for i in keep), tuple(facts), tuple(points), transcript.seed)


def minimize(
    transcript: Transcript,
    still_fails: Callable[[Transcript], bool],
    *,
    max_checks: int = 2000,
    on_check: Callable[[int, int], None] | None = None,
) -> tuple[Transcript, int]:
    """The smallest transcript found that ``still_fails``, and how many checks that took.

    Classic ddmin over turn indices: try dropping chunks, halving the chunk
    size when nothing can go, until single turns cannot be dropped.
    """
    current = transcript
    checks = 0
    chunks = 2
    while len(current.turns) > 1 and checks < max_checks:
        n = len(current.turns)
        size = max(1, n // chunks)
        removed = False
        for start in range(0, n, size):
            drop = set(range(start, min(n, start + size)))
            if len(drop) == n:
                continue
            candidate = without_turns(current, drop)
            checks += 1
            if on_check is not None:
                on_check(checks, len(current.turns))
            if still_fails(candidate):
                current = candidate
                chunks = max(chunks - 1, 2)
                removed = True
                break
            if checks >= max_checks:
                break
        if not removed:
            if size == 1:
                break
            chunks = min(n, chunks * 2)
    return current, checks
