"""The domain minimizer keeps the ledger true while it removes turns."""

import dataclasses

from harness import Fact, FactKind, Fate, Polarity, Role, Status, Transcript, Turn
from harness._app.shrinking._moves import minimize, without_turns
from harness.strategies import Skeleton, expand


def _transcript():
    turns = tuple(Turn(Role.USER, f"turn {i}") for i in range(6))
    facts = (
        Fact("A", FactKind.PROHIBITION, ("x1",), 1, Polarity.FORBID, Fate(Status.RETRACTED, 4, "A.r")),
        Fact("A.r", FactKind.RETRACTION, ("x1",), 4, details=(("target", "A"),)),
        Fact("B", FactKind.COMMITMENT, ("y2",), 2, Polarity.REQUIRE),
    )
    return Transcript(turns, facts, (3, 6), seed=5)


def test_without_turns_reindexes_facts_and_points():
    t = without_turns(_transcript(), {0, 2})
    assert [turn.text for turn in t.turns] == ["turn 1", "turn 3", "turn 4", "turn 5"]
    assert [(f.id, f.origin_turn, f.fate.turn) for f in t.facts] == [("A", 0, 2), ("A.r", 2, None)]
    assert t.compaction_points == (1, 4)
    assert t.seed == 5


def test_removing_a_fate_turn_reopens_the_fact():
    t = without_turns(_transcript(), {4})
    assert t.fact("A").fate == Fate()
    assert [f.id for f in t.facts] == ["A", "B"]


def test_minimize_finds_the_one_turn_that_matters():
    transcript = expand(Skeleton(seed=9, length=3000))
    needle = transcript.turns[1234]
    minimal, checks = minimize(transcript, lambda t: needle in t.turns)
    assert minimal.turns == (needle,)
    assert checks < 200  # ddmin halves its way down rather than trying turns one by one


def test_minimize_keeps_pairs_the_predicate_needs():
    transcript = expand(Skeleton(seed=9, length=500))
    call = next(i for i, t in enumerate(transcript.turns) if t.tool_calls)
    pair = transcript.turns[call : call + 2]
    minimal, _ = minimize(transcript, lambda t: all(p in t.turns for p in pair))
    assert minimal.turns == pair


# -- the domain minimizer's other moves -----------------------------------------------------------

from harness import ToolCall  # noqa: E402
from harness._app.shrinking._moves import coalesce, ddmin, fact_units, ledger_turns, prefix, shortened  # noqa: E402
from harness._base._tokens import message_tokens  # noqa: E402


def _with_call():
    turns = (
        Turn(Role.USER, "filler a"),
        Turn(Role.USER, "Never use x1."),
        Turn(Role.ASSISTANT, "filler b"),
        Turn(Role.ASSISTANT, "calling", (ToolCall("c1", "read", "{}"),)),
        Turn(Role.TOOL, "result", tool_call_id="c1"),
        Turn(Role.USER, "filler c"),
        Turn(Role.USER, "x1 is no longer banned."),
        Turn(Role.ASSISTANT, "filler d"),
        Turn(Role.ASSISTANT, "filler e"),
    )
    facts = (
        Fact("A", FactKind.PROHIBITION, ("x1",), 1, Polarity.FORBID, Fate(Status.RETRACTED, 6, "A.r")),
        Fact("A.r", FactKind.RETRACTION, ("x1",), 6, details=(("target", "A"),)),
    )
    return Transcript(turns, facts, (5, 9), seed=3)


def test_a_fact_unit_holds_what_ends_it_but_an_ending_does_not_hold_its_target():
    units = fact_units(_with_call())
    assert units["A"] == {1, 6}
    assert units["A.r"] == {6}
    assert ledger_turns(_with_call()) == {1, 6}


def test_coalesce_merges_filler_runs_and_keeps_the_ledger_on_its_turns():
    t = _with_call()
    merged, groups = coalesce(t)
    assert [turn.text for turn in merged.turns][1] == "Never use x1."
    assert groups == {2: (2, 3, 4), 5: (7, 8)}  # no run spans the cut point 5
    assert merged.fact("A").origin_turn == 1 and merged.fact("A").fate.turn == 4
    assert merged.fact("A.r").origin_turn == 4
    assert "read({})" in merged.turns[2].text and "result" in merged.turns[2].text  # the call's text survives
    assert not any(turn.tool_calls or turn.tool_call_id for turn in merged.turns)
    assert merged.compaction_points == (3, 6)  # every round still compacts after the same turns
    # merging loses no text: the merged turn costs about what its turns did
    assert abs(sum(message_tokens(t.turns[i]) for i in (2, 3, 4)) - message_tokens(merged.turns[2])) <= 8


def test_coalesce_keeps_a_call_whole_when_a_cut_point_falls_between_it_and_its_answer():
    t = dataclasses.replace(_with_call(), compaction_points=(4, 9))
    merged, groups = coalesce(t)
    assert groups == {7: (7, 8)}  # filler b alone is no run; the call (3) and its answer (4) stay as they were
    assert merged.turns[3].tool_calls and merged.turns[4].tool_call_id == "c1"
    assert merged.compaction_points == (4, 8)


def test_coalesce_keeps_both_halves_of_a_call_it_is_asked_to_keep():
    merged, groups = coalesce(_with_call(), frozenset({4}))
    kept = [turn for turn in merged.turns if turn.tool_call_id == "c1" or turn.tool_calls]
    assert len(kept) == 2  # the answer was to be kept, so its call stays too
    assert all(len(group) > 1 for group in groups.values())


def test_coalesce_of_a_transcript_without_runs_changes_nothing():
    t = without_turns(_with_call(), {0, 2, 3, 4, 7})
    assert coalesce(t) == (t, {})


def test_prefix_is_what_a_round_had_seen():
    t = prefix(_with_call(), 5)
    assert len(t.turns) == 5 and t.compaction_points == (5,)
    assert t.fact("A").fate == Fate()  # its retraction had not happened yet
    assert [f.id for f in t.facts] == ["A"]


def test_shortened_cuts_at_a_break_and_never_touches_calls():
    turn = Turn(Role.USER, "one two three four five six seven eight")
    half = shortened(turn, 0.5)
    assert half is not None and turn.text.startswith(half.text) and len(half.text) < len(turn.text)
    assert not half.text.endswith(" ")
    assert shortened(turn, 0.0) is None and shortened(turn, 1.0) is None
    assert shortened(_with_call().turns[3], 0.5) is None
    assert shortened(_with_call().turns[4], 0.5) is None


def test_ddmin_finds_a_pair_and_never_checks_the_whole():
    checked = []

    def fails(kept):
        checked.append(tuple(kept))
        return 3 in kept and 11 in kept

    kept, checks = ddmin(range(20), fails)
    assert kept == [3, 11]
    assert checks == len(checked) and tuple(range(20)) not in checked


# -- minimal transcripts are well-formed chat histories (issue 31) --------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness._app.shrinking._moves import coalesce, prefix  # noqa: E402
from harness.strategies import transcripts  # noqa: E402


def _half_calls(transcript: Transcript, original: Transcript | None = None) -> list[str]:
    """Tool results whose call is not in the transcript, and calls whose result was in ``original`` but is not
    here (a call in flight in the original, its result not yet come, is no half)."""
    calls = {c.id for t in transcript.turns for c in t.tool_calls}
    answered = {t.tool_call_id for t in transcript.turns if t.tool_call_id}
    answered_before = {t.tool_call_id for t in (original or transcript).turns if t.tool_call_id}
    orphans = [f"result for {t.tool_call_id}" for t in transcript.turns
               if t.tool_call_id and t.tool_call_id not in calls]
    return orphans + [f"call {c}" for c in sorted(calls & answered_before - answered)]


@settings(max_examples=60, deadline=None)
@given(transcripts(min_turns=8, max_turns=60), st.data())
def test_removing_turns_never_splits_a_tool_call_from_its_result(transcript, data):
    assert _half_calls(transcript) == []  # what the generator makes is well-formed to begin with
    drop = data.draw(st.sets(st.integers(0, len(transcript.turns) - 1)))
    assert _half_calls(without_turns(transcript, drop), transcript) == []


@settings(max_examples=60, deadline=None)
@given(transcripts(min_turns=8, max_turns=60), st.data())
def test_merging_filler_never_splits_a_tool_call_from_its_result(transcript, data):
    keep = data.draw(st.frozensets(st.integers(0, len(transcript.turns) - 1)))
    merged, _ = coalesce(transcript, keep)
    assert _half_calls(merged, transcript) == []


def test_a_failure_about_pairing_may_still_remove_one_half():
    transcript = expand(Skeleton(seed=3, length=40))
    results = [i for i, t in enumerate(transcript.turns) if t.tool_call_id]
    assert results, "the skeleton should hold a tool call"
    call = next(i for i, t in enumerate(transcript.turns) if any(c.id == transcript.turns[results[0]].tool_call_id
                                                                 for c in t.tool_calls))
    assert _half_calls(without_turns(transcript, {call}, pairs=False), transcript) != []
    assert _half_calls(without_turns(transcript, {call}), transcript) == []


def test_a_prefix_leaves_a_call_in_flight_as_the_round_saw_it():
    transcript = expand(Skeleton(seed=3, length=40))
    result = next(i for i, t in enumerate(transcript.turns) if t.tool_call_id)
    cut = prefix(transcript, result)
    assert cut.turns == transcript.turns[:result]
