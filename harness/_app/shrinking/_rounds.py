"""Moves on a session's rounds: restart it at the round that failed, or halve it with its budget.

Every check replays each round a session makes, so a failure many rounds in costs a call a round until
the session is shorter. These moves make it shorter without losing where the failure shows: a restart
from the request of the failing round (for a compactor that keeps messages verbatim, a transcript of
source turns), and halving, which keeps each fact's place in the window and the rounds firing at the
same places while the budget shrinks with the tokens that went.
"""

from __future__ import annotations

import dataclasses

from harness._base._model import Tightening, Transcript, Turn, round_budget
from harness._app.shrinking._moves import ledger_turns, size, source_turns_of, thinned, with_call_pairs, without_turns
from harness._app.shrinking._window import Shrinker

__all__ = ["RESTART_SAVES_ROUNDS", "THIN_ABOVE", "from_failing_request", "thin"]

#: A restart from the last request that held the failing fact is tried only when it drops at least this
#: many rounds before it (every later check would replay them); from an early round it saves a few calls
#: and can lead the moves after it to a costlier path (head_tail at 400 turns: 103 calls without, 298 with).
RESTART_SAVES_ROUNDS = 8

#: Sessions longer than this many turns are halved (``thin``) while the failure still shows.
THIN_ABOVE = 48


def from_failing_request(shrinker: Shrinker) -> None:
    """A failure several rounds into a session, from a compactor that keeps messages verbatim, is
    the failing round's own request compacted once: the source turns that request held, in order,
    then the turns after it (an effect the failure is about happens there), with the rounds after
    it where they were. One check (the cache answers it when the requests are the same) instead of
    shrinking a session of a hundred rounds, each check of which costs a call a round. A failure
    that needs the round before it (a ledger lost between two compactions) restarts from that
    round's request instead, and one that shows rounds after its fact was dropped (an effect runs
    later) from the last request that held the turn stating it. A request holding a message the
    source does not (a summary) is not this move's case."""
    _, index, boundary, _ = shrinker.violation
    if not index or boundary is None:
        return
    ev = shrinker.evaluate(shrinker.transcript)
    starts = {index: ev.contexts.get(shrinker.key), index - 1: ev.prior.get(shrinker.key)}
    held = ev.holding.get(shrinker.key)
    if held is not None and held[0] >= RESTART_SAVES_ROUNDS:
        starts.setdefault(*held)
    for start, messages in starts.items():
        candidate = _restarted(shrinker, ev.boundaries, start, messages) if messages else None
        if candidate is not None and shrinker.still_fails(candidate):
            return


def _restarted(shrinker: Shrinker, boundaries: tuple[int, ...], start: int,
               messages: tuple[Turn, ...]) -> Transcript | None:
    """The session from round ``start`` on, begun afresh: the source turns round ``start`` was given
    (None if it was given anything else), the turns after them, the later rounds where they were,
    and the budget each of those rounds had."""
    if start >= len(boundaries):
        return None
    boundary = boundaries[start]
    kept = source_turns_of(shrinker.transcript, messages, boundary)
    if kept is None:
        return None
    dropped = set(range(boundary)) - set(kept)
    if not dropped and start == 0:
        return None
    if shrinker.pairs:  # the request may hold half a tool call (a compactor cut between them): that half goes too
        dropped = with_call_pairs(shrinker.transcript, dropped)
    points = tuple(b - sum(1 for d in dropped if d < b) for b in boundaries[start:])
    shares = [round_budget(shrinker.transcript, 1000, r) for r in range(start, len(boundaries))]
    tightenings = tuple(Tightening(r, share) for r, share in enumerate(shares)
                        if share != (shares[r - 1] if r else 1000))
    return dataclasses.replace(without_turns(shrinker.transcript, dropped, pairs=False), compaction_points=points,
                               tightenings=tightenings)


def thin(shrinker: Shrinker) -> None:
    """Halve a long session while the failure shows: every other turn it is not about goes, and the
    budget shrinks by the tokens that went. Positions in a window and the rounds that fire scale with
    it, so a failure of thousands of turns becomes one of dozens in a few checks of as many rounds."""
    while len(shrinker.transcript.turns) > THIN_ABOVE:
        transcript = shrinker.transcript
        candidate = thinned(transcript, ledger_turns(transcript) | shrinker.subject(transcript))
        if candidate is None:
            return
        share = size(candidate)[1] / max(1, size(transcript)[1])
        budget = max(shrinker.budget_floor(candidate), round(shrinker.budget * share))
        if budget >= shrinker.budget or not shrinker.still_fails(candidate, budget):
            return
