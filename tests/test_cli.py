"""The command-line contract: commands, exit codes, the JSON report, clear errors."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import dumps
from tests._proc import harness_crashed
from harness._app.cli._main import main
from harness.oracles import registered
from harness.summarizers.mutants import MUTANTS, SESSION_MUTANTS
from harness.strategies import Skeleton, expand

FAULTY = str(Path(__file__).parent / "fixtures" / "faulty.py")
SMALL = ["--examples", "150", "--max-turns", "300", "--seed", "3", "--quiet"]


def _run(tmp_path, *args):
    report = tmp_path / "report.json"
    code = main(["run", *args, "--report-json", str(report)])
    return code, json.loads(report.read_text())


VIOLATING = sorted(inv for inv in MUTANTS if inv != "ledger-budget")


@pytest.mark.parametrize("invariant", VIOLATING)
def test_each_mutant_exits_1_with_a_minimal_transcript(tmp_path, invariant):
    spec = f"harness.summarizers.mutants:{MUTANTS[invariant].__name__}"
    code, report = _run(tmp_path, "--summarizer", spec, "--only", invariant, *SMALL)
    assert code == 1
    violation, *_ = [v for v in report["violations"] if v["invariant"] == invariant]
    assert violation["severity"] == "violate"
    assert violation["minimal_turns"] == len(violation["transcript"]["turns"]) <= violation["original_turns"]
    if invariant != "budget-respected":  # overrunning a budget needs enough turns to overrun it with
        assert violation["minimal_turns"] <= 6
    assert violation["detail"] and violation["context"]["messages"]
    assert report["summarizer"] == spec and report["seed"] == 3 and report["examples_run"] == 150
    assert report["summarizer_calls"] > 0 and report["infra_errors"] == []


def test_summary_growth_mutant_is_caught_across_a_session(tmp_path):
    spec = f"harness.summarizers.mutants:{SESSION_MUTANTS['summary-growth'].__name__}"
    code, report = _run(tmp_path, "--summarizer", spec, "--only", "summary-growth", "--examples", "20",
                        "--max-turns", "3000", "--budget", "800", "--seed", "1", "--quiet")
    assert code == 1
    assert [v["invariant"] for v in report["violations"]] == ["summary-growth"]


def test_degrade_alone_does_not_fail_the_run(tmp_path):
    code, report = _run(tmp_path, "--summarizer", "harness.summarizers.mutants:bloated_ledger", "--only",
                        "ledger-budget", *SMALL)
    assert code == 0 and report["violations"] == []
    assert report["degradations"]["ledger-budget"] > 0


@pytest.mark.parametrize(
    "spec, extra",
    [
        ("harness.summarizers.ledgered:summarize", []),
        ("harness.summarizers.prose:summarize", []),
        ("harness.summarizers.identity:summarize", ["--skip", "budget-respected"]),
    ],
)
def test_correct_compactors_exit_0(tmp_path, spec, extra):
    code, report = _run(tmp_path, "--summarizer", spec, *extra, "--examples", "40", "--max-turns", "200",
                        "--seed", "4", "--quiet")
    assert (code, report["violations"]) == (0, [])


def test_default_run_shows_a_minimal_counterexample(capsys):
    assert main(["run", "--examples", "30", "--seed", "1", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "harness.summarizers.example:summarize" in out
    assert "✗ " in out and "minimal transcript: " in out
    assert "reproduce: compaction-harness run --summarizer harness.summarizers.example:summarize" in out


@pytest.mark.parametrize(
    "name, kind",
    [("raises", "exception"), ("returns_int", "malformed"), ("mutates", "mutated-input"), ("hangs", "timeout")],
)
def test_summarizer_faults_exit_3_without_a_traceback(name, kind):
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--summarizer", f"{FAULTY}:{name}", "--examples", "3",
         "--max-turns", "60", "--timeout", "1", "--stop-on-error", "--seed", "0"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"! summarizer failure ({kind})" in proc.stdout
    assert not harness_crashed(proc.stdout + proc.stderr)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--only", "nope"], "InvalidArgument: unknown oracle id(s) ['nope']"),
        (["run", "--token-counter", "nocolon"], "SpecError: --token-counter 'nocolon': expected 'module:function'"),
        (["run", "--summarizer", "nocolon"], "SpecError: --summarizer 'nocolon': expected 'module:function'"),
        (["run", "--examples", "0"], "UsageError: argument --examples: --examples expects a number >= 1, got 0"),
        (["run", "--timeout", "soon"], "UsageError: argument --timeout: --timeout expects a number, got 'soon'"),
        (["run", "--protocol", "chat"], "UsageError: argument --protocol: invalid choice: 'chat'"),
        (["shrink", "missing.json", "--summarizer", "harness.summarizers.identity:summarize"],
         "SchemaError: missing.json: field '<root>': expected an existing file, got 'no such file'"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_oracles_lists_the_catalogue(capsys):
    assert main(["oracles"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == len(registered())
    assert "negation-polarity" in out and "summary-growth" in out and "session" in out


def test_shrink_minimizes_a_handed_in_transcript(tmp_path, capsys):
    transcript = expand(Skeleton(seed=8, length=4000))
    # plant a violation: a prohibition deep inside a long transcript
    from harness import Fact, FactKind, Polarity, Role, Transcript, Turn

    turns = list(transcript.turns)
    turns.insert(2500, Turn(Role.USER, "Never use s3://acme-prod-01/."))
    planted = Transcript(tuple(turns), (Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-01/",), 2500,
                                             Polarity.FORBID),), (3900,))
    path = tmp_path / "t.json"
    path.write_text(dumps(planted))
    report = tmp_path / "r.json"
    code = main(["shrink", str(path), "--summarizer", "harness.summarizers.mutants:softens_prohibition",
                 "--protocol", "rich", "--quiet", "--report-json", str(report)])
    assert code == 1
    (violation,) = json.loads(report.read_text())["violations"]
    assert violation["invariant"] == "negation-polarity"
    assert violation["original_turns"] == 4001 and violation["minimal_turns"] <= 3
    assert violation["shrink_summarizer_calls"] > 0


def test_help_and_version(capsys):
    assert main([]) == 0
    assert "run" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("compaction-harness 0.1.0")


def test_token_counter_is_pluggable(tmp_path):
    common = ["--summarizer", "harness.summarizers.ledgered:summarize", "--only", "budget-respected",
              "--examples", "10", "--max-turns", "200", "--seed", "2", "--budget", "300", "--quiet"]
    code, _ = _run(tmp_path, *common)
    assert code == 0
    code, report = _run(tmp_path, *common, "--token-counter", f"{FAULTY}:characters")
    assert code == 1 and report["violations"][0]["invariant"] == "budget-respected"


# -- errors that say what to do -------------------------------------------------------------------

_SIGNATURES = '''
def takes_request(request):
    return []

def takes_a_model_too(messages, budget, model):
    return messages
'''


@pytest.mark.parametrize("isolation", [[], ["--inline"]], ids=["worker", "inline"])
def test_a_summarizer_with_the_wrong_signature_is_refused_when_it_loads_naming_the_protocol(tmp_path, capsys,
                                                                                           isolation):
    module = tmp_path / "sigs.py"
    module.write_text(_SIGNATURES)
    argv = ["run", "--summarizer", f"{module}:takes_request", "--examples", "50", "--quiet", *isolation]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "takes_request(request) cannot be called as fn(messages, budget)" in err
    assert "'messages' protocol" in err and "--protocol rich" in err  # the way out
    assert main(["run", "--summarizer", f"{module}:takes_a_model_too", "--examples", "50", "--quiet", *isolation]) == 2
    err = capsys.readouterr().err
    assert "takes_a_model_too(messages, budget, model) cannot be called" in err and "--protocol rich" not in err


def test_a_misspelled_function_option_command_or_oracle_gets_the_closest_name(capsys):
    assert main(["run", "--summarizer", "harness.summarizers.example:summarise", "--examples", "1"]) == 2
    assert "no callable named 'summarise' (did you mean 'summarize'?)" in capsys.readouterr().err
    assert main(["run", "--only", "commitment-retaind", "--examples", "1"]) == 2
    assert "(did you mean 'commitment-retained'?)" in capsys.readouterr().err
    assert main(["rnu"]) == 2 and "(did you mean 'run'?)" in capsys.readouterr().err
    assert main(["run", "--exampels", "3"]) == 2
    err = capsys.readouterr().err
    assert "did you mean --examples?" in err
    assert err.startswith("usage: compaction-harness run ")  # the command's own usage, not the top level's


def test_an_option_prefix_is_not_taken_for_the_option(capsys):
    assert main(["run", "--example", "3"]) == 2  # argparse would read this as --examples
    assert "unrecognized arguments: --example 3 (did you mean --examples?)" in capsys.readouterr().err


def test_replay_given_a_file_points_to_shrink(tmp_path, capsys):
    entry = next(Path("corpora").glob("*.json"))
    assert main(["replay", str(entry), "--summarizer", "harness.summarizers.example:summarize"]) == 2
    err = capsys.readouterr().err
    assert "expected a corpus directory, got a file" in err
    assert f"compaction-harness shrink {entry} --summarizer harness.summarizers.example:summarize" in err


def test_a_reader_that_went_away_is_not_an_internal_error():
    """`compaction-harness oracles | head`: the closed pipe ends the command quietly, exit 0, not exit 2."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        done = subprocess.run([sys.executable, "-m", "harness", "oracles"], stdout=write, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 0 and b"InternalError" not in done.stderr, done.stderr


# -- sessions sized to the budget, compacting as a runtime does, and what a run will spend -------------------

def _fifth_summarizer(tmp_path):
    module = tmp_path / "fifth.py"
    module.write_text("def summarize(messages, budget):\n"
                      "    return [{'role': 'system', 'content': ' '.join(['summary'] * int(0.2 * budget))}]\n")
    return f"{module}:summarize"


def test_the_estimate_is_what_the_run_then_spends_for_a_compactor_returning_a_fifth(tmp_path, capsys):
    """``run --estimate`` plays the run's own sessions with a stand-in returning a fifth of its budget: for a
    summarizer that does the same, the calls and the tokens handed over are exactly the run's."""
    spec = _fifth_summarizer(tmp_path)
    common = ["--summarizer", spec, "--seed", "4", "--examples", "8", "--only", "budget-respected", "--inline"]
    assert main(["run", "--estimate", *common]) == 0
    said = capsys.readouterr().out
    calls, tokens = (int(x.replace(",", "")) for x in re.search(
        r"takes about ([\d,]+) calls handed ([\d,]+) prompt tokens", said).groups())
    report = tmp_path / "r.json"
    assert main(["run", *common, "--quiet", "--report-json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert (data["summarizer_calls"], data["calls"]["handed_tokens"]) == (calls, tokens)
    assert data["sessions"]["request_tokens_total"] == tokens and calls > 8


def test_no_planned_cuts_and_no_tighten_run_a_session_as_a_runtime_does(tmp_path):
    spec = _fifth_summarizer(tmp_path)
    runs = {}
    for name, extra in (("default", []), ("runtime", ["--no-planned-cuts", "--no-tighten", "--trigger", "0.6"])):
        report = tmp_path / f"{name}.json"
        main(["run", "--summarizer", spec, "--seed", "2", "--examples", "10", "--only", "budget-respected",
              "--inline", "--quiet", "--report-json", str(report), *extra])
        runs[name] = json.loads(report.read_text())["sessions"]
    assert runs["default"]["forced_by_planned_cuts"] > 0 and runs["default"]["tightened_sessions"] > 0
    runtime = runs["runtime"]
    assert (runtime["forced_by_planned_cuts"], runtime["tightened_sessions"]) == (0, 0)
    assert runtime["by_trigger"] == sum(runtime["compactions"]) > 0
    assert (runtime["trigger"], runtime["planned_cuts"], runtime["tighten"]) == (0.6, False, False)


def test_sessions_are_sized_in_windows_of_the_budget(tmp_path):
    """A keep-everything compactor compacts about once a window: at a production budget, as at the default."""
    report = tmp_path / "r.json"
    main(["run", "--summarizer", "harness.summarizers.identity:summarize", "--budget", "128000", "--seed", "1",
          "--examples", "6", "--max-windows", "5", "--only", "budget-respected", "--trials", "0", "--quiet",
          "--report-json", str(report)])
    sessions = json.loads(report.read_text())["sessions"]
    assert all(t <= 5 * 0.8 * 128000 * 1.2 for t in sessions["tokens"])
    assert max(sessions["compactions"]) >= 4 and sessions["request_tokens_median"] >= 0.75 * 128000
