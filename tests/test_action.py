"""The GitHub action (action.yml): strict about its YAML, and its steps really run.

Each use runs the action's `run:` steps with bash in a temporary checkout, `${{ inputs.* }}` and `${{ github.* }}`
substituted, `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT` temporary files (tests/_workflow.py, shared with the tests of
the templates). `pip` is a stub recording what it was asked to install, so the gate runs this venv's harness; one
test installs the action's checkout with a real pip into a fresh virtualenv instead. Nights and pull requests are
small: a few examples of short transcripts, the summarizer called in the harness's process (`args: --inline`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness._app.cli._parser import build_parser
from harness._app.reports._gate import judge_gate
from harness._app.reports._sarif import ANNOTATION_LIMIT, annotations
from tests._workflow import (ACTION, OFFLINE_PIP, REAL_HARNESS, ROOT, Runner, Store, fresh_venv, in_venv, load,
                             site_packages_without, source_copy)

pytestmark = pytest.mark.skipif(REAL_HARNESS is None, reason="compaction-harness is not installed in this venv")

CORRECT = "harness.summarizers.ledgered:summarize"  # keeps what it must: nothing to find
BROKEN = "harness.summarizers.mutants:rounds_threshold"  # writes "a few" for every number of a threshold
SMALL = {"examples": "6", "max-turns": "40", "seed": "5", "args": "--inline"}

# A team's summarizer in its own repository: a file the annotations point into, correct or broken.
TEAM_FILE = "team/compact.py"
TEAM = "team/compact.py:summarize"


def team(answer: str) -> dict[str, str]:
    return {TEAM_FILE: f'''"""Our compaction."""

from harness.summarizers import ledgered, mutants


def summarize(request):
    return {answer}(request)


summarize.compaction_protocol = "rich"
'''}


def checkout(path: Path, files: dict[str, str] | None = None, corpus: dict[str, str] | None = None) -> Path:
    """A team's checkout: its corpora/ (entries by name) and its own files."""
    (path / "corpora").mkdir(parents=True)
    for name, text in (corpus or {}).items():
        (path / "corpora" / name).write_text(text)
    for name, text in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


def use(tmp: Path, inputs: dict[str, str], *, files=None, corpus=None, github=None, keep: dict[str, str] | None = None):
    """One use of the action in a fresh checkout (`keep`: files of an earlier run, by path, copied in first)."""
    where = checkout(tmp / "checkout", files, corpus)
    for target, source in (keep or {}).items():
        (where / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, where / target)
    return Runner(where, tmp / "work", Store(tmp / "store"), github=github or {}).action({**SMALL, **inputs})


def gate_argv(run) -> list[str]:
    return next(call["argv"] for call in run.argv if call["argv"][0] == "gate")


def out(run, name: str) -> Path:
    return run.checkout / run.outputs[name]


def sarif_results(path: Path) -> list[dict]:
    """The results of a SARIF file, after checking what SARIF 2.1.0 and GitHub code scanning require of it."""
    document = json.loads(path.read_text())
    assert document["version"] == "2.1.0" and document["$schema"].endswith("sarif-2.1.0.json")
    [run] = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "compaction-harness" and driver["version"]
    rules = [rule["id"] for rule in driver["rules"]]
    assert len(rules) == len(set(rules)) and all(rule["shortDescription"]["text"] for rule in driver["rules"])
    for result in run["results"]:
        assert result["ruleId"] == rules[result["ruleIndex"]]
        assert result["level"] in ("error", "warning", "note") and result["message"]["text"]
        assert result["partialFingerprints"]["compactionHarness/v1"]
    return run["results"]


# --- the YAML ---------------------------------------------------------------------------------------------------


def test_the_action_is_strict_yaml_with_no_logic_of_its_own():
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert [s["name"] for s in steps] == ["Install the harness", "Run, replay the corpus, judge against the baseline"]
    for step in steps:
        assert step["shell"] == "bash" and "${{" not in step["run"], step["name"]  # expressions come in by env:
        assert not re.search(r"\|\|\s*true\b|continue-on-error", step["run"]), step["name"]
        assert not re.search(r"^\s*(if|case|for|while)\b", step["run"], re.M), f"{step['name']}: logic belongs in the gate"
    assert steps[1]["id"] == "gate" and re.findall(r"^\s*compaction-harness\s+(\w+)", steps[1]["run"], re.M) == ["gate"]
    for name, item in action["inputs"].items():
        assert re.fullmatch(r"[a-z][a-z-]*", name) and len(item["description"]) > 20, name
        assert item.get("required") or "default" in item, f"{name}: required, or a default"
        assert f"inputs.{name} }}}}" in ACTION.read_text(), f"the input {name} is never used"
    assert action["inputs"]["mode"]["default"] == "nightly" and action["inputs"]["fail-on"]["default"] == "new"
    assert [n for n, i in action["inputs"].items() if i.get("required")] == ["summarizer"]
    # every output is one the gate writes (--github-output), but the directory, which is the input's
    gate_writes = {"verdict", "exit-code", "findings", "new", "still-failing", "fixed", "unsure", "corpus-failing",
                   "report-json", "report-html", "junit-xml", "sarif", "corpus", "source"}
    outputs = action["outputs"]
    assert set(outputs) == gate_writes | {"directory"}
    assert all(outputs[name]["value"] == f"${{{{ steps.gate.outputs.{name} }}}}" for name in gate_writes)


def test_the_install_installs_the_action_s_own_checkout(tmp_path):
    """By default pip installs `${{ github.action_path }}`: the commit `uses:` names, nothing from an index; with
    `extras` and `install` (the team's own project), those too; `harness` replaces what is installed."""
    cases = [({}, [str(ROOT)]), ({"extras": "redis", "install": "-e ."}, [f"{ROOT}[redis]", "-e", "."]),
             ({"harness": "compaction-harness @ git+https://github.com/team/fork@" + "a" * 40},
              ["compaction-harness @ git+https://github.com/team/fork@" + "a" * 40])]
    for n, (inputs, expected) in enumerate(cases):
        where = checkout(tmp_path / f"co-{n}")
        run = Runner(where, tmp_path / f"w-{n}", Store(tmp_path / "store")).action(
            {"summarizer": CORRECT, **inputs}, only="Install")
        run.assert_clean()
        assert run.pip == [["install", *expected]], run.log


# --- nights -------------------------------------------------------------------------------------------------------


def test_a_clean_night_passes_and_says_there_were_no_findings(tmp_path):
    run = use(tmp_path, {"summarizer": CORRECT, "corpus": "corpora"})
    run.assert_clean()
    assert (run.outputs["verdict"], run.outputs["exit-code"], run.outputs["findings"], run.outputs["new"]) == (
        "pass", "0", "0", "0"), run.log
    assert ":white_check_mark: **passes** (fail-on: new): no new failure" in run.summary
    assert "No findings: every example judged held every invariant, and no corpus entry fails." in run.summary
    for name in ("report-json", "report-html", "junit-xml", "sarif"):
        assert out(run, name).is_file() and run.outputs[name].startswith("compaction-harness/"), name
    assert run.outputs["directory"] == "compaction-harness"
    assert sarif_results(out(run, "sarif")) == []
    args = build_parser().parse_args(gate_argv(run))
    assert (args.summarizer, args.mode, args.fail_on, args.examples, args.seed, args.corpus, args.baseline) == (
        CORRECT, "nightly", "new", 6, 5, "corpora", [])
    assert not re.search(r"^::(error|warning)", run.output, re.M)


@pytest.fixture(scope="module")
def broken_night(tmp_path_factory):
    """A team's first night with a summarizer that rounds thresholds: no baseline yet."""
    return use(tmp_path_factory.mktemp("broken-night"), {"summarizer": BROKEN, "corpus": "corpora"})


def test_a_new_finding_fails_the_night_and_is_listed_as_new(broken_night):
    run = broken_night
    assert run.failed and run.step("Run, replay").rc == 1, run.log
    assert (run.outputs["verdict"], run.outputs["exit-code"]) == ("fail", "1")
    assert int(run.outputs["new"]) == int(run.outputs["findings"]) > 0 and run.outputs["still-failing"] == "0"
    assert ":x: **fails** (fail-on: new): 1 new failure(s) (no baseline: every failure is new)" in run.summary
    assert "- baseline: none given, so every failure counts as new" in run.summary
    new = run.summary.split("### New (1)")[1].split("###")[0]
    assert "| 1 | threshold-exact | threshold | weakened | 1 turn(s) | `compaction-harness/report.html#run1-failure1` |" \
        in new, run.summary
    entry = re.search(r"`(compaction-harness/corpus/[0-9a-f]{20}\.json)`", new).group(1)
    assert json.loads((run.checkout / entry).read_text())["invariant"] == "threshold-exact"
    assert 'id="run1-failure1"' in out(run, "report-html").read_text()
    assert "<details><summary>1. threshold-exact: threshold" in new and "[0] user:" in new  # the minimal transcript
    annotation = next(line for line in run.output.splitlines() if line.startswith("::error "))
    assert annotation.startswith("::error file=") and "mutants.py,line=" in annotation


def test_a_known_failure_still_fails_and_passes_under_fail_on_new(broken_night, tmp_path):
    """The next night, with the first night's report as its baseline (and its saved entry now in corpora/): the
    same failure is STILL FAILING and the job passes; under fail-on any it fails."""
    first = broken_night
    entry = next((first.checkout / "compaction-harness" / "corpus").glob("*.json"))
    inputs = {"summarizer": BROKEN, "corpus": "corpora", "baseline": "last-night/report.json", "seed": "6"}
    keep = {"last-night/report.json": out(first, "report-json")}
    run = use(tmp_path / "next", inputs, corpus={entry.name: entry.read_text()}, keep=keep)
    run.assert_clean()
    assert (run.outputs["verdict"], run.outputs["new"], run.outputs["corpus-failing"]) == ("pass", "0", "1"), run.log
    assert int(run.outputs["still-failing"]) == 2  # the run's finding, and the corpus entry
    assert "no new failure; 2 known failure(s) still failing" in run.summary
    assert "### Still failing (1)" in run.summary and "### New" not in run.summary
    assert f"| `corpora/{entry.name}` | threshold-exact | threshold | still failing |" in run.summary
    assert "- baseline: `last-night/report.json`" in run.summary
    assert not re.search(r"^::error", run.output, re.M) and re.search(r"^::warning file=", run.output, re.M)
    strict = use(tmp_path / "strict", {**inputs, "fail-on": "any"}, corpus={entry.name: entry.read_text()}, keep=keep)
    assert strict.failed and strict.outputs["verdict"] == "fail", strict.log
    assert ":x: **fails** (fail-on: any): 2 known failure(s) still failing (fail-on: any)" in strict.summary


def test_one_random_hit_of_a_varying_summarizer_is_not_new(tmp_path):
    """A summarizer that answers at random (tests/fixtures/varying.py), two nights on two seeds: what one night
    found and the other did not is judged by rates (the trend's Fisher test), so it is unsure and the night passes;
    a gate on what each night found would have called it new."""
    files = {"varying.py": (ROOT / "tests" / "fixtures" / "varying.py").read_text()}
    inputs = {"summarizer": "varying.py:noisy", "examples": "20", "max-turns": ""}
    first = use(tmp_path / "first", {**inputs, "seed": "12"}, files=files)
    assert first.outputs["verdict"] == "fail", first.log  # no baseline: new
    run = use(tmp_path / "second", {**inputs, "seed": "11", "baseline": "base.json"}, files=files,
              keep={"base.json": out(first, "report-json")})
    run.assert_clean()
    assert run.outputs["new"] == "0" and int(run.outputs["unsure"]) >= 1, run.log
    assert "new and fixed rest on rates (Fisher's exact test)" in run.summary and "### Unsure" in run.summary
    before, now = (json.loads(out(r, "report-json").read_text()) for r in (first, run))
    found = lambda d: {(f["invariants"][0], f["fact_kind"], f["evidence"]) for f in d["findings"]}  # noqa: E731
    assert found(now) - found(before), "the two nights found the same: this test no longer shows a random hit"


# --- pull requests ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_branch(tmp_path_factory, broken_night):
    """The base branch's run: the team's correct summarizer, its report kept as the pull requests' baseline; its
    corpus holds the entry the broken night saved, which it passes."""
    entry = next((broken_night.checkout / "compaction-harness" / "corpus").glob("*.json"))
    corpus = {entry.name: entry.read_text()}
    run = use(tmp_path_factory.mktemp("base"), {"summarizer": TEAM, "mode": "pull-request", "corpus": "corpora",
                                                "seed": ""}, files=team("ledgered.summarize"), corpus=corpus,
              github={"event_name": "push"})
    run.assert_clean()
    return run, corpus


def pull_request(tmp: Path, base_branch, answer: str):
    base, corpus = base_branch
    return use(tmp, {"summarizer": TEAM, "mode": "pull-request", "corpus": "corpora", "baseline": "base/report.json",
                     "seed": ""}, files=team(answer), corpus=corpus, keep={"base/report.json": out(base, "report-json")},
               github={"event_name": "pull_request"})


def test_a_pull_request_with_a_new_failure_fails_with_sarif_and_annotations_on_the_summarizer(base_branch, tmp_path):
    run = pull_request(tmp_path, base_branch, "mutants.rounds_threshold")
    assert run.failed and run.outputs["verdict"] == "fail", run.log
    base = json.loads(out(base_branch[0], "report-json").read_text())
    args = build_parser().parse_args(gate_argv(run))
    assert (args.mode, args.seed, args.examples) == ("pull-request", None, 6)  # the seed is the gate's default:
    report = json.loads(out(run, "report-json").read_text())
    assert (report["seed"], report["examples"]) == (base["seed"], 6)  # the baseline's seed
    assert {row["entry"]: row["status"] for row in report["corpus_replay"]} == {
        name: "failing" for name in base_branch[1]}
    # new: the run's finding, and the corpus entry the base branch passed
    assert run.outputs["new"] == "2" and run.outputs["source"] == f"{TEAM_FILE}:6", run.outputs
    assert "new: it passed in the baseline's replay" in run.summary
    results = sarif_results(out(run, "sarif"))
    assert [r["level"] for r in results] == ["error", "error"]
    for result in results:
        assert result["locations"] == [{"physicalLocation": {
            "artifactLocation": {"uri": TEAM_FILE, "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 6}}}]
    assert "minimal transcript, 1 turn(s):\n  [0] user:" in results[0]["message"]["text"]
    errors = [line for line in run.output.splitlines() if line.startswith("::error ")]
    assert len(errors) == 2 and all(e.startswith(f"::error file={TEAM_FILE},line=6,title=compaction-harness%3A ")
                                    for e in errors)
    message = errors[0].split("::", 2)[2]
    assert "%0A" in message and "\n" not in message and "%0A  [0] user: " in message


def test_a_pull_request_without_a_new_failure_passes(base_branch, tmp_path):
    run = pull_request(tmp_path, base_branch, "ledgered.summarize")
    run.assert_clean()
    assert (run.outputs["verdict"], run.outputs["new"], run.outputs["findings"]) == ("pass", "0", "0"), run.log
    assert sarif_results(out(run, "sarif")) == []
    assert ":white_check_mark: **passes** (fail-on: new)" in run.summary and "## compaction-harness · pull request" in run.summary


# --- what goes wrong ---------------------------------------------------------------------------------------------


def test_bad_input_is_one_line_naming_it_and_exit_2(tmp_path):
    run = use(tmp_path / "misspelled", {"summarizer": "team_compact.nope:summarize"})
    assert run.step("Run, replay").rc == 2 and run.outputs["verdict"] == "fail" and run.outputs["exit-code"] == "2"
    assert "the harness could not run** (exit 2): SpecError: --summarizer 'team_compact.nope:summarize': cannot import" \
        in run.summary
    for inputs, said in (({"fail-on": "sometimes"}, "UsageError: argument --fail-on: invalid choice: 'sometimes'"),
                         ({"mode": "weekly"}, "UsageError: argument --mode: invalid choice: 'weekly'"),
                         ({"corpus": "corpus-typo"}, "PathError: --corpus 'corpus-typo': no such directory"),
                         ({"source": "nowhere.py:3"}, "PathError: --source 'nowhere.py:3': no such file")):
        run = use(tmp_path / next(iter(inputs)), {"summarizer": CORRECT, **inputs})
        assert run.step("Run, replay").rc == 2 and said in run.output, run.log
        assert len([line for line in run.output.splitlines() if "Error: " in line]) == 1
    missing = use(tmp_path / "no-baseline", {"summarizer": CORRECT, "baseline": "cache/report.json"})
    missing.assert_clean()  # a first night, or a cache that missed: said, not an error
    assert "- baseline: `cache/report.json` not found (a first run, or a cache that missed)" in missing.summary


def test_annotations_are_capped_and_say_how_many_more(tmp_path):
    """GitHub shows ten annotations of a kind per step: the gate prints ten, and a notice counts the rest."""
    document = {"summarizer": "x:y", "exit_code": 1, "violations": [
        {"invariant": f"inv-{n}", "fact_kind": "threshold", "evidence": "absent", "detail": f"lost {n}"}
        for n in range(ANNOTATION_LIMIT + 3)]}
    lines = annotations(judge_gate(document, baseline=None), document, None)
    assert sum(line.startswith("::error title=") for line in lines) == ANNOTATION_LIMIT
    assert lines[-1] == "::notice title=compaction-harness::3 more new failure(s) are in the step summary"


def test_the_action_s_checkout_installs_with_a_real_pip_and_runs(tmp_path):
    """`pip install "${{ github.action_path }}"` into a fresh virtualenv, as a runner does it, with no network (the
    harness's dependencies are this venv's, seen through a .pth file; the build backend too): the gate then runs
    from that virtualenv."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the action's checkout is copied from git's list of files")
    action_path = source_copy(tmp_path / "action")
    venv = fresh_venv(tmp_path / "venv", site_packages_without(tmp_path / "dependencies"))
    where = checkout(tmp_path / "checkout")
    runner = Runner(where, tmp_path / "work", Store(tmp_path / "store"), venv=venv, action_path=action_path)
    run = runner.action({**SMALL, "summarizer": BROKEN}, env=OFFLINE_PIP)
    install = run.step("Install")
    assert install.rc == 0 and re.search(r"Successfully installed .*compaction-harness-", install.output), run.log
    harness = str(venv / "bin" / "compaction-harness")
    assert run.argv and all(call["harness"] == harness for call in run.argv)
    site = str(next(venv.glob("lib/python*/site-packages")))
    where_from = in_venv(venv, "import harness; print(harness.__file__)")
    assert where_from.stdout.strip() == f"{site}/harness/__init__.py", where_from.stderr
    assert run.outputs["verdict"] == "fail" and run.outputs["new"] != "0", run.log
    assert subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--ignored", "build"],
                          capture_output=True, text=True).stdout == ""  # nothing built in this checkout


# --- the verdict's rules, on report documents -------------------------------------------------------------------


def _report(*rows: dict, findings: int = 0) -> dict:
    return {"summarizer": TEAM, "exit_code": 1 if findings else 0, "seed": 1, "examples_run": 20,
            "violations": [{"invariant": "threshold-exact", "fact_kind": "threshold", "evidence": "weakened",
                            "detail": "lost its number"}] * findings, "corpus_replay": list(rows)}


def _row(status: str, trials: tuple[int, int] | None = None) -> dict:
    return {"entry": "e.json", "invariant": "threshold-exact", "fact_kind": "threshold", "status": status,
            "detail": "", "trials": None if trials is None else {"failed": trials[0], "of": trials[1]}}


@pytest.mark.parametrize("then, now, change", [
    (_row("fixed"), _row("failing"), "new"),  # passed on the base branch: a regression
    (_row("failing"), _row("failing"), "still"),
    (None, _row("failing"), "still"),  # not in the baseline's replay: in the corpus, so known
    (_row("failing"), _row("fixed"), "fixed"),
    (_row("not-reproduced", (0, 3)), _row("failing", (1, 3)), "unsure"),  # one hit in three trials: chance
    (_row("not-reproduced", (0, 15)), _row("failing", (12, 15)), "new"),  # beyond chance
    (_row("failing", (2, 3)), _row("not-reproduced", (0, 3)), "unsure"),
    (_row("fixed"), _row("infra"), "problem"),
])
def test_a_corpus_entry_is_new_only_when_the_baseline_s_replay_passed_it(then, now, change):
    baseline = ("base.json", _report(*([then] if then else [])))
    gate = judge_gate(_report(now), baseline=baseline)
    assert [e.change for e in gate.entries] == [change]
    assert gate.passed == (change not in ("new", "problem"))
    assert judge_gate(_report(now), baseline=baseline, fail_on="none").passed


def test_what_fails_the_gate_follows_fail_on():
    known = ("base.json", _report(findings=1))
    assert judge_gate(_report(findings=1), baseline=known).passed  # still failing: not new
    assert not judge_gate(_report(findings=1), baseline=known, fail_on="any").passed
    assert not judge_gate(_report(findings=1), baseline=None).passed  # no baseline: every failure is new
    incomplete = {**_report(), "incomplete": "--max-time 600 reached", "incomplete_reason": "max-time"}
    assert judge_gate(incomplete, baseline=None).passed and not judge_gate(incomplete, baseline=None, fail_on="any").passed
    crashed = {**_report(), "infra_errors": [{"kind": "raised", "message": "RuntimeError: down"}]}
    gate = judge_gate(crashed, baseline=None)
    assert not gate.passed and int(gate.exit_code) == 3 and judge_gate(crashed, baseline=None, fail_on="none").passed


@pytest.mark.parametrize("reason, examples_run", [
    ("interrupted", 20), ("halted", 20), ("nothing-compacted", 20),
    ("max-time", 0),  # the bound came before the first example: nothing was judged
    (None, 0),  # a report from before ``incomplete_reason``: judged nothing all the same
])
def test_a_run_that_did_not_judge_what_was_asked_fails_the_gate_under_fail_on_new(reason, examples_run):
    unfinished = {**_report(), "incomplete": "stopped", "incomplete_reason": reason, "examples_run": examples_run}
    gate = judge_gate(unfinished, baseline=None)
    assert not gate.passed and int(gate.exit_code) == 4
    assert any("did not judge what was asked" in r for r in gate.reasons)
    assert judge_gate(unfinished, baseline=None, fail_on="none").passed
    with_failure = {**unfinished, **_report(findings=1), "incomplete": "stopped", "incomplete_reason": reason}
    assert int(judge_gate(with_failure, baseline=None).exit_code) == 1  # a failure outranks the stop

