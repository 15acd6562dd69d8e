"""The workflow templates (templates/github/): short examples using the repository's action, strict about what they
run, and their jobs really run.

Besides reading the YAML, these tests run each template's job as a runner would (tests/_workflow.py): its `run:`
steps with bash, `${{ ... }}` and `if:` evaluated, this repository's action run step by step where the template
`uses:` it, actions/cache and upload-artifact through a local store kept between runs, and `compaction-harness` the
real one. The only change made to a template before it runs is its action step's `with:` (the summarizer and a
small night: few examples, short transcripts, the summarizer in the harness's process); the rest runs as shipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness._app.cli._parser import build_parser
from tests._workflow import ACTION, REAL_HARNESS, Runner, Store, is_this_action, load

ROOT = Path(__file__).resolve().parent.parent
NIGHTLY = ROOT / "templates" / "github" / "compaction-nightly.yml"
PULL_REQUEST = ROOT / "templates" / "github" / "compaction-pr.yml"
CORRECT = "harness.summarizers.ledgered:summarize"
BROKEN = "harness.summarizers.mutants:rounds_threshold"
# The small night every real run here makes: the template's other inputs (corpus, baseline, mode) stay as shipped.
SMALL = {"examples": "6", "max-turns": "40", "max-time": "120", "install": "", "args": "--inline"}

pytestmark = pytest.mark.skipif(REAL_HARNESS is None, reason="compaction-harness is not installed in this venv")


def the_job(workflow: dict) -> tuple[str, dict]:
    [(name, job)] = workflow["jobs"].items()
    return name, job


def action_step(job: dict) -> dict:
    [step] = [s for s in job["steps"] if is_this_action(s.get("uses", ""))]
    return step


def configured(path: Path, **inputs: str) -> dict:
    """The template with its action step's `with:` changed by `inputs` (and nothing else)."""
    workflow = load(path)
    action_step(the_job(workflow)[1])["with"].update(inputs)
    return workflow


def checkout(path: Path, files: dict[str, str] | None = None) -> Path:
    (path / "corpora").mkdir(parents=True)
    for name, text in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


def run_job(tmp: Path, workflow: dict, store: Store, *, files=None, github=None):
    runner = Runner(checkout(tmp / "checkout", files), tmp / "work", store, github=github or {})
    return runner.job(workflow, the_job(workflow)[0])


def entries(directory: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in directory.glob("*.json")} if directory.is_dir() else {}


# --- the YAML ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path, events", [(NIGHTLY, {"schedule", "workflow_dispatch"}),
                                          (PULL_REQUEST, {"pull_request", "push", "workflow_dispatch"})],
                         ids=["nightly", "pull-request"])
def test_the_templates_are_short_strict_and_use_the_action(path, events):
    text = path.read_text(encoding="utf-8")
    workflow = load(path)
    assert set(workflow[True]) == events  # YAML 1.1 reads the key `on` as True
    assert len([line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]) <= 75
    assert not re.search(r"\|\|\s*true\b|continue-on-error", text)
    name, job = the_job(workflow)
    assert isinstance(job["timeout-minutes"], int) and job["timeout-minutes"] > 0
    for step in job["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name")  # expressions come in through env:
    step = action_step(job)
    assert re.fullmatch(r"OWNER/compaction-harness@[0-9a-f]{40}", step["uses"])  # pinned: a placeholder to fill in
    inputs = load(ACTION)["inputs"]
    assert set(step["with"]) <= set(inputs) and step["with"]["summarizer"]  # every input the action declares
    assert step["with"]["corpus"] == "corpora" and step["with"]["baseline"] == "compaction-baseline/report.json"
    assert step["with"].get("mode", "nightly") == ("nightly" if path == NIGHTLY else "pull-request")
    # the baseline: restored into the folder the action reads it from, saved from it after the run (the report
    # copied there), under keys the restore finds again
    restore, save = (next(s for s in job["steps"] if s.get("uses", "").startswith(f"actions/cache/{kind}@"))
                     for kind in ("restore", "save"))
    assert restore["with"]["path"] == save["with"]["path"] == "compaction-baseline"
    prefix = restore["with"]["restore-keys"]
    assert save["with"]["key"].startswith(prefix) and restore["with"]["key"].startswith(prefix)
    keep = next(s for s in job["steps"] if s.get("name", "").startswith("Keep"))
    assert keep["run"].endswith('cp "$REPORT" compaction-baseline/report.json') and keep["if"] == save["if"]
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert "!cancelled()" in upload["if"] and upload["with"]["path"] == inputs["output-dir"]["default"] + "/"
    if path == NIGHTLY:
        assert step["with"]["seed"] == "${{ github.run_id }}"  # a re-run repeats the night
        assert int(step["with"]["max-time"]) + 600 <= job["timeout-minutes"] * 60
        assert workflow["permissions"] == {"contents": "write", "pull-requests": "write"}
        pr = next(s for s in job["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@"))
        assert pr["with"]["add-paths"] == "corpora/*.json"
        assert step["env"] == {"OPENAI_API_KEY": "${{ secrets.OPENAI_API_KEY }}"}  # the only secret, only there
    else:
        assert workflow["permissions"] == {"contents": "read"}
        assert "github.event_name != 'pull_request'" in save["if"]  # only the base branch keeps a baseline
    assert "secrets." not in text.replace("${{ secrets.OPENAI_API_KEY }}", "")


# --- nights, for real ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    """Two nights of a summarizer that rounds thresholds, the cache and the artifacts kept between them; the second
    night's checkout has the corpus entries the first night's pull request proposed (it was merged)."""
    tmp = tmp_path_factory.mktemp("nights")
    store = Store(tmp / "store")
    workflow = configured(NIGHTLY, summarizer=BROKEN, **SMALL)
    first = run_job(tmp / "first", workflow, store, github={"run_id": "101"})
    proposed = {f"corpora/{name}": json.dumps(entry) for name, entry in entries(first.checkout / "corpora").items()}
    second = run_job(tmp / "second", workflow, store, files=proposed, github={"run_id": "102"})
    return first, second, store


def test_a_first_night_with_a_finding_is_red_and_proposes_its_corpus_entries(nights):
    first, _, store = nights
    harness = first.step("compaction-harness")
    assert harness.rc == 1 and first.outputs["harness"]["verdict"] == "fail", first.log
    assert "Cache not found" in first.step("Last night's report").output
    assert "- baseline: `compaction-baseline/report.json` not found (a first run" in first.summary
    assert re.search(r":x: \*\*fails\*\* \(fail-on: new\): \d+ new failure\(s\)", first.summary)
    gate = build_parser().parse_args(next(c["argv"] for c in first.argv if c["argv"][0] == "gate"))
    assert (gate.seed, gate.examples, gate.corpus, gate.baseline) == (101, 6, "corpora", ["compaction-baseline/report.json"])
    # after the red step: the baseline kept, the reports uploaded, the corpus merged and proposed
    for label in ("Keep tonight's report", "actions/cache/save", "actions/upload-artifact", "Add tonight's"):
        assert first.step(label).would_run, label
    assert (store.caches / "compaction-nightly-101" / "compaction-baseline" / "report.json").is_file()
    uploaded = store.artifacts / "compaction-nightly"
    assert {"report.json", "report.html", "junit.xml", "results.sarif"} <= {p.name for p in uploaded.iterdir()}
    saved = entries(first.checkout / "corpora")
    assert saved and all(e["summarizer"] == BROKEN for e in saved.values())
    assert first.step("peter-evans/create-pull-request").would_run
    commands = [c["argv"][:2] for c in first.argv]
    assert commands == [["gate", "--summarizer"], ["corpus", "merge"], ["corpus", "dedupe"]]


def test_the_next_night_finds_the_same_failures_known_and_is_green(nights):
    _, second, _ = nights
    second.assert_clean()
    assert "Cache restored from key: compaction-nightly-101" in second.step("Last night's report").output
    outputs = second.outputs["harness"]
    assert (outputs["verdict"], outputs["new"]) == ("pass", "0"), second.log
    assert int(outputs["still-failing"]) >= 1 and int(outputs["corpus-failing"]) >= 1  # the entries merged: known
    assert "no new failure" in second.summary and "still failing |" in second.summary
    assert "- baseline: `compaction-baseline/report.json`" in second.summary


def test_a_clean_night_is_green_and_proposes_nothing(tmp_path):
    run = run_job(tmp_path, configured(NIGHTLY, summarizer=CORRECT, **SMALL), Store(tmp_path / "store"))
    run.assert_clean()
    assert run.outputs["harness"]["findings"] == "0" and "No findings" in run.summary
    assert not run.step("Add tonight's").would_run and not run.step("peter-evans/create-pull-request").would_run
    assert run.step("actions/cache/save").would_run  # a clean night is a baseline too


# --- pull requests, for real -------------------------------------------------------------------------------------

TEAM = "team/compact.py"


def team(answer: str) -> dict[str, str]:
    return {TEAM: f"from harness.summarizers import ledgered, mutants\n\n\ndef summarize(request):\n"
                  f"    return {answer}(request)\n\n\nsummarize.compaction_protocol = \"rich\"\n"}


@pytest.fixture(scope="module")
def base_branch(tmp_path_factory):
    """A push to the base branch (commit A): its report kept in the cache for the pull requests."""
    tmp = tmp_path_factory.mktemp("base")
    store = Store(tmp / "store")
    workflow = configured(PULL_REQUEST, summarizer=f"{TEAM}:summarize", **SMALL)
    push = run_job(tmp / "push", workflow, store, files=team("ledgered.summarize"),
                   github={"event_name": "push", "sha": "a" * 40})
    push.assert_clean()
    return workflow, store


def pull_request(tmp: Path, base_branch, answer: str):
    workflow, store = base_branch
    event = {"pull_request": {"base": {"sha": "a" * 40}}}
    return run_job(tmp, workflow, store, files=team(answer), github={"event_name": "pull_request", "sha": "b" * 40,
                                                                     "event": event})


def test_the_base_branch_keeps_its_report_for_the_pull_requests(base_branch):
    _, store = base_branch
    kept = store.caches / f"compaction-pr-{'a' * 40}" / "compaction-baseline" / "report.json"
    assert json.loads(kept.read_text())["seed"] == 1  # no baseline before it: the pull-request mode's own seed


def test_a_pull_request_with_a_new_failure_is_red_on_its_summarizer_s_line(base_branch, tmp_path):
    run = pull_request(tmp_path, base_branch, "mutants.rounds_threshold")
    assert run.step("compaction-harness").rc == 1 and run.outputs["harness"]["verdict"] == "fail", run.log
    assert f"Cache restored from key: compaction-pr-{'a' * 40}" in run.step("The base branch's report").output
    assert re.search(rf"^::error file={re.escape(TEAM)},line=4,title=compaction-harness%3A threshold-exact", run.output,
                     re.M)
    assert not run.step("Keep the base branch's report").would_run  # a pull request keeps no baseline
    assert run.step("actions/upload-artifact").would_run and run.outputs["harness"]["sarif"]
    assert "## compaction-harness · pull request" in run.summary and "### New" in run.summary


def test_a_pull_request_without_a_new_failure_is_green(base_branch, tmp_path):
    run = pull_request(tmp_path, base_branch, "ledgered.summarize")
    run.assert_clean()
    assert run.outputs["harness"]["verdict"] == "pass" and run.outputs["harness"]["new"] == "0", run.log
