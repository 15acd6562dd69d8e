"""The prose rules on phrasings our generators never use, and on the traps the notes describe.

Each row: a source fact, a context a summarizer might write, and whether the
oracle must flag it. Passing rows guard against false positives on correct
summarizers phrased differently from ours; failing rows are the failure modes.
"""

import pytest

from harness import Fact, FactKind, Fate, Polarity, Role, Status, ToolCall, Transcript, Turn
from harness._base._protocol import CompactionRequest, CompactionResult, LedgerEntry
from harness._base._tokens import count_tokens
from harness.oracles import Case, Severity, check, select

BUCKET = "s3://acme-prod-01/"
FIELD = "retry_limit"
MIGRATION = "0042_add_index"
CALL = "call_abc123def456"
APPROACH = "add_column_then_backfill"
CODE = "E4821"


def _fact(kind, literals, polarity=None, **details):
    return Fact("F0", kind, tuple(literals), 0, polarity, Fate(), tuple(sorted(details.items())))


FACTS = {
    "prohibition": _fact(FactKind.PROHIBITION, [BUCKET], Polarity.FORBID, category="bucket"),
    "threshold": _fact(FactKind.THRESHOLD, [FIELD, "3"], Polarity.REQUIRE, field=FIELD, operator="<=", value="3"),
    "commitment": _fact(FactKind.COMMITMENT, [MIGRATION], Polarity.REQUIRE, action="re-run", noun="migration",
                        past="re-ran", trigger="the schema diff is reviewed", object=MIGRATION),
    "negative": _fact(FactKind.NEGATIVE_FACT, [APPROACH], disposition="rejected"),
    "gating": _fact(FactKind.GATING_FIELD, ["max_retries", "0"], Polarity.REQUIRE, field="max_retries", value="0",
                    write="apply the patch"),
    "error": _fact(FactKind.UNRESOLVED_ERROR, [CODE], name="apply_patch", exception="TimeoutError"),
}


def _case(fact, context, *, claims=None, ledger=None):
    turns = (Turn(Role.USER, "source: " + " ".join(fact.literals)), Turn(Role.ASSISTANT, "ok"))
    transcript = Transcript(turns, (fact,), (2,))
    result = CompactionResult((Turn(Role.SYSTEM, context),), ledger=ledger, self_report=claims)
    return Case(transcript, 2, 10_000, result)


def _flags(oracle_id, case):
    return [f for f in check(case, select(only=[oracle_id])).findings]


ROWS = [
    # negation-polarity: prohibitions phrased every which way stay prohibitions ...
    ("negation-polarity", "prohibition", f"Hard constraint: {BUCKET} must never be written to.", None),
    ("negation-polarity", "prohibition", f"Do NOT deploy to {BUCKET} under any circumstances.", None),
    ("negation-polarity", "prohibition", f"Writes to {BUCKET} are forbidden.", None),
    ("negation-polarity", "prohibition", f"Use s3://acme-stage-07/ only; {BUCKET} is off-limits.", None),
    ("negation-polarity", "prohibition", f"PROHIBITED: {BUCKET}", None),
    ("negation-polarity", "prohibition", f"The user banned {BUCKET} outright.", None),
    # ... and softenings, rankings, bare mentions and borrowed negations are caught.
    ("negation-polarity", "prohibition", f"User prefers staging over {BUCKET}.", "violate"),
    ("negation-polarity", "prohibition", f"Avoid {BUCKET} if possible.", "violate"),
    ("negation-polarity", "prohibition", f"Ideally don't use {BUCKET}.", "violate"),
    ("negation-polarity", "prohibition", f"{BUCKET} was discussed earlier.", "violate"),
    ("negation-polarity", "prohibition", f"Don't worry about {BUCKET} permissions, they are fine.", "violate"),
    ("negation-polarity", "prohibition", f"Never mind the logs: {BUCKET} is the target bucket.", "violate"),
    ("literal-verbatim", "prohibition", "Never use s3://acme-prod/.", "violate"),
    ("literal-verbatim", "prohibition", f"never {BUCKET}", None),
    # threshold-exact: every exact form passes ...
    ("threshold-exact", "threshold", f"{FIELD} <= 3", None),
    ("threshold-exact", "threshold", f"{FIELD}: at most 3 attempts", None),
    ("threshold-exact", "threshold", f"Cap {FIELD} at 3 max.", None),
    ("threshold-exact", "threshold", f"{FIELD} must not exceed 3.", None),
    ("threshold-exact", "threshold", f"{FIELD} ≤ 3", None),
    ("threshold-exact", "threshold", f"Keep {FIELD} no higher than 3.", None),
    # ... a bare value keeps the number but loses the operator: honest but coarser ...
    ("threshold-exact", "threshold", f"{FIELD} = 3", "degrade"),
    # ... and loose, changed or misattributed numbers are violations.
    ("threshold-exact", "threshold", f"{FIELD}: a few", "violate"),
    ("threshold-exact", "threshold", f"{FIELD} roughly 3", "violate"),
    ("threshold-exact", "threshold", f"{FIELD} is limited", "violate"),
    ("threshold-exact", "threshold", f"{FIELD} >= 3", "violate"),
    ("threshold-exact", "threshold", f"{FIELD} <= 5", "violate"),
    ("threshold-exact", "threshold", f"max_retries <= 3, {FIELD} <= 5", "violate"),
    ("threshold-exact", "threshold", f"{FIELD} <= 5, max_retries <= 3", "violate"),
    ("threshold-exact", "threshold", "max_retries <= 3", "violate"),
    ("threshold-exact", "threshold", f"{FIELD} <= 30", "violate"),
    # commitment-retained: the pending action, however phrased ...
    ("commitment-retained", "commitment", f"TODO: re-run migration {MIGRATION} after schema review.", None),
    ("commitment-retained", "commitment", f"Still owe the user a rerun of {MIGRATION}.", None),
    ("commitment-retained", "commitment", f"Open item: {MIGRATION} must be re-executed once the diff is approved.", None),
    ("commitment-retained", "commitment", f"Schema diff for {MIGRATION} was reviewed.", "violate"),
    ("commitment-retained", "commitment", "Pending: re-run the migration.", "violate"),
    # completion-honest: an open commitment is never stated as done.
    ("completion-honest", "commitment", f"Migration {MIGRATION} is complete.", "violate"),
    ("completion-honest", "commitment", f"{MIGRATION}: done.", "violate"),
    ("completion-honest", "commitment", f"Re-ran {MIGRATION} successfully.", "violate"),
    ("completion-honest", "commitment", f"{MIGRATION} is not done yet; re-run pending.", None),
    ("completion-honest", "commitment", f"I will re-run {MIGRATION} once the schema diff has been reviewed.", None),
    # negative-fact-disposition
    ("negative-fact-disposition", "negative", f"Do not retry {APPROACH} (failed dry run).", None),
    ("negative-fact-disposition", "negative", f"{APPROACH}: ruled out by the user.", None),
    ("negative-fact-disposition", "negative", f"Dropping {APPROACH}. Rejected after review.", None),
    ("negative-fact-disposition", "negative", f"Explored {APPROACH} and other options.", "violate"),
    ("negative-fact-disposition", "negative", "Explored several options.", "violate"),
    # gating-field-retained
    ("gating-field-retained", "gating", "max_retries=0 must hold before the write.", None),
    ("gating-field-retained", "gating", "Config pins max_retries to 0.", None),
    ("gating-field-retained", "gating", "Config was read; applying the patch next.", "violate"),
    ("gating-field-retained", "gating", "max_retries is set in the config.", "violate"),
    ("gating-field-retained", "gating", "max_retries: 10", "violate"),
    # error-retained
    ("error-retained", "error", f"{CODE} (TimeoutError) is still unresolved.", None),
    ("error-retained", "error", f"{CODE} is not fixed yet.", None),
    ("error-retained", "error", f"{CODE} fixed.", "violate"),
    ("error-retained", "error", "Some errors happened in apply_patch.", "violate"),
]


@pytest.mark.parametrize("oracle_id, fact_key, context, expected", ROWS,
                         ids=[f"{r[0]}:{r[2][:40]}" for r in ROWS])
def test_prose_rules(oracle_id, fact_key, context, expected):
    findings = _flags(oracle_id, _case(FACTS[fact_key], context))
    if expected is None:
        assert findings == []
    else:
        assert [f.severity for f in findings] == [Severity(expected)]
        assert findings[0].fact_id == "F0" and findings[0].expected


def test_near_miss_names_the_paraphrase():
    (finding,) = _flags("literal-verbatim", _case(FACTS["prohibition"], "Never use s3://acme-prod/."))
    assert finding.found == "s3://acme-prod/"
    assert "paraphrased as s3://acme-prod/" in finding.detail


def test_softened_prohibition_quotes_the_sentence():
    (finding,) = _flags("negation-polarity", _case(FACTS["prohibition"], f"Ok. User prefers staging over {BUCKET}. Next."))
    assert finding.found == f"User prefers staging over {BUCKET}"


def test_literal_inside_an_identifier_is_not_a_cue():
    fact = _fact(FactKind.PROHIBITION, ["s3://nearly-rather-54/"], Polarity.FORBID, category="bucket")
    assert _flags("negation-polarity", _case(fact, "You must not touch s3://nearly-rather-54/.")) == []


def _in_flight_case(context, kept=()):
    call = ToolCall(CALL, "run_migration", "{}")
    turns = (Turn(Role.ASSISTANT, "Starting.", (call,)), Turn(Role.USER, "ok"))
    fact = Fact("F0", FactKind.IN_FLIGHT_CALL, (CALL,), 0, None, Fate(), (("name", "run_migration"),))
    result = CompactionResult((Turn(Role.SYSTEM, context), *kept))
    return Case(Transcript(turns, (fact,), (2,)), 2, 10_000, result)


@pytest.mark.parametrize(
    "context, handle, closure",
    [
        (f"{CALL} still running", None, None),
        (f"Call {CALL} (run_migration): UNRESOLVED", None, None),
        (f"Awaiting the result of {CALL}.", None, None),
        ("Started run_migration; waiting for the result.", "violate", None),
        (f"run_migration ({CALL}) returned ok.", None, "violate"),
        (f"Ran run_migration as {CALL}.", None, "violate"),
    ],
)
def test_in_flight_calls(context, handle, closure):
    case = _in_flight_case(context)
    for oracle_id, expected in (("handle-retained", handle), ("closure", closure)):
        findings = _flags(oracle_id, case)
        assert [f.severity.value for f in findings] == ([expected] if expected else [])


def test_handle_finding_names_the_surviving_intent():
    (finding,) = _flags("handle-retained", _in_flight_case("Started run_migration."))
    assert finding.found == "run_migration" and finding.expected == CALL


def test_kept_open_call_needs_no_mark():
    call_turn = Turn(Role.ASSISTANT, "Starting.", (ToolCall(CALL, "run_migration", "{}"),))
    assert _flags("closure", _in_flight_case("summary", kept=(call_turn,))) == []


def _supersession_case(context):
    turns = (Turn(Role.USER, "Use s3://old-01/."), Turn(Role.USER, "Switch from s3://old-01/ to s3://new-02/."))
    binding = Fact("F0", FactKind.LITERAL_BINDING, ("s3://old-01/",), 0, Polarity.REQUIRE,
                   Fate(Status.SUPERSEDED, 1, "F0.supersession"), (("category", "bucket"),))
    change = Fact("F0.supersession", FactKind.SUPERSESSION, ("s3://new-02/",), 1, Polarity.REQUIRE, Fate(),
                  (("category", "bucket"), ("old", "s3://old-01/"), ("target", "F0")))
    result = CompactionResult((Turn(Role.SYSTEM, context),))
    return Case(Transcript(turns, (binding, change), (2,)), 2, 10_000, result)


@pytest.mark.parametrize(
    "context, expected",
    [
        ("Bucket is now s3://new-02/ (s3://old-01/ retired).", None),
        ("Use s3://old-01/. Update: moved to s3://new-02/.", None),
        ("Use s3://new-02/ for uploads.", None),
        ("Use s3://old-01/ for uploads.", "violate"),
        ("Use s3://new-02/. Upload the build to s3://old-01/.", "violate"),
        ("Uploads go somewhere in S3.", "violate"),
    ],
)
def test_supersession(context, expected):
    findings = _flags("supersession", _supersession_case(context))
    assert [f.severity.value for f in findings] == ([expected] if expected else [])


def test_a_pending_call_made_before_the_change_is_a_record_not_a_restatement():
    """A call issued with the old value and still in flight is kept (the runtime re-attaches it after
    the summary); its arguments record what was called, they do not state the old value as current."""
    call = ToolCall(CALL, "upload_build", '{"bucket": "s3://old-01/"}')
    turns = (Turn(Role.USER, "Use s3://old-01/."), Turn(Role.ASSISTANT, "Uploading.", (call,)),
             Turn(Role.USER, "Switch from s3://old-01/ to s3://new-02/."))
    binding = Fact("F0", FactKind.LITERAL_BINDING, ("s3://old-01/",), 0, Polarity.REQUIRE,
                   Fate(Status.SUPERSEDED, 2, "F0.supersession"), (("category", "bucket"),))
    change = Fact("F0.supersession", FactKind.SUPERSESSION, ("s3://new-02/",), 2, Polarity.REQUIRE, Fate(),
                  (("category", "bucket"), ("old", "s3://old-01/"), ("target", "F0")))
    transcript = Transcript(turns, (binding, change), (3,))

    def judged(summary, kept=call):
        kept_turn = Turn(Role.ASSISTANT, "", (kept,))
        return _flags("supersession", Case(transcript, 3, 10_000, CompactionResult((Turn(Role.SYSTEM, summary), kept_turn))))

    assert judged("The bucket is now s3://new-02/.") == []
    restated = judged("The bucket is now s3://new-02/. Next: upload the build to s3://old-01/ again.")
    assert [f.severity for f in restated] == [Severity.VIOLATE]
    # A call the source never made is no record: what it names is read as a statement.
    made_up = ToolCall("call_000000000001", "upload_build", '{"bucket": "s3://old-01/"}')
    assert [f.severity for f in judged("The bucket is now s3://new-02/.", made_up)] == [Severity.VIOLATE]


def test_a_kept_call_with_another_number_is_not_the_limit_stated_again():
    call = ToolCall(CALL, "configure", '{"retry_limit": 5}')
    turns = (Turn(Role.ASSISTANT, "Configuring.", (call,)), Turn(Role.USER, f"Keep {FIELD} <= 3 from now on."))
    fact = Fact("F0", FactKind.THRESHOLD, (FIELD, "3"), 1, Polarity.REQUIRE, Fate(),
                (("field", FIELD), ("operator", "<="), ("value", "3")))
    transcript = Transcript(turns, (fact,), (2,))

    def judged(summary, kept=call):
        kept_turn = Turn(Role.ASSISTANT, "", (kept,))
        return _flags("threshold-exact", Case(transcript, 2, 10_000, CompactionResult((Turn(Role.SYSTEM, summary), kept_turn))))

    assert judged(f"Limit: {FIELD} <= 3.") == []
    assert judged(f"Limit: {FIELD} <= 3. Later we set {FIELD} = 5.") != []
    assert judged(f"Limit: {FIELD} <= 3.", ToolCall(CALL, "configure", '{"retry_limit": 6}')) != []


def _binding_case(context):
    turns = (Turn(Role.USER, "Use s3://stage-07/ for the bucket. Never use s3://prod-01/."),)
    facts = (
        Fact("F0", FactKind.PROHIBITION, ("s3://prod-01/",), 0, Polarity.FORBID),
        Fact("F0.allowed", FactKind.LITERAL_BINDING, ("s3://stage-07/",), 0, Polarity.REQUIRE),
    )
    return Case(Transcript(turns, facts, (1,)), 1, 10_000, CompactionResult((Turn(Role.SYSTEM, context),)))


@pytest.mark.parametrize(
    "context, expected",
    [
        ("Use s3://stage-07/, never s3://prod-01/.", []),
        ("Never use s3://prod-01/; keep retry_limit <= 3.", ["the context states an obligation on retry_limit"]),
        ("Never use s3://stage-07/.", []),  # the requirement inverted: force-kept's (below), not an invention
        ("Do not touch ops/000_legacy.sql.", ["the context states an obligation on ops/000_legacy.sql"]),
        ("We looked at ops/000_legacy.sql in passing.", []),
    ],
)
def test_no_invented_obligation(context, expected):
    findings = _flags("no-invented-obligation", _binding_case(context))
    assert [f.detail.split(",")[0] if "never mentions" in f.detail else f.detail for f in findings] == expected


@pytest.mark.parametrize("context", ["Never use s3://stage-07/.", "Do not write to s3://stage-07/ any more.",
                                     "The bucket need not be s3://stage-07/."])
def test_a_requirement_stated_with_the_opposite_polarity_is_reported_inverted_naming_its_fact(context):
    (finding,) = [f for f in check(_binding_case(context)).findings if f.fact_id == "F0.allowed"]
    assert (finding.invariant, finding.fact_id, str(finding.outcome)) == ("force-kept", "F0.allowed", "inverted")


def test_ledger_entry_counts_as_kept_only_when_exact():
    fact = FACTS["threshold"]
    exact = LedgerEntry("threshold", (FIELD, "3"), "require", details=(("operator", "<="),))
    wrong_op = LedgerEntry("threshold", (FIELD, "3"), "require", details=(("operator", ">="),))
    assert _flags("threshold-exact", _case(fact, "summary", ledger=(exact,))) == []
    assert [f.severity for f in _flags("threshold-exact", _case(fact, "summary", ledger=(wrong_op,)))] == [Severity.VIOLATE]


@pytest.mark.parametrize(
    "claims, ledger, expected",
    [
        (("F0",), None, ["violate"]),
        (("F0",), (LedgerEntry("error", (CODE,)),), []),  # the literal is carried, whatever the label
        (("F0",), (LedgerEntry("unresolved_error", (CODE,)),), []),
        ((CODE,), None, ["violate"]),
        (("made-up-item",), None, ["degrade"]),
        ((), None, []),
    ],
)
def test_self_report_is_checked_against_the_source(claims, ledger, expected):
    findings = _flags("self-report-honest", _case(FACTS["error"], "A summary.", claims=claims, ledger=ledger))
    assert [f.severity.value for f in findings] == expected


def test_tool_pairing_flags_orphans_both_ways():
    call = ToolCall("c1", "read_file", "{}")
    window = (Turn(Role.ASSISTANT, "", (call,)), Turn(Role.TOOL, "data", (), "c1"), Turn(Role.USER, "next"))
    transcript = Transcript(window, (), (3,))

    def pairing(*kept):
        return [f.detail.split(";")[0] for f in _flags("tool-pairing", Case(transcript, 3, 10_000, CompactionResult(kept)))]

    assert pairing(window[0], window[1]) == []
    assert pairing(window[1]) == ["the context keeps a result for c1 without the call before it"]
    assert pairing(window[0]) == ["the context keeps call c1 (read_file) but drops its result"]
    # each finding names the call it is about, so shrinking keeps that call and its answer together
    for kept in ((window[1],), (window[0],)):
        assert [f.call_id for f in _flags("tool-pairing", Case(transcript, 3, 10_000, CompactionResult(kept)))] == ["c1"]
    # a call whose result had not arrived by the boundary is in flight, not orphaned
    assert _flags("tool-pairing", Case(Transcript(window, (), (1,)), 1, 10_000, CompactionResult((window[0],)))) == []


def test_tool_pairing_names_the_earlier_compaction_that_dropped_a_call_in_flight():
    call = ToolCall("c1", "read_file", "{}")
    window = (Turn(Role.USER, "go"), Turn(Role.ASSISTANT, "", (call,)), Turn(Role.TOOL, "data", (), "c1"))
    transcript = Transcript(window, (), (2, 3))
    # Compaction 1 (after the call) dropped it; the runtime then appended its result to what came back.
    given = (Turn(Role.SYSTEM, "Earlier: the user said go."), window[2])
    request = CompactionRequest(given, 10_000, ())
    findings = _flags("tool-pairing", Case(transcript, 3, 10_000, CompactionResult(given), request=request))
    assert [f.detail for f in findings] == [
        "the context keeps a result for c1 without the call before it (an earlier compaction dropped the call "
        "while it was in flight); chat APIs reject this"]
    # Handed the call and its result, a compactor that drops the call is the one that broke the pair.
    whole = CompactionRequest(window, 10_000, ())
    findings = _flags("tool-pairing", Case(transcript, 3, 10_000, CompactionResult(given), request=whole))
    assert [f.detail for f in findings] == ["the context keeps a result for c1 without the call before it; chat APIs "
                                            "reject this"]


def test_a_budget_smaller_than_what_must_be_carried_is_a_degradation_until_the_result_carries_more():
    fact = FACTS["error"]
    least = LedgerEntry.verbatim(fact)
    at_least = CompactionResult((), ledger=(least,))
    transcript = _case(fact, "x").transcript
    tokens = count_tokens(least.render())
    (finding,) = _flags("budget-respected", Case(transcript, 2, tokens - 1, at_least))
    assert finding.severity is Severity.DEGRADE and "no correct result fits it" in finding.detail
    padded = CompactionResult((Turn(Role.SYSTEM, "Earlier turns: a long story of what happened before."),),
                              ledger=(least,))
    (finding,) = _flags("budget-respected", Case(transcript, 2, tokens - 1, padded))
    assert finding.severity is Severity.VIOLATE and finding.expected == f"<= {tokens} tokens"
    assert _flags("budget-respected", Case(transcript, 2, tokens, at_least)) == []


def test_budgets():
    fact = FACTS["error"]
    small = Case(_case(fact, "x").transcript, 2, 3, CompactionResult((Turn(Role.SYSTEM, "one two three four"),)))
    assert [f.expected for f in _flags("budget-respected", small)] == ["<= 3 tokens"]
    ledger = tuple(LedgerEntry("note", (f"item {i}",)) for i in range(20))
    big = Case(small.transcript, 2, 100, CompactionResult((Turn(Role.SYSTEM, "ok"),), ledger=ledger))
    assert [f.severity for f in _flags("ledger-budget", big)] == [Severity.DEGRADE]


def test_tool_pairing_blames_only_what_the_compactor_split():
    orphan_in_source = (Turn(Role.TOOL, "data", (), "c9"), Turn(Role.USER, "next"))
    case = Case(Transcript(orphan_in_source, (), (2,)), 2, 10_000, CompactionResult(orphan_in_source))
    assert _flags("tool-pairing", case) == []
