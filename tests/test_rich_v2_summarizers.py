"""Rich protocol 2 in the bundled compactors and the session mutants, checked without the oracles.

The correct compactors (``prose:summarize``, ``ledgered:summarize``) are run on generated
transcripts, one compaction at a time (``request_for`` / ``compact_once``) and over whole sessions
driven here as the session protocol describes them (compact at each compaction point and when the
context passes 80% of the round's budget; the tier deepens when a round's budget tightens). What
protocol 2 promises is checked with code written here, not with ``harness.summarizers._render``:
journals replay and roll back byte-exact, markers sit at the request's tier and name nodes never
reused at another tier, ``resolved_calls`` are resolved, in-flight calls are carried as handles.
Each session mutant is checked to do the one thing it claims.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from harness import CompactionRequest, FactKind, Role, Transcript, Turn, compact_once, live_facts, request_for
from harness._base._kinds import kind_def
from harness._base._messages import to_messages
from harness._base._model import Tightening, round_budget
from harness._base._protocol import payload_sha256
from harness._base._result_codec import result_from_dict, result_to_dict
from harness._base._tokens import context_tokens
from harness.summarizers import ledgered, mutants, prose
from harness.strategies import facts, transcripts

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

BUDGET = 1500
CORRECT = {"prose": prose.summarize, "ledgered": ledgered.summarize}

_FAST = settings(max_examples=12, deadline=None, database=None, derandomize=True,
                 suppress_health_check=list(HealthCheck))
_FIND = settings(max_examples=300, deadline=None, database=None, derandomize=True, phases=[Phase.generate],
                 suppress_health_check=list(HealthCheck))  # found, not shrunk: shrinking a transcript is slow
_TRANSCRIPTS = transcripts(min_turns=30, max_turns=200, max_facts=6)
# In-flight calls among other obligations, so calls cross compactions.
_CALLS = transcripts(min_turns=30, max_turns=160, min_facts=2, max_facts=5,
                     facts=facts(kinds=[FactKind.IN_FLIGHT_CALL, FactKind.GATING_FIELD, FactKind.PROHIBITION,
                                        FactKind.THRESHOLD, FactKind.COMMITMENT]))


@functools.cache
def found(strategy, predicate) -> Transcript:
    """The first transcript ``strategy`` generates that satisfies ``predicate`` (cached per pair)."""
    return find(strategy, predicate, settings=_FIND)


def _any(t: Transcript) -> bool:
    return True


# -- independent checkers -----------------------------------------------------------------------------

def wire(turns) -> str:
    return json.dumps(to_messages(tuple(turns)), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def apply_journal(turns, journal):
    context = list(turns)
    for e in journal:
        assert 0 <= e.start <= e.end <= len(context)
        if e.removed is not None:
            assert wire(context[e.start:e.end]) == wire(e.removed), "an entry removes what was not there"
        context[e.start:e.end] = list(e.inserted)
    return context


def roll_back_journal(messages, journal):
    context = list(messages)
    for e in reversed(journal):
        assert e.removed is not None, "a hash-only entry cannot be rolled back"
        stop = e.start + len(e.inserted)
        assert wire(context[e.start:stop]) == wire(e.inserted)
        context[e.start:stop] = list(e.removed)
    return context


def answered(turns) -> set[str]:
    return {t.tool_call_id for t in turns if t.role is Role.TOOL}


def made(turns) -> dict:
    return {c.id: c for t in turns for c in t.tool_calls}


def unanswered(turns) -> set[str]:
    return set(made(turns)) - answered(turns)


def kept_calls(result) -> dict:
    return {c.id: c for t in result.messages if t.role is Role.ASSISTANT for c in t.tool_calls}


def carried_as_handle(result, call_id: str) -> bool:
    in_ledger = any(e.kind == FactKind.IN_FLIGHT_CALL.value and call_id in e.literals for e in result.ledger or ())
    return call_id in kept_calls(result) or in_ledger


def context_text(result) -> str:
    parts = [t.text for t in result.messages]
    parts += [p for c in kept_calls(result).values() for p in (c.id, c.name, c.arguments)]
    parts += [e.render() for e in result.ledger or ()]
    return "\n".join(parts)


def check_protocol2(request: CompactionRequest, result, *, structured_handles: bool) -> None:
    """Everything rich protocol 2 asks of a correct compactor's one result."""
    # journal: replays to the result, rolls back to the request byte-exact, payloads recorded
    assert result.journal, "a correct compactor writes its journal"
    assert all(e.removed is not None and e.removed_sha256 == payload_sha256(e.removed) for e in result.journal)
    assert wire(apply_journal(request.turns, result.journal)) == wire(result.messages)
    assert wire(roll_back_journal(result.messages, result.journal)) == wire(request.turns)
    # marker: at the request's tier, a node named for that tier, only calls really resolved
    assert result.marker is not None and result.marker.tier == request.tier
    assert result.marker.node.startswith(f"tier{request.tier}-")
    resolved = set(made(request.turns)) & answered(request.turns)
    assert set(result.marker.resolved_calls) == resolved
    assert len(set(result.marker.resolved_calls)) == len(result.marker.resolved_calls)
    # verified: only what it checked on the result itself, a class decided by the request and result alone
    assert result.verified == ("journal-reversible",)
    # in-flight calls: every tagged one carried as a handle; kept calls are exactly calls still in flight
    # (a background job's literal is its job handle, not a call id: it is stated, checked below, never a call)
    tagged = {f.literals[0]: f for f in request.tags
              if f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") != "background"}
    kept = kept_calls(result)
    for call_id, fact in tagged.items():
        assert call_id not in answered(request.turns)  # a live tag's result has not arrived
        assert carried_as_handle(result, call_id)
        if structured_handles:
            call = kept[call_id]
            assert (call.name, call.arguments) == (fact.detail("name"), fact.detail("arguments"))
    for call_id, call in kept.items():
        assert call_id not in answered(request.turns), "a call whose result arrived is not re-attached"
        assert call_id in tagged or call_id in unanswered(request.turns)
        if call_id in made(request.turns):
            assert call == made(request.turns)[call_id]  # copied as made, byte-exact
    assert not any(t.role is Role.TOOL for t in result.messages)
    # every call in flight at all (tagged or not) rides in the result
    for call_id in unanswered(request.turns) | set(tagged):
        assert carried_as_handle(result, call_id)
    # the budget, counted as the harness counts
    assert context_tokens(result.messages, result.ledger) <= request.budget
    # every tagged obligation still stated (protocol 1's promise, unweakened)
    text = context_text(result)
    assert all(lit in text for f in request.tags for lit in f.literals)
    # the wire form round-trips
    data = result_to_dict(result)
    assert result_from_dict(json.loads(json.dumps(data))) == result


# -- a session, driven here ---------------------------------------------------------------------------

@dataclasses.dataclass
class Round:
    boundary: int
    request: CompactionRequest
    result: object


def run_session(summarize, transcript: Transcript, budget: int = BUDGET) -> list[Round]:
    """Compact at each compaction point and whenever the context passes 80% of the round's budget; the
    context compacted is the previous result's messages plus the turns since."""
    rounds: list[Round] = []
    previous = None
    since = 0
    tier, last_budget = 0, None
    points = set(transcript.compaction_points)
    for boundary in range(1, len(transcript.turns) + 1):
        context = (previous.messages if previous else ()) + transcript.turns[since:boundary]
        r = len(rounds)
        limit = round_budget(transcript, budget, r)
        ledger = previous.ledger if previous else None
        if boundary not in points and context_tokens(context, ledger) <= 0.8 * limit:
            continue
        tier = 1 if r == 0 else tier + (1 if limit < last_budget else 0)
        request = CompactionRequest(tuple(context), limit, live_facts(transcript, boundary), tier,
                                    transcript.consumers)
        previous = compact_once(summarize, request)
        rounds.append(Round(boundary, request, previous))
        since, last_budget = boundary, limit
    return rounds


def tightened(transcript: Transcript) -> Transcript:
    return dataclasses.replace(transcript, tightenings=(Tightening(1, 700), Tightening(3, 500)))


# -- the correct compactors, one compaction --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CORRECT))
@_FAST
@given(transcript=_TRANSCRIPTS, tier=st.integers(1, 3))
def test_correct_compactor_protocol2_on_one_compaction(name, transcript, tier):
    for boundary in transcript.compaction_points:
        request = dataclasses.replace(request_for(transcript, boundary, BUDGET), tier=tier)
        result = compact_once(CORRECT[name], request)
        check_protocol2(request, result, structured_handles=name == "prose")
        assert compact_once(CORRECT[name], request) == result  # deterministic


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_node_is_never_named_at_two_tiers(name):
    transcript = found(_TRANSCRIPTS, _any)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    nodes = {compact_once(CORRECT[name], dataclasses.replace(request, tier=k)).marker.node for k in (1, 2, 3)}
    assert len(nodes) == 3


def _has_in_flight(t: Transcript) -> bool:
    return any(f.kind is FactKind.IN_FLIGHT_CALL for f in live_facts(t, t.compaction_points[0]))


def _has_trailing_call(t: Transcript) -> bool:
    return any(f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") == "trailing"
               for f in live_facts(t, t.compaction_points[0]))


def _has_background_job(t: Transcript) -> bool:
    return any(f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") == "background"
               for f in live_facts(t, t.compaction_points[0]))


def test_prose_keeps_in_flight_calls_as_structured_calls():
    transcript = found(_CALLS, _has_trailing_call)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    result = compact_once(prose.summarize, request)
    tagged = [f for f in request.tags if f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") == "trailing"]
    handles = [t for t in result.messages if t.tool_calls]
    assert len(handles) == 1 and handles[0].role is Role.ASSISTANT
    ids = {c.id for c in handles[0].tool_calls}
    assert {f.literals[0] for f in tagged} <= ids
    assert result.ledger is None  # no side channel: the handle is the structured call


def test_prose_names_a_background_job_and_never_makes_it_a_call():
    transcript = found(_CALLS, _has_background_job)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    result = compact_once(prose.summarize, request)
    jobs = [f.literals[0] for f in request.tags if f.kind is FactKind.IN_FLIGHT_CALL and f.detail("mode") == "background"]
    called = {c.id for t in result.messages for c in t.tool_calls}
    assert jobs and not called & set(jobs)  # a job handle is no call id: re-attaching it as one invents a call
    assert all(job in result.summary_text for job in jobs)


def test_ledgered_keeps_in_flight_calls_as_ledger_entries():
    transcript = found(_CALLS, _has_in_flight)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    result = compact_once(ledgered.summarize, request)
    for fact in request.tags:
        if fact.kind is FactKind.IN_FLIGHT_CALL:
            entry = next(e for e in result.ledger if e.fact_id == fact.id)
            assert entry.kind == "in_flight_call" and entry.literals == fact.literals
            assert fact.literals[0] not in kept_calls(result)  # the ledger entry is its handle


def test_ledgered_gives_up_its_narrative_before_the_budget():
    """Under a budget that holds the ledger and nothing more, the narrative goes, stub and all."""
    transcript = found(_CALLS, _has_in_flight)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    roomy = compact_once(ledgered.summarize, request)
    assert roomy.messages[0].role is Role.SYSTEM
    tight = dataclasses.replace(request, budget=context_tokens(roomy.messages[1:], roomy.ledger))
    result = compact_once(ledgered.summarize, tight)
    assert result.messages == roomy.messages[1:] and result.ledger == roomy.ledger
    assert context_tokens(result.messages, result.ledger) <= tight.budget


def test_a_call_carried_only_by_its_tag_is_rebuilt_from_the_tag():
    """A round whose input has the tag but not the call (a ledger carried it) still re-attaches it."""
    transcript = found(_CALLS, _has_in_flight)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    bare = dataclasses.replace(request, turns=(Turn(Role.SYSTEM, "Summary of 0 earlier turns (0 from the user, "
                                                                 "0 tool calls)."),))
    result = compact_once(prose.summarize, bare)
    check_protocol2(bare, result, structured_handles=True)


# -- the correct compactors, whole sessions ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CORRECT))
@settings(_FAST, max_examples=8)
@given(transcript=_CALLS)
def test_correct_compactor_over_a_tightening_session(name, transcript):
    transcript = tightened(transcript)
    rounds = run_session(CORRECT[name], transcript)
    assert rounds
    written_at: dict[str, int] = {}
    for n, rnd in enumerate(rounds):
        request, result = rnd.request, rnd.result
        check_protocol2(request, result, structured_handles=name == "prose")
        if n:  # the tier deepens exactly when the round's budget tightens
            before = rounds[n - 1].request
            assert request.tier == before.tier + (request.budget < before.budget)
        node = result.marker.node
        assert written_at.setdefault(node, request.tier) == request.tier  # never reused at another tier
        # every live obligation's literals are carried, round after round (no generational loss)
        text = context_text(result)
        for fact in live_facts(transcript, rnd.boundary):
            assert all(lit in text for lit in fact.literals), (n, fact)
            if fact.kind is FactKind.IN_FLIGHT_CALL and fact.detail("mode") != "background":
                assert carried_as_handle(result, fact.literals[0])
    assert [r.request.tier for r in rounds][0] == 1


def _job_crosses_a_tightening(t: Transcript) -> bool:
    """A session (at the default budget, tightened) with a background job running across two rounds and a
    deeper tier (a call is in flight across rounds only as a job: a trailing call's result comes next)."""
    rounds = run_session(prose.summarize, tightened(t))
    live = [{f.literals[0] for f in r.request.tags if f.kind is FactKind.IN_FLIGHT_CALL} for r in rounds]
    crossing = any(a & b for a, b in zip(live, live[1:]))
    return crossing and max((r.request.tier for r in rounds), default=0) >= 2


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_job_in_flight_across_rounds_rides_every_round_until_its_outcome(name):
    transcript = tightened(found(_CALLS, _job_crosses_a_tightening))
    rounds = run_session(CORRECT[name], transcript)
    jobs = {f.literals[0]: f for f in transcript.facts if f.kind is FactKind.IN_FLIGHT_CALL}
    carried_rounds = 0
    for rnd in rounds:
        for handle, fact in jobs.items():
            if fact.is_live_at(rnd.boundary):
                assert handle in context_text(rnd.result)
                if name == "ledgered":
                    assert carried_as_handle(rnd.result, handle)  # its ledger entry
                assert handle not in kept_calls(rnd.result)  # a job handle is never made a call
                carried_rounds += 1
            elif fact.origin_turn < rnd.boundary:  # its outcome has come: never carried as open again
                assert handle not in kept_calls(rnd.result)
                assert handle not in {e.literals[0] for e in rnd.result.ledger or ()}
    assert carried_rounds >= 2
    assert {r.request.tier for r in rounds} >= {1, 2}
    assert any(r.result.marker.resolved_calls for r in rounds)
    for rnd in rounds:  # a call is declared resolved only once its result is in the context compacted
        assert set(rnd.result.marker.resolved_calls) <= answered(rnd.request.turns)


# -- the session mutants --------------------------------------------------------------------------------

def test_session_mutants_are_registered_rich():
    assert set(mutants.SESSION_MUTANTS) == {"summary-growth", "ledger-monotone", "marker-depth", "deterministic",
                                            "effect-window", "consumer-requirements", "handle-carried"}
    assert mutants.MUTANTS["journal-reversible"] is mutants.hash_only_journal  # judged on one result
    for mutant in (*mutants.SESSION_MUTANTS.values(), mutants.hash_only_journal):
        assert mutant.compaction_protocol == "rich"
        assert getattr(mutants, mutant.__name__) is mutant
    assert getattr(mutants.stale_marker, "compaction_may_vary", False) is True
    assert not getattr(mutants.varies, "compaction_may_vary", False)


def _recompaction(summarize, transcript: Transcript, first: int, second: int, tier: int = 1):
    """A first compaction at ``first`` and a re-compaction at ``second`` of its result plus the turns since."""
    one = compact_once(summarize, request_for(transcript, first, BUDGET))
    request = CompactionRequest(one.messages + transcript.turns[first:second], BUDGET,
                                live_facts(transcript, second), tier)
    return one, request, compact_once(summarize, request)


def _lines(result) -> set[str]:
    return set(result.messages[0].text.splitlines())


def _carried_across(kinds):
    def ok(t: Transcript) -> bool:
        if len(t.compaction_points) < 2:
            return False
        a, b = t.compaction_points[:2]
        return any(f.kind in kinds and f.is_live_at(a) and f.is_live_at(b) for f in t.facts)
    return ok


def test_forgets_on_recompaction_loses_one_carried_obligation():
    kinds = {FactKind.PROHIBITION, FactKind.THRESHOLD, FactKind.COMMITMENT, FactKind.GATING_FIELD}
    transcript = found(_CALLS, _carried_across(frozenset(kinds)))
    a, b = transcript.compaction_points[:2]
    first = compact_once(mutants.forgets_on_recompaction, request_for(transcript, a, BUDGET))
    assert result_to_dict(first) == result_to_dict(compact_once(prose.summarize, request_for(transcript, a, BUDGET)))
    one, request, again = _recompaction(mutants.forgets_on_recompaction, transcript, a, b)
    _, _, right = _recompaction(prose.summarize, transcript, a, b)
    lost = _lines(right) - _lines(again)
    assert len(lost) == 1
    fact = next(f for f in request.tags if kind_def(f.kind).statement(f) in lost)
    assert kind_def(fact.kind).statement(fact) in one.messages[0].text  # it had carried it
    assert fact.id not in again.self_report  # and does not claim it kept it
    assert again.journal and again.marker.tier == request.tier  # nothing else broken


def test_stale_marker_keeps_its_first_marker_after_a_tightening():
    transcript = found(_TRANSCRIPTS, _any)
    mutants._FIRST_MARKER.clear()
    try:
        request = request_for(transcript, transcript.compaction_points[0], BUDGET)
        first = compact_once(mutants.stale_marker, request)
        assert first.marker == compact_once(prose.summarize, request).marker  # correct while the tier holds
        other = request_for(transcript, len(transcript.turns), BUDGET)
        same_tier = compact_once(mutants.stale_marker, other)
        assert same_tier.marker == compact_once(prose.summarize, other).marker
        deeper = dataclasses.replace(other, tier=2, budget=BUDGET // 2)
        stale = compact_once(mutants.stale_marker, deeper)
        assert (stale.marker.tier, stale.marker.node) == (1, first.marker.node)
        assert stale.verified == ("journal-reversible",)  # it never claims what a session decides
        assert stale.messages == compact_once(prose.summarize, deeper).messages  # content unchanged
        assert wire(roll_back_journal(stale.messages, stale.journal)) == wire(deeper.turns)
    finally:
        mutants._FIRST_MARKER.clear()


def test_varies_differs_between_two_calls_with_the_same_request():
    transcript = found(_TRANSCRIPTS, _any)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    one, two = compact_once(mutants.varies, request), compact_once(mutants.varies, request)
    assert result_to_dict(one) != result_to_dict(two)
    right = _lines(compact_once(prose.summarize, request))
    for result in (one, two):  # the content is the correct compactor's, plus a draft stamp
        extra = _lines(result) - right
        assert len(extra) == 1 and next(iter(extra)).startswith("(draft ")
        assert right <= _lines(result)


def test_varies_differs_even_from_a_restarted_process(monkeypatch):
    """Asked again in a fresh worker its call counter starts over; the draft still differs."""
    transcript = found(_TRANSCRIPTS, _any)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    answers = []
    for _ in range(2):
        monkeypatch.setattr(mutants, "_DRAFTS", itertools.count(1))
        answers.append(result_to_dict(compact_once(mutants.varies, request)))
    assert answers[0] != answers[1]


@_FAST
@given(transcript=_TRANSCRIPTS)
def test_hash_only_journal_records_hashes_not_payloads(transcript):
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    result = compact_once(mutants.hash_only_journal, request)
    assert result.journal and all(e.removed is None for e in result.journal)
    right = compact_once(prose.summarize, request)
    assert [e.removed_sha256 for e in result.journal] == [e.removed_sha256 for e in right.journal]
    assert wire(apply_journal(request.turns, result.journal)) == wire(result.messages)  # it applies...
    with pytest.raises(AssertionError, match="hash-only"):  # ...but cannot be rolled back
        roll_back_journal(result.messages, result.journal)
    assert "journal-reversible" not in (result.verified or ())
    assert result.messages == right.messages and result.marker == right.marker


def test_drops_gates_late_keeps_gates_first_and_drops_them_on_recompaction():
    gates = {FactKind.GATING_FIELD, FactKind.PROHIBITION}
    transcript = found(_CALLS, _carried_across(frozenset(gates)))
    a, b = transcript.compaction_points[:2]
    one, request, again = _recompaction(mutants.drops_gates_late, transcript, a, b)
    assert one == compact_once(prose.summarize, request_for(transcript, a, BUDGET))
    live_gates = [f for f in request.tags if f.kind in gates]
    assert live_gates
    statements = _lines(again)
    assert not any(kind_def(f.kind).statement(f) in statements for f in live_gates)
    assert all(kind_def(f.kind).statement(f) in statements for f in request.tags if f.kind not in gates
               and f.kind is not FactKind.IN_FLIGHT_CALL)


def test_claims_verified_claims_handles_while_dropping_call_ids():
    transcript = found(_CALLS, _has_in_flight)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    result = compact_once(mutants.claims_verified, request)
    assert "handle-retained" in result.verified and len(result.verified) >= 10
    text = context_text(result)
    for fact in request.tags:
        if fact.kind is FactKind.IN_FLIGHT_CALL:
            assert fact.literals[0] not in text and not carried_as_handle(result, fact.literals[0])


def test_handles_in_prose_names_calls_only_in_prose():
    transcript = found(_CALLS, _has_in_flight)
    request = request_for(transcript, transcript.compaction_points[0], BUDGET)
    result = compact_once(mutants.handles_in_prose, request)
    assert result.ledger is None and not kept_calls(result)
    for call_id in unanswered(request.turns) | {f.literals[0] for f in request.tags
                                                  if f.kind is FactKind.IN_FLIGHT_CALL}:
        assert call_id in result.messages[0].text and not carried_as_handle(result, call_id)
    assert wire(roll_back_journal(result.messages, result.journal)) == wire(request.turns)


_PROTOCOL2_MUTANTS = {**mutants.SESSION_MUTANTS, "journal-reversible": mutants.hash_only_journal}


@pytest.mark.parametrize("invariant", sorted(set(_PROTOCOL2_MUTANTS) - {"summary-growth"}))
def test_session_mutants_round_trip_and_keep_the_budget(invariant):
    transcript = found(_CALLS, _has_in_flight)
    mutant = _PROTOCOL2_MUTANTS[invariant]
    mutants._FIRST_MARKER.clear()
    try:
        for rnd in run_session(mutant, tightened(transcript)):
            data = result_to_dict(rnd.result)
            assert result_from_dict(json.loads(json.dumps(data))) == rnd.result
            assert context_tokens(rnd.result.messages, rnd.result.ledger) <= rnd.request.budget
            assert rnd.result.journal and rnd.result.marker is not None
    finally:
        mutants._FIRST_MARKER.clear()
