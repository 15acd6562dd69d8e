"""The report files: JUnit XML against the schema CI systems read, ``report`` on saved JSON, ``compare``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness._app.cli._main import main
from harness._app._compare import Comparison, Side
from harness._app.reports._junit import replay_junit, run_junit
from harness._app.corpus._replay import replay_corpus
from harness._app.running._options import RunConfig
from harness._app.running._run import run
from harness._app.reports._document import REPORT_VERSION, report_dict

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
        if os.environ.get("CI") or os.environ.get("COMPACTION_HARNESS_REQUIRE_ASSETS"):
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
    return run(RunConfig.of(MUTANT, examples=15, seed=11, max_turns=200, quiet=True, isolation="inline"))


@pytest.mark.parametrize("mode, status", [("review", "skipped"), ("fail", "failure")])
def test_unclear_readings_are_a_valid_junit_case_skipped_for_review_or_failing(junit_schema, mutant_run, mode, status):
    document = dict(report_dict(mutant_run), unclear_mode=mode, unclear=[{
        "invariant": "negation-polarity", "fact_kind": "prohibition", "fact_id": "F1", "why": "unattached",
        "detail": "s3://x-1/ stands with 'no', which the reading could not attach to it as a prohibition",
        "obligation": "never s3://x-1/", "sentence": "To s3://x-1/ we may make no calls", "example": 2,
        "round": 0, "boundary": 12, "count": 3}])
    xml = run_junit(document, oracles=document["oracles"])
    junit_schema.validate(xml)
    assert _cases(xml)["unclear"] == status
    assert "To s3://x-1/ we may make no calls" in xml


def test_a_run_is_one_case_per_oracle_failing_where_the_run_failed(junit_schema, mutant_run):
    document = report_dict(mutant_run)
    xml = run_junit(document, oracles=document["oracles"])
    junit_schema.validate(xml)
    cases = _cases(xml)
    assert set(cases) == set(document["oracles"]) | {"summarizer", "complete", "unclear"}
    assert {name for name, status in cases.items() if status == "failure"} == {"negation-polarity"}
    assert cases["summarizer"] == cases["complete"] == "passed"
    assert cases["unclear"] == ("skipped" if document["unclear"] else "passed")
    assert document["violations"][0]["reproduce"] in xml


def test_every_report_says_which_compactions_the_trigger_fired_and_which_were_forced(junit_schema, mutant_run):
    from harness._app.reports._html import render_html
    from harness._app.reports._text import render_text

    document = report_dict(mutant_run)
    sessions = document["sessions"]
    fired, forced = sessions["by_trigger"], sessions["forced_by_planned_cuts"]
    assert fired + forced == sum(sessions["compactions"]) > 0 and forced > 0
    said = f"{fired} fired by the trigger"
    assert said in render_text(mutant_run)
    xml = run_junit(document, oracles=document["oracles"])
    junit_schema.validate(xml)
    assert f"{sum(sessions['compactions'])} compactions, {said}, {forced} forced by planned cuts" in xml
    assert f"{fired:,} by the trigger, {forced:,} forced by planned cuts" in render_html([("run", document)], threshold=0.9)
    for v, f in zip(document["violations"], mutant_run.failures):  # each finding says how its compaction came
        assert v["forced"] == f.forced
        assert ("(forced by a planned cut)" in render_text(mutant_run)) == any(x.forced for x in mutant_run.failures)


def test_a_clean_run_passes_every_case_and_an_incomplete_one_does_not(junit_schema):
    clean = report_dict(run(RunConfig.of(CORRECT, examples=8, seed=3, max_turns=200, quiet=True,
                                      isolation="inline")))
    xml = run_junit(clean, oracles=clean["oracles"])
    junit_schema.validate(xml)
    cases = _cases(xml)
    # consumer-requirements has nothing to judge when no consumer is declared: skipped, not passed.
    assert cases.pop("consumer-requirements") == "skipped"
    assert set(cases.values()) == {"passed"}
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
        replay = replay_corpus(corpus, RunConfig.of(spec, quiet=True, isolation="inline"))
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
    html = tmp_path / "compare.html"
    code, document = _compare(tmp_path, CORRECT, MUTANT, "--corpus", str(corpus), "--junit-xml", str(xml),
                              "--only", "literal-verbatim", "--report-html", str(html))
    assert code == 1
    # The mutant's run is clean under --only literal-verbatim; its corpus entries are not, and its section says so.
    assert document["sides"][1]["report"]["violations"] == []
    entries = len(list(corpus.glob("*.json")))
    page = html.read_text()
    assert f"{entries} of {entries} failing" in page and page.count("<h2>Corpus replay</h2>") == 2
    (against,) = document["against_baseline"]
    corpus_new = [item for item in against["new"] if item["where"] == "corpus"]
    assert {item["entry"] for item in corpus_new} == {p.name for p in corpus.glob("*.json")}
    assert {item["invariant"] for item in against["new"]} == {"negation-polarity"}
    assert all(item["where"] == "corpus" for item in against["new"])
    junit_schema.validate(xml.read_text())
    assert list(_cases(xml.read_text()).values()).count("failure") == 1


def test_a_summarizer_that_fails_where_the_baseline_did_not_is_a_new_failure(mutant_run):
    clean = run(RunConfig.of(CORRECT, examples=4, seed=3, max_turns=200, quiet=True, isolation="inline"))
    from harness._app.running._results import InfraFailure
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
        # The correct compactor on a fixed seed exits 0: an exit 2 can only come from the path.
        assert main(["run", "--summarizer", CORRECT, "--examples", "1", "--seed", "3", *FAST,
                     option, str(tmp_path / "file" / "r.out")]) == 2
        err = capsys.readouterr().err
        assert option in err and "examples" not in err


def test_a_corpus_entry_nobody_could_read_keeps_compare_from_saying_all_is_well(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "garbage.json").write_text("{not json")
    code, document = _compare(tmp_path, CORRECT, "harness.summarizers.ledgered:summarize", "--corpus", str(corpus))
    assert code == 4
    assert all("could not be read" in side["incomplete"] for side in document["sides"])


def test_a_candidate_failing_every_call_is_new_though_the_baseline_failed_sometimes_the_same_way(tmp_path):
    code, document = _compare(tmp_path, "tests._report_subjects:raises_sometimes", "tests._report_subjects:always_raises")
    baseline, candidate = (side["report"]["infra_errors"] for side in document["sides"])
    assert {e["kind"] for e in baseline} == {e["kind"] for e in candidate} == {"exception"}
    assert 0 < len(baseline) < len(candidate)
    assert code == 1
    (against,) = document["against_baseline"]
    assert [(item["where"], item["infra_kind"]) for item in against["new"]] == [("summarizer", "exception")]
    assert "where the baseline answered" in against["new"][0]["detail"]


def test_both_sides_failing_the_same_way_is_not_new_but_never_exit_0(tmp_path):
    code, _ = _compare(tmp_path, "tests._report_subjects:always_raises", "tests._report_subjects:raises_sometimes")
    assert code == 3


def test_a_cut_short_candidate_fixes_nothing_it_did_not_reach(mutant_run):
    import dataclasses
    cut = dataclasses.replace(mutant_run, failures=(), incomplete="--max-time 1.5 s reached", examples_run=1)
    comparison = Comparison((Side(MUTANT, mutant_run), Side("slow", cut)))
    assert comparison.fixed(comparison.sides[1]) == {}
    key = ("run", "negation-polarity", "prohibition")
    assert comparison.holds(comparison.sides[1], key) == "?" and comparison.holds(comparison.sides[0], key) == "✗"
    assert comparison.exit_code == 4


def test_compare_refuses_a_summarizer_given_twice_and_mismatched_prompts(tmp_path, capsys):
    assert main(["compare", "--summarizer", CORRECT, "--summarizer", CORRECT, *FAST]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["compare", "--summarizer", "openai:m", "--summarizer", "openai:m", "--prompt", "a.txt",
                 "--prompt", "b.txt", "--prompt", "c.txt", *FAST]) == 2
    assert "once per --summarizer" in capsys.readouterr().err


def test_a_typo_in_a_later_summarizer_is_found_before_the_baseline_runs(tmp_path, capsys):
    assert main(["compare", "--summarizer", CORRECT, "--summarizer", str(tmp_path / "nope.py") + ":fn",
                 "--examples", "5", "--max-turns", "200", "--inline"]) == 2
    err = capsys.readouterr().err
    assert "nope.py" in err and "running" not in err


def test_an_oracle_that_judged_nothing_is_skipped_not_passed(junit_schema, tmp_path):
    out = tmp_path / "t0.xml"
    assert main(["run", "--summarizer", CORRECT, "--examples", "5", "--seed", "3", *FAST, "--trials", "0",
                 "--junit-xml", str(out)]) == 0
    xml = out.read_text()
    junit_schema.validate(xml)
    assert _cases(xml)["deterministic"] == "skipped"


def test_report_renders_a_compare_report_on_its_own(tmp_path, capsys):
    _, document = _compare(tmp_path, CORRECT, MUTANT)
    source = tmp_path / f"compare-{CORRECT.rsplit(':', 1)[1]}.json"
    out = tmp_path / "compare.html"
    assert main(["report", str(source), "-o", str(out)]) == 0
    page = out.read_text()
    assert 'data-change="new"' in page and "negation-polarity" in page
    assert main(["report", str(source), str(source), "-o", str(out)]) == 2
    assert "compare report" in capsys.readouterr().err


@pytest.mark.parametrize("damage, field", [
    (lambda d: d.update(calls="x"), "'calls'"),
    (lambda d: d["violations"][0]["elided"].append({"turn": 0, "merged_turns": 2, "tokens": "many"}), "tokens"),
    (lambda d: d["violations"][0]["transcript"]["facts"][0].update(literals=5), "literals"),
    (lambda d: d["violations"][0].update(round=True), "round"),
    (lambda d: d.update(report_version=99), "report_version"),
])
def test_report_on_a_damaged_field_names_it(tmp_path, capsys, mutant_run, damage, field):
    document = report_dict(mutant_run)
    damage(document)
    bad = tmp_path / "damaged.json"
    bad.write_text(json.dumps(document))
    assert main(["report", str(bad), "-o", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert "damaged.json" in err and field in err and "InternalError" not in err


def test_one_file_for_two_outputs_or_over_an_input_is_refused(tmp_path, capsys):
    same = str(tmp_path / "same.out")
    assert main(["run", "--examples", "1", *FAST, "--report-json", same, "--junit-xml", same]) == 2
    assert "cannot hold both" in capsys.readouterr().err
    keep = tmp_path / "keep.json"
    keep.write_text("{}")
    assert main(["report", str(keep), "-o", str(keep)]) == 2
    assert keep.read_text() == "{}"


def test_the_legend_names_a_cliff_in_rounds_too_few_sessions_reach_to_be_charted():
    from harness._app.reports._html import render_html
    from harness._app.judging._survival import Survival, Tally
    kept, lost = (("prohibition", Tally(2, 2, 0)),), (("prohibition", Tally(2, 0, 0)),)
    survival = Survival()
    for _ in range(28):
        survival = survival.add((kept,) * 3)
    for _ in range(2):  # two long sessions lose their prohibitions at round 15
        survival = survival.add((kept,) * 14 + (lost,) * 2)
    document = {"summarizer": "x", "violations": [], "exit_code": 1, "survival": survival.to_dict()}
    page = render_html([("this run", document)])
    assert "below 90% from round 15, reached by 2 session(s): past the chart" in page
    assert 'class="cliff"' not in page  # the ring would sit off the chart: the legend says it instead


def test_an_interrupt_ends_compare_after_the_side_it_stopped(monkeypatch):
    import dataclasses
    import harness._app._compare as compare_module
    from harness._app._outcome import Stop, StopReason
    real = compare_module.run

    def interrupted_run(config):
        return dataclasses.replace(real(config), incomplete=Stop(StopReason.INTERRUPTED))

    monkeypatch.setattr(compare_module, "run", interrupted_run)
    configs = [RunConfig.of(spec, examples=2, max_turns=200, quiet=True, isolation="inline", seed=1)
               for spec in (CORRECT, MUTANT)]
    comparison = compare_module.compare(configs)
    assert [side.label for side in comparison.sides] == [CORRECT]
    assert comparison.not_run == (MUTANT,) and comparison.exit_code == 4


def test_every_command_has_working_help(capsys):
    for command in ("run", "shrink", "fuzz", "replay", "compare", "report", "audit", "oracles", "corpus"):
        assert main([command, "--help"]) == 0, command
        assert "usage:" in capsys.readouterr().out


def test_prompt_is_refused_for_a_summarizer_that_would_ignore_it(capsys):
    assert main(["compare", "--summarizer", CORRECT, "--prompt", "a.txt", "--summarizer", CORRECT, "--prompt",
                 "b.txt", *FAST]) == 2
    assert "openai:" in capsys.readouterr().err
    assert main(["run", "--summarizer", CORRECT, "--prompt", "a.txt", *FAST]) == 2


def test_the_same_function_under_two_names_compares_nothing(capsys):
    as_file = str(Path(__file__).resolve().parent.parent / "harness" / "summarizers" / "mutants.py") + \
        ":softens_prohibition"
    assert main(["compare", "--summarizer", MUTANT, "--summarizer", as_file, *FAST]) == 2
    assert "same code" in capsys.readouterr().err


def test_two_prompts_of_one_model_never_share_a_cache_key(tmp_path):
    from harness._app.cli._commands import _side_version
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("Keep every obligation. {transcript}")
    new.write_text("Be brief. {transcript}")
    specs = ["openai:m", "openai:m"]
    versions = {_side_version("gpt-x", "openai:m", str(p), specs) for p in (old, new)}
    assert len(versions) == 2 and all(v.startswith("gpt-x+prompt:") for v in versions)
    assert _side_version("gpt-x", "harness.summarizers.prose:summarize", None, [CORRECT, MUTANT]) == "gpt-x"
    assert _side_version(None, "openai:m", str(old), specs) is None  # no version: the prompt is in the key already


def test_a_comparison_whose_summarizer_failed_is_an_error_in_junit_and_fixes_nothing(tmp_path, junit_schema):
    xml = tmp_path / "e3.xml"
    code, document = _compare(tmp_path, "tests._report_subjects:always_raises",
                              "tests._report_subjects:raises_sometimes", "--junit-xml", str(xml))
    assert code == 3
    junit_schema.validate(xml.read_text())
    assert "error" in _cases(xml.read_text()).values()
    code, document = _compare(tmp_path, MUTANT, "tests._report_subjects:always_raises")
    (against,) = document["against_baseline"]
    assert against["fixed"] == []  # it never answered: it fixed nothing
    assert all(row["marks"][1] in ("?", "✗") for row in document["matrix"])


def test_a_run_that_ends_in_an_error_leaves_no_report_of_an_earlier_run(tmp_path):
    stale = tmp_path / "nightly.xml"
    stale.write_text('<testsuite tests="1" failures="0"/>')
    assert main(["run", "--summarizer", CORRECT, *FAST, "--token-counter", "no_such_module:count",
                 "--junit-xml", str(stale)]) == 2
    assert not stale.exists()


def test_a_report_path_over_an_input_is_refused_and_the_input_kept(tmp_path, mutant_run, capsys):
    entry = tmp_path / "entry.json"
    entry.write_text(json.dumps(report_dict(mutant_run)["violations"][0]["transcript"]))
    assert main(["shrink", str(entry), "--summarizer", MUTANT, "--quiet", "--inline", "--report-json", str(entry)]) == 2
    assert "which this command reads" in capsys.readouterr().err and entry.exists()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    inside = corpus / "x.json"
    inside.write_text("{}")
    assert main(["replay", str(corpus), "--summarizer", MUTANT, "--inline", "--junit-xml", str(inside)]) == 2
    assert inside.read_text() == "{}"


def test_one_factory_makes_two_summarizers_and_compare_tells_them_apart(tmp_path):
    factory = tmp_path / "variants.py"
    factory.write_text(
        "from harness.summarizers import mutants, prose\n"
        "def make(inner):\n"
        "    def summarize(request):\n"
        "        return inner(request)\n"
        "    summarize.compaction_protocol = 'rich'\n"
        "    return summarize\n"
        "good = make(prose.summarize)\n"
        "bad = make(mutants.softens_prohibition)\n")
    code, document = _compare(tmp_path, f"{factory}:good", f"{factory}:bad")
    assert code == 1
    assert {item["invariant"] for item in document["against_baseline"][0]["new"]} == {"negation-polarity"}


def test_a_prompt_given_once_goes_to_the_openai_sides_of_a_mixed_compare():
    from harness._app.cli._commands import check_prompt as _check_prompt
    from harness._app.cli._parser import build_parser as _parser
    mixed = _parser().parse_args(["compare", "--summarizer", CORRECT, "--summarizer", "openai:m", "--prompt", "p.txt"])
    _check_prompt(mixed)  # no error: the prompt is for openai:m
    per_side = _parser().parse_args(["compare", "--summarizer", CORRECT, "--prompt", "", "--summarizer", "openai:m",
                                     "--prompt", "p.txt"])
    _check_prompt(per_side)
    wrong = _parser().parse_args(["compare", "--summarizer", CORRECT, "--prompt", "a.txt", "--summarizer",
                                  "openai:m", "--prompt", "p.txt"])
    with pytest.raises(Exception, match="openai:"):
        _check_prompt(wrong)


def test_what_the_summarizer_returned_shows_its_tool_calls_and_results_marked():
    from harness._app.reports._text import message_text
    call = {"role": "assistant", "content": "checking the build",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "build", "arguments": "{}"}}]}
    answer = {"role": "tool", "content": "ok", "tool_call_id": "call_1"}
    assert message_text(call) == "checking the build [call build id=call_1]"
    assert message_text(answer) == "ok [result for call_1]"
    assert message_text({"role": "assistant", "content": None, "tool_calls": call["tool_calls"]}) == \
        "[call build id=call_1]"


def test_show_context_prints_each_returned_message_whole(capsys):
    from harness._app.cli._main import main
    argv = ["run", "--summarizer", MUTANT, "--examples", "6", "--max-turns", "120", "--seed", "11", "--quiet",
            "--inline"]
    assert main(argv) == 1
    clipped = capsys.readouterr().out
    assert main([*argv, "--show-context"]) == 1
    whole = capsys.readouterr().out
    assert "summarizer returned: " in clipped and "summarizer returned (" not in clipped
    assert "summarizer returned (" in whole and "\n    | " in whole


def test_the_report_says_why_a_run_stopped_in_a_word():
    """``incomplete_reason`` is the stop's reason, which the gate reads (not the sentence, which may change)."""
    document = report_dict(run(RunConfig.of(CORRECT, examples=8, seed=3, max_turns=200, quiet=True,
                                            isolation="inline", max_calls=1)))
    assert document["incomplete"] and document["incomplete_reason"] == "max-calls"
