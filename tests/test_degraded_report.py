"""The JSON report lists each degradation (``degraded``), with what was bent and where, beside the counts."""

import json
import re

import pytest

from harness import SchemaError
from harness._app.cli._main import main
from harness._app.reports._document import check_report
from harness._app.reports._shards import merge_shards

KEYS = ["invariant", "fact_kind", "fact_id", "detail", "expected", "found", "evidence", "outcome", "example", "round",
        "boundary"]
QUICK = ["--max-turns", "300", "--seed", "3", "--quiet", "--inline"]


def _report(tmp_path, *args):
    path = tmp_path / "report.json"
    code = main(["run", *args, "--report-json", str(path)])
    return code, json.loads(path.read_text(encoding="utf-8"))


def _counted(degraded):
    counts = {}
    for g in degraded:
        counts[g["invariant"]] = counts.get(g["invariant"], 0) + 1
    return counts


def test_a_degrading_summarizer_lists_each_degradation(tmp_path):
    code, report = _report(tmp_path, "--summarizer", "harness.summarizers.mutants:bloated_ledger", "--only",
                           "ledger-budget", "--examples", "5", *QUICK)
    assert code == 0 and report["violations"] == []
    degraded = report["degraded"]
    assert degraded and _counted(degraded) == report["degradations"]  # the counts stay, and agree
    assert list(report).index("degraded") == list(report).index("degradations") + 1
    for g in degraded:
        assert list(g) == KEYS
        assert re.fullmatch(r"the ledger takes \d+ tokens, over 12% of the budget \(\d+\)", g["detail"]), g
        assert re.fullmatch(r"<= \d+ tokens", g["expected"]) and re.fullmatch(r"\d+ tokens", g["found"])
        assert (g["invariant"], g["fact_kind"], g["fact_id"], g["evidence"], g["outcome"]) == (
            "ledger-budget", None, None, "shape", "malformed")
        assert 1 <= g["example"] <= report["examples_run"]
        assert isinstance(g["round"], int) and isinstance(g["boundary"], int) and g["boundary"] >= 1
    assert [(g["example"], g["round"]) for g in degraded] == sorted((g["example"], g["round"]) for g in degraded)
    check_report(report, "report.json")


def test_a_session_degradation_keeps_its_round(tmp_path):
    """``deterministic`` of a summarizer allowed to vary is a session finding that names its round."""
    code, report = _report(tmp_path, "--summarizer", "harness.summarizers.mutants:varies", "--only", "deterministic",
                           "--may-vary", "--examples", "10", "--max-turns", "60", "--seed", "3", "--quiet")
    assert code == 0 and report["degradations"]["deterministic"] == len(report["degraded"]) > 0
    for g in report["degraded"]:
        assert g["invariant"] == "deterministic" and g["round"] is not None and g["boundary"] is not None
        assert g["detail"].startswith(f"compaction {g['round'] + 1} asked again gave another result")


def test_a_run_that_does_not_degrade_lists_none(tmp_path):
    code, report = _report(tmp_path, "--summarizer", "harness.summarizers.mutants:rounds_threshold", "--only",
                           "threshold-exact", "--examples", "10", "--trials", "0", *QUICK)
    assert code == 1 and report["violations"]
    assert (report["degradations"], report["degraded"]) == ({}, [])


def _shard(index, degraded):
    return {"summarizer": "s", "seed": 1, "examples": 4, "shard": {"index": index, "of": 2}, "exit_code": 0,
            "violations": [], "examples_run": 2, "degradations": _counted(degraded), "degraded": degraded}


def test_merged_shards_list_every_shards_degradations():
    one = [dict.fromkeys(KEYS) | {"invariant": "ledger-budget", "example": 1}]
    two = [dict.fromkeys(KEYS) | {"invariant": "ledger-budget", "example": 2},
           dict.fromkeys(KEYS) | {"invariant": "deterministic", "example": 1}]
    merged = merge_shards([_shard(1, one), _shard(2, two)])
    assert merged["degraded"] == one + two
    assert merged["degradations"] == {"ledger-budget": 2, "deterministic": 1}
    assert merge_shards([_shard(1, one), {**_shard(2, []), "degraded": None}])["degraded"] == one


@pytest.mark.parametrize("degraded, field, expected", [
    ("many", "degraded", "a list"),
    ([{"detail": "bent"}], "degraded[0].invariant", "a value (the field is required)"),
    ([{"invariant": "ledger-budget", "round": "first"}], "degraded[0].round", "an integer"),
])
def test_a_damaged_degraded_list_is_refused_naming_the_field(degraded, field, expected):
    with pytest.raises(SchemaError) as raised:
        check_report({"summarizer": "s", "exit_code": 0, "violations": [], "degraded": degraded}, "r.json")
    assert f"field '{field}': expected {expected}" in str(raised.value)
