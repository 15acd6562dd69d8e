"""Long-horizon sessions: repeated compaction, previous summary included, growth judged."""

import pytest
from hypothesis import HealthCheck, given, settings

from harness import Role, Transcript, Turn, compact_once
from harness._app.judging._session import SessionConfig, run_session
from harness._base._tokens import context_tokens
from harness.summarizers import ledgered
from harness.summarizers.mutants import accumulates
from harness.oracles import SessionCase, check_session
from harness.oracles._session_oracles import growth_reason, growth_round
from harness.strategies import Skeleton, expand, transcripts


def _rich(fn):
    return lambda request: compact_once(fn, request, protocol="rich")


def test_compaction_fires_at_the_trigger_and_carries_the_previous_summary():
    transcript = expand(Skeleton(seed=1, length=4000))
    rounds = run_session(transcript, _rich(ledgered.summarize), SessionConfig(budget=500))
    assert len(rounds) >= 12  # a 4,000-turn session compacts again and again
    for earlier, later in zip(rounds, rounds[1:]):
        assert later.request.turns[: len(earlier.result.messages)] == earlier.result.messages
        assert later.boundary > earlier.boundary
    # Each compaction fires at the first turn that takes the context past the trigger (80%):
    # without that last turn (a whole file read may be thousands of tokens) it was still within it.
    for rnd in rounds[1:]:
        before_last = context_tokens(rnd.request.turns[:-1])
        assert before_last <= 0.8 * 500 or rnd.boundary in transcript.compaction_points, (rnd.boundary, before_last)
        assert context_tokens(rnd.request.turns) > 0.8 * 500 or rnd.boundary in transcript.compaction_points


def test_compaction_points_force_a_round():
    turns = tuple(Turn(Role.USER, "hi") for _ in range(10))
    rounds = run_session(Transcript(turns, (), (3, 7)), _rich(ledgered.summarize), SessionConfig(budget=10_000))
    assert [r.boundary for r in rounds] == [3, 7]


@pytest.mark.parametrize(
    "sizes, live, floor, grows",
    [
        ([10, 20, 30, 40, 50], [1, 1, 1, 1, 1], 0, True),
        ([10, 20, 30, 40, 50], [1, 1, 1, 1, 1], 100, False),  # still tiny: crowds nothing out
        ([10, 20, 30, 40], [1, 1, 1, 1], 0, False),  # three rounds of growth are not enough
        ([10, 20, 30, 25, 40, 50], [1] * 6, 0, False),  # the run was broken
        ([10, 20, 30, 40, 50], [1, 2, 3, 4, 5], 0, False),  # the ledger grew as fast
        ([100, 110, 120, 130, 140], [1] * 5, 0, False),  # growing, but not twofold
    ],
)
def test_growth_reason(sizes, live, floor, grows):
    assert (growth_reason(sizes, live, floor=floor) is not None) is grows


def test_growth_is_placed_at_the_round_it_was_complete_by():
    # Shrinking cuts the rounds after a finding's round: growth placed at the session's end (or nowhere)
    # would make every check replay rounds that cannot undo it.
    assert growth_round([10, 20, 30, 40, 50, 60, 70], [1] * 7)[0] == 4
    assert growth_round([50, 10, 20, 30, 40, 50], [1] * 6)[0] == 5
    assert growth_round([10, 20, 30, 40], [1] * 4) is None


def _session_findings(fn, transcript, budget=800):
    rounds = run_session(transcript, _rich(fn), SessionConfig(budget=budget))
    case = SessionCase(transcript, budget, tuple((r.boundary, r.result) for r in rounds))
    return [f.invariant for f in check_session(case)]


def test_accumulating_summary_is_caught():
    assert _session_findings(accumulates, expand(Skeleton(seed=2, length=3000))) == ["summary-growth"]


def test_accumulating_summary_is_reported_at_the_round_its_growth_was_complete_by():
    transcript = expand(Skeleton(seed=2, length=3000))
    rounds = run_session(transcript, _rich(accumulates), SessionConfig(budget=800))
    case = SessionCase(transcript, 800, tuple((r.boundary, r.result) for r in rounds))
    (finding,) = check_session(case)
    assert finding.round is not None and finding.round < len(rounds) - 1
    # the rounds up to it show the growth already: a session cut after it fails the same way
    cut = SessionCase(transcript, 800, case.rounds[:finding.round + 1])
    assert [f.round for f in check_session(cut)] == [finding.round]


@settings(max_examples=40, suppress_health_check=list(HealthCheck))
@given(transcripts(min_turns=500, max_turns=3000))
def test_bounded_summary_passes(transcript):
    assert _session_findings(ledgered.summarize, transcript) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(max_turns=200))
def test_a_request_marks_the_turns_that_are_the_previous_compactions_output(transcript):
    rounds = run_session(transcript, lambda request: compact_once(ledgered.summarize, request, protocol="rich"),
                         SessionConfig(budget=400))
    for i, rnd in enumerate(rounds):
        if i == 0:
            assert rnd.request.previous_output == 0
        else:
            previous = rounds[i - 1].result.messages
            assert rnd.request.previous_output == len(previous)
            assert rnd.request.turns[:len(previous)] == previous
