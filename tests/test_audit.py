"""The audit command: one real compaction judged from three JSON files, and the labelled set it measures."""

import json
from pathlib import Path

import pytest

from harness import Role, Turn
from harness._app.judging._audit import audit_files, obligations_from_dict
from harness._app.cli._main import main
from tests._labelled import judge, load_rows, table

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "audit"
FILES = ["--before", str(EXAMPLE / "before.json"), "--after", str(EXAMPLE / "after.json"),
         "--obligations", str(EXAMPLE / "obligations.json")]


def test_the_readme_example_finds_the_two_bent_obligations(capsys, tmp_path):
    report = tmp_path / "audit.json"
    assert main(["audit", *FILES, "--report-json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "✓ no-finance-bucket" in out and "✓ rollback-script" in out
    assert "✗ upload-cap" in out and "stated approximately ('roughly')" in out
    assert "✗ upload-call" in out and "says it finished" in out
    document = json.loads(report.read_text())
    assert document["exit_code"] == 1 and document["violations"] == 2
    assert sorted(document["kept"]) == ["no-finance-bucket", "rollback-script"]
    assert {(f["fact_id"], f["invariant"]) for f in document["findings"]} == {
        ("upload-cap", "threshold-exact"), ("upload-call", "closure")}


def test_a_faithful_context_passes(tmp_path, capsys):
    after = tmp_path / "after.json"
    after.write_text(json.dumps(
        "Never upload to s3://billing-exports-12/ (finance drop zone). max_parallel_uploads must stay at most 4. "
        "Tool call call_7d0e2b9c41aa (upload_artifacts) has not come back yet. "
        "Reuse scripts/rollback_ledger_v3.sh for any rollback; do not write a new one."))
    argv = ["audit", "--before", str(EXAMPLE / "before.json"), "--after", str(after),
            "--obligations", str(EXAMPLE / "obligations.json")]
    assert main(argv) == 0, capsys.readouterr().out
    assert "0 violations" in capsys.readouterr().out


def test_an_obligation_no_selected_oracle_judges_is_not_reported_kept(tmp_path, capsys):
    report = tmp_path / "audit.json"
    assert main(["audit", *FILES, "--only", "negation-polarity", "--report-json", str(report)]) == 4
    out = capsys.readouterr().out
    assert "✓ no-finance-bucket" in out and "? upload-cap" in out and "? rollback-script" in out
    assert "3 obligation(s) not judged by the selected oracles" in out
    document = json.loads(report.read_text())
    assert document["kept"] == ["no-finance-bucket"]
    assert sorted(document["unjudged"]) == ["rollback-script", "upload-call", "upload-cap"]


def test_a_budget_makes_the_budget_oracles_judge(tmp_path, capsys):
    assert main(["audit", *FILES, "--budget", "10", "--only", "budget-respected"]) == 1
    assert "budget-respected" in capsys.readouterr().out


@pytest.mark.parametrize("which, content, message", [
    ("obligations", {"obligations": [{"kind": "wish", "literals": ["x"]}]},
     "field 'obligations[0].kind': expected a defined fact kind"),
    ("obligations", {"obligations": [{"kind": "threshold", "literals": ["max_retries"]}]},
     "field 'obligations[0].literals': expected 2 literal(s) for a threshold"),
    ("obligations", {"obligations": [{"kind": "prohibition", "literals": ["x"], "origin_turn": 9}]},
     "field 'obligations[0].origin_turn': expected a turn of the 'before' messages (0..2)"),
    ("obligations", {"obligations": [{"kind": "prohibition", "literals": ["x"], "fate": {"status": "fulfilled", "turn": 1}}]},
     "field 'obligations[0].fate.status': expected a fate a prohibition can have (open, retracted)"),
    ("obligations", {"obligations": [{"kind": "threshold", "literals": ["max_parallel_uploads", "4"],
                                      "details": {"operator": "<="}, "fate": {"status": "superseded", "turn": 1}}]},
     "field 'obligations[0].fate.replacement': expected a value (the field is required)"),
    ("obligations", {"schema_version": 2, "obligations": []}, "field 'schema_version': expected 1, got 2"),
    ("before", [{"role": "robot", "content": "hi"}], "field 'message [0].role': expected one of system"),
    ("before", [], "field '<root>': expected a non-empty list of chat messages"),
    ("after", 42, "field '<root>': expected a context: a string, a list of chat messages, or"),
    ("obligations", {"obligations": [{"kind": "threshold", "literals": ["max_parallel_uploads", "4"]}]},
     "field 'obligations[0].details.operator': expected one of <=, >=, <, >, =="),
    ("obligations", {"obligations": [{"kind": "prohibition", "literals": ["s3://billing-exports-12/"],
                                      "detail": {}}]},
     "field 'obligations[0].detail': expected one of the fields id, kind, literals"),
    ("obligations", {"obligations": [{"kind": "prohibition", "literals": ["s3://not-in-the-log-1/"]}]},
     "field 'obligations[0].literals': expected a literal that appears in the 'before' messages"),
    ("obligations", {"obligations": []}, "field 'obligations': expected at least one obligation"),
])
def test_bad_input_names_the_file_and_field(tmp_path, capsys, which, content, message):
    files = {"before": EXAMPLE / "before.json", "after": EXAMPLE / "after.json",
             "obligations": EXAMPLE / "obligations.json"}
    bad = tmp_path / f"{which}.json"
    bad.write_text(json.dumps(content))
    files[which] = bad
    argv = ["audit"] + [x for k, v in files.items() for x in (f"--{k}", str(v))]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{bad}: " in err and message in err, err


def test_a_call_whose_result_is_in_the_log_cannot_be_left_open(tmp_path, capsys):
    before = tmp_path / "before.json"
    before.write_text(json.dumps([
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_lag_88f1", "type": "function", "function": {"name": "check_lag", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_lag_88f1", "content": "lag 2.4s"}]))
    obligations = tmp_path / "obligations.json"
    obligations.write_text(json.dumps({"obligations": [{"kind": "in_flight_call", "literals": ["call_lag_88f1"]}]}))
    argv = ["audit", "--before", str(before), "--after", str(EXAMPLE / "after.json"), "--obligations", str(obligations)]
    assert main(argv) == 2
    assert "field 'obligations[0].fate': expected status 'resolved' with turn 1" in capsys.readouterr().err


def test_a_json_object_is_read_as_the_summary_itself(tmp_path, capsys):
    after = tmp_path / "after.json"
    after.write_text(json.dumps({"forbidden_targets": ["s3://billing-exports-12/"],
                                 "limits": {"max_parallel_uploads": "at most 4"},
                                 "in_flight_calls": [{"id": "call_7d0e2b9c41aa", "status": "no result yet"}],
                                 "existing_artifacts": [{"path": "scripts/rollback_ledger_v3.sh", "use": "reuse"}]}))
    argv = ["audit", "--before", str(EXAMPLE / "before.json"), "--after", str(after),
            "--obligations", str(EXAMPLE / "obligations.json")]
    assert main(argv) == 0, capsys.readouterr().out


def test_a_superseded_obligation_brings_its_change():
    facts = obligations_from_dict({"obligations": [
        {"kind": "threshold", "literals": ["max_retries", "3"], "details": {"operator": "<="},
         "fate": {"status": "superseded", "turn": 1, "replacement": "5"}}]},
        turns=(Turn(Role.USER, "max_retries at most 3"), Turn(Role.USER, "make max_retries 5")))
    original, change = facts
    assert change.kind == "supersession" and change.literals == ("max_retries", "5")
    assert dict(change.details) == {"field": "max_retries", "old": "3", "value": "5", "operator": "<=",
                                    "target": original.id, "target_kind": "threshold"}


def test_the_audit_api_matches_the_command():
    result = audit_files(EXAMPLE / "before.json", EXAMPLE / "after.json", EXAMPLE / "obligations.json")
    assert {f.invariant for f in result.verdict.violations} == {"threshold-exact", "closure"}


# -- the labelled phrasing set (tests/labelled/*.jsonl, written without reading the oracles) ----------

_JUDGED = None


def _judged():
    global _JUDGED
    if _JUDGED is None:
        _JUDGED = [judge(row) for row in load_rows()]
    return _JUDGED


def test_the_labelled_set_is_large_and_covers_every_kind_both_ways():
    rows = load_rows()
    assert len(rows) >= 900
    per_kind = {(r.kind, r.expected) for r in rows}
    kinds = {r.kind for r in rows}
    assert len(kinds) == 9 and all((k, e) in per_kind for k in kinds for e in ("kept", "broken"))


def test_no_violation_on_any_kept_row():
    false_alarms = [(j.row.where, j.row.id, j.findings) for j in _judged()
                    if j.row.expected == "kept" and j.predicted == "broken"]
    assert false_alarms == []


def test_recall_on_broken_rows_stays_where_it_is():
    """Broken rows violated (an unclear reading is not a catch): the floor is what the oracles reached on the
    first 911 rows (95.1%, each kind at least 92%), and still reach with round 4's 149 blind rows (1060 rows:
    95.1%, each kind at least 93%); it only moves up."""
    rows = table(_judged(), lambda r: r.kind)
    assert sum(r.caught for r in rows) / sum(r.broken for r in rows) >= 0.95
    for r in rows:
        assert r.caught / r.broken >= 0.92, r.group


def test_a_caught_row_says_what_happened_as_its_labeller_did():
    """The rows written with the word a careful reader uses for what happened (round 4): most caught rows
    carry it. 66 of 74 today; the rest are bare mentions the labeller called dropped (the literal stands,
    so the reading says weakened) and two invented reasons read as inverted."""
    judged = [j for j in _judged() if j.row.outcome and j.predicted == "broken"]
    agreeing = [j for j in judged if j.row.outcome in j.outcomes]
    assert len(judged) >= 70 and len(agreeing) >= 0.85 * len(judged), [
        (j.row.id, j.row.outcome, j.outcomes) for j in judged if j not in agreeing]


def test_at_most_a_tenth_of_either_side_is_left_unclear():
    rows = table(_judged(), lambda r: r.kind)
    assert sum(r.kept_unclear for r in rows) <= 0.1 * sum(r.kept for r in rows)
    assert sum(r.broken_unclear for r in rows) <= 0.1 * sum(r.broken for r in rows)


def test_the_labelled_rows_are_well_formed():
    for row in load_rows():
        assert row.expected in ("kept", "broken"), row.where
        judge(row)  # every row loads through the audit path without a schema error
