"""Properties of the generators themselves: the ledger is true to the turns."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import FactKind, InvalidArgument, Role, Status, dumps, live_facts, loads
from strategies import (
    MAX_TURNS_PER_FACT,
    PRIMARY_KINDS,
    FactSpec,
    Skeleton,
    expand,
    facts,
    make_literal,
    skeleton_from_dict,
    skeleton_to_dict,
    skeletons,
    transcripts,
)
from strategies._internal._expand import event_turn_count
from strategies._internal._filler import filler_units
from strategies._internal._literals import CATEGORIES

_DIGIT_OR_UNDERSCORE = re.compile(r"[0-9_]")


def _turn_mentions(turn, literal: str) -> bool:
    if literal in turn.text:
        return True
    return any(literal in (c.id, c.name) or literal in c.arguments for c in turn.tool_calls)


def _filler_indices(transcript, skeleton):
    """Indices of filler turns, found by matching the seeded filler stream as a subsequence."""
    filler = [t for unit in filler_units(skeleton.seed, len(transcript.turns) - event_turn_count(skeleton)) for t in unit]
    out, j = [], 0
    for i, turn in enumerate(transcript.turns):
        if j < len(filler) and turn == filler[j]:
            out.append(i)
            j += 1
    assert j == len(filler), "the filler stream must appear, in order, in the transcript"
    return out


@given(st.sampled_from(sorted(CATEGORIES)), st.integers(0, 2**16 - 1))
def test_every_literal_has_a_digit_or_underscore(category, seed):
    literal = make_literal(category, seed)
    assert _DIGIT_OR_UNDERSCORE.search(literal), literal
    assert literal == make_literal(category, seed)


@given(st.integers(0, 2**32 - 1), st.integers(0, 300))
def test_filler_text_has_no_digit_or_underscore(seed, count):
    units = filler_units(seed, count)
    assert sum(len(u) for u in units) == count
    for unit in units:
        for turn in unit:
            assert not _DIGIT_OR_UNDERSCORE.search(turn.text), turn.text
        if len(unit) == 2:  # a tool call and its result stay together
            assert unit[1].tool_call_id == unit[0].tool_calls[0].id


@settings(max_examples=150)
@given(skeletons(min_turns=10, max_turns=600, max_facts=10))
def test_literals_appear_verbatim_in_their_origin_turn(skeleton):
    transcript = expand(skeleton)
    for fact in transcript.facts:
        origin = transcript.turns[fact.origin_turn]
        for literal in fact.literals:
            assert _turn_mentions(origin, literal), (fact, origin)


@settings(max_examples=150)
@given(skeletons(min_turns=10, max_turns=600, max_facts=10))
def test_filler_never_contains_an_obligation_literal(skeleton):
    transcript = expand(skeleton)
    literals = {lit for f in transcript.facts for lit in f.literals}
    for i in _filler_indices(transcript, skeleton):
        for literal in literals:
            assert not _turn_mentions(transcript.turns[i], literal), (i, literal)


def _ended_before(transcript, fact, boundary) -> bool:
    """Whether the turns themselves (not the ledger) show the fact ended before ``boundary``."""
    turns = transcript.turns[:boundary]
    if fact.kind is FactKind.IN_FLIGHT_CALL:
        return any(t.role is Role.TOOL and t.tool_call_id == fact.literals[0] for t in turns)
    if fact.fate.status is Status.OPEN:
        return False
    return fact.fate.turn < boundary


@settings(max_examples=150)
@given(skeletons(min_turns=10, max_turns=400, max_facts=8), st.data())
def test_live_facts_match_what_the_turns_show(skeleton, data):
    transcript = expand(skeleton)
    by_id = {f.id: f for f in transcript.facts}
    for fact in transcript.facts:
        if fact.fate.status is Status.OPEN:
            continue
        ending = transcript.turns[fact.fate.turn]
        if fact.fate.status is Status.RESOLVED and fact.kind is FactKind.IN_FLIGHT_CALL:
            assert ending.tool_call_id == fact.literals[0]
        else:
            assert fact.literals[0] in ending.text, (fact, ending)
        if fact.fate.status in (Status.RETRACTED, Status.SUPERSEDED):
            event = by_id[fact.fate.by]
            assert event.origin_turn == fact.fate.turn and event.detail("target") == fact.id
    n = len(transcript.turns)
    for boundary in data.draw(st.lists(st.integers(0, n), min_size=1, max_size=5)):
        expected = {
            f.id for f in transcript.facts if f.origin_turn < boundary and not _ended_before(transcript, f, boundary)
        }
        assert {f.id for f in live_facts(transcript, boundary)} == expected


@settings(max_examples=60)
@given(skeletons(min_turns=10, max_turns=800))
def test_same_skeleton_gives_the_same_transcript(skeleton):
    assert expand(skeleton) == expand(skeleton)
    assert dumps(expand(skeleton)) == dumps(expand(skeleton))


@settings(max_examples=60)
@given(skeletons(min_turns=10, max_turns=800))
def test_json_round_trips_are_exact(skeleton):
    transcript = expand(skeleton)
    assert loads(dumps(transcript)) == transcript
    text = json.dumps(skeleton_to_dict(skeleton))
    assert skeleton_from_dict(json.loads(text)) == skeleton
    assert expand(skeleton_from_dict(json.loads(text))) == transcript


@settings(max_examples=60)
@given(st.data())
def test_lengths_stay_within_bounds(data):
    low = data.draw(st.integers(1, 3000))
    high = data.draw(st.integers(max(low, 3 * MAX_TURNS_PER_FACT), 5000))
    transcript = data.draw(transcripts(min_turns=low, max_turns=high, min_facts=0, max_facts=3))
    assert low <= len(transcript.turns) <= high
    assert all(0 < p <= len(transcript.turns) for p in transcript.compaction_points)


def test_five_thousand_turns_are_really_produced():
    skeleton = Skeleton(seed=3, length=5000, facts=())
    assert len(expand(skeleton).turns) == 5000


@settings(max_examples=40)
@given(st.data())
def test_kinds_restrict_the_mix(data):
    kinds = data.draw(st.lists(st.sampled_from(PRIMARY_KINDS), min_size=1, max_size=3, unique=True))
    spec = data.draw(facts(kinds=kinds))
    assert spec.kind in kinds
    assert spec.fate in (Status.OPEN, Status.FULFILLED, Status.RESOLVED)


@pytest.mark.parametrize("event", [FactKind.RETRACTION, FactKind.SUPERSESSION])
def test_asking_only_for_an_event_kind_makes_it_happen(event):
    @settings(max_examples=30)
    @given(transcripts(facts=facts(kinds=[event]), min_facts=1, max_facts=2))
    def check(transcript):
        assert any(f.kind is event for f in transcript.facts)

    check()


@settings(max_examples=40)
@given(facts(phrasings=st.just(0)))
def test_phrasings_strategy_is_used(spec):
    assert spec.phrasing == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"min_turns": 10, "max_turns": 5}, "Cannot have max_turns=5 < min_turns=10"),
        ({"min_facts": 4, "max_facts": 2}, "Cannot have max_facts=2 < min_facts=4"),
        ({"min_cuts": 2, "max_cuts": 1}, "Cannot have max_cuts=1 < min_cuts=2"),
        ({"min_turns": 0}, "min_turns=0; a transcript needs at least one turn"),
        ({"max_turns": -1}, "max_turns=-1 must be a non-negative integer"),
        ({"min_facts": 3, "min_turns": 1, "max_turns": 8}, "max_turns=8 cannot hold min_facts=3 facts"),
        ({"facts": [1, 2]}, "facts must be a strategy, got [1, 2]"),
        ({"cuts": 3}, "cuts must be a strategy, got 3"),
    ],
)
def test_transcripts_validate_arguments(kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        transcripts(**kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"kinds": []}, "kinds must be a non-empty collection of FactKind or kind names, got ()"),
        ({"kinds": [3]}, "kinds must be a non-empty collection of FactKind or kind names, got (3,)"),
        ({"kinds": ["prohibition", "wish"]}, "unknown fact kind 'wish'; defined: ['artifact_reference',"),
        ({"phrasings": 3}, "phrasings must be a strategy of non-negative ints, got 3"),
    ],
)
def test_facts_validate_arguments(kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        facts(**kwargs)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: FactSpec(FactKind.RETRACTION, ("a1",)), "is not placed directly"),
        (lambda: FactSpec(FactKind.PROHIBITION, ("a1",), (("category", "bucket"),), fate=Status.SUPERSEDED),
         "cannot have fate='superseded'"),
        (lambda: FactSpec(FactKind.THRESHOLD, ("a1",), (("operator", "<="),)), "needs 2 non-empty literal(s)"),
        (lambda: FactSpec(FactKind.THRESHOLD, ("f_x", "3"), ()), "needs params ['operator']"),
        (lambda: FactSpec(FactKind.THRESHOLD, ("f_x", "3"), (("operator", "<="),), fate=Status.SUPERSEDED),
         "needs params ['replacement']"),
        (lambda: FactSpec(FactKind.PROHIBITION, ("a1",), (("category", "bucket"),), position=1001),
         "position=1001 is out of range"),
        (lambda: Skeleton(seed=0, length=0), "length=0"),
    ],
)
def test_fact_specs_validate(build, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        build()


def test_every_primary_kind_fits_the_turn_budget():
    # MAX_TURNS_PER_FACT is what argument validation relies on; check it holds for the worst case of each kind.
    worst = {
        FactKind.GATING_FIELD: FactSpec(FactKind.GATING_FIELD, ("max_retries", "0"),
                                        (("replacement", "1"), ("write", "w")), fate=Status.SUPERSEDED),
        FactKind.IN_FLIGHT_CALL: FactSpec(FactKind.IN_FLIGHT_CALL, ("call_000000000000",),
                                          (("arguments", "{}"), ("name", "n"), ("parallel", "2")), fate=Status.RESOLVED),
        FactKind.THRESHOLD: FactSpec(FactKind.THRESHOLD, ("max_retries", "3"),
                                     (("operator", "<="), ("replacement", "5"), ("restate", "yes")), fate=Status.SUPERSEDED),
    }
    for spec in worst.values():
        assert event_turn_count(Skeleton(0, 1, (spec,))) <= MAX_TURNS_PER_FACT


@pytest.mark.parametrize("kind", PRIMARY_KINDS, ids=str)
def test_every_fate_a_kind_allows_is_written_as_its_definition_says(kind):
    """The KindDef is the one source: each allowed fate is reachable and lands in the ledger with its polarity."""
    from harness import kind_def

    definition = kind_def(kind)
    seen = set()

    @settings(max_examples=60, deadline=None, database=None)
    @given(skeletons(facts=facts(kinds=[kind, FactKind.RETRACTION, FactKind.SUPERSESSION]), max_facts=1, max_turns=80))
    def check(skeleton):
        transcript = expand(skeleton)
        fact = transcript.facts[0]
        assert fact.kind is kind and len(fact.literals) == definition.literal_count
        assert fact.polarity == definition.polarity and fact.fate.status in definition.fates
        assert _turn_mentions(transcript.turns[fact.origin_turn], fact.literals[0])
        seen.add(fact.fate.status)

    check()
    assert seen == set(definition.fates)
