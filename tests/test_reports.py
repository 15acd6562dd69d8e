"""The report files: JUnit XML against the schema CI systems read, ``report`` on saved JSON, ``compare``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness._app._cli import main
from harness._app._compare import Comparison, Side
from harness._app._junit import replay_junit, run_junit
from harness._app._replay import replay_corpus
from harness._app._runner import RunConfig, run
from harness._app._report import REPORT_VERSION, report_dict

SCHEMA = Path(__file__).resolve().parent / "assets" / "junit-10.xsd"
CORRECT = "harness.summarizers.prose:summarize"
MUTANT = "harness.summarizers.mutants:softens_prohibition"
FAST = ["--quiet", "--inline", "--max-turns", "200"]


@pytest.fixture(scope="module")
def junit_schema():
    try:
        import xmlschema  # lazy: only the JUnit tests need it
    except ImportError:
        xmlschema = None
    why = "xmlschema is not installed (pip install -e '.[dev]')" if xmlschema is None else \
        None if SCHEMA.exists() else f"{SCHEMA} is missing (python tests/assets/fetch_assets.py fetches it)"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must validate JUnit XML: {why}")
        pytest.skip(why)
    return xmlschema.XMLSchema(str(SCHEMA))


def _cases(xml: str) -> dict[str, str]:
    """Each test case by name: "passed", "failure", "error" or "skipped"."""
    from xml.etree import ElementTree as ET
    out = {}
    for case in ET.fromstring(xml).iter("testcase"):
        out[case.get("name")] = next((tag for tag in ("failure", "error", "skipped") if case.find(tag) is not None),
                                     "passed")
    return out


@pytest.fixture(scope="module")
def mutant_run():
    return run(RunConfig(summarizer=MUTANT, examples=15, seed=11, max_turns=200, quiet=True, isolation="inline"))


def test_a_run_is_one_case_per_oracle_failing_where_the_run_failed(junit_schema, mutant_run):
    document = report_dict(mutant_run)
    xml = run_junit(document, oracles=document["oracles"])
    junit_schema.validate(xml)
    cases = _cases(xml)
    assert set(cases) == set(document["oracles"]) | {"summarizer", "complete"}
    assert {name for name, status in cases.items() if status == "failure"} == {"negation-polarity"}
    assert cases["summarizer"] == cases["complete"] == "passed"
    assert document["violations"][0]["reproduce"] in xml


def test_a_clean_run_passes_every_case_and_an_incomplete_one_does_not(junit_schema):
    clean = report_dict(run(RunConfig(summarizer=CORRECT, examples=8, seed=3, max_turns=200, quiet=True,
                                      isolation="inline")))
    xml = run_junit(clean, oracles=clean["oracles"])
    junit_schema.validate(xml)
    assert set(_cases(xml).values()) == {"passed"}
    cut = dict(clean, incomplete="--max-time 5 reached")
    xml = run_junit(cut, oracles=cut["oracles"])
    junit_schema.validate(xml)
    assert _cases(xml)["complete"] == "error"


def test_what_xml_cannot_carry_is_escaped_not_written_raw(junit_schema, mutant_run):
    document = report_dict(mutant_run)
    document["violations"][0]["detail"] = "escape \x1b[31m and NUL \x00 and a lone \ud800 surrogate"
    xml = run_junit(document, oracles=document["oracles"])
    junit_schema.validate(xml)
    assert "\\x1b[31m" in xml and "\x1b" not in xml


def test_a_summarizer_failure_is_an_error_case(junit_schema, mutant_run):
    document = report_dict(mutant_run)
    document["infra_errors"] = [{"kind": "raised", "message": "ValueError: boom", "example": 3, "output": ""}]
    xml = run_junit(document, oracles=document["oracles"])
    junit_schema.validate(xml)
    assert _cases(xml)["summarizer"] == "error"


def test_a_replay_is_one_case_per_corpus_entry(junit_schema, tmp_path):
    corpus = tmp_path / "corpus"
    assert main(["run", "--summarizer", MUTANT, "--examples", "15", "--seed", "11", *FAST,
                 "--corpus", str(corpus)]) == 1
    (tmp_path / "corpus" / "garbage.json").write_text("{not json")
    entries = sorted(p.name for p in corpus.glob("*.json") if p.name != "garbage.json")
    for spec, expected in ((MUTANT, "failure"), (CORRECT, "passed")):
        replay = replay_corpus(corpus, RunConfig(summarizer=spec, quiet=True, isolation="inline"))
        xml = replay_junit(replay, spec)
        junit_schema.validate(xml)
        cases = _cases(xml)
        assert {name: status for name, status in cases.items() if name in entries} == dict.fromkeys(entries, expected)
        assert list(cases.values()).count("error") == 1  # the unreadable file
    out = tmp_path / "replay.xml"
    assert main(["replay", str(corpus), "--summarizer", MUTANT, "--quiet", "--inline", "--junit-xml", str(out)]) == 1
    junit_schema.validate(out.read_text())


# -- compare ----------------------------------------------------------------------------------------------------------

def _compare(tmp_path, first: str, second: str, *extra: str) -> tuple[int, dict]:
    out = tmp_path / f"compare-{first.rsplit(':', 1)[1]}.json"
    code = main(["compare", "--summarizer", first, "--summarizer", second, "--examples", "15", "--seed", "11",
                 *FAST, "--report-json", str(out), *extra])
    return code, json.loads(out.read_text())


def test_compare_lists_exactly_the_mutants_invariant_as_new_and_exits_1(tmp_path, capsys):
    code, document = _compare(tmp_path, CORRECT, MUTANT)
    assert code == 1
    (against,) = document["against_baseline"]
    assert {(item["invariant"], item["fact_kind"]) for item in against["new"]} == {("negation-polarity", "prohibition")}
    assert against["fixed"] == []
    out = capsys.readouterr().out
    assert "1 new, 0 fixed" in out and "new   ✗ negation-polarity (prohibition)" in out


def test_compare_the_other_way_lists_it_as_fixed_and_exits_0(tmp_path, capsys):
    code, document = _compare(tmp_path, MUTANT, CORRECT)
    assert code == 0
    (against,) = document["against_baseline"]
    assert against["new"] == []
    assert {(item["invariant"], item["fact_kind"]) for item in against["fixed"]} == {("negation-polarity", "prohibition")}
    assert "0 new, 1 fixed" in capsys.readouterr().out


def test_compare_replays_the_corpus_with_every_summarizer(tmp_path, junit_schema):
    corpus = tmp_path / "corpus"
    assert main(["run", "--summarizer", MUTANT, "--examples", "15", "--seed", "11", *FAST, "--corpus", str(corpus)]) == 1
    xml = tmp_path / "compare.xml"
    code, document = _compare(tmp_path, CORRECT, MUTANT, "--corpus", str(corpus), "--junit-xml", str(xml))
    assert code == 1
    (against,) = document["against_baseline"]
    corpus_new = [item for item in against["new"] if item["where"] == "corpus"]
    assert {item["entry"] for item in corpus_new} == {p.name for p in corpus.glob("*.json")}
    assert {item["invariant"] for item in against["new"]} == {"negation-polarity"}
    junit_schema.validate(xml.read_text())
    assert list(_cases(xml.read_text()).values()).count("failure") == 1


def test_a_summarizer_that_fails_where_the_baseline_did_not_is_a_new_failure(mutant_run):
    clean = run(RunConfig(summarizer=CORRECT, examples=4, seed=3, max_turns=200, quiet=True, isolation="inline"))
    from harness._app._runner import InfraFailure
    import dataclasses
    broken = dataclasses.replace(clean, infra_errors=(InfraFailure("timeout", "no answer in 30 s", 2),))
    comparison = Comparison((Side(CORRECT, clean), Side("team:broken", broken)))
    assert comparison.exit_code == 1
    assert list(comparison.new(comparison.sides[1])) == [("summarizer", "timeout", "")]
    incomplete = dataclasses.replace(clean, incomplete="--max-time 1 reached")
    assert Comparison((Side(CORRECT, clean), Side("team:slow", incomplete))).exit_code == 4


def test_compare_needs_two_summarizers_and_an_existing_corpus(tmp_path, capsys):
    assert main(["compare", "--summarizer", CORRECT, *FAST]) == 2
    assert "at least twice" in capsys.readouterr().err
    assert main(["compare", "--summarizer", CORRECT, "--summarizer", MUTANT, "--corpus", str(tmp_path / "nope"),
                 *FAST]) == 2
    assert "--corpus" in capsys.readouterr().err


# -- report -----------------------------------------------------------------------------------------------------------

def test_report_renders_saved_json_including_reports_from_before_survival_counts(tmp_path, mutant_run, capsys):
    new = report_dict(mutant_run)
    assert new["report_version"] == REPORT_VERSION and new["survival"]["kinds"]
    old = {k: v for k, v in new.items() if k not in ("survival", "report_version", "oracles", "budget")}
    (tmp_path / "new.json").write_text(json.dumps(new))
    (tmp_path / "old.json").write_text(json.dumps(old))
    out = tmp_path / "nightly.html"
    assert main(["report", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "-o", str(out),
                 "--survival-threshold", "80%"]) == 0
    page = out.read_text()
    assert page.count('<section id="run') == 2
    assert "no survival counts (written by an older version)" in page
    assert page.count('class="curve"') == len(new["survival"]["kinds"])
    assert "threshold 80%" in page
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("content, named", [
    ("[1, 2]", "(top level)"),
    ('{"summarizer": "x", "violations": {}, "exit_code": 0}', "'violations'"),
    ('{"summarizer": "x", "violations": [], "exit_code": 0, "survival": {"version": 1, "sessions_per_round": [1], '
     '"kinds": {"threshold": [{"live": 1, "kept": 2, "bent": 0}]}}}', "survival.kinds.threshold[0]"),
    ("{oops", "broken.json"),
])
def test_report_on_a_bad_file_names_the_file_and_the_field_and_writes_nothing(tmp_path, capsys, content, named):
    bad = tmp_path / "broken.json"
    bad.write_text(content)
    out = tmp_path / "out.html"
    assert main(["report", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "broken.json" in err and named in err
    assert not out.exists()


def test_an_unwritable_report_path_is_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    for option in ("--report-html", "--junit-xml"):
        assert main(["run", "--examples", "1", *FAST, option, str(tmp_path / "file" / "r.out")]) == 2
        err = capsys.readouterr().err
        assert option in err


def test_a_corpus_entry_nobody_could_read_keeps_compare_from_saying_all_is_well(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "garbage.json").write_text("{not json")
    code, document = _compare(tmp_path, CORRECT, CORRECT, "--corpus", str(corpus))
    assert code == 4
    assert all("could not be read" in side["incomplete"] for side in document["sides"])
