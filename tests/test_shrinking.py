"""Shrink quality: failures reduce to the smallest skeleton the parameters allow."""

from hypothesis import find, settings

from harness import FactKind, Role, Status
from strategies import facts, make_literal, transcripts


def test_long_transcript_with_a_prohibition_shrinks_to_one_plain_fact():
    found = find(
        transcripts(min_turns=1000, max_turns=5000, max_facts=8),
        lambda t: len(t.turns) >= 1000 and any(f.kind is FactKind.PROHIBITION for f in t.facts),
        settings=settings(max_examples=500, database=None),
    )
    assert len(found.turns) == 1000  # the fewest turns the parameters allow
    assert len(found.facts) == 1  # one fact, no companion binding
    (fact,) = found.facts
    assert fact.kind is FactKind.PROHIBITION and fact.fate.status is Status.OPEN
    assert fact.origin_turn == 0  # earliest position
    assert fact.literals == (make_literal("bucket", 0),)  # simplest literal
    assert found.turns[0].role is Role.USER
    assert found.turns[0].text == f"Never use {fact.literals[0]}."  # first, plainest phrasing
    assert found.seed == 0
    assert found.compaction_points == (1,)


def test_threshold_change_shrinks_to_the_fact_and_its_supersession():
    found = find(
        transcripts(min_turns=50, max_turns=3000, max_facts=8,
                    facts=facts(kinds=[FactKind.THRESHOLD, FactKind.SUPERSESSION])),
        lambda t: any(f.kind is FactKind.SUPERSESSION for f in t.facts),
        settings=settings(max_examples=500, database=None),
    )
    assert len(found.turns) == 50
    assert [f.kind for f in found.facts] == [FactKind.THRESHOLD, FactKind.SUPERSESSION]
    threshold, change = found.facts
    assert threshold.fate.status is Status.SUPERSEDED and threshold.fate.by == change.id
    assert change.origin_turn == threshold.fate.turn == threshold.origin_turn + 1  # fate_delay shrank to 0
    assert change.detail("old") == threshold.literals[1] and change.literals[1] != threshold.literals[1]
