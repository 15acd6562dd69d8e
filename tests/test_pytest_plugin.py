"""The pytest plugin, driven through pytester (in a subprocess, so xdist's -n works)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from harness.testing import CompactionViolation, assert_compaction_holds
from harness.summarizers import ledgered
from harness.summarizers.mutants import softens_prohibition
from harness import FactKind
from strategies import facts, transcripts

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


def test_under_xdist_each_broken_invariant_is_its_own_failing_item_from_one_run(pytester):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("-n", "2", "--summarizer", "harness.summarizers.naive:tail",
                                           "--summarizer-seed", "3", "--summarizer-max-turns", "200",
                                           "--summarizer-corpus", "corpus", "--summarizer-save", "-p", "no:cacheprovider")
    failed = _failed_items(result)
    assert {"commitment-retained", "literal-verbatim", "budget-respected"} <= failed, failed
    assert result.parseoutcomes()["failed"] == len(failed)
    saved = list((pytester.path / "corpus").glob("*.json"))
    assert saved and {json.loads(path.read_text())["invariant"] for path in saved} <= failed


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
        (["--summarizer-budget", "lots"], "--summarizer-budget 'lots': expected a whole number"),
        (["--summarizer-seed", "-1"], "--summarizer-seed -1: expected a number >= 0"),
        (["--summarizer-protocol", "chat"], "--summarizer-protocol 'chat': expected messages or rich"),
        (["--summarizer-trigger", "1.5"], "--summarizer-trigger '1.5': expected a share of the budget in (0, 1]"),
        (["--summarizer-max-windows", "0"], "--summarizer-max-windows 0: expected a number >= 1"),
        (["--summarizer-max-turns", "few"], "--summarizer-max-turns 'few': expected a whole number"),
    ],
)
def test_bad_option_values_are_usage_errors(pytester, args, message):
    pytester.makepyfile(EMPTY_TEST)
    result = pytester.runpytest_subprocess("--summarizer", "harness.summarizers.ledgered:summarize", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


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
                                           "--summarizer-max-turns", "40", "-p", "no:cacheprovider", "-v")
    assert result.ret != pytest.ExitCode.USAGE_ERROR, result.stderr.str()
    assert "compaction-harness::property[summarizer-answered] PASSED" in result.stdout.str()
    # It keeps two messages: obligations are dropped, whichever invariants this seed's transcripts show it to.
    failed = re.findall(r"compaction-harness::property\[([a-z-]+)\] FAILED", result.stdout.str())
    assert set(failed) & {"commitment-retained", "literal-verbatim", "negation-polarity", "threshold-exact",
                          "error-retained", "gating-field-retained", "ledger-monotone"}, failed


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
