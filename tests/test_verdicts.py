"""Three verdicts (issue 29): a violation names its evidence, what the reading cannot settle is unclear.

The oracle-level rows pin the mechanism each rule rests on (scope, labels, structure, time clauses,
notation); the labelled sets in ``tests/labelled`` (written without reading the oracles) measure it.
The run-level tests follow an unclear reading through the judge, the reports and the exit code.
"""

import json

import pytest

from harness import Fact, FactKind, Fate, Polarity, Role, Transcript, Turn
from harness._app.cli._main import main
from harness._app.reports._junit import run_junit
from harness._base._protocol import CompactionResult
from harness.oracles import Case, Evidence, Severity, check, select
from harness.oracles._structure import reading_lines
from harness.oracles._session_oracles import CEILING_SHARE, growth_round

BUCKET = "s3://acme-prod-01/"


def _fact(kind, literals, polarity=None, fate=Fate(), **details):
    return Fact("F0", kind, tuple(literals), 0, polarity, fate, tuple(sorted(details.items())))


PROHIBITION = _fact(FactKind.PROHIBITION, [BUCKET], Polarity.FORBID, category="bucket")
GATE = _fact(FactKind.GATING_FIELD, ["config_lock", "1"], Polarity.REQUIRE, field="config_lock", value="1",
             write="write config/prod.yaml")
LIMIT = _fact(FactKind.THRESHOLD, ["max_retries", "3"], Polarity.REQUIRE, field="max_retries", operator="<=",
              value="3")
CALL = _fact(FactKind.IN_FLIGHT_CALL, ["call_9b8a7f6e5d4c"], name="request_cert")
ERROR = _fact(FactKind.UNRESOLVED_ERROR, ["E8241"], name="compile_assets", exception="TimeoutError")
BINDING = _fact(FactKind.LITERAL_BINDING, ["ap-southeast-2"], Polarity.REQUIRE, category="region")


def _verdict(fact, context, only):
    turns = (Turn(Role.USER, "source: " + " ".join(fact.literals)), Turn(Role.ASSISTANT, "ok"))
    case = Case(Transcript(turns, (fact,), (2,)), 2, 10_000, CompactionResult((Turn(Role.SYSTEM, context),)))
    return check(case, select(only=[only]))


@pytest.mark.parametrize("fact, oracle, context, evidence", [
    (PROHIBITION, "negation-polarity", f"Checked {BUCKET}: 1.2 s of lag, healthy.", Evidence.BARE_MENTION),
    (PROHIBITION, "negation-polarity", f"The user prefers staging over {BUCKET}.", Evidence.WEAKENED),
    (PROHIBITION, "negation-polarity", '{"allowed_outputs": ["' + BUCKET + '"]}', Evidence.CONTRARY),
    (PROHIBITION, "literal-verbatim", "Never write to s3://acme-prod-02/.", Evidence.NEAR_MISS),
    (LIMIT, "threshold-exact", "Keep max_retries to a few.", Evidence.WEAKENED),
    (LIMIT, "threshold-exact", "max_retries matters here.", Evidence.ABSENT),
    (LIMIT, "threshold-exact", "max_retries <= 5.", Evidence.CHANGED),
    (GATE, "gating-field-retained", "Make sure config_lock is not 1 before writing.", Evidence.CHANGED),
    (ERROR, "error-retained", "One E8241 seen during the build; most likely a transient blip.", Evidence.CONTRARY),
    (BINDING, "force-kept", '{"region": "us-east-1", "avoid_regions": ["ap-southeast-2"]}', Evidence.CONTRARY),
])
def test_a_violation_names_the_evidence_it_rests_on(fact, oracle, context, evidence):
    (finding,) = _verdict(fact, context, oracle).violations
    assert finding.evidence is evidence


@pytest.mark.parametrize("fact, oracle, context", [
    # a negation reaches the end of its clause, however far its object stands
    (PROHIBITION, "negation-polarity", f"The user asked that we not open, cat, or in any other way read "
                                       f"(not even to check its formatting) any object under {BUCKET}."),
    # a label governs what is listed under it, however long the list
    (PROHIBITION, "negation-polarity", "Do not touch: s3://a-01/, s3://b-02/, s3://c-03/, s3://d-04/, s3://e-05/, "
                                       f"s3://f-06/, {BUCKET}"),
    # XML elements are read as the headings and keys they are
    (PROHIBITION, "negation-polarity", f'<state><forbidden><target kind="bucket">{BUCKET}</target></forbidden></state>'),
    # a modal inside a clause that says when does not weaken the main clause
    (GATE, "force-kept", "Before the agent could write config/prod.yaml, config_lock had to be 1."),
    # a key made of words says how a value binds, and is no field of its own
    (GATE, "gating-field-retained", '{"gate": {"field": "config_lock", "must_be": "1", "current": "0"}}'),
    # a later sentence that goes on about the call ("That request") carries its open mark
    (CALL, "closure", "The agent requested a certificate (call call_9b8a7f6e5d4c). That request has not returned."),
    # a key answered false says the opposite of its name
    (ERROR, "error-retained", "errors:\n  - code: E8241\n    resolved: false\n"),
])
def test_correct_phrasings_the_reading_now_attaches_are_kept(fact, oracle, context):
    assert _verdict(fact, context, oracle).findings == ()


def test_words_of_force_the_reading_cannot_attach_make_a_reading_unclear_not_a_violation():
    verdict = _verdict(PROHIBITION, f"To the endpoint {BUCKET} we may make no calls, also not for a test.",
                       "negation-polarity")
    assert verdict.violations == ()
    (finding,) = verdict.unclear
    assert finding.severity is Severity.UNCLEAR and finding.evidence is Evidence.UNATTACHED
    assert finding.found.startswith("To the endpoint") and finding.expected == f"never {BUCKET}"


def test_a_threshold_whose_only_number_is_history_is_reported_dropped_naming_the_decoy():
    (finding,) = _verdict(LIMIT, "Last quarter's config had max_retries at 25.", "threshold-exact").violations
    assert "dropped" in finding.detail and "(25)" in finding.detail and "past" in finding.detail
    assert finding.found.startswith("Last quarter's config had max_retries at 25")


def test_checkboxes_and_xml_declarations_are_read_as_what_they_say():
    assert reading_lines("- [x] rotate the key\n- [ ] wait for the rollout") == [
        "done: rotate the key", "pending: wait for the rollout"]
    assert reading_lines('<?xml version="1.0" encoding="UTF-8"?>\n<state open_items="0"/>') == [
        "state (open_items 0)"]


@pytest.mark.parametrize("token, notation", [
    ("x1", True), ("w/o", True), ("use/touch", True), ("2024-05-01", True), ("30s", True),
    ("ops/000_legacy.sql", False), ("db-prod-03", False), ("v2.1.0", False),
])
def test_tallies_and_abbreviations_are_notation_not_invented_names(token, notation):
    source = Transcript((Turn(Role.USER, "Tidy the repo."), Turn(Role.ASSISTANT, "ok")), (), (2,))
    context = f"Never modify {token} again."
    case = Case(source, 2, 10_000, CompactionResult((Turn(Role.SYSTEM, context),)))
    flagged = [f.found for f in check(case, select(only=["no-invented-obligation"])).violations]
    assert (flagged == []) is notation


# -- summary-growth: a summary that fills a fixed room is bounded ---------------------------------------------

def test_growth_that_stops_below_the_ceiling_is_no_finding_and_growth_past_it_is_settled():
    capped = [10, 20, 30, 40, 50, 51, 50, 51]  # fills its room, then holds
    assert growth_round(capped, [1] * len(capped), ceiling=100) is None
    unbounded = [10, 20, 30, 40, 50, 70, 90, 110]
    r, reason, settled = growth_round(unbounded, [1] * len(unbounded), ceiling=100)
    assert settled and r == 7 and "without stopping" in reason
    r, reason, settled = growth_round(unbounded[:6], [1] * 6, ceiling=100)
    assert not settled and r == 4 and "session ended" in reason
    assert 0 < CEILING_SHARE < 0.8  # below the compaction trigger, or a growing summary is never settled


# -- an unclear reading through a run -------------------------------------------------------------------------

_SUMMARIZER = '''
from harness import CompactionResult, FactKind, Role, Turn, kind_def


def summarize(request):
    """Every prohibition kept, phrased so that no cue list of ours attaches its force to it; the rest
    stated as the kinds' own sentences."""
    lines = [f"To {f.literals[0]} we may make no calls, also not for a test." if f.kind is FactKind.PROHIBITION
             else kind_def(f.kind).statement(f) for f in request.tags]
    return CompactionResult((Turn(Role.SYSTEM, " ".join(lines) or "Nothing to carry."),))


summarize.compaction_protocol = "rich"
'''


@pytest.fixture
def hedged(tmp_path):
    path = tmp_path / "hedged.py"
    path.write_text(_SUMMARIZER)
    return f"{path}:summarize"


def _run(tmp_path, spec, *extra):
    report = tmp_path / "report.json"
    code = main(["run", "--summarizer", spec, "--only", "negation-polarity,literal-verbatim", "--examples", "15",
                 "--seed", "3",
                 "--max-turns", "60", "--quiet", "--inline", "--report-json", str(report), *extra])
    return code, json.loads(report.read_text())


def test_an_unclear_reading_is_listed_for_review_and_never_fails_the_run(tmp_path, hedged, capsys):
    code, report = _run(tmp_path, hedged)
    out = capsys.readouterr().out
    assert code == 0 and report["exit_code"] == 0 and report["violations"] == []
    assert report["unclear"], "the hedged prohibitions should be unclear"
    first = report["unclear"][0]
    assert first["invariant"] == "negation-polarity" and first["why"] == "unattached"
    assert first["sentence"].startswith("To ") and "we may make no calls" in first["sentence"]
    assert first["obligation"].startswith("never ")
    assert "? unclear readings" in out and "for review" in out.splitlines()[-1]
    junit = run_junit(report, oracles=report["oracles"])
    assert 'name="unclear"' in junit and "<skipped" in junit and "<failure" not in junit


def test_unclear_fail_makes_the_same_run_fail(tmp_path, hedged, capsys):
    code, report = _run(tmp_path, hedged, "--unclear", "fail")
    assert code == 1 and report["exit_code"] == 1 and report["violations"] == [] and report["unclear"]
    assert report["unclear_mode"] == "fail"
    assert "--unclear fail" in capsys.readouterr().out
    assert "<failure" in run_junit(report, oracles=report["oracles"])


def test_survival_counts_an_unclear_obligation_apart(tmp_path, hedged):
    _, report = _run(tmp_path, hedged)
    rounds = report["survival"]["kinds"]["prohibition"]
    assert sum(t["unclear"] for t in rounds) > 0
    assert all(t["kept"] + t["bent"] + t["unclear"] <= t["live"] for t in rounds)


def _ledger_verdict(fact, entries, only):
    from harness import LedgerEntry

    turns = (Turn(Role.USER, "source: " + " ".join(fact.literals)), Turn(Role.ASSISTANT, "ok"))
    ledger = tuple(LedgerEntry(kind, (literal,), polarity) for kind, literal, polarity in entries)
    result = CompactionResult((Turn(Role.SYSTEM, "Summary of the work so far."),), ledger=ledger)
    return check(Case(Transcript(turns, (fact,), (2,)), 2, 10_000, result), select(only=[only]))


@pytest.mark.parametrize("entries, evidence", [
    ([("literal_binding", BUCKET, "require")], Evidence.CONTRARY),  # the ledger says: use it
    ([("prohibition", BUCKET, "require")], Evidence.CONTRARY),
    ([("artifact_reference", BUCKET, None)], Evidence.BARE_MENTION),  # carried, with no force
    ([("prohibition", BUCKET, "forbid")], None),
    ([("prohibition", BUCKET, None)], None),  # the kind is the prohibition
    ([("artifact_reference", BUCKET, None), ("literal_binding", BUCKET, "forbid")], None),
])
def test_a_prohibition_carried_only_by_the_ledger_keeps_its_polarity_there(entries, evidence):
    verdict = _ledger_verdict(PROHIBITION, entries, "negation-polarity")
    assert [f.evidence for f in verdict.violations] == ([evidence] if evidence else [])
    assert not verdict.unclear
