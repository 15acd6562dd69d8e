"""The session-level oracles on small hand-built sessions: each rule, both ways.

The proof against code nobody here wrote to pass them is in test_session_matrix.py (blind mutants and
correct compactors on generated sessions); these pin the edges of each rule.
"""

import pytest

from harness import Role, Transcript, Turn
from harness._base._model import Consumer, Effect, Fact, FactKind, Fate, Polarity, Status, ToolCall, Tightening
from harness._base._protocol import CompactionRequest, CompactionResult, JournalEntry, LedgerEntry, RecoveryMarker
from harness._app.judging._judge import judge_session
from harness._base._errors import InfraError
from harness.oracles import Case, SessionCase, Severity, check, check_session, select

BUCKET = "s3://acme-stage-07/"


def _system(text):
    return (Turn(Role.SYSTEM, text),)


def _session(transcript, results, *, tiers=None, verified=None, checked=frozenset(), again=(), may_vary=False,
             boundaries=None):
    boundaries = boundaries or transcript.compaction_points
    results = [r if isinstance(r, CompactionResult) else CompactionResult(r) for r in results]
    again = [r if r is None or isinstance(r, CompactionResult) else CompactionResult(r) for r in again]
    requests = tuple(CompactionRequest(transcript.turns[:b], 1000, (), tier)
                     for b, tier in zip(boundaries, tiers or [1] * len(boundaries)))
    return SessionCase(transcript, 1000, tuple(zip(boundaries, results)), requests=requests, checked=checked,
                       verified=tuple(verified or [frozenset()] * len(boundaries)), again=tuple(again),
                       may_vary=may_vary)


def _ids(case, oracle_id):
    return [f for f in check_session(case, select(only=[oracle_id]))]


def _chat(n):
    return [Turn(Role.USER, f"step {i}: looked at the logs") for i in range(n)]


# -- ledger-monotone ---------------------------------------------------------------------------


def _prohibited(n=12, fate=Fate()):
    turns = _chat(n)
    turns[1] = Turn(Role.USER, f"Never write to {BUCKET}.")
    if fate.turn is not None:
        turns[fate.turn] = Turn(Role.USER, f"You may use {BUCKET} again, the rule is withdrawn.")
    fact = Fact("P", FactKind.PROHIBITION, (BUCKET,), 1, Polarity.FORBID, fate)
    return Transcript(tuple(turns), (fact,), (3, 6, 9))


def test_ledger_monotone_catches_an_obligation_carried_then_lost():
    transcript = _prohibited()
    kept, lost = _system(f"Never write to {BUCKET}."), _system("Work continues on the logs.")
    (finding,) = _ids(_session(transcript, [kept, kept, lost]), "ledger-monotone")
    assert finding.round == 2 and finding.fact_id == "P" and "lost it" in finding.detail
    assert _ids(_session(transcript, [kept, lost, kept]), "ledger-monotone")[0].detail.endswith("came back in compaction 3")


def test_ledger_monotone_passes_a_kept_obligation_and_one_never_carried():
    transcript = _prohibited()
    kept, lost = _system(f"Never write to {BUCKET}."), _system("Work continues.")
    assert _ids(_session(transcript, [kept, kept, kept]), "ledger-monotone") == []
    # never carried at all: a per-round loss (literal-verbatim's), not a regression
    assert _ids(_session(transcript, [lost, lost, lost]), "ledger-monotone") == []


def test_ledger_monotone_lets_a_retracted_obligation_go():
    transcript = _prohibited(fate=Fate(Status.RETRACTED, 4, "R"))
    kept, lost = _system(f"Never write to {BUCKET}."), _system("Work continues.")
    assert _ids(_session(transcript, [kept, lost, lost]), "ledger-monotone") == []


# -- marker-depth ------------------------------------------------------------------------------


def _marked(tier, node):
    return CompactionResult(_system("summary"), marker=RecoveryMarker(tier, node))


def test_marker_depth_catches_a_marker_at_the_wrong_tier_and_a_reused_node():
    transcript = Transcript(tuple(_chat(12)), (), (3, 6, 9))
    wrong = _session(transcript, [_marked(1, "a"), _marked(1, "b"), _marked(2, "c")], tiers=[1, 2, 2])
    (finding,) = _ids(wrong, "marker-depth")
    assert finding.round == 1 and "tier 1" in finding.found
    reused = _session(transcript, [_marked(1, "a"), _marked(2, "a"), _marked(2, "c")], tiers=[1, 2, 2])
    (finding,) = _ids(reused, "marker-depth")
    assert finding.round == 1 and "invalidated" in finding.detail


def test_marker_depth_passes_fresh_nodes_at_the_framing_tier():
    transcript = Transcript(tuple(_chat(12)), (), (3, 6, 9))
    good = _session(transcript, [_marked(1, "a"), _marked(2, "b"), _marked(2, "b")], tiers=[1, 2, 2])
    assert _ids(good, "marker-depth") == []
    assert _ids(_session(transcript, [CompactionResult(_system("s"))] * 3, tiers=[1, 2, 3]), "marker-depth") == []


def test_a_marker_declaring_an_open_call_resolved_breaks_closure():
    call = ToolCall("call_77ab", "run_tests", "{}")
    turns = (Turn(Role.ASSISTANT, "", (call,)), Turn(Role.USER, "waiting"))
    fact = Fact("C", FactKind.IN_FLIGHT_CALL, ("call_77ab",), 0, details=(("arguments", "{}"), ("name", "run_tests")))
    transcript = Transcript(turns, (fact,), (2,))
    kept = (Turn(Role.ASSISTANT, "", (call,)), Turn(Role.SYSTEM, "call_77ab is UNRESOLVED"))
    declared = CompactionResult(kept, marker=RecoveryMarker(1, "n", ("call_77ab",)))
    findings = check(Case(transcript, 2, 1000, declared), select(only=["closure"])).findings
    assert [f.invariant for f in findings] == ["closure"] and "marker" in findings[0].detail
    honest = CompactionResult(kept, marker=RecoveryMarker(1, "n", ()))
    assert check(Case(transcript, 2, 1000, honest), select(only=["closure"])).findings == ()


# -- journal-reversible -------------------------------------------------------------------------


def _journal_case(journal, messages):
    transcript = Transcript(tuple(_chat(4)), (), (4,))
    return Case(transcript, 4, 1000, CompactionResult(messages, journal=journal))


def _journal_findings(journal, messages):
    return check(_journal_case(journal, messages), select(only=["journal-reversible"])).findings


def test_journal_that_applies_and_rolls_back_passes():
    window, summary = tuple(_chat(4)), _system("summary of four steps")
    assert _journal_findings((JournalEntry.replacing(window, 0, 3, summary),), summary + window[3:]) == ()
    two = (JournalEntry.replacing(window, 0, 2, summary), JournalEntry.replacing(summary + window[2:], 1, 2, ()))
    assert _journal_findings(two, summary + window[3:]) == ()


def test_journal_hashed_another_way_passes_when_its_payload_restores_the_window():
    # the payload is what rolls back; a team's own hash of it (another serialisation) is not judged
    window, summary = tuple(_chat(4)), _system("summary")
    assert _journal_findings((JournalEntry(0, 4, summary, window, "0" * 64),), summary) == ()


def test_journal_with_a_hash_and_no_payload_is_caught():
    window, summary = tuple(_chat(4)), _system("summary")
    full = JournalEntry.replacing(window, 0, 4, summary)
    hashed = JournalEntry(0, 4, summary, None, full.removed_sha256)
    (finding,) = _journal_findings((hashed,), summary)
    assert "only the hash" in finding.detail and finding.severity is Severity.VIOLATE


@pytest.mark.parametrize("how", ["payload differs", "wrong result", "out of range"])
def test_journal_that_does_not_describe_the_compaction_is_caught(how):
    window, summary = tuple(_chat(4)), _system("summary")
    entry = JournalEntry.replacing(window, 0, 4, summary)
    messages = summary
    if how == "payload differs":  # one character of the removed text changed: rollback would restore the wrong bytes
        changed = (Turn(Role.USER, window[0].text + "."), *window[1:])
        entry = JournalEntry(0, 4, summary, changed, entry.removed_sha256)
    elif how == "wrong result":
        messages = _system("another summary")
    else:
        entry = JournalEntry(2, 9, summary, window, None)
    assert [f.invariant for f in _journal_findings((entry,), messages)] == ["journal-reversible"]


# -- effect-window -------------------------------------------------------------------------------


def _effect_transcript():
    call = ToolCall("call_deploy1", "deploy_service", '{"change": "c-19"}')
    turns = _chat(10)
    turns[1] = Turn(Role.TOOL, "max_retries: 0", tool_call_id="call_cfg")
    turns[0] = Turn(Role.ASSISTANT, "", (ToolCall("call_cfg", "read_file", "{}"),))
    turns[7] = Turn(Role.ASSISTANT, "", (call,))
    turns[8] = Turn(Role.TOOL, "deployed", tool_call_id="call_deploy1")
    gate = Fact("G", FactKind.GATING_FIELD, ("max_retries", "0"), 1, Polarity.REQUIRE,
                details=(("field", "max_retries"), ("value", "0"), ("write", "deploy")))
    return Transcript(tuple(turns), (gate,), (4,), effects=(Effect(7, "call_deploy1", "deploy", ("G",)),))


def test_effect_window_catches_an_effect_while_the_gate_was_missing():
    transcript = _effect_transcript()
    (finding,) = _ids(_session(transcript, [_system("Progress: logs read.")]), "effect-window")
    assert finding.call_id == "call_deploy1" and "turn 7" in finding.detail and "max_retries" in finding.detail
    assert finding.fact_id == "G" and finding.round == 0


def test_effect_window_passes_a_kept_gate_a_restated_gate_and_an_effect_before_any_compaction():
    transcript = _effect_transcript()
    assert _ids(_session(transcript, [_system("Gating: max_retries: 0.")]), "effect-window") == []
    turns = list(transcript.turns)
    turns[5] = Turn(Role.USER, "Reminder: max_retries is 0.")
    restated = Transcript(tuple(turns), transcript.facts, (4,), effects=transcript.effects)
    assert _ids(_session(restated, [_system("Progress.")]), "effect-window") == []
    late = Transcript(transcript.turns, transcript.facts, (9,), effects=transcript.effects)
    assert _ids(_session(late, [_system("Progress.")]), "effect-window") == []


# -- handle-carried ------------------------------------------------------------------------------


def _call_across_rounds():
    call = ToolCall("call_5e1d", "run_migration", '{"target": "db"}')
    turns = _chat(12)
    turns[1] = Turn(Role.ASSISTANT, "Starting the migration.", (call,))
    turns[10] = Turn(Role.TOOL, "migration finished", tool_call_id="call_5e1d")
    fact = Fact("C", FactKind.IN_FLIGHT_CALL, ("call_5e1d",), 1, fate=Fate(Status.RESOLVED, 10),
                details=(("arguments", '{"target": "db"}'), ("name", "run_migration")))
    return Transcript(tuple(turns), (fact,), (4, 8)), call


def test_handle_carried_catches_a_handle_kept_only_in_prose():
    transcript, call = _call_across_rounds()
    structured = (Turn(Role.SYSTEM, "summary"), Turn(Role.ASSISTANT, "", (call,)))
    prose = _system("call_5e1d (run_migration) is still running: UNRESOLVED.")
    (finding,) = _ids(_session(transcript, [structured, prose]), "handle-carried")
    assert finding.round == 1 and "only in prose" in finding.detail and finding.call_id == "call_5e1d"


def test_handle_carried_passes_a_tool_call_or_a_ledger_entry():
    transcript, call = _call_across_rounds()
    structured = CompactionResult((Turn(Role.SYSTEM, "summary"), Turn(Role.ASSISTANT, "", (call,))))
    ledgered = CompactionResult(_system("summary"), ledger=(LedgerEntry("in_flight_call", ("call_5e1d",)),))
    assert _ids(_session(transcript, [structured, ledgered]), "handle-carried") == []


# -- deterministic ------------------------------------------------------------------------------


def test_deterministic_reports_two_answers_side_by_side_or_a_note_when_allowed_to_vary():
    transcript = Transcript(tuple(_chat(6)), (), (3, 6))
    first, other = _system("Summary.\nNever use X."), _system("Summary.\nNever use Y.")
    (finding,) = _ids(_session(transcript, [first, first], again=[None, other]), "deterministic")
    assert finding.round == 1 and finding.severity is Severity.VIOLATE
    assert "X" in finding.expected and "Y" in finding.found and "line 2" in finding.detail
    (note,) = _ids(_session(transcript, [first, first], again=[None, other], may_vary=True), "deterministic")
    assert note.severity is Severity.DEGRADE
    assert _ids(_session(transcript, [first, first], again=[first, first]), "deterministic") == []


# -- consumer-requirements ----------------------------------------------------------------------


def test_consumer_requirements_use_what_the_oracles_verified_never_the_claim():
    router = Consumer("router", ("handle-retained", "closure"))
    transcript = Transcript(tuple(_chat(6)), (), (3, 6), consumers=(router,))
    checked = frozenset({"handle-retained", "closure", "literal-verbatim"})
    claims = CompactionResult(_system("s"), verified=("handle-retained", "closure"))
    fine = _session(transcript, [claims, claims], checked=checked, verified=[checked, checked])
    assert _ids(fine, "consumer-requirements") == []
    broken = _session(transcript, [claims, claims], checked=checked, verified=[checked, checked - {"closure"}])
    (finding,) = _ids(broken, "consumer-requirements")
    assert finding.round == 1 and "claims it verified closure" in finding.detail
    unclaimed = CompactionResult(_system("s"))
    (finding,) = _ids(_session(transcript, [unclaimed, unclaimed], checked=checked,
                               verified=[checked, checked - {"closure"}]), "consumer-requirements")
    assert "router" in finding.detail and "closure was violated" in finding.detail
    unchecked = _session(transcript, [unclaimed], checked=frozenset({"handle-retained"}),
                         verified=[frozenset({"handle-retained"})], boundaries=(3,))
    assert "not checked" in _ids(unchecked, "consumer-requirements")[0].detail


def test_the_session_judge_hands_consumer_requirements_the_verdicts_of_each_round():
    # a summarizer that drops everything: handle-retained and closure fail on the open call in round 1
    transcript, _ = _call_across_rounds()
    transcript = Transcript(transcript.turns, transcript.facts, transcript.compaction_points,
                            consumers=(Consumer("router", ("handle-retained",)),))
    ev = judge_session(transcript, lambda request: CompactionResult(_system("nothing kept")), budget=1000)
    finding, rnd, boundary, _ = ev.violations[("consumer-requirements", None)]
    assert rnd == 0 and boundary == 4 and "handle-retained was violated" in finding.detail


def test_consumer_requirements_runs_the_per_result_oracles_it_relies_on_even_when_only_it_is_selected():
    transcript, _ = _call_across_rounds()
    claims = CompactionResult(_system("nothing kept"), verified=("handle-retained",))
    ev = judge_session(transcript, lambda request: claims, budget=1000, oracles=select(only=["consumer-requirements"]))
    assert list(ev.violations) == [("consumer-requirements", None)]  # handle-retained judged, not reported
    assert "claims it verified handle-retained" in ev.violations[("consumer-requirements", None)][0].detail


def test_a_degraded_class_is_not_verified_for_a_consumer():
    transcript = Transcript(tuple(_chat(6)), (), (3,), consumers=(Consumer("auditor", ("ledger-budget",)),))
    bloated = CompactionResult(_system("s"), ledger=tuple(LedgerEntry("note", (f"item-{i}",)) for i in range(60)))
    ev = judge_session(transcript, lambda request: bloated, budget=200)
    assert "ledger-budget" in ev.degradations
    assert "auditor" in ev.violations[("consumer-requirements", None)][0].detail


def test_tightenings_lower_the_budget_and_deepen_the_tier():
    transcript = Transcript(tuple(_chat(12)), (), (3, 6, 9), tightenings=(Tightening(1, 500),))
    seen = []

    def summarize(request):
        seen.append((request.budget, request.tier))
        return CompactionResult(_system("summary"))

    judge_session(transcript, summarize, budget=1000)
    assert seen == [(1000, 1), (500, 2), (500, 2)]


def test_a_second_answer_that_fails_is_the_summarizers_failure_never_a_skipped_check():
    transcript = Transcript(tuple(_chat(6)), (), (3,))
    calls = []

    def summarize(request):
        calls.append(request)
        if len(calls) > 1:
            raise InfraError("exception", "the summarizer raised RuntimeError: second time")
        return CompactionResult(_system("summary"))

    ev = judge_session(transcript, summarize, budget=1000, ask_again=lambda requests: [summarize(r) for r in requests])
    assert ev.infra is not None and "second time" in ev.infra.message and not ev.violations


def test_a_request_on_the_wire_names_duplicate_consumers():
    from harness._base._errors import SchemaError
    from harness._base._wire import request_from_wire, request_to_wire
    request = CompactionRequest(tuple(_chat(1)), 100, (), 2, (Consumer("a", ("closure",)),))
    data = request_to_wire(request, "rich")
    assert request_from_wire(data)[0] == request
    data["consumers"] = data["consumers"] * 2
    with pytest.raises(SchemaError, match="consumers"):
        request_from_wire(data)


def test_a_request_on_the_wire_keeps_which_turns_were_the_previous_output():
    from harness._base._errors import SchemaError
    from harness._base._wire import request_from_wire, request_to_wire
    request = CompactionRequest(tuple(_chat(3)), 100, (), 1, (), 2)
    data = request_to_wire(request, "rich")
    assert data["previous_output"] == 2 and request_from_wire(data)[0] == request
    assert "previous_output" not in request_to_wire(request, "messages")  # a messages summarizer sees messages only
    assert "previous_output" not in request_to_wire(CompactionRequest(tuple(_chat(3)), 100), "rich")
    data["previous_output"] = 4
    with pytest.raises(SchemaError, match="previous_output"):
        request_from_wire(data)
