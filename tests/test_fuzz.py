"""``compaction-harness fuzz``: coverage-guided fuzzing of a Python summarizer, end to end.

Each test runs the real command (atheris in a child process) for a bounded number of executions.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness._app.cli._main import main
from harness._app.corpus._entries import load_corpus, load_entry
from harness._app.fuzzing._fuzz import fuzz_directory

pytest.importorskip("atheris")  # the fuzz extra; CI installs it (.[dev] includes it)

FAST = ["--trials", "0", "--quiet", "--shrink-calls", "60"]


def _fuzz(tmp_path, *args, capsys=None):
    code = main(["fuzz", "--fuzz-dir", str(tmp_path / "fz"), "--seed", "3", *FAST, *args])
    out = capsys.readouterr() if capsys is not None else None
    return code, out


def _file_summarizer(tmp_path, body: str) -> str:
    path = tmp_path / "team_summarizer.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return f"{path}:summarize"


def test_fuzz_finds_shrinks_reports_and_saves_a_mutants_violation(tmp_path, capsys):
    code, out = _fuzz(tmp_path, "--summarizer", "harness.summarizers.mutants:drops_call_id", "--runs", "400",
                      "--corpus", str(tmp_path / "corpus"), "--report-json", str(tmp_path / "report.json"),
                      capsys=capsys)
    assert code == 1, out.out + out.err
    assert "✗ handle-retained — in_flight_call" in out.out
    assert "executions in" in out.out and "coverage of the summarizer's code" in out.out
    assert "\nshrinking and confirming: " in out.out, "the calls after fuzzing are named as such"
    saved = load_corpus(tmp_path / "corpus")
    assert any(e.invariant == "handle-retained" for _, e in saved.entries)
    failures = sorted((tmp_path / "fz" / "failures").glob("*.json"))
    assert failures, "each minimal failure is kept in the fuzz directory for its reproduce line"
    assert f"reproduce: compaction-harness shrink {failures[0]}" in out.out or \
        any(f"shrink {f}" in out.out for f in failures)
    shrink_line = next(line for line in out.out.splitlines() if "reproduce: compaction-harness shrink" in line)
    assert "--budget" not in shrink_line, "the entry records the budget it fails at, and shrink uses it"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["fuzz"]["executions"] >= 1 and report["fuzz"]["first_failure_calls"] is not None
    assert any(v["invariant"] == "handle-retained" for v in report["violations"])
    # the saved failure reproduces through `shrink`, as its reproduce line says
    entry = next(f for f in failures if load_entry(f).invariant == "handle-retained")
    assert main(["shrink", str(entry), "--summarizer", "harness.summarizers.mutants:drops_call_id", *FAST]) == 1


def test_fuzz_passes_a_correct_summarizer_and_keeps_its_inputs(tmp_path, capsys):
    code, out = _fuzz(tmp_path, "--summarizer", "harness.summarizers.ledgered:summarize", "--runs", "300",
                      capsys=capsys)
    assert code == 0, out.out + out.err
    assert "no violation found" in out.out
    inputs = list((tmp_path / "fz" / "inputs").iterdir())
    assert inputs, "libFuzzer keeps the inputs that reached new coverage, for the next run"


def test_a_summarizer_that_raises_is_an_infra_finding_not_a_fuzzer_crash(tmp_path, capsys):
    spec = _file_summarizer(tmp_path, """
        def summarize(messages, budget):
            if sum(m["role"] == "tool" for m in messages) >= 3:
                raise ValueError("cannot handle tool-heavy windows")
            return messages[-2:]
    """)
    code, out = _fuzz(tmp_path, "--summarizer", spec, "--runs", "200", "--only", "budget-respected",
                      capsys=capsys)
    assert code == 3, out.out + out.err
    assert "summarizer failure (exception)" in out.out and "cannot handle tool-heavy windows" in out.out


def test_a_summarizer_that_kills_the_process_is_reported_and_fuzzing_goes_on(tmp_path, capsys):
    spec = _file_summarizer(tmp_path, """
        import os
        def summarize(messages, budget):
            if sum(m["role"] == "tool" for m in messages) >= 4:
                os._exit(7)
            return messages[-2:]
    """)
    code, out = _fuzz(tmp_path, "--summarizer", spec, "--runs", "100", "--only", "budget-respected",
                      capsys=capsys)
    assert code == 3, out.out + out.err
    assert "summarizer failure (crashed)" in out.out and "exit status 7" in out.out
    assert "fuzzing process restarted" in out.out


def test_a_file_summarizer_and_its_helpers_are_instrumented(tmp_path, capsys):
    (tmp_path / "team_helpers.py").write_text(textwrap.dedent("""
        def pick(messages, budget):
            kept = []
            for message in reversed(messages):
                if len(kept) >= 3:
                    break
                if message["role"] == "tool" and len(message["content"]) > 400:
                    continue
                kept.append(message)
            return kept[::-1]
    """), encoding="utf-8")
    spec = _file_summarizer(tmp_path, """
        from team_helpers import pick
        def summarize(messages, budget):
            return pick(messages, budget)
    """)
    _fuzz(tmp_path, "--summarizer", spec, "--runs", "150", "--only", "budget-respected",
          "--report-json", str(tmp_path / "r.json"), capsys=capsys)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["fuzz"]["coverage"] >= 4, "the helper module's branches are counted"


def test_max_calls_bounds_the_fuzzing(tmp_path, capsys):
    _fuzz(tmp_path, "--summarizer", "harness.summarizers.ledgered:summarize", "--max-calls", "40",
          "--max-time", "60", "--report-json", str(tmp_path / "r.json"), capsys=capsys)
    report = json.loads((tmp_path / "r.json").read_text())
    # a session may overshoot by its own compactions (a transcript of at most 80 turns: a handful)
    assert 40 <= report["fuzz"]["calls"] <= 60


def test_merge_adds_only_inputs_with_new_coverage(tmp_path, capsys, monkeypatch):
    spec = "harness.summarizers.terse:summarize"
    assert _fuzz(tmp_path, "--summarizer", spec, "--runs", "150", capsys=capsys)[0] == 0
    inputs = tmp_path / "fz" / "inputs"
    kept = len(list(inputs.iterdir()))
    more = tmp_path / "more"
    more.mkdir()
    for n, path in enumerate(sorted(inputs.iterdir())):
        (more / f"copy-{n}").write_bytes(path.read_bytes())  # nothing new in these
    monkeypatch.chdir(tmp_path)  # relative paths, as a user types them (libFuzzer runs in another folder)
    code = main(["fuzz", "--summarizer", spec, "--fuzz-dir", "fz", "--merge", "more"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{kept} -> {kept} inputs" in out


def test_the_entry_script_is_executable_for_libfuzzers_re_exec(tmp_path):
    from harness._app.fuzzing._fuzz import _entry_script
    script = _entry_script(tmp_path)
    assert os.access(script, os.X_OK)
    assert script.read_text().startswith(f"#!{sys.executable}\n")


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "http://127.0.0.1:9/x", "cmd:node x.js"])
def test_a_summarizer_outside_python_is_told_to_use_run(spec, tmp_path, capsys):
    code = main(["fuzz", "--summarizer", spec, "--fuzz-dir", str(tmp_path / "fz")])
    err = capsys.readouterr().err
    assert code == 2
    assert "fuzz needs a Python summarizer" in err and "compaction-harness run" in err


def test_the_default_fuzz_directory_sits_beside_the_corpus():
    assert fuzz_directory("pkg.mod:fn", corpus="corpora").parent == Path("corpora.fuzz")
    assert fuzz_directory("pkg.mod:fn").parent == Path(".compaction-harness/fuzz")
    assert fuzz_directory("a:b") != fuzz_directory("a_b"), "specs never share a directory"


def test_libfuzzer_arguments_after_a_double_dash_are_passed_through(tmp_path, capsys):
    code, out = _fuzz(tmp_path, "--summarizer", "harness.summarizers.ledgered:summarize", "--runs", "50",
                      "--", "-use_value_profile=1", "-definitely_not_a_flag=1", capsys=capsys)
    assert code == 0, out.out + out.err


def test_pytest_option_runs_a_bounded_fuzz_session(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "--summarizer", "harness.summarizers.mutants:drops_call_id", "--summarizer-fuzz", "8",
                           "--summarizer-corpus", str(tmp_path / "corpus"), "-k", "fuzz"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "compaction-harness fuzz:" in done.stdout and "handle-retained" in done.stdout
    assert (tmp_path / "corpus.fuzz").is_dir()


def test_a_seeded_bounded_fuzz_is_reproducible(tmp_path, capsys):
    reports = []
    for n in (1, 2):
        main(["fuzz", "--summarizer", "harness.summarizers.example:summarize", "--fuzz-dir", str(tmp_path / f"fz{n}"),
              "--seed", "5", "--runs", "120", *FAST, "--report-json", str(tmp_path / f"r{n}.json")])
        report = json.loads((tmp_path / f"r{n}.json").read_text())
        reports.append((report["fuzz"]["examples"], report["fuzz"]["calls"], report["fuzz"]["first_failure_calls"],
                        sorted((v["invariant"], v["fact_kind"], v["minimal_turns"]) for v in report["violations"])))
    capsys.readouterr()
    assert reports[0][3], "the example summarizer fails within 120 executions"
    assert reports[0] == reports[1]


def test_jobs_run_several_fuzzing_processes_on_one_corpus(tmp_path, capsys):
    code, out = _fuzz(tmp_path, "--summarizer", "harness.summarizers.ledgered:summarize", "--runs", "60",
                      "--jobs", "2", "--report-json", str(tmp_path / "r.json"), capsys=capsys)
    assert code == 0, out.out + out.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["fuzz"]["executions"] >= 2 * 60 - 2, "each process ran its --runs"


def test_a_summarizer_that_hangs_is_a_timeout_finding(tmp_path, capsys):
    spec = _file_summarizer(tmp_path, """
        import time
        def summarize(messages, budget):
            if sum(m["role"] == "tool" for m in messages) >= 3:
                time.sleep(60)
            return messages[-2:]
    """)
    code, out = _fuzz(tmp_path, "--summarizer", spec, "--runs", "100", "--timeout", "1", "--stop-on-error",
                      "--only", "budget-respected", capsys=capsys)
    assert code == 3, out.out + out.err
    assert "summarizer failure (timeout)" in out.out and "ran longer than --timeout" in out.out
    assert "in summarize" in out.out, "the report shows where it hung"
    assert list((tmp_path / "fz" / "crashes").glob("timeout-*"))


def test_a_fuzz_that_never_judged_anything_is_not_clean(tmp_path, capsys):
    # Inputs of at most 4 bytes are too short for Hypothesis to build any transcript from.
    code, out = _fuzz(tmp_path, "--summarizer", "harness.summarizers.ledgered:summarize", "--runs", "30",
                      "--", "-max_len=4", capsys=capsys)
    assert code == 4, out.out + out.err
    assert "no example reached a compaction" in out.out


def test_a_violation_the_fuzzer_saw_but_that_does_not_show_again_is_not_dropped(tmp_path, capsys):
    # Violates only inside the fuzzing processes (their environment names their configuration).
    spec = _file_summarizer(tmp_path, """
        import os
        def summarize(messages, budget):
            return [] if os.environ.get("COMPACTION_HARNESS_FUZZ") else messages
    """)
    code, out = _fuzz(tmp_path, "--summarizer", spec, "--runs", "60", "--inline", "--only", "literal-verbatim",
                      capsys=capsys)
    assert code == 4, out.out + out.err
    assert "did not show again when judged here" in out.out and "literal-verbatim" in out.out
