"""The pytest plugin, driven through pytester (in a subprocess, so xdist's -n works)."""

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given, settings

from harness.testing import CompactionViolation, assert_compaction_holds
from harness.summarizers import ledgered, prose
from harness.summarizers.mutants import softens_prohibition
from harness import FactKind
from harness._app._profiles import PROFILE_NAMES, profile
from harness._app._pytest_plugin import _read
from harness._app.calling._openai import API_KEY_ENV, OPENAI_BASE_URL
from harness._app.calling._options import DEFAULT_RETRIES, DEFAULT_TIMEOUT
from harness._app.cli._parser import build_parser
from harness._app.running._options import (DEFAULT_BUDGET, DEFAULT_MAX_WINDOWS, DEFAULT_SHRINK_CALLS, DEFAULT_TRIALS,
                                           DEFAULT_TRIGGER, FAST_CALL_SECONDS, FAST_SECONDS_PER_KTOKEN,
                                           FAST_SHRINK_CALLS)
from harness._base._calling import DEFAULT_MAX_RESULT_CHARS, RESULT_CHARS_PER_TOKEN
from harness._base._dialects import DEFAULT_DIALECT
from harness.strategies import facts, transcripts
from tests._stubs import openai_stub

pytest_plugins = ["pytester"]

EMPTY_TEST = "def test_nothing():\n    pass\n"


SEEDED = Path(__file__).resolve().parent.parent / "corpora"


def _corpus(pytester, *names):
    corpus = pytester.mkdir("corpus")
    for name in names:
        (corpus / name).write_text((SEEDED / name).read_text(encoding="utf-8"), encoding="utf-8")
    return corpus


def _seeded_names():
    return sorted(p.name for p in SEEDED.glob("*.json"))[:2]


#: Items of the property search besides one per invariant (``harness._app._pytest_plugin``).
EXTRA_ITEMS = 2


def _harness_items(result) -> int:
    """How many property-search items a session had: one per selected invariant, and the extra ones."""
    return len({line.split("compaction-harness::property[", 1)[1].split("]", 1)[0] for line in result.outlines
                if "compaction-harness::property[" in line})


def _failed_items(result) -> set[str]:
    """The invariants whose property-search item failed, from pytest's short summary."""
    return {line.split("compaction-harness::property[", 1)[1].split("]", 1)[0] for line in result.outlines
            if line.startswith("FAILED ") and "compaction-harness::property[" in line}


def _passes_everything(result, corpus_entries: int) -> None:
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0, outcomes
    ran = outcomes.get("passed", 0) + outcomes.get("skipped", 0)
    assert ran == 1 + _harness_items(result) + corpus_entries  # the project's test, the search, each entry
    assert _harness_items(result) > EXTRA_ITEMS + 20  # one per invariant of the catalogue


def test_plugin_passes_a_correct_summarizer_and_replays_the_corpus(pytester):
    pytester.makepyfile(EMPTY_TEST)
    _corpus(pytester, *_seeded_names())
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.ledgered:summarize",
                                           "--summarizer-protocol", "rich", "--summarizer-corpus", "corpus",
                                           "--summarizer-max-turns", "200", "-p", "no:cacheprovider", "-v")
    _passes_everything(result, corpus_entries=2)
    result.stdout.fnmatch_lines(["compaction-harness: summarizer harness.summarizers.ledgered:summarize, profile dev, seed *"])
    assert "compaction-harness::property[commitment-retained] PASSED" in result.stdout.str()


def test_plugin_fails_a_mutant_with_a_readable_report_and_saves_it(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.mutants:softens_prohibition",
                                           "--summarizer-protocol", "rich", "--summarizer-corpus", "corpus",
                                           "--summarizer-save", "--summarizer-seed", "3",
                                           "--summarizer-max-turns", "200", "-p", "no:cacheprovider", "-v")
    assert result.parseoutcomes()["failed"] == 1  # the one invariant the mutant breaks, by name:
    assert _failed_items(result) == {"negation-polarity"}
    result.stdout.fnmatch_lines(["*✗ negation-polarity — prohibition*", "*minimal transcript:*"])
    result.stdout.fnmatch_lines(["compaction-harness: *seed 3 (reproduce with --summarizer-seed 3)",
                                 "*reproduce: compaction-harness run * --seed 3 *"])  # one seed, said the same
    saved = list((pytester.path / "corpus").glob("*.json"))
    assert saved
    again = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.mutants:softens_prohibition",
                                          "--summarizer-protocol", "rich", "--summarizer-corpus", "corpus",
                                          "--summarizer-seed", "3", "--summarizer-max-turns", "200",
                                          "-p", "no:cacheprovider")
    assert again.parseoutcomes()["failed"] == 1 + len(saved)  # the saved entries now replay, and still fail


def test_plugin_under_xdist(pytester):
    pytester.makepyfile(EMPTY_TEST)
    _corpus(pytester, *_seeded_names())
    result = pytester.runpytest_subprocess("-n", "2", "--summarizer", "harness.summarizers.ledgered:summarize",
                                           "--summarizer-protocol", "rich", "--summarizer-corpus", "corpus",
                                           "--summarizer-max-turns", "200", "-p", "no:cacheprovider", "-v")
    _passes_everything(result, corpus_entries=2)


#: The bundled keep-the-newest compactor at a seed where one root cause (a dropped obligation) breaks many
#: invariants, the first of them on its minimal transcript and the others where it was seen.
NAIVE = ["--summarizer", "harness.summarizers.naive:tail", "--summarizer-seed", "3", "--summarizer-max-turns", "200"]


def _junit_cases(path: Path) -> dict[str, ET.Element]:
    """The property search's JUnit test cases, by item name."""
    return {case.get("name"): case for case in ET.parse(path).iter("testcase")
            if case.get("name", "").startswith("property[")}


def test_under_xdist_each_root_cause_fails_only_the_item_of_its_first_invariant(pytester):
    """One run (made by one worker, read by the other) whose items and findings agree: a failing item shows
    the findings whose primary invariant is its name, headed by their fact kinds, as many as run finds;
    an invariant a root cause broke besides its first is skipped, naming the item that shows it."""
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("-n", "2", *NAIVE, "--summarizer-corpus", "corpus", "--summarizer-save",
                                           "--junitxml", "junit.xml", "-p", "no:cacheprovider")
    cli = subprocess.run([sys.executable, "-m", "harness", "run", *NAIVE[:2], "--seed", "3", "--max-turns", "200",
                          "--examples", str(profile("dev").max_examples), "--report-json", "run.json", "--quiet"],
                         cwd=pytester.path, capture_output=True, text=True, timeout=600)
    violations = json.loads((pytester.path / "run.json").read_text())["violations"]
    assert cli.returncode == 1 and violations, cli.stderr
    cases = _junit_cases(pytester.path / "junit.xml")
    failed = {name: case.find("failure").text for name, case in cases.items() if case.find("failure") is not None}
    skipped = {name: case.find("skipped").get("message") for name, case in cases.items()
               if case.find("skipped") is not None}
    primaries = Counter(v["invariant"] for v in violations)
    assert set(failed) == {f"property[{invariant}]" for invariant in primaries}
    assert result.parseoutcomes()["failed"] == len(primaries)
    for invariant, count in primaries.items():
        text = failed[f"property[{invariant}]"]
        kinds = ", ".join(v["fact_kind"] or "structure" for v in violations if v["invariant"] == invariant)
        assert text.startswith(f"{invariant} ({kinds}): {count} finding(s) (seed 3, ")
        assert re.findall(r"^✗ (\S+) — ", text, re.M) == [invariant] * count  # no other invariant's finding
    besides = {i for v in violations for i in (*v["invariants"], *v["also_seen"])} - set(primaries)
    assert besides, "this seed's root causes break nothing beyond their first invariant: the case is not tested"
    for invariant in besides:
        assert skipped[f"property[{invariant}]"].startswith(f"{invariant} was broken only by the root cause(s) of "
                                                             f"property[")
    named = {i for text in failed.values() for i in re.findall(r"^  also broken: (\S+):", text, re.M)}
    named |= {i for text in failed.values() for line in re.findall(
        r"^  also seen with it \(not on the minimal transcript\): (.*)$", text, re.M) for i in line.split(", ")}
    assert besides <= named  # each named in the text of the finding that broke it
    saved = list((pytester.path / "corpus").glob("*.json"))
    assert saved and {json.loads(path.read_text())["invariant"] for path in saved} <= set(primaries)


def test_the_harness_items_run_alone_with_their_marker(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("-m", "compaction_harness", "--summarizer",
                                           "harness.summarizers.ledgered:summarize", "--summarizer-protocol", "rich",
                                           "--summarizer-corpus", "none", "--summarizer-max-turns", "100",
                                           "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes["deselected"] == 1 and outcomes.get("failed", 0) == 0  # the project's own test did not run


@pytest.mark.parametrize(
    "args, message",
    [
        (["--summarizer-profile", "weekly"], "--summarizer-profile 'weekly': expected one of dev, ci, nightly"),
        (["--summarizer-budget", "lots"], "--summarizer-budget expects a whole number, got 'lots'"),
        (["--summarizer-seed", "-1"], "--summarizer-seed expects a number >= 0, got -1"),
        (["--summarizer-protocol", "chat"], "--summarizer-protocol 'chat': expected one of messages, rich"),
        (["--summarizer-dialect", "xml"], "--summarizer-dialect 'xml': expected one of chat, anthropic, "
                                          "openai-responses"),
        (["--summarizer-unclear", "maybe"], "--summarizer-unclear 'maybe': expected one of review, fail"),
        (["--summarizer-trigger", "1.5"], "--summarizer-trigger expects a share in (0, 1] (or 1% to 100%), got 1.5"),
        (["--summarizer-max-windows", "0"], "--summarizer-max-windows expects a number >= 1, got 0"),
        (["--summarizer-max-turns", "few"], "--summarizer-max-turns expects a whole number, got 'few'"),
        (["--summarizer-jobs", "0"], "--summarizer-jobs expects a number >= 1, got 0"),
        (["--summarizer-trials", "-1"], "--summarizer-trials expects a number >= 0, got -1"),
        (["--summarizer-timeout", "0"], "--summarizer-timeout expects a finite number > 0, got 0"),
        (["--summarizer-timeout", "soon"], "--summarizer-timeout expects a number, got 'soon'"),
        (["--summarizer-max-time", "inf"], "--summarizer-max-time expects a finite number > 0, got inf"),
        (["--summarizer-max-calls", "0"], "--summarizer-max-calls expects a number >= 1, got 0"),
        (["--summarizer-max-tokens", "1.5"], "--summarizer-max-tokens expects a whole number, got '1.5'"),
        (["--summarizer-shrink-calls", "0"], "--summarizer-shrink-calls expects a number >= 1, got 0"),
        (["--summarizer-retries", "-2"], "--summarizer-retries expects a number >= 0, got -2"),
        (["--summarizer-max-result-chars", "0"], "--summarizer-max-result-chars expects a number >= 1, got 0"),
        (["--summarizer-fuzz", "0"], "--summarizer-fuzz expects a finite number > 0, got 0"),
        (["--summarizer-prompt", "p.txt"], "--summarizer-prompt 'p.txt' is the prompt of openai: summarizers; "
                                           "'harness.summarizers.ledgered:summarize' is not one"),
    ],
)
def test_bad_option_values_are_usage_errors(pytester, args, message):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.ledgered:summarize", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


#: Each numeric option and the option of ``compaction-harness run`` it mirrors (``--summarizer-fuzz``: as
#: ``fuzz --max-time``, which checks seconds as ``run --max-time`` does).
MIRRORED = [("summarizer_seed", "--seed"), ("summarizer_budget", "--budget"),
            ("summarizer_max_windows", "--max-windows"), ("summarizer_max_turns", "--max-turns"),
            ("summarizer_jobs", "--jobs"), ("summarizer_trials", "--trials"), ("summarizer_retries", "--retries"),
            ("summarizer_max_result_chars", "--max-result-chars"), ("summarizer_max_calls", "--max-calls"),
            ("summarizer_max_tokens", "--max-tokens"), ("summarizer_shrink_calls", "--shrink-calls"),
            ("summarizer_timeout", "--timeout"), ("summarizer_max_time", "--max-time"),
            ("summarizer_fuzz", "--max-time"), ("summarizer_trigger", "--trigger")]
PROBES = ["-1", "0", "1", "3", "0.5", "1.5", "90%", "100%", "101%", "0%", "lots", "", "1e3", "nan", "inf", "-inf",
          "2592000", "2592000.5"]


@pytest.mark.parametrize("dest, option", MIRRORED, ids=[option for option, _ in MIRRORED])
def test_a_numeric_option_takes_what_the_run_option_takes_and_says_the_same(dest, option):
    run = build_parser().commands["run"]
    parse = next(action.type for action in run._actions if option in action.option_strings)
    flag = "--" + dest.replace("_", "-")
    for raw in PROBES:
        try:
            expected = parse(raw)
        except argparse.ArgumentTypeError as exc:
            expected = str(exc).replace(option, flag)
        try:
            got = _read(dest, raw)
        except pytest.UsageError as exc:
            got = str(exc)
        assert got == expected, (raw, got, expected)


def test_bad_spec_is_a_usage_error(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("--summarizer", "nowhere:fn")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--summarizer 'nowhere:fn': cannot import module 'nowhere'" in result.stderr.str()


def test_without_summarizer_the_plugin_adds_nothing(pytester):
    pytester.makepyfile(EMPTY_TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_nightly_profile_stays_random_with_a_database_under_ci():
    """In a fresh interpreter with CI set, Hypothesis loads its own derandomized, database-less
    profile as the default; ours must not inherit that."""
    code = ("import hypothesis; from harness._app._profiles import profile; d = hypothesis.settings.default; "
            "n = profile('nightly'); print(d.derandomize, d.database is None, n.derandomize, "
            "n.database is not None, n.max_examples)")
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_PROFILE"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**env, "CI": "true"})
    assert proc.stdout.split() == ["True", "True", "False", "True", "1000"], proc.stdout + proc.stderr


def test_a_derandomized_profile_fixes_the_run_seed(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--summarizer",
                                           "harness.summarizers.ledgered:summarize", "--summarizer-profile", "ci",
                                           "-k", "nothing")
    result.stdout.fnmatch_lines(["*profile ci, seed 0 *"])


def test_nightly_run_keeps_shrunk_failures_in_its_database(tmp_path):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    config = RunConfig.of("harness.summarizers.mutants:softens_prohibition", protocol="rich", examples=20,
                       seed=1, max_turns=200, only=("negation-polarity",), quiet=True, isolation="inline",
                       database=str(tmp_path))
    assert run(config).failures
    assert any(tmp_path.rglob("*"))  # the shrunk example is stored for the next night


# The three-line test a team writes with our public helpers:
@settings(max_examples=25)
@given(transcripts(min_turns=100, max_turns=1500))
def test_helper_in_a_teams_own_given_test(transcript):
    assert_compaction_holds(ledgered.summarize, transcript, protocol="rich")


def test_helper_raises_readably_on_a_violation():
    @settings(max_examples=50, database=None)
    @given(transcripts(facts=facts(kinds=[FactKind.PROHIBITION]), min_turns=300, max_turns=600))
    def check(transcript):
        assert_compaction_holds(softens_prohibition, transcript, protocol="rich", budget=500)

    with pytest.raises(CompactionViolation, match=r"compaction \d+ \(after turn \d+\): negation-polarity \[prohibition, weakened\]"):
        check()


APPROVAL = str(Path(__file__).resolve().parent.parent / "examples" / "approval_gate.py")
APPROVAL_MUTANTS = str(Path(__file__).resolve().parent / "fixtures" / "approval_mutants.py")


def test_plugin_extend_reaches_the_summarizer_and_the_corpus(pytester):
    """A team's kind is defined beside the summarizer too: the correct compactor states it, the mutant is caught."""
    pytester.makepyfile(EMPTY_TEST)
    common = ["--summarizer-extend", APPROVAL, "--summarizer-corpus", "corpus", "--summarizer-seed", "5",
              "--summarizer-max-turns", "150", "-p", "no:cacheprovider"]
    failing = pytester.runpytest_subprocess("--summarizer", f"{APPROVAL_MUTANTS}:claims_approval",
                                            "--summarizer-save", *common)
    assert failing.parseoutcomes()["failed"] >= 1
    assert "approval-gate-held" in _failed_items(failing)
    failing.stdout.fnmatch_lines(["*approval-gate-held*", f"*--extend {APPROVAL}*"])
    saved = list((pytester.path / "corpus").glob("*.json"))
    assert saved
    fixed = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.prose:summarize", *common)
    outcomes = fixed.parseoutcomes()  # the empty test, the property search, each entry now fixed
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] >= 1 + len(saved) + 20


def test_plugin_background_plants_obligations_in_the_teams_logs(pytester):
    """--summarizer-background reaches the property search: its reproduce line carries it."""
    pytester.makepyfile(EMPTY_TEST)
    background = str(Path(__file__).resolve().parent.parent / "examples" / "background")
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.mutants:softens_prohibition",
                                           "--summarizer-background", background, "--summarizer-seed", "5",
                                           "--summarizer-corpus", "none", "-p", "no:cacheprovider")
    assert result.parseoutcomes()["failed"] >= 1
    result.stdout.fnmatch_lines([f"*--background {background}*"])


def test_the_plugin_takes_a_summarizer_outside_python_as_the_cli_does(pytester):
    """`pytest --summarizer 'cmd:python compact.py'` runs the search through the command's JSON lines (before,
    the plugin tried to import 'cmd' as a module and stopped with a usage error)."""
    pytester.makepyfile(EMPTY_TEST)
    (pytester.path / "compact.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    print(json.dumps({'messages': request['messages'][-2:]}), flush=True)\n", encoding="utf-8")
    result = pytester.runpytest_subprocess("--summarizer", f"cmd:{sys.executable} compact.py",
                                           "--summarizer-max-turns", "40", "--summarizer-seed", "3", "-p",
                                           "no:cacheprovider", "-v")
    assert result.ret != pytest.ExitCode.USAGE_ERROR, result.stderr.str()
    assert "compaction-harness::property[summarizer-answered] PASSED" in result.stdout.str()
    # It keeps two messages: obligations are dropped, under whichever invariant is the dropped cause's primary.
    failed = re.findall(r"compaction-harness::property\[([a-z-]+)\] FAILED", result.stdout.str())
    assert set(failed) & {"commitment-retained", "literal-verbatim", "negation-polarity", "threshold-exact",
                          "error-retained", "gating-field-retained", "ledger-monotone", "handle-retained",
                          "negative-fact-disposition", "supersession"}, failed


def test_a_flaky_entry_that_holds_in_every_trial_is_a_skip_as_replay_says_not_a_failure(pytester):
    """replay exits 0 on such an entry ("not reproduced in 3 trials", not proof of a fix); the plugin's item for
    it is skipped with that reason, never failed, never passed."""
    import json

    pytester.makepyfile(EMPTY_TEST)
    name = _seeded_names()[0]
    corpus = _corpus(pytester, name)
    data = json.loads((corpus / name).read_text(encoding="utf-8"))
    data["trials"] = {"failed": 1, "of": 3}  # saved from a summarizer that failed it once in three
    (corpus / name).write_text(json.dumps(data), encoding="utf-8")
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.ledgered:summarize",
                                           "--summarizer-protocol", "rich", "--summarizer-corpus", "corpus",
                                           "--summarizer-max-turns", "60", "-p", "no:cacheprovider", "-rs", "-k", "replay")
    result.stdout.fnmatch_lines(["*SKIPPED*not reproduced in 3 trials*"])
    assert result.parseoutcomes().get("skipped") == 1 and "failed" not in result.parseoutcomes()


# -- the options run has, under the prefix ------------------------------------------------------------

#: A short, quick property search (the dev profile's 20 examples) with no corpus.
QUICK = ["--summarizer-seed", "3", "--summarizer-max-turns", "40", "--summarizer-corpus", "none",
         "-p", "no:cacheprovider"]


def _summarizer(pytester, name: str, body: str, **paths: Path) -> str:
    """A summarizer file in the test's folder, ``{name}`` of each path filled in as an absolute one (its
    worker process may run elsewhere); its spec."""
    (pytester.path / f"{name}.py").write_text(body.format(**{k: repr(str(v)) for k, v in paths.items()}),
                                              encoding="utf-8")
    return f"{name}.py:summarize"


#: Counts the calls in flight across worker processes (a file each), writing the count it sees to a log.
IN_FLIGHT = """import os, time, uuid
from harness.summarizers.naive import tail

def summarize(messages, budget):
    mine = os.path.join({folder}, f"{{os.getpid()}}-{{uuid.uuid4().hex}}")
    open(mine, "w").close()
    try:
        with open({log}, "a") as log:
            log.write(f"{{len(os.listdir({folder}))}}\\n")
        time.sleep(0.02)  # long enough for another job's call to start meanwhile
        return tail(messages, budget)
    finally:
        os.remove(mine)
"""


@pytest.mark.parametrize("jobs, at_once", [(None, 1), ("2", 2)])
def test_summarizer_jobs_judges_examples_at_once_as_run_jobs_does(pytester, jobs, at_once):
    pytester.makepyfile(EMPTY_TEST)
    folder, log = pytester.mkdir("in-flight"), pytester.path / "in-flight.log"
    spec = _summarizer(pytester, "in_flight", IN_FLIGHT, folder=folder, log=log)
    result = pytester.runpytest_subprocess("--summarizer", spec, "--summarizer-trials", "0", *QUICK,
                                           *(["--summarizer-jobs", jobs] if jobs else []))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert max(int(line) for line in log.read_text().split()) == at_once


#: Every answer is the correct ledgered compactor's, with a field no oracle reads set at random (a stream
#: seeded by a fixed number and the process: a restarted worker, as the re-asks use, draws anew).
VARIES = """import dataclasses, os, random
from harness.summarizers import ledgered

_rng = random.Random(f"7:{{os.getpid()}}")

def summarize(request):
    result = ledgered.summarize(request)
    return dataclasses.replace(result, verified=() if _rng.random() < 0.5 else None)

summarize.compaction_protocol = "rich"
"""


@pytest.mark.parametrize("options, deterministic", [
    ([], "FAILED"),
    (["--summarizer-may-vary"], "PASSED"),  # a divergence is noted, never a failure
    (["--summarizer-trials", "0"], "SKIPPED"),  # no request is asked twice
])
def test_may_vary_and_trials_decide_what_a_varying_summarizer_does_to_deterministic(pytester, options,
                                                                                    deterministic):
    pytester.makepyfile(EMPTY_TEST)
    spec = _summarizer(pytester, "varies", VARIES)
    result = pytester.runpytest_subprocess("--summarizer", spec, *QUICK, "-v", *options)
    assert f"compaction-harness::property[deterministic] {deterministic}" in result.stdout.str()
    assert _failed_items(result) == ({"deterministic"} if deterministic == "FAILED" else set())


#: The correct compactor, writing a line for each call it is asked.
COUNTED = """from harness.summarizers.naive import tail

def summarize(messages, budget):
    with open({log}, "a") as log:
        log.write("call\\n")
    return tail(messages, budget)
"""


def test_the_cache_dir_pays_no_call_twice_and_a_new_version_asks_again(pytester):
    pytester.makepyfile(EMPTY_TEST)
    log = pytester.path / "calls.log"
    spec = _summarizer(pytester, "counted", COUNTED, log=log)
    calls = []
    for version in ([], [], ["--summarizer-version", "v2"]):  # trials 0: no re-ask bypasses the cache
        pytester.runpytest_subprocess("--summarizer", spec, "--summarizer-cache-dir", "cache",
                                      "--summarizer-trials", "0", *QUICK, *version)
        calls.append(len(log.read_text().split()) - sum(calls))
    assert calls[0] > 0 and calls[1] == 0 and calls[2] == calls[0], calls
    assert any((pytester.path / "cache").rglob("*.json"))


SLOW_ONCE = """import os, time
from harness.summarizers.naive import tail

def summarize(messages, budget):
    if not os.path.exists({flag}):
        open({flag}, "w").close()
        time.sleep(5)
    return tail(messages, budget)
"""


def test_the_timeout_reaches_the_summarizers_calls(pytester):
    pytester.makepyfile(EMPTY_TEST)
    spec = _summarizer(pytester, "slow_once", SLOW_ONCE, flag=pytester.path / "slept")
    result = pytester.runpytest_subprocess("--summarizer", spec, "--summarizer-timeout", "0.5", *QUICK)
    assert _failed_items(result) == {"summarizer-answered"}
    result.stdout.fnmatch_lines(["the summarizer failed in 1 example(s) (seed 3, *", "example *: timeout: *0.5 s*"])


@pytest.mark.parametrize("options, stop", [
    (["--summarizer-max-calls", "30"], "--max-calls 30 reached"),
    (["--summarizer-max-time", "0.3"], "--max-time 0.3 s reached"),
])
def test_a_spend_cap_ends_the_search_and_fails_every_example_judged(pytester, options, stop):
    pytester.makepyfile(EMPTY_TEST)
    folder = pytester.mkdir("in-flight")  # a slow summarizer: 20 examples take longer than the deadline
    spec = _summarizer(pytester, "in_flight", IN_FLIGHT, folder=folder, log=pytester.path / "in-flight.log")
    result = pytester.runpytest_subprocess("--summarizer", spec, *QUICK, *options)
    assert "every-example-judged" in _failed_items(result)
    result.stdout.fnmatch_lines([f"not every example was judged (seed 3, * examples): {stop}"])


def test_max_tokens_caps_what_a_summarizer_reporting_usage_spends(pytester):
    pytester.makepyfile(EMPTY_TEST)
    (pytester.path / "usage.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    print(json.dumps({'messages': request['messages'][-2:],\n"
        "                      'usage': {'prompt_tokens': 100, 'completion_tokens': 10}}), flush=True)\n",
        encoding="utf-8")
    result = pytester.runpytest_subprocess("--summarizer", f"cmd:{sys.executable} usage.py",
                                           "--summarizer-max-tokens", "1000", *QUICK)
    assert "every-example-judged" in _failed_items(result)
    result.stdout.fnmatch_lines(["not every example was judged (seed 3, * examples): --max-tokens 1000 reached"])


def test_shrink_calls_and_trials_reach_each_finding(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.mutants:softens_prohibition",
                                           "--summarizer-shrink-calls", "1", "--summarizer-trials", "5", *QUICK,
                                           "--summarizer-max-turns", "200")
    assert _failed_items(result) == {"negation-polarity"}
    result.stdout.fnmatch_lines(["*shrunk within 1 calls (--shrink-calls)*", "*fails 5 of 5 trials*"])


FAILING = """import os

def summarize(messages, budget):
    raise RuntimeError("cannot reach " + os.environ["TEAM_WAREHOUSE_URL"])
"""


def test_stop_on_error_and_redact_env_reach_the_summarizers_failures(pytester, monkeypatch):
    secret = "postgres://team:hunter2@db.internal/prod"
    monkeypatch.setenv("TEAM_WAREHOUSE_URL", secret)  # no secret pattern (*_KEY, *TOKEN*, *_DSN ...) names it
    pytester.makepyfile(EMPTY_TEST)
    spec = _summarizer(pytester, "failing", FAILING)
    result = pytester.runpytest_subprocess("--summarizer", spec, "--summarizer-stop-on-error",
                                           "--summarizer-redact-env", "TEAM_WAREHOUSE_URL", *QUICK)
    assert "summarizer-answered" in _failed_items(result)
    result.stdout.fnmatch_lines(["the summarizer failed in 1 example(s) (seed 3, 1 examples):",
                                 "*cannot reach [[]REDACTED:TEAM_WAREHOUSE_URL[]]*"])
    assert secret not in result.stdout.str() + result.stderr.str()


def test_max_result_chars_bounds_each_answer(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.ledgered:summarize",
                                           "--summarizer-max-result-chars", "10", *QUICK)
    assert "summarizer-answered" in _failed_items(result)
    result.stdout.fnmatch_lines(["*oversized: the result is * characters as JSON, over the limit of 10*"])


PIDS = """import os
from harness.summarizers.naive import tail

def summarize(messages, budget):
    with open({log}, "a") as log:
        log.write(f"{{os.getpid()}}\\n")
    return tail(messages, budget)
"""


def test_inline_calls_the_summarizer_in_the_pytest_process(pytester):
    pytester.makepyfile(EMPTY_TEST)
    log, own = pytester.path / "pids.log", pytester.path / "pytest.pid"
    pytester.makeconftest(f"import os\n\ndef pytest_configure(config):\n"
                          f"    open({str(own)!r}, 'w').write(str(os.getpid()))\n")
    spec = _summarizer(pytester, "pids", PIDS, log=log)
    result = pytester.runpytest_subprocess("--summarizer", spec, "--summarizer-inline", *QUICK)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert set(log.read_text().split()) == {own.read_text()}


def test_the_openai_options_reach_the_model(pytester, monkeypatch):
    """--summarizer-base-url, --summarizer-api-key-env and --summarizer-prompt reach the API; with
    --summarizer-retries 0 its first 503 is a summarizer failure (the default retries it)."""
    key = "sk-team-4f9b2c7e1d8a6f3b"
    monkeypatch.setenv("TEAM_KEY", key)
    pytester.makepyfile(EMPTY_TEST)
    (pytester.path / "prompt.txt").write_text("TEAM PROMPT at most {budget} tokens\n<transcript>\n{transcript}\n"
                                              "</transcript>\n<obligations>\n{obligations}\n</obligations>\n")
    with openai_stub(prose.summarize, fail_first=1, fail_status=503) as api:
        result = pytester.runpytest_subprocess("--summarizer", "openai:team-model", "--summarizer-base-url",
                                               api.url + "/v1", "--summarizer-api-key-env", "TEAM_KEY",
                                               "--summarizer-prompt", "prompt.txt", "--summarizer-retries", "0",
                                               *QUICK)
        received = api.requests
    assert "summarizer-answered" in _failed_items(result)
    result.stdout.fnmatch_lines(["the summarizer failed in 1 example(s) (seed 3, *"])
    assert len(received) > 1 and all(r.headers["Authorization"] == f"Bearer {key}" for r in received)
    assert all(r.body["messages"][0]["content"].startswith("TEAM PROMPT at most") for r in received)
    assert key not in result.stdout.str() + result.stderr.str()


# -- the options in the help and the docs -------------------------------------------------------------

@pytest.fixture(scope="module")
def plugin_help(tmp_path_factory) -> dict[str, str]:
    """Each of the plugin's options in ``pytest --help``, with its help on one line."""
    shown = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
                           cwd=tmp_path_factory.mktemp("help"), capture_output=True, text=True, timeout=120).stdout
    section = shown.split("compaction-harness: test a transcript summarizer:", 1)[1].split("\n\n", 1)[0]
    parts = re.split(r"^  (--summarizer[a-z-]*)", section, flags=re.M)[1:]
    return {flag: " ".join(text.split()) for flag, text in zip(parts[::2], parts[1::2])}


def test_the_help_names_the_defaults_the_run_takes(plugin_help):
    over = DEFAULT_MAX_RESULT_CHARS // RESULT_CHARS_PER_TOKEN  # the budget from which results may be larger
    said = {
        "--summarizer-timeout": f"(default {DEFAULT_TIMEOUT:g})",
        "--summarizer-retries": f"(default {DEFAULT_RETRIES})",
        "--summarizer-trials": f"(default {DEFAULT_TRIALS})",
        "--summarizer-shrink-calls": f"(default {DEFAULT_SHRINK_CALLS}, or {FAST_SHRINK_CALLS} for a summarizer "
                                     f"answering in under {FAST_CALL_SECONDS * 1000:g} ms a call or "
                                     f"{FAST_SECONDS_PER_KTOKEN * 1000:g} ms per 1,000 tokens)",
        "--summarizer-budget": f"(default {DEFAULT_BUDGET})",
        "--summarizer-max-windows": f"(default {DEFAULT_MAX_WINDOWS})",
        "--summarizer-trigger": f"(default {DEFAULT_TRIGGER:g})",
        "--summarizer-max-result-chars": f"(default {DEFAULT_MAX_RESULT_CHARS:,}, or {RESULT_CHARS_PER_TOKEN} per "
                                         f"token of a budget over {over:,})",
        "--summarizer-base-url": f"(default {OPENAI_BASE_URL})",
        "--summarizer-api-key-env": f"(default {API_KEY_ENV})",
        "--summarizer-dialect": f"{DEFAULT_DIALECT} (default)",
    }
    for flag, default in said.items():
        assert default in plugin_help[flag], (flag, plugin_help[flag])
    for name in PROFILE_NAMES:  # "dev (20 examples), ci (100, derandomized) or nightly (1000, ..."
        assert f"{name} ({profile(name).max_examples}" in plugin_help["--summarizer-profile"]


def test_the_docs_list_every_option_of_the_plugin_and_the_run_option_it_mirrors(plugin_help):
    page = (Path(__file__).resolve().parent.parent / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    page = page[page.index("## The pytest plugin"):]  # the commands' own tables are above it
    rows = re.findall(r"^\| `(--summarizer[a-z-]*)[^`]*` \|([^|]*)\|", page, re.M)
    assert [flag for flag, _ in rows] == list(plugin_help)  # every option, in the help's order
    run = build_parser().commands["run"].option_strings()
    mirrored = {option for _, cell in rows for option in re.findall(r"`(--[a-z-]+)`", cell)}
    assert mirrored and mirrored <= set(run), mirrored - set(run)
