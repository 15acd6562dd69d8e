"""Shrink quality: failures reduce to the smallest skeleton the parameters allow."""

import dataclasses

import pytest
from hypothesis import find, settings

from harness import FactKind, Role, Status, Turn
from harness.strategies import facts, make_literal, transcripts


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


# -- the domain minimizer on a position-driven failure ---------------------------------------------

import functools  # noqa: E402
import json  # noqa: E402

from hypothesis import HealthCheck  # noqa: E402

from harness._app.corpus._entries import CorpusSaver  # noqa: E402
from harness._app.corpus._replay import replay_corpus  # noqa: E402
from harness._app.reports._text import render_text  # noqa: E402
from harness._app.running._options import RunConfig  # noqa: E402
from harness._app.running._run import shrink_transcript  # noqa: E402
from harness._app.shrinking._rounds import from_failing_request  # noqa: E402
from harness._app.shrinking._window import subject_window  # noqa: E402

TAIL = "harness.summarizers.naive:tail"


@functools.cache
def _long_transcript_with_an_early_prohibition():
    return find(
        transcripts(min_turns=2000, max_turns=3000, max_facts=4, facts=facts(kinds=[FactKind.PROHIBITION,
                                                                                     FactKind.COMMITMENT])),
        lambda t: len(t.turns) >= 2000
        and any(f.kind is FactKind.PROHIBITION and f.origin_turn < 200 for f in t.facts),
        settings=settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck)),
    )


def test_a_tail_compactors_dropped_prohibition_shrinks_to_a_few_turns_that_replay_from_the_corpus(tmp_path):
    transcript = _long_transcript_with_an_early_prohibition()
    config = RunConfig.of(TAIL, isolation="inline", quiet=True)
    saver = CorpusSaver(tmp_path, summarizer=TAIL, budget=config.judging.budget)
    result = shrink_transcript(transcript, config, on_failure=saver)
    dropped = [f for f in result.failures if f.fact_kind == "prohibition"]
    assert dropped, result.failures
    for failure in dropped:
        assert failure.original_turns >= 2000
        assert len(failure.transcript.turns) <= 8
        assert failure.shrink_stopped is None
        assert failure.budget <= config.judging.budget
        assert [f.kind for f in failure.transcript.facts] == [FactKind.PROHIBITION]
    assert saver.saved == len(result.failures)
    replayed = replay_corpus(tmp_path, RunConfig.of(TAIL, isolation="inline", quiet=True))
    assert {o.status for o in replayed.outcomes} == {"failing"}
    assert {o.entry.budget for o in replayed.outcomes} == {f.budget for f in result.failures}


def test_the_report_shows_merged_filler_as_a_token_count_and_the_budget_it_fails_at():
    transcript = _long_transcript_with_an_early_prohibition()
    result = shrink_transcript(transcript, RunConfig.of(TAIL, isolation="inline", quiet=True,
                                                     only=("literal-verbatim",)))
    (failure,) = result.failures
    assert failure.elided, "the filler that pushed the prohibition out is one merged turn"
    index, merged, tokens = failure.elided[0]
    assert merged > 1 and tokens > 0
    text = render_text(result)
    assert f"[{index}] " in text and f"{tokens:,} tokens of unrelated work ({merged} turns" in text
    assert failure.transcript.turns[index].text[:40] not in text  # elided, not printed
    if failure.budget != 2000:
        assert f"fails at budget {failure.budget}" in text


def test_shrink_given_a_corpus_entry_uses_the_budget_the_entry_fails_at(tmp_path, capsys):
    from harness._app.cli._main import main

    transcript = _long_transcript_with_an_early_prohibition()
    saver = CorpusSaver(tmp_path, summarizer=TAIL, budget=2000)
    shrink_transcript(transcript, RunConfig.of(TAIL, isolation="inline", quiet=True,
                                            only=("literal-verbatim",)), on_failure=saver)
    (entry,) = tmp_path.glob("*.json")
    saved = json.loads(entry.read_text())
    assert saved["budget"] < 2000  # shrinking lowered it: the filler that pushes the fact out is short
    code = main(["shrink", str(entry), "--summarizer", TAIL, "--inline", "--quiet", "--only", "literal-verbatim"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"--budget {saved['budget']}" in out  # the reproduce line names the entry's budget


def test_a_tail_compactor_splitting_a_call_from_its_answer_in_a_long_session_shrinks_to_a_few_turns(tmp_path):
    # Where a window of the newest tokens ends decides this failure, several compactions into a session:
    # shrinking must keep the rounds where they fired and the call with its answer.
    from harness._app.running._run import run

    config = RunConfig.of(TAIL, isolation="inline", quiet=True, examples=200, seed=1, max_turns=400,
                       only=("tool-pairing",))
    saver = CorpusSaver(tmp_path, summarizer=TAIL, budget=config.judging.budget)
    result = run(config, on_failure=saver)
    assert [f.key for f in result.failures] == [("tool-pairing", None)]
    failure = result.failures[0]
    assert failure.original_turns > 40
    assert len(failure.transcript.turns) <= failure.original_turns // 4
    assert failure.shrink_stopped is None
    # the call the finding names and its answer are still a call and an answer, not merged text
    call_id = next(c.id for t in failure.transcript.turns for c in t.tool_calls if any(
        u.tool_call_id == c.id for u in failure.transcript.turns))
    assert call_id in failure.detail
    replayed = replay_corpus(tmp_path, RunConfig.of(TAIL, isolation="inline", quiet=True, only=("tool-pairing",)))
    assert {o.status for o in replayed.outcomes} == {"failing"}


def test_a_failure_rounds_into_a_session_restarts_from_the_request_of_the_failing_round():
    # A verbatim compactor carries source turns from round to round, so the request of the round that
    # dropped the fact is itself a transcript: one check, answered by the call cache, replaces a
    # session of many rounds.
    from harness import Fact, FactKind, Polarity, Transcript, Turn
    from harness._app.judging._judge import judge_session
    from harness._app.shrinking._shrinker import Shrinker
    from harness._base._compact import compact_once
    from harness.summarizers.naive import tail

    filler = [Turn(Role.USER if i % 2 else Role.ASSISTANT, f"step {i}: ran the linter on module_{i} and read its log")
              for i in range(300)]
    turns = (*filler[:150], Turn(Role.USER, "Never write to s3://acme-prod-77/ from this job."), *filler[150:])
    transcript = Transcript(turns, (Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-77/",), 150, Polarity.FORBID),), ())
    key = ("literal-verbatim", "prohibition")
    calls = []

    def summarize(request):
        calls.append(request.turns)
        return compact_once(tail, request, protocol="messages")

    cache = {}

    def cached(request):
        if request.turns not in cache:
            cache[request.turns] = summarize(request)
        return cache[request.turns]

    def judge(candidate, budget):
        return judge_session(candidate, cached, budget=budget, until=key)

    first = judge(transcript, 300)
    finding, index, boundary, _ = first.violations[key]
    assert index > 2  # the fact was kept for several rounds before a round dropped it
    shrinker = Shrinker(key, transcript, first.violations[key], 300, judge)
    shrinker._cut_after_failure()
    before = len(calls)
    from_failing_request(shrinker)
    assert len(calls) == before  # the candidate's one request is the failing round's: the cache answers it
    assert shrinker.transcript.compaction_points == (len(shrinker.transcript.turns),)
    assert len(shrinker.transcript.turns) == len(first.contexts[key])
    assert shrinker.still_fails(shrinker.transcript)


def _restart_setup(turns, facts, tightenings=(), share=1.0, compactor=None):
    """A tail compactor's session (keeping the newest messages within ``share`` of the budget, or
    ``compactor(messages, budget)``) judged with a call cache keyed by the whole request (turns and budget)."""
    from harness import Transcript
    from harness._app.judging._judge import judge_session
    from harness._base._compact import compact_once
    from harness.summarizers.naive import tail

    transcript = Transcript(turns, facts, (), tightenings=tightenings)
    calls, cache = [], {}

    def keep_newest(messages, budget):
        return tail(messages, int(budget * share))

    def cached(request):
        key = (request.turns, request.budget)
        if key not in cache:
            calls.append(key)
            cache[key] = compact_once(compactor or keep_newest, request, protocol="messages")
        return cache[key]

    def judge_for(key):
        return lambda candidate, budget: judge_session(candidate, cached, budget=budget, until=key)

    return transcript, calls, judge_for


def _work(n, words=40):
    return [Turn(Role.USER if i % 2 else Role.ASSISTANT,
                 f"step {i}: " + " ".join(f"ran lint on module_{i}_{j}" for j in range(words // 4))) for i in range(n)]


def test_a_restart_keeps_the_tightened_budget_its_round_had():
    """A failure after the budget tightened restarts with the tightened budget: the restarted round's
    request is the failing round's (the cache answers it), not the same turns at the session's budget."""
    from harness import Fact, FactKind, Polarity
    from harness._base._model import Tightening
    from harness._app.shrinking._shrinker import Shrinker

    work = _work(120)
    turns = (*work[:60], Turn(Role.USER, "Never write to s3://acme-prod-77/ from this job."), *work[60:])
    fact = Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-77/",), 60, Polarity.FORBID)
    key = ("literal-verbatim", "prohibition")
    transcript, calls, judge_for = _restart_setup(turns, (fact,), (Tightening(2, 500),))
    judge = judge_for(key)
    first = judge(transcript, 600)
    _, index, _, _ = first.violations[key]
    assert index > 2  # the failing round ran at the tightened budget
    shrinker = Shrinker(key, transcript, first.violations[key], 600, judge)
    shrinker._cut_after_failure()
    before = len(calls)
    from_failing_request(shrinker)
    assert len(calls) == before  # same turns and same budget: answered by the cache
    assert shrinker.transcript.tightenings == (Tightening(0, 500),)
    assert len(shrinker.transcript.turns) < len(transcript.turns) // 4


def test_a_loss_between_two_rounds_restarts_from_the_round_before_it():
    """ledger-monotone needs the round that carried the obligation and the one that lost it: the
    failing round alone cannot show it, so the restart begins a round earlier, with two rounds. (The
    compactor keeps half its budget, so a restarted round fires where the original did.)"""
    from harness import Fact, FactKind, Polarity
    from harness._app.shrinking._shrinker import Shrinker

    work = _work(120)
    turns = (*work[:60], Turn(Role.USER, "Never write to s3://acme-prod-77/ from this job."), *work[60:])
    fact = Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-77/",), 60, Polarity.FORBID)
    key = ("ledger-monotone", "prohibition")
    transcript, calls, judge_for = _restart_setup(turns, (fact,), share=0.5)
    judge = judge_for(key)
    first = judge(transcript, 600)
    _, index, _, _ = first.violations[key]
    assert index > 2
    shrinker = Shrinker(key, transcript, first.violations[key], 600, judge)
    shrinker._cut_after_failure()
    before = len(calls)
    from_failing_request(shrinker)
    assert len(calls) == before  # both rounds' requests are the original ones: the cache answers them
    assert len(shrinker.transcript.compaction_points) == 2
    assert len(shrinker.transcript.turns) < len(transcript.turns) // 4
    assert shrinker.still_fails(shrinker.transcript)


def test_an_effect_long_after_its_fact_was_dropped_restarts_from_the_last_request_that_held_it():
    """effect-window shows at the round operative when the effect runs, rounds after the compaction
    that dropped the governing fact; the restart begins at the last request that still held the turn
    stating the fact, so the minimal session is a few turns, not the rounds before and after it."""
    from harness import Fact, FactKind, Polarity, ToolCall
    from harness._app.shrinking._shrinker import Shrinker
    from harness._base._model import Effect

    work = _work(260)
    push = Turn(Role.ASSISTANT, "Pushing the release.", (ToolCall("call_0a1b2c3d4e5f", "push_commit", '{"ref": "main"}'),))
    answer = Turn(Role.TOOL, "pushed", tool_call_id="call_0a1b2c3d4e5f")
    turns = (*work[:120], Turn(Role.USER, "Never push to s3://acme-prod-77/ without a review."), *work[120:], push, answer)
    fact = Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-77/",), 120, Polarity.FORBID)
    key = ("effect-window", "prohibition")
    transcript, calls, judge_for = _restart_setup(turns, (fact,), share=0.5)
    transcript = dataclasses.replace(transcript, effects=(Effect(len(turns) - 2, "call_0a1b2c3d4e5f", "push_commit", ("P",)),))
    judge = judge_for(key)
    first = judge(transcript, 600)
    _, index, _, _ = first.violations[key]
    held, request = first.holding[key]
    assert held >= 8 and index - held > 5  # stated rounds into the session, dropped many rounds before the effect
    shrinker = Shrinker(key, transcript, first.violations[key], 600, judge)
    shrinker._cut_after_failure()
    before = len(calls)
    from_failing_request(shrinker)
    assert len(calls) == before  # every round's request is one the session asked: the cache answers
    restarted = shrinker.transcript
    assert restarted.turns[:len(request)] == request and restarted.compaction_points[0] == len(request)
    assert restarted.effects and shrinker.still_fails(restarted)
    shrinker.shrink()
    assert len(shrinker.transcript.turns) <= 8 and len(calls) - before <= 200


def test_a_call_cut_from_its_answer_shrinks_to_the_pair_at_a_budget_that_splits_them():
    """tool-pairing with a window of the newest tokens needs the window's edge between the call and its
    answer. The subject-window move tries the pair alone and, since a window at the run's budget holds
    both, bisects the budget by which of the two the last round still held: a two-turn transcript in a
    few checks, where delta debugging at the run's budget cannot move the edge."""
    import pytest

    from harness import ToolCall, Transcript
    from harness._app.shrinking._shrinker import Shrinker

    work = _work(200)
    call = Turn(Role.ASSISTANT, "Reading the config to see which of the feature flags the staging deploy still sets "
                "and whether the retry settings match the ones we agreed on yesterday.",
                (ToolCall("call_77aa01bb02cc", "read_file", '{"path": "conf/app.yml"}'),))
    key = ("tool-pairing", None)

    def split_pair():
        # The pair fits the compactor's window (half of 600) on its own: only the turns after the answer
        # in the same round push the call out, so the pair alone at 600 keeps both.
        for lines in range(10, 30, 2):
            answer = Turn(Role.TOOL, "\n".join(f"{i}: setting_{i} = value_{i}" for i in range(lines)),
                          tool_call_id="call_77aa01bb02cc")
            for split in range(100, 130):
                turns = (*work[:split], call, answer, *work[split:])
                transcript, calls, judge_for = _restart_setup(turns, (), share=0.5)
                judge = judge_for(key)
                first = judge(transcript, 600)
                if key in first.violations:
                    return answer, transcript, calls, judge, first
        pytest.fail("no split of the pair found to fail")

    answer, transcript, calls, judge, first = split_pair()
    assert key not in judge(Transcript((call, answer), (), (2,)), 600).violations
    shrinker = Shrinker(key, transcript, first.violations[key], 600, judge)
    shrinker._cut_after_failure()
    from_failing_request(shrinker)
    assert len(shrinker.transcript.turns) > 4
    before = len(calls)
    subject_window(shrinker)
    assert shrinker.transcript.turns[:2] == (call, answer) and len(shrinker.transcript.turns) <= 3
    assert shrinker.budget < 600
    assert len(calls) - before <= 15
    assert shrinker.still_fails(shrinker.transcript)


def _late_prohibition(compactor):
    """A prohibition stated after 160 turns of work, then a little more work, compacted by ``compactor``
    at a budget of 600: the turns, the transcript, the calls made, and a shrinker for its failure."""
    from harness import Fact, FactKind, Polarity
    from harness._app.shrinking._shrinker import Shrinker

    key = ("literal-verbatim", "prohibition")
    work = _work(160)
    turns = (*work, Turn(Role.USER, "Never write to s3://acme-prod-77/ from this job."), *work[:6])
    fact = Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-77/",), 160, Polarity.FORBID)
    transcript, calls, judge_for = _restart_setup(turns, (fact,), compactor=compactor)
    judge = judge_for(key)
    first = judge(transcript, 600)
    assert key in first.violations
    return turns, transcript, calls, Shrinker(key, transcript, first.violations[key], 600, judge)


def test_a_window_of_the_oldest_tokens_that_drops_a_late_prohibition_shrinks_to_the_filler_before_it():
    """A compactor keeping the oldest messages drops what comes after a budget's worth of work. The
    budget search cannot find that edge (below the merged work's own length the window drops the work
    and keeps the prohibition), so the subject-window move cuts the merged work to the length that
    leaves the prohibition just outside the window: two turns, in a few checks."""
    def oldest(messages, budget):
        kept, used = [], 0
        for message in messages:
            used += len((message.get("content") or "").split()) + 4
            if used > budget:
                break
            kept.append(dict(message))
        return kept

    turns, transcript, calls, shrinker = _late_prohibition(oldest)
    before = len(calls)
    subject_window(shrinker)
    assert len(shrinker.transcript.turns) == 2 and shrinker.budget == 600
    assert shrinker.transcript.turns[1] == turns[160]  # the merged work, then the prohibition
    assert len(calls) - before <= 25
    assert shrinker.still_fails(shrinker.transcript)


def test_the_window_searches_cost_a_summarizer_that_rewrites_nothing():
    """Which turns a window held steers both searches; a summary holds none verbatim, so for a model's
    summary they would spend checks learning nothing: the move asks the one session it already has."""
    def summary(messages, budget):
        words = " ".join(m.get("content") or "" for m in messages).split()[:40]
        return [{"role": "system", "content": "Summary: " + " ".join(words)}]

    _, transcript, calls, shrinker = _late_prohibition(summary)
    before = len(calls)
    subject_window(shrinker)
    assert len(calls) == before and shrinker.checks <= 1 and shrinker.transcript is transcript



def test_each_pass_of_the_shrink_is_tallied_and_the_tallies_add_up_to_the_shrink():
    transcript = _long_transcript_with_an_early_prohibition()
    result = shrink_transcript(transcript, RunConfig.of(TAIL, isolation="inline", quiet=True,
                                                     only=("literal-verbatim",)))
    (failure,) = result.failures
    tallies = {t.name: t for t in failure.shrink_passes}
    assert {"cut-after-failure", "coalesce", "lower-budget", "drop-turns"} <= set(tallies)
    assert sum(t.checks for t in tallies.values()) <= failure.shrink_checks
    assert sum(t.calls for t in tallies.values()) == failure.shrink_calls  # every call is made inside a pass
    assert all(0 <= t.successes <= t.runs for t in tallies.values())
    assert sum(t.successes for t in tallies.values()) >= 1  # 2000 turns did become a few


def test_a_minimal_transcript_at_the_compactors_own_window_says_so():
    from pathlib import Path

    from harness._app.reports._document import report_dict
    from harness._app.running._run import run

    spec = f"{Path(__file__).resolve().parent / 'fixtures' / 'keeps_last.py'}:summarize"
    result = run(RunConfig.of(spec, examples=20, seed=3, quiet=True, isolation="inline", only=("literal-verbatim",)))
    (failure,) = result.failures
    assert failure.kept_window == 12 and len(failure.transcript.turns) <= 12 + 3
    assert "at the compactor's own floor: it kept 12 messages verbatim" in render_text(result)
    assert report_dict(result)["violations"][0]["kept_window"] == 12
    tail = shrink_transcript(_long_transcript_with_an_early_prohibition(),
                             RunConfig.of(TAIL, isolation="inline", quiet=True, only=("literal-verbatim",)))
    assert all(f.kept_window is None for f in tail.failures)  # a window of tokens: shrunk far below any floor
    # One turn past the window nothing can be deleted and still fail: delta debugging is not run again there.
    assert len(failure.transcript.turns) == 12 + 1
    assert {t.name: t for t in failure.shrink_passes}["drop-turns"].runs == 1


def test_a_restart_finds_the_source_turns_of_a_request_a_provider_shape_regrouped():
    from harness._base._model import ToolCall, Transcript
    from harness._app.shrinking._moves import source_turns_of

    def call(i):
        return ToolCall(f"c{i}", "read_file", "{}")

    turns = (Turn(Role.USER, "Check the logs."), Turn(Role.ASSISTANT, "Looking."),
             Turn(Role.ASSISTANT, "", (call(1),)), Turn(Role.TOOL, "ok", tool_call_id="c1"),
             Turn(Role.ASSISTANT, "", (call(2), call(3))), Turn(Role.TOOL, "two", tool_call_id="c2"),
             Turn(Role.TOOL, "three", tool_call_id="c3"))
    transcript = Transcript(turns=turns)
    # read back from Responses items: the text and the call after it are one message; a window cut between
    # the calls of the parallel step keeps one of them
    regrouped = (Turn(Role.ASSISTANT, "Looking.", (call(1),)), turns[3], Turn(Role.ASSISTANT, "", (call(3),)), turns[6])
    assert source_turns_of(transcript, regrouped, len(turns)) == [1, 2, 3, 4, 6]
    assert source_turns_of(transcript, turns[2:4], len(turns)) == [2, 3]
    summary = (Turn(Role.USER, "Summary: the logs were checked."), turns[6])
    assert source_turns_of(transcript, summary, len(turns)) is None
    assert source_turns_of(transcript, turns[5:], 5) is None  # only turns before the round's boundary count


def test_without_shrink_calls_a_fast_summarizer_may_spend_more_calls_shrinking_than_a_slow_one():
    from pathlib import Path

    from harness._app.running._options import DEFAULT_SHRINK_CALLS, FAST_SHRINK_CALLS
    from harness._app.running._run import run

    fixture = Path(__file__).resolve().parent / "fixtures" / "keeps_last.py"

    def allowances(function: str, **options) -> set[int]:
        result = run(RunConfig.of(f"{fixture}:{function}", examples=20, seed=3, quiet=True, isolation="inline",
                                  only=("literal-verbatim",), trials=0, **options))
        assert result.failures
        return {f.shrink_allowance for f in result.failures}

    assert allowances("summarize") == {FAST_SHRINK_CALLS}
    assert allowances("summarize_slowly") == {DEFAULT_SHRINK_CALLS}  # 15 ms a call: could be a model
    assert allowances("summarize_slowly", shrink_calls=10) == {10}  # a given --shrink-calls always wins
    assert allowances("summarize", shrink_calls=DEFAULT_SHRINK_CALLS) == {DEFAULT_SHRINK_CALLS}


@pytest.mark.parametrize("seed", [1, 6])
def test_a_responses_window_that_cuts_inside_parallel_steps_shrinks_to_a_few_turns(seed):
    """Seen before: 84 and 20 turns, the first at the end of the allowance. The restart did not recognise a
    request whose text and calls the Responses shape reads back as one message, and the window's edge was not
    searched again once delta debugging made another call the cut one. (Seed 7, 161 turns then and 2 after
    the fix, is 11 since Responses sources carry reasoning items: the window counts them, our budget does not.)"""
    from pathlib import Path

    from harness._app.running._run import run

    spec = f"{Path(__file__).resolve().parent / 'fixtures' / 'responses_window.py'}:window"
    result = run(RunConfig.of(spec, examples=60, seed=seed, quiet=True, isolation="inline", dialect="openai-responses"))
    assert result.failures
    assert all(len(f.transcript.turns) <= 10 and f.shrink_stopped is None for f in result.failures), \
        [(f.invariant, len(f.transcript.turns)) for f in result.failures]


def test_a_long_session_is_halved_with_its_budget_while_a_window_failure_still_shows():
    """A compactor whose window is a number of messages set by the budget (AutoGen's head-and-tail context,
    as ``benchmarks/third_party.py`` wraps it) fails only with as many messages as its window: delta
    debugging removes a few turns per check of many rounds. Halving the session with its budget keeps the
    failure, so a few checks take thousands of turns to dozens."""
    from pathlib import Path

    from harness._app.shrinking._moves import ledger_turns, thinned

    transcript = find(
        transcripts(min_turns=2000, max_turns=3000, max_facts=2, facts=facts(kinds=[FactKind.PROHIBITION])),
        lambda t: len(t.turns) >= 2000 and any(100 < f.origin_turn < 1000 for f in t.facts),
        settings=settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck)),
    )
    half = thinned(transcript, ledger_turns(transcript))
    assert half is not None and len(half.turns) <= len(transcript.turns) // 2 + 20
    assert [f.kind for f in half.facts] == [f.kind for f in transcript.facts]  # what failures are about stays
    calls = {c.id for t in half.turns for c in t.tool_calls}
    assert all(t.tool_call_id in calls for t in half.turns if t.tool_call_id)  # no result without its call

    spec = f"{Path(__file__).resolve().parent / 'fixtures' / 'head_tail_by_count.py'}:summarize"
    result = shrink_transcript(transcript, RunConfig.of(spec, isolation="inline", quiet=True,
                                                        only=("literal-verbatim",), trials=0))
    (failure,) = result.failures
    tallies = {t.name: t for t in failure.shrink_passes}
    assert tallies["thin"].successes == 1 and failure.shrink_stopped is None
    assert len(failure.transcript.turns) <= 10
