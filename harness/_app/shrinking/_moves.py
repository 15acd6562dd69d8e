"""Transcript reductions that keep the ledger true: the domain minimizer's moves.

Hypothesis shrinks the skeletons it generated; these reduce any failing
transcript, including one a user hands in as JSON. Each reduction returns a smaller
candidate; whether it still fails is the caller's question (``ddmin`` and ``minimize``
search with the predicate they are given; ``harness._app.shrinking._shrinker`` asks
the summarizer).

- ``without_turns``: remove turns. A fact whose origin is removed goes; a fact
  whose ending turn is removed becomes open again.
- ``fact_units``: the turns each fact lives in (its origin, the turn that ends
  it, the facts that end or target it, the results of the calls those turns
  make), so facts are removed whole, never half a retraction.
- ``coalesce``: merge each run of turns no fact lives in into one turn of the
  same text, so a failure that needs 1,800 tokens of unrelated work needs one
  turn, not 150.
- ``shortened``: the same turn with the end of its text cut off.
- ``ddmin``: delta debugging over any list of items.
- ``size``: how shrinking compares two transcripts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from harness._base._model import Effect, Fate, Role, Transcript, Turn

__all__ = ["without_turns", "prefix", "fact_units", "ledger_turns", "call_turns", "coalesce", "shortened", "ddmin",
           "minimize", "size", "with_call_pairs", "thinned"]

T = TypeVar("T")


def without_turns(transcript: Transcript, drop: set[int], *, pairs: bool = True) -> Transcript:
    """The transcript minus the turns at ``drop``, with the ledger and cut points re-indexed.

    With ``pairs`` a tool call goes with its results and a result with its call (and that call's
    other results), so what is left is a chat history a provider would accept: no result without its
    call, no finished call without its result. Only a failure about pairing itself removes one half.
    """
    if pairs:
        drop = with_call_pairs(transcript, set(drop))
    keep = [i for i in range(len(transcript.turns)) if i not in drop]
    return _rebuilt(transcript, [[i] for i in keep], [transcript.turns[i] for i in keep])


def prefix(transcript: Transcript, boundary: int) -> Transcript:
    """The first ``boundary`` turns: what a session had seen when a round at ``boundary`` compacted (a
    call whose result came later is in flight there, as it was then)."""
    return without_turns(transcript, set(range(boundary, len(transcript.turns))), pairs=False)


def _rebuilt(transcript: Transcript, groups: list[list[int]], turns: list[Turn]) -> Transcript:
    """New turns, the i-th standing for the old turns ``groups[i]``; the ledger follows each fact's
    turns to the new turn that holds them, and a cut point to the first new turn boundary after it.

    Only a group of one old turn may hold a fact's origin or ending (``coalesce`` keeps those turns
    alone); a fact whose origin is gone is dropped, one whose ending is gone becomes open.
    """
    new_index = {group[0]: new for new, group in enumerate(groups) if len(group) == 1}
    facts = []
    for fact in transcript.facts:
        if fact.origin_turn not in new_index:
            continue
        fate = fact.fate
        if fate.turn is not None:
            fate = Fate(fate.status, new_index[fate.turn], fate.by) if fate.turn in new_index else Fate()
        facts.append(type(fact)(fact.id, fact.kind, fact.literals, new_index[fact.origin_turn], fact.polarity, fate,
                                fact.details))
    # A boundary p (after old turn p-1) becomes the boundary after every new turn that starts before it.
    firsts = [group[0] for group in groups]
    points = sorted({sum(1 for first in firsts if first < p) for p in transcript.compaction_points} - {0})
    # An effect goes with its call's turn, and only while a fact that governs it is still there.
    kept_ids = {f.id for f in facts}
    effects = tuple(Effect(new_index[e.turn], e.call_id, e.action, governed)
                    for e in transcript.effects
                    if e.turn in new_index and (governed := tuple(f for f in e.governed_by if f in kept_ids)))
    return Transcript(tuple(turns), tuple(facts), tuple(points), transcript.seed, effects=effects,
                      consumers=transcript.consumers, tightenings=transcript.tightenings)


def fact_units(transcript: Transcript) -> dict[str, frozenset[int]]:
    """Per fact, the turns that must go with it: its origin and ending turns, those of every fact that
    ends or targets it (a retraction, a supersession), and both halves of any tool call among them."""
    by_id = {f.id: f for f in transcript.facts}
    linked: dict[str, set[str]] = {f.id: set() for f in transcript.facts}
    for fact in transcript.facts:
        for other in (fact.fate.by, fact.detail("target")):
            if other in by_id and other != fact.id:
                linked[fact.id].add(other)
                linked[other].add(fact.id)
    units = {}
    for fact in transcript.facts:
        seen, todo, turns = {fact.id}, [fact.id], set()
        while todo:
            f = by_id[todo.pop()]
            turns.add(f.origin_turn)
            if f.fate.turn is not None:
                turns.add(f.fate.turn)
            for other in linked[f.id] - seen:
                if by_id[other].detail("target") == f.id or f.fate.by == other:  # what ends it comes along
                    seen.add(other)
                    todo.append(other)
        units[fact.id] = frozenset(with_call_pairs(transcript, turns))
    return units


def ledger_turns(transcript: Transcript) -> frozenset[int]:
    """Every turn some fact lives in, with both halves of the tool calls among them."""
    turns: set[int] = set()
    for unit in fact_units(transcript).values():
        turns |= unit
    return frozenset(turns)


def call_turns(transcript: Transcript, call_id: str) -> frozenset[int]:
    """The turns that make the call ``call_id`` or answer it."""
    return frozenset(i for i, t in enumerate(transcript.turns)
                     if t.tool_call_id == call_id or any(c.id == call_id for c in t.tool_calls))


def _pieces(turn: Turn) -> frozenset[tuple[str, str]]:
    """What a message is made of, as a provider shape may regroup it: its text, each call, the call it answers."""
    pieces = {("call", c.id) for c in turn.tool_calls}
    if turn.text.strip():
        pieces.add((turn.role.value, turn.text))
    if turn.tool_call_id is not None:
        pieces.add(("answer", turn.tool_call_id))
    return frozenset(pieces)


def source_turns_of(transcript: Transcript, messages: Sequence[Turn], end: int) -> list[int] | None:
    """The indices of the source turns (before ``end``) that ``messages`` were made of, in order, or None
    when a message holds anything the source did not (a summary). A message may be one source turn, or
    several read back as one (the Responses shape groups an assistant's text with the calls after it),
    or part of one (a window that cut between the calls of one parallel step): its source turn counts."""
    turns, found, j = transcript.turns, [], 0
    for message in messages:
        wanted = _pieces(message)
        while j < end and turns[j] != message and not (_pieces(turns[j]) & wanted):
            j += 1
        if j >= end:
            return None
        if turns[j] == message:
            found.append(j)
            j += 1
            continue
        while j < end and wanted and _pieces(turns[j]) & wanted:
            wanted -= _pieces(turns[j])
            found.append(j)
            j += 1
        if wanted:
            return None
    return found


def with_call_pairs(transcript: Transcript, turns: set[int]) -> set[int]:
    """``turns`` plus the answers to the calls they make and the calls their answers answer, and so on."""
    calls = {c.id: i for i, t in enumerate(transcript.turns) for c in t.tool_calls}
    answers: dict[str, list[int]] = {}
    for i, t in enumerate(transcript.turns):
        if t.tool_call_id is not None:
            answers.setdefault(t.tool_call_id, []).append(i)
    out, todo = set(turns), list(turns)
    while todo:  # to a fixpoint: a call turn reached through one result brings its other calls' results too
        turn = transcript.turns[todo.pop()]
        linked = [j for call in turn.tool_calls for j in answers.get(call.id, ())]
        if turn.tool_call_id in calls:
            linked.append(calls[turn.tool_call_id])
        for j in linked:
            if j not in out:
                out.add(j)
                todo.append(j)
    return out


def coalesce(transcript: Transcript, keep: frozenset[int] = frozenset()) -> tuple[Transcript, dict[int, tuple[int, ...]]]:
    """Merge every run of two or more turns outside ``keep`` and the ledger's turns into one turn
    carrying their text.

    Runs stop at cut points, so every round compacts at the same place.
    Returns the new transcript and, per merged turn's new index, the old turns it stands for.
    ``keep`` is widened to both halves of every tool call it touches, so no call loses its answer.
    The merged turn takes the role most of its turns had (a tool result counts as the assistant's
    work): the text and its length are what a compactor sees; which message said it is not.
    """
    points = set(transcript.compaction_points)
    effects = {e.turn for e in transcript.effects}
    keep = frozenset(with_call_pairs(transcript, set(keep) | effects)) \
        | ledger_turns(transcript)
    while True:  # a call and its result are merged together or kept apart, never one of each
        groups = _runs(len(transcript.turns), keep, points)
        split = _split_pairs(transcript, groups)
        if not split:
            break
        keep |= split
    turns, merged = [], {}
    for new, group in enumerate(groups):
        if len(group) == 1:
            turns.append(transcript.turns[group[0]])
            continue
        parts = [transcript.turns[i] for i in group]
        turns.append(Turn(_majority_role(parts), "\n\n".join(_as_text(t) for t in parts)))
        merged[new] = tuple(group)
    if not merged:
        return transcript, {}
    return _rebuilt(transcript, groups, turns), merged


def _runs(n: int, keep: frozenset[int], points: set[int]) -> list[list[int]]:
    """The turns in groups: each kept turn alone, every other run of turns together. A run never spans a
    cut point: the rounds keep firing where they did, on the same turns."""
    groups: list[list[int]] = []
    for i in range(n):
        if i in keep or not groups or groups[-1][0] in keep or i in points:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def _split_pairs(transcript: Transcript, groups: list[list[int]]) -> frozenset[int]:
    """Both turns of each tool call whose halves fall in different groups, one of them merged: merging
    it would leave the other half without its pair."""
    group_of = {i: n for n, group in enumerate(groups) for i in group}
    merged = {n for n, group in enumerate(groups) if len(group) > 1}
    calls = {c.id: i for i, t in enumerate(transcript.turns) for c in t.tool_calls}
    out: set[int] = set()
    for i, turn in enumerate(transcript.turns):
        j = calls.get(turn.tool_call_id) if turn.tool_call_id is not None else None
        if j is not None and group_of[i] != group_of[j] and {group_of[i], group_of[j]} & merged:
            out |= {i, j}
    return frozenset(out)


def _as_text(turn: Turn) -> str:
    calls = "".join(f"\n{c.name}({c.arguments})" for c in turn.tool_calls)
    return turn.text + calls


def _majority_role(turns: Sequence[Turn]) -> Role:
    votes = {Role.USER: 0, Role.ASSISTANT: 0}
    for t in turns:
        votes[Role.USER if t.role in (Role.USER, Role.SYSTEM) else Role.ASSISTANT] += 1
    return Role.USER if votes[Role.USER] > votes[Role.ASSISTANT] else Role.ASSISTANT


def shortened(turn: Turn, share: float) -> Turn | None:
    """``turn`` keeping about ``share`` of its text (cut at a line or word break), or None if that
    would leave it unchanged or empty. Only for turns without tool calls."""
    text = turn.text
    cut = int(len(text) * share)
    if cut <= 0 or cut >= len(text) or turn.tool_calls or turn.tool_call_id is not None:
        return None
    at = max(text.rfind("\n", 0, cut), text.rfind(" ", 0, cut))
    cut = at if at > 0 else cut
    return Turn(turn.role, text[:cut].rstrip())


def ddmin(items: Sequence[T], still_fails: Callable[[list[T]], bool], *, max_checks: int = 2000,
          on_check: Callable[[int, int], None] | None = None) -> tuple[list[T], int]:
    """The smallest sublist found for which ``still_fails`` holds, and how many checks that took.

    Classic delta debugging: try dropping chunks, halving the chunk size when
    nothing can go, until no single item can be dropped. ``items`` itself is
    assumed to fail and is never checked.
    """
    current = list(items)
    checks = 0
    chunks = 2
    while len(current) > 1 and checks < max_checks:
        n = len(current)
        size = max(1, n // chunks)
        removed = False
        for start in range(0, n, size):
            if size >= n:
                continue
            candidate = current[:start] + current[start + size:]
            checks += 1
            if on_check is not None:
                on_check(checks, n)
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


def minimize(transcript: Transcript, still_fails: Callable[[Transcript], bool], *, max_checks: int = 2000,
             on_check: Callable[[int, int], None] | None = None, pairs: bool = True) -> tuple[Transcript, int]:
    """ddmin over a transcript's turns: the smallest failing transcript found, and the checks it took
    (``pairs`` as for ``without_turns``)."""
    n = len(transcript.turns)

    def fails(kept: list[int]) -> bool:
        return still_fails(without_turns(transcript, set(range(n)) - set(kept), pairs=pairs))

    kept, checks = ddmin(range(n), fails, max_checks=max_checks, on_check=on_check)
    return without_turns(transcript, set(range(n)) - set(kept), pairs=pairs), checks


def size(transcript: Transcript) -> tuple[int, int]:
    """How large a transcript is, as shrinking compares them: turns, then characters."""
    return len(transcript.turns), sum(len(t.text) for t in transcript.turns)


def thinned(transcript: Transcript, keep: frozenset[int]) -> Transcript | None:
    """``transcript`` without every other turn outside ``keep`` (a tool call going with its results), or None
    when there is none to drop: the session at half its length, its obligations and their places in it
    kept, so a compactor given half the budget meets the same failure in the same round."""
    kept = with_call_pairs(transcript, set(keep))  # and the other halves of their tool calls
    free = [i for i in range(len(transcript.turns)) if i not in kept]
    drop = with_call_pairs(transcript, set(free[1::2]))
    return without_turns(transcript, drop, pairs=False) if drop else None
