"""Never falsely green, never lose a finding: the harness under faulty summarizers, hostile files and kills.

One test (or table row) per way the harness used to say "fine" when it was not, each asserting the
exit code and the message the user sees, and that no traceback reaches them.
"""

import dataclasses
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from harness import CompactionResult, Role, Turn, result_from_return
from harness._app._outcome import ExitCode
from harness._app.calling._cache import CallCache
from harness._app.cli._main import main
from harness._app.corpus._entries import load_corpus, save_entry
from harness._base._files import write_atomic
from tests.test_corpus import _entry
from tests._proc import harness_crashed

HERE = Path(__file__).parent
HOSTILE = str(HERE / "fixtures" / "hostile.py")
SEEDED = HERE.parent / "corpora"
QUICK = ["--examples", "3", "--max-turns", "60", "--seed", "0", "--quiet"]


def _cli(*args, env=None, timeout=300, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=cwd)
    assert not harness_crashed(proc.stdout + proc.stderr), proc.stdout + proc.stderr
    return proc


# -- the protocol is decided in one place ---------------------------------------------------------


def test_replay_uses_a_rich_summarizers_declared_protocol(capsys):
    code = main(["replay", str(SEEDED), "--summarizer", "harness.summarizers.ledgered:summarize", "--inline",
                 "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "0 summarizer failures" in out and "summarizer failed" not in out
    assert f"{len(load_corpus(SEEDED).entries)} fixed" in out


def test_the_recorded_protocol_counts_only_for_the_summarizer_it_was_recorded_with(tmp_path, capsys):
    entry = _entry(3, summarizer="harness.summarizers.identity:summarize")
    save_entry(dataclasses.replace(entry, protocol="rich"), tmp_path)
    # identity takes messages: the entry's "rich" would call it wrongly, but it declares nothing and the
    # entry was recorded with it, so its recorded protocol wins over the default (and, not fitting the
    # function, is refused when it loads, saying which protocol would)...
    assert main(["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'rich' protocol does (chosen by the corpus entry's protocol)" in err and "--protocol messages" in err
    # ...while an explicit --protocol always wins.
    assert main(["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline",
                 "--quiet", "--protocol", "messages"]) == 0
    capsys.readouterr()


# -- paths are checked before any work, and a missing one is an error --------------------------------


@pytest.mark.parametrize("make", ["missing", "file"])
@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{p}", "--summarizer", "harness.summarizers.identity:summarize"],
        ["corpus", "list", "{p}"],
        ["corpus", "merge", "{out}", "{p}"],
        ["corpus", "dedupe", "{p}"],
    ],
    ids=["replay", "list", "merge", "dedupe"],
)
def test_a_corpus_directory_that_is_not_there_is_exit_2_naming_it(tmp_path, capsys, make, argv):
    path = tmp_path / "corpra"
    if make == "file":
        path.write_text("{}")
    code = main([a.format(p=path, out=tmp_path / "out") for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    expected = "no such directory" if make == "missing" else "expected a directory, got a file"
    if make == "file" and argv[0] == "replay":  # replay says what to do with a file instead
        expected = "expected a corpus directory, got a file; to judge and minimize the transcript of one file, run"
    assert "PathError: " in err and f"{str(path)!r}: {expected}" in err
    assert not (tmp_path / "out").exists()  # merge checked its sources before writing anything


@pytest.mark.parametrize(
    "option, make, message",
    [
        ("--corpus", "file", "PathError: --corpus '{p}': expected a directory, got a file"),
        ("--report-json", "dir", "PathError: --report-json '{p}': expected a file name, got a directory"),
        ("--cache-dir", "file", "PathError: --cache-dir '{p}': expected a directory, got a file"),
    ],
)
def test_output_paths_are_checked_before_the_run_starts(tmp_path, capsys, option, make, message):
    path = tmp_path / "out"
    path.mkdir() if make == "dir" else path.write_text("")
    code = main(["run", "--summarizer", HOSTILE + ":drops_everything", option, str(path), *QUICK])
    captured = capsys.readouterr()
    assert code == 2
    assert message.format(p=path) in captured.err
    assert "compaction-harness:" not in captured.out  # refused before a single example ran


def test_a_report_into_a_missing_folder_is_written_there(tmp_path):
    report = tmp_path / "reports" / "nightly" / "r.json"
    assert main(["run", "--summarizer", HOSTILE + ":drops_everything", "--report-json", str(report), "--inline",
                 *QUICK]) == 1
    assert json.loads(report.read_text())["exit_code"] == 1


# -- the summarizer's own failures are exit 3 (or 2 when it cannot even be loaded) --------------------


def test_sys_exit_inline_is_a_summarizer_failure():
    proc = _cli("run", "--summarizer", HOSTILE + ":exits", "--inline", *QUICK)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "! summarizer failure (exception)" in proc.stdout and "the summarizer called sys.exit(0)" in proc.stdout


@pytest.mark.parametrize(
    "source, message",
    [
        ("import sys\nsys.exit(0)\ndef f(m, b):\n    return m\n", "raised SystemExit (it called sys.exit(0))"),
        ("raise RuntimeError('no config file')\ndef f(m, b):\n    return m\n", "raised RuntimeError: no config file"),
    ],
    ids=["sys.exit", "RuntimeError"],
)
def test_a_module_failing_at_import_is_exit_2_naming_it(tmp_path, source, message):
    (tmp_path / "teampkg").mkdir()
    (tmp_path / "teampkg" / "__init__.py").write_text(source)
    (tmp_path / "teamfile.py").write_text(source)
    for spec in ("teampkg:f", str(tmp_path / "teamfile.py") + ":f"):
        proc = _cli("run", "--summarizer", spec, *QUICK, env={"PYTHONPATH": str(tmp_path)})
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"SpecError: --summarizer {spec!r}: importing" in proc.stderr and message in proc.stderr


def test_a_non_python_file_spec_is_named(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    assert main(["run", "--summarizer", f"{notes}:f", *QUICK]) == 2
    assert f"expected a Python source file ending in .py, got {str(notes)!r}" in capsys.readouterr().err


@pytest.mark.parametrize("isolation", [[], ["--inline"]], ids=["process", "inline"])
@pytest.mark.parametrize(
    "name, kind, message",
    [
        ("tool_calls_five", "malformed", "message [0].tool_calls: expected a list, got int"),
        ("rich_with_none_literals", "malformed", "ledger[0].literals: expected a list of strings, got None"),
        ("fifty_megabytes", "oversized", "over the limit of 2,000,000 (--max-result-chars)"),
    ],
)
def test_garbage_results_are_malformed_infra_errors(name, kind, message, isolation):
    proc = _cli("run", "--summarizer", f"{HOSTILE}:{name}", "--stop-on-error", *isolation, *QUICK)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"! summarizer failure ({kind})" in proc.stdout and message in proc.stdout


def test_a_worker_killed_by_a_signal_is_named():
    proc = _cli("run", "--summarizer", HOSTILE + ":kills_itself", "--stop-on-error", *QUICK)
    assert proc.returncode == 3
    assert "! summarizer failure (crashed)" in proc.stdout and "killed by signal SIGKILL" in proc.stdout
    assert "exit code None" not in proc.stdout


# -- a later error never hides an earlier finding ---------------------------------------------------------


def test_violations_before_a_later_infra_error_are_kept(tmp_path):
    report = tmp_path / "r.json"
    code = main(["run", "--summarizer", HOSTILE + ":fails_in_round_two", "--budget", "200", "--examples", "5",
                 "--max-turns", "300", "--seed", "1", "--quiet", "--inline", "--report-json", str(report)])
    data = json.loads(report.read_text())
    assert code == 1
    assert data["violations"] and data["infra_errors"]
    assert {e["kind"] for e in data["infra_errors"]} == {"exception"}
    assert "upstream model returned 500" in data["infra_errors"][0]["message"]


def test_the_text_report_says_both(capsys):
    main(["run", "--summarizer", HOSTILE + ":fails_in_round_two", "--budget", "200", "--examples", "5",
          "--max-turns", "300", "--seed", "1", "--quiet", "--inline"])
    out = capsys.readouterr().out
    assert "! summarizer failure (exception)" in out
    assert "finding(s) found, one per root cause; the summarizer also failed in" in out


# -- the call cache is keyed by what the answer depends on ---------------------------------------------


def _report(path):
    return json.loads(Path(path).read_text())


def test_a_fixed_summarizer_is_not_judged_by_yesterdays_cached_answers(tmp_path):
    module = tmp_path / "team_summarizer.py"
    cache, report = tmp_path / "cache", tmp_path / "r.json"
    common = ["run", "--summarizer", f"{module}:summarize", "--cache-dir", str(cache), "--skip",
              "budget-respected", "--examples", "10", "--max-turns", "100", "--seed", "2", "--quiet",
              "--report-json", str(report)]
    module.write_text("def summarize(messages, budget):\n    return 'nothing kept'\n")
    assert main(common) == 1
    module.write_text("def summarize(messages, budget):\n    return messages  # fixed: keeps everything\n")
    assert main(common) == 0
    assert _report(report)["summarizer_calls"] > 0  # really called again, not yesterday's answers
    assert main(common) == 0 and _report(report)["summarizer_calls"] == 0  # unchanged code: all from cache


def test_summarizer_version_keys_the_cache_instead_of_the_code(tmp_path):
    module = tmp_path / "team_summarizer.py"
    cache, report = tmp_path / "cache", tmp_path / "r.json"
    common = ["run", "--summarizer", f"{module}:summarize", "--cache-dir", str(cache), "--skip",
              "budget-respected", "--examples", "10", "--max-turns", "100", "--seed", "2", "--quiet",
              "--report-json", str(report), "--summarizer-version", "prompt-v1"]
    module.write_text("def summarize(messages, budget):\n    return 'nothing kept'\n")
    assert main(common) == 1
    module.write_text("def summarize(messages, budget):\n    return messages\n")
    # the user said the version is unchanged: the cache is trusted (and the docs say so); the only calls are
    # the trials and probes that bypass it on purpose
    assert main(common) == 1
    data = _report(report)
    assert data["summarizer_calls"] == data["calls"]["asked_again"] > 0
    assert main([*common[:-1], "prompt-v2"]) == 0


def test_a_damaged_cache_file_is_discarded_and_named(tmp_path, capsys):
    cache, report = tmp_path / "cache", tmp_path / "r.json"
    common = ["run", "--summarizer", "harness.summarizers.identity:summarize", "--cache-dir", str(cache),
              "--only", "commitment-retained", "--examples", "3", "--max-turns", "60", "--seed", "0", "--quiet",
              "--inline", "--report-json", str(report)]
    assert main(common) == 0
    files = sorted(cache.rglob("*.json"))
    files[0].write_text('{"messages": 5}')
    files[1].write_text("[1, 2")
    assert main(common) == 0
    data = _report(report)
    assert data["summarizer_calls"] - data["calls"]["asked_again"] == 2 and len(data["cache_discarded"]) == 2
    assert "call cache: 2 damaged entries ignored and recomputed" in capsys.readouterr().out


# -- bounded: every loop has a budget and ends in a report ---------------------------------------------


def test_shrinking_stops_after_a_few_timeouts_whatever_the_call_budget(tmp_path):
    report = tmp_path / "r.json"
    proc = _cli("run", "--summarizer", HOSTILE + ":hangs_on_short_requests", "--timeout", "0.5", "--examples", "5",
                "--max-turns", "100", "--seed", "0", "--quiet", "--report-json", str(report), timeout=240)
    assert proc.returncode == 1
    stops = {v["shrink_stopped"] for v in _report(report)["violations"]}
    assert "the summarizer timed out 3 times while shrinking" in stops


def test_a_summarizer_that_hangs_sometimes_ends_in_a_report(tmp_path):
    report = tmp_path / "r.json"
    proc = _cli("run", "--summarizer", HOSTILE + ":hangs_sometimes", "--timeout", "0.5", "--shrink-calls", "30",
                "--examples", "5", "--max-turns", "100", "--seed", "0", "--report-json", str(report),
                timeout=240)
    data = _report(report)
    assert proc.returncode == 1
    assert data["violations"] and {e["kind"] for e in data["infra_errors"]} == {"timeout"}
    assert all(v["shrink_summarizer_calls"] <= 30 for v in data["violations"])
    assert {v["shrink_stopped"] for v in data["violations"]} <= {
        None, "--shrink-calls 30 spent", "the summarizer timed out 3 times while shrinking"}
    assert "shrinking failure 1/" in proc.stderr  # progress was shown


def test_max_time_ends_in_a_partial_report_that_is_not_green(tmp_path):
    report = tmp_path / "r.json"
    proc = _cli("run", "--summarizer", HOSTILE + ":slow_identity", "--skip", "budget-respected", "--max-time", "3",
                "--examples", "200", "--max-turns", "60", "--seed", "0", "--quiet", "--report-json", str(report))
    data = _report(report)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert data["incomplete"] == "--max-time 3 s reached" and 0 < data["examples_run"] < 200
    assert "! incomplete: --max-time 3 s reached after judging" in proc.stdout


def test_shrink_refuses_a_transcript_over_the_size_limit(tmp_path, capsys):
    from harness import dumps
    from harness.strategies import Skeleton, expand

    path = tmp_path / "big.json"
    path.write_text(dumps(expand(Skeleton(seed=1, length=4000))) + " " * 1_100_000)
    code = main(["shrink", str(path), "--summarizer", "harness.summarizers.identity:summarize", "--max-file-mb", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"SchemaError: {path}: field '<root>': expected a file of at most 1 MB (raise the limit with " \
           f"--max-file-mb), got '" in err


def test_shrink_reproduces_with_shrink(tmp_path, capsys):
    from harness import Fact, FactKind, Polarity, Transcript, dumps

    planted = Transcript((Turn(Role.USER, "Never use s3://acme-prod-01/."), Turn(Role.ASSISTANT, "ok")),
                         (Fact("P", FactKind.PROHIBITION, ("s3://acme-prod-01/",), 0, Polarity.FORBID),), (2,))
    path = tmp_path / "t.json"
    path.write_text(dumps(planted))
    assert main(["shrink", str(path), "--summarizer", HOSTILE + ":drops_everything", "--inline", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert f"reproduce: compaction-harness shrink {path} --summarizer {HOSTILE}:drops_everything" in out
    assert "--examples" not in out


# -- workers die with the harness; the corpus holds only whole entries ---------------------------------------


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie waiting to be reaped is dead


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP", "SIGKILL"])
def test_killing_the_harness_kills_a_hung_worker_and_keeps_the_corpus_whole(tmp_path, how):
    import signal
    import time

    corpus, flag = tmp_path / "corpus", tmp_path / "hang"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--summarizer",
                             HOSTILE + ":hangs_on_signal_file", "--corpus", str(corpus), "--timeout", "300",
                             "--examples", "5", "--max-turns", "100", "--seed", "0", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # The summarizer hangs at its first call after a failure is saved: shrinking
                            # is too quick for this test to write a flag in time.
                            env={**os.environ, "HANG_FILE": str(flag), "HANG_CORPUS": str(corpus)})
    try:
        deadline = time.monotonic() + 240
        while not Path(str(flag) + ".pid").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        worker = int(Path(str(flag) + ".pid").read_text())
        assert _alive(worker)
        proc.send_signal(getattr(signal, how))
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    if how != "SIGKILL":
        assert proc.returncode == 1, out + err  # interrupted, and what was found is reported
        assert "finding(s) found, one per root cause" in out and not harness_crashed(out + err)
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker)
    loaded = load_corpus(corpus)
    assert loaded.errors == () and loaded.entries
    assert {p.name for p in corpus.iterdir() if not p.name.startswith(".")} == {p.name for p, _ in loaded.entries}


# -- corpus readers never see a writer's temporary file; concurrency ----------------------------------------


def test_stray_temp_files_are_never_read_and_old_ones_are_cleaned(tmp_path, capsys):
    save_entry(_entry(2), tmp_path)
    (tmp_path / ".tmp-abc123.json").write_text('{"half": ')  # the old writers' naming
    stale = tmp_path / ".x.json.0a1b2c.tmp"
    stale.write_text('{"half": ')
    os.utime(stale, (0, 0))
    assert main(["corpus", "list", str(tmp_path)]) == 0
    assert main(["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline",
                 "--quiet"]) == 0
    assert main(["corpus", "merge", str(tmp_path / "m"), str(tmp_path)]) == 0
    assert main(["corpus", "dedupe", str(tmp_path)]) == 0
    assert "unreadable" not in capsys.readouterr().err
    assert not stale.exists()


def test_an_interrupted_writer_leaves_nothing_behind(tmp_path, monkeypatch):
    class Boom(BaseException):
        pass

    def interrupted(*args):
        raise Boom

    monkeypatch.setattr("harness._base._files.os.replace", interrupted)
    with pytest.raises(Boom):
        write_atomic(tmp_path / "a.json", "{}")
    assert list(tmp_path.iterdir()) == []


def _dedupe_and_list(directory: str, rounds: int) -> int:
    import contextlib
    import io

    worst = 0
    for _ in range(rounds):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            worst = max(worst, main(["corpus", "dedupe", directory]), main(["corpus", "list", directory]))
        if err.getvalue():
            return 99
    return worst


def test_concurrent_dedupe_and_list_are_safe(tmp_path):
    import multiprocessing

    for n in range(1, 60):
        save_entry(_entry(n, invariant=["closure", "negation-polarity", "tool-pairing"][n % 3]), tmp_path)
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        codes = pool.starmap(_dedupe_and_list, [(str(tmp_path), 5)] * 3)
    assert codes == [0, 0, 0]
    left = load_corpus(tmp_path)
    assert sorted(len(e.transcript.turns) for _, e in left.entries) == [1, 2, 3]  # the smallest of each kind


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_the_corpus_is_skipped_with_a_warning(tmp_path):
    save_entry(_entry(2), tmp_path)
    os.mkfifo(tmp_path / "x.json")
    for argv in (["corpus", "list", str(tmp_path)],
                 ["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--quiet"]):
        proc = _cli(*argv, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"{tmp_path / 'x.json'}: skipped, a FIFO and not a regular file" in proc.stderr


def test_corpus_add_is_all_or_nothing(tmp_path, capsys):
    good1, _ = save_entry(_entry(2), tmp_path / "src")
    good2, _ = save_entry(_entry(3), tmp_path / "src")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["corpus", "add", str(tmp_path / "c"), str(good1), str(bad), str(good2)]) == 2
    captured = capsys.readouterr()
    assert f"{bad}: field 'schema_version': expected a value" in captured.err
    assert "added nothing" in captured.out and not (tmp_path / "c").exists()


def test_escape_codes_from_a_corpus_file_are_printed_escaped(tmp_path, capsys):
    entry = _entry(2, summarizer="pkg:fn\x1b[2J\x1b[31mEVIL")
    save_entry(entry, tmp_path)
    assert main(["corpus", "list", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "pkg:fn\\x1b[2J\\x1b[31mEVIL" in out


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[" * 100_000, "expected JSON nested less than about a thousand levels deep"),
        ('{"a": 1', "expected valid JSON, got \"Expecting ',' delimiter at line 1 column 8\""),
        (b"\xff\xfe{}", "expected UTF-8 text, got 'an invalid byte at offset 0'"),
    ],
    ids=["deep", "truncated", "binary"],
)
def test_hostile_json_files_are_named(tmp_path, capsys, text, expected):
    path = tmp_path / "t.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["shrink", str(path), "--summarizer", "harness.summarizers.identity:summarize"]) == 2
    err = capsys.readouterr().err
    assert f"SchemaError: {path}: field '<root>': {expected}" in err


# -- chat-API shapes that are valid are accepted ----------------------------------------------------------


def test_content_parts_and_the_developer_role_are_accepted():
    result = result_from_return([
        {"role": "developer", "content": [{"type": "text", "text": "Never use X_1."}, {"type": "image_url"}]},
        {"role": "user", "content": ["part one", {"type": "text", "text": "part two"}]},
    ])
    assert result.messages == (Turn(Role.SYSTEM, "Never use X_1."), Turn(Role.USER, "part one\npart two"))


def test_parts_and_developer_pass_through_a_run():
    proc = _cli("run", "--summarizer", HOSTILE + ":parts_and_developer", *QUICK)
    assert proc.returncode == 1 and "malformed" not in proc.stdout


# -- secrets never reach a file; output never mixes into the report -----------------------------------------


SECRET = "sk-test-9f8e7d6c5b4a39281706"


def test_a_secret_echoed_by_the_summarizer_reaches_no_file(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    proc = _cli("run", "--summarizer", HOSTILE + ":echoes_secret", "--cache-dir", "cache", "--corpus", "corpus",
                "--report-json", "report.json", "--examples", "8", "--max-turns", "100", "--seed", "3",
                env={"COMPACTION_TEST_API_KEY": SECRET}, cwd=work)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    written = [p for p in work.rglob("*") if p.is_file()]
    assert any(p.parent.name == "corpus" for p in written) and len(written) > 10
    for path in written:
        assert SECRET not in path.read_text(errors="replace"), path
    assert SECRET not in proc.stdout + proc.stderr
    assert "[REDACTED:COMPACTION_TEST_API_KEY]" in (work / "report.json").read_text()


def test_a_secret_named_by_the_user_is_redacted_too(tmp_path):
    report = tmp_path / "r.json"
    proc = _cli("run", "--summarizer", HOSTILE + ":echoes_secret", "--report-json", str(report), "--redact-env",
                "PLAIN_VALUE", "--examples", "3", "--max-turns", "60", "--seed", "3", "--quiet",
                env={"COMPACTION_TEST_API_KEY": "plain-but-private-1234", "PLAIN_VALUE": "plain-but-private"})
    assert proc.returncode == 1
    assert "plain-but-private" not in report.read_text()


@pytest.mark.parametrize("isolation", [[], ["--inline"]], ids=["process", "inline"])
def test_what_a_summarizer_prints_never_mixes_into_the_report(isolation):
    proc = _cli("run", "--summarizer", HOSTILE + ":chatty", *isolation, *QUICK)
    assert proc.returncode == 1
    assert "NOISE" not in proc.stdout + proc.stderr
    failing = _cli("run", "--summarizer", HOSTILE + ":chatty_then_fails", "--stop-on-error", *isolation, *QUICK)
    assert failing.returncode == 3
    assert "it printed (last lines):" in failing.stdout and "| about to fail: quota left 0" in failing.stdout


# -- files respect the umask -----------------------------------------------------------------------------------


def test_written_files_respect_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path, _ = save_entry(_entry(2), tmp_path / "corpus")
        cache = CallCache(tmp_path / "cache")
        cache.put("ab" + "0" * 62, CompactionResult(()))
        write_atomic(tmp_path / "report.json", "{}")
    finally:
        os.umask(old)
    for file in (path, next((tmp_path / "cache").rglob("*.json")), tmp_path / "report.json"):
        assert stat.S_IMODE(file.stat().st_mode) == 0o644, file


def test_the_helper_uses_the_declared_protocol_too():
    from harness.testing import assert_compaction_holds
    from harness.summarizers import ledgered
    from harness.strategies import Skeleton, expand

    transcript = expand(Skeleton(seed=3, length=600))
    assert_compaction_holds(ledgered.summarize, transcript, budget=800)  # rich, declared: no protocol argument


# -- found by a blind review: the team's module, hostile paths, invalid Unicode, vacuous runs ----------------


@pytest.mark.parametrize(
    "source, argv, message",
    [
        ("import os\nos._exit(0)\n", [], "its process ended while importing it (exit code 0)"),
        ("import time\ntime.sleep(600)\n", ["--max-time", "3"], "loading it took longer than 3 s"),
    ],
    ids=["os._exit", "hang"],
)
def test_a_module_that_exits_or_hangs_at_import_never_ends_the_run_silently(tmp_path, source, argv, message):
    module = tmp_path / "team.py"
    module.write_text(source + "def summarize(messages, budget):\n    return messages\n")
    proc = _cli("run", "--summarizer", f"{module}:summarize", *argv, *QUICK, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"SpecError: --summarizer '{module}:summarize': {message}" in proc.stderr


def test_what_a_module_prints_at_import_is_captured_and_redacted(tmp_path):
    module = tmp_path / "team.py"
    module.write_text("import os\nprint('loading with', os.environ['COMPACTION_TEST_API_KEY'])\n"
                      "raise RuntimeError('bad key ' + os.environ['COMPACTION_TEST_API_KEY'])\n")
    proc = _cli("run", "--summarizer", f"{module}:summarize", *QUICK, env={"COMPACTION_TEST_API_KEY": SECRET})
    assert proc.returncode == 2
    assert SECRET not in proc.stdout + proc.stderr
    assert "raised RuntimeError: bad key [REDACTED:COMPACTION_TEST_API_KEY]; it printed: loading with [REDACTED:" \
           in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_report_path_that_is_a_device_or_fifo_is_refused_and_left_alone(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    for path, kind in ((fifo, "FIFO"), (link, "character device")):
        assert main(["run", "--summarizer", HOSTILE + ":drops_everything", "--report-json", str(path), *QUICK]) == 2
        assert f"PathError: --report-json {str(path)!r}: expected a regular file, got a {kind}" in capsys.readouterr().err
    assert stat.S_ISFIFO(fifo.stat().st_mode) and link.is_symlink()


def test_a_report_through_a_symlink_writes_its_target(tmp_path):
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("{}")
    link.symlink_to(target)
    assert main(["run", "--summarizer", HOSTILE + ":drops_everything", "--report-json", str(link), "--inline",
                 *QUICK]) == 1
    assert link.is_symlink() and json.loads(target.read_text())["exit_code"] == 1


@pytest.mark.parametrize("option", ["--report-json", "--corpus", "--cache-dir"])
def test_an_empty_output_path_is_refused(capsys, option):
    assert main(["run", option, "", *QUICK]) == 2
    assert f"PathError: {option} '': expected a" in capsys.readouterr().err


def test_invalid_unicode_from_a_summarizer_is_its_failure_and_nothing_is_lost(tmp_path):
    proc = _cli("run", "--summarizer", HOSTILE + ":lone_surrogate", "--stop-on-error", *QUICK)
    assert proc.returncode == 3 and "the result is not valid Unicode text: a lone surrogate '\\ud800'" in proc.stdout
    report = tmp_path / "r.json"
    proc = _cli("run", "--summarizer", HOSTILE + ":raises_with_surrogate", "--stop-on-error",
                "--report-json", str(report), "--cache-dir", str(tmp_path / "cache"), *QUICK)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "bad byte \\udcff from the model" in _report(report)["infra_errors"][0]["message"]


def test_a_transcript_with_invalid_unicode_is_a_schema_error(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text('{"schema_version": 1, "turns": [{"role": "user", "text": "bad \\ud800"}]}')
    assert main(["shrink", str(path), "--summarizer", "harness.summarizers.identity:summarize"]) == 2
    assert ("field 'turns[0].text': expected valid Unicode text, got 'a lone surrogate at character 4'"
            in capsys.readouterr().err)


def test_broken_links_and_null_entries_are_unreadable_not_invisible(tmp_path, capsys):
    save_entry(_entry(2), tmp_path)
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    (tmp_path / "null.json").write_text("null")
    for argv in (["corpus", "list", str(tmp_path)], ["corpus", "dedupe", str(tmp_path)],
                 ["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline",
                  "--quiet"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        for name, why in (("loop.json", "a readable file"), ("dangling.json", "an existing file, got 'a dangling"),
                          ("null.json", "expected an object, got None")):
            assert f"{tmp_path / name}: field '<root>': " in err and why in err, (argv, err)


def test_replaying_an_empty_corpus_is_not_a_pass(tmp_path, capsys):
    argv = ["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline"]
    assert main(argv) == 2
    assert f"corpus directory {str(tmp_path)!r} holds no entries (*.json): nothing was replayed" in capsys.readouterr().err
    assert main([*argv, "--allow-empty"]) == 0


@pytest.mark.parametrize(
    "argv",
    [["--only", ""], ["--only", ","], ["--only", "tool-pairing", "--skip", "tool-pairing"]],
    ids=["empty", "comma", "only-minus-skip"],
)
def test_selecting_no_oracle_is_a_usage_error(capsys, argv):
    assert main(["run", "--summarizer", HOSTILE + ":drops_everything", *argv, *QUICK]) == 2
    assert "selects no oracle: nothing would be checked" in capsys.readouterr().err


def test_the_reproduce_line_keeps_both_only_and_skip(capsys):
    main(["run", "--summarizer", HOSTILE + ":drops_everything", "--only", "tool-pairing,literal-verbatim",
          "--skip", "literal-verbatim", "--inline", *QUICK])
    assert "--only tool-pairing,literal-verbatim --skip literal-verbatim" in capsys.readouterr().out


def test_a_transcript_that_never_compacts_is_not_judged_green(tmp_path, capsys):
    from harness import Transcript, dumps

    path = tmp_path / "t.json"
    path.write_text(dumps(Transcript((Turn(Role.USER, "hello"), Turn(Role.ASSISTANT, "hi")))))
    assert main(["shrink", str(path), "--summarizer", "harness.summarizers.identity:summarize", "--inline"]) == 4
    assert "! incomplete: the transcript never reached a compaction: nothing was judged" in capsys.readouterr().out


def test_shrink_takes_a_corpus_entry_too(capsys):
    path, entry = next((p, e) for p, e in load_corpus(SEEDED).entries if e.invariant == "negation-polarity")
    assert main(["shrink", str(path), "--summarizer", entry.summarizer, "--inline", "--quiet"]) == 1
    assert "negation-polarity" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--timeout", "inf"], "UsageError: argument --timeout: --timeout expects a finite number > 0, got inf"),
        (["--token-counter", HOSTILE + ":bad_counter"],
         f"InvalidArgument: --token-counter '{HOSTILE}:bad_counter' returned '10'; expected a whole number >= 0"),
        (["--token-counter", HOSTILE + ":raising_counter"],
         f"InvalidArgument: --token-counter '{HOSTILE}:raising_counter' raised RuntimeError: tokenizer not loaded"),
    ],
    ids=["inf", "counter-str", "counter-raises"],
)
def test_bad_numbers_and_counters_are_usage_errors(capsys, argv, message):
    assert main(["run", "--summarizer", HOSTILE + ":drops_everything", *argv, *QUICK]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("name", ["PGPASSWORD", "GH_PAT", "DATABASE_URL", "MY_SERVICE_TOKEN", "AWS_SECRET_ACCESS_KEY"])
def test_common_secret_names_are_redacted(name):
    from harness._app.calling._redact import Redactor

    assert Redactor.from_environ({name: "value-long-enough"}).redact("x value-long-enough y") == f"x [REDACTED:{name}] y"


# -- found by a second blind review --------------------------------------------------------------------------


def _entry_file(tmp_path, **change):
    path, _ = save_entry(dataclasses.replace(_entry(3, summarizer="harness.summarizers.identity:summarize"),
                                             **change), tmp_path)
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        ({"invariant": "no-such-oracle"}, "its oracle 'no-such-oracle' is not registered in this harness: nothing was judged"),
        ({"transcript": __import__("harness").Transcript((Turn(Role.USER, "hi"),) * 3)},
         "no compaction happened in its transcript: nothing was judged"),
    ],
    ids=["unknown-oracle", "no-compaction"],
)
def test_replay_never_calls_an_unjudged_entry_fixed(tmp_path, capsys, change, message):
    _entry_file(tmp_path, **change)
    assert main(["replay", str(tmp_path), "--summarizer", "harness.summarizers.identity:summarize", "--inline",
                 "--quiet"]) == 2
    out = capsys.readouterr().out
    assert "! not judged" in out and message in out and "✓ fixed" not in out


@pytest.mark.parametrize("name", ["str_subclass", "writes_to_inherited_fds"])
def test_odd_but_valid_or_hostile_results_never_crash_the_harness(name):
    proc = _cli("run", "--summarizer", f"{HOSTILE}:{name}", "--timeout", "5", "--max-time", "60", *QUICK, timeout=120)
    assert proc.returncode in (1, 3), proc.stdout + proc.stderr
    assert "InternalError" not in proc.stderr


@pytest.mark.parametrize("isolation", [[], ["--inline"]], ids=["process", "inline"])
@pytest.mark.parametrize("name", ["long_secret_message", "prints_secret_then_more"])
def test_no_part_of_a_secret_survives_shortening(tmp_path, name, isolation):
    report = tmp_path / "r.json"
    proc = _cli("run", "--summarizer", f"{HOSTILE}:{name}", "--stop-on-error", "--report-json", str(report),
                *isolation, *QUICK, env={"COMPACTION_TEST_API_KEY": SECRET})
    assert proc.returncode == 3
    written = report.read_text() + proc.stdout + proc.stderr
    for piece in (SECRET[:12], SECRET[-12:]):
        assert piece not in written, piece


def test_a_rich_summarizer_that_rewrites_its_request_is_caught_inline_too():
    for isolation in ([], ["--inline"]):
        proc = _cli("run", "--summarizer", HOSTILE + ":rewrites_its_tags", "--stop-on-error", *isolation, *QUICK)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "mutated-input" in proc.stdout and "the summarizer modified the request it was given" in proc.stdout


@pytest.mark.parametrize(
    "option, source, message",
    [
        ("--rules", "import os\nos._exit(0)\n", "its process ended while loading and trying it (exit code 0)"),
        ("--rules", "import time\ntime.sleep(600)\n", "loading it took longer than 3 s"),
        ("--token-counter", "import os\ndef count(text):\n    os._exit(0)\n",
         "its process ended while loading and trying it (exit code 0)"),
        ("--rules", "import os\nraise RuntimeError('key ' + os.environ['COMPACTION_TEST_API_KEY'])\n",
         "raised RuntimeError: key [REDACTED:COMPACTION_TEST_API_KEY]"),
    ],
    ids=["rules-exit", "rules-hang", "counter-exit", "rules-secret"],
)
def test_team_modules_loaded_into_the_harness_are_tried_first(tmp_path, option, source, message):
    module = tmp_path / "team_extra.py"
    module.write_text(source)
    target = f"{module}:{'count' if option == '--token-counter' else 'RULES'}"
    proc = _cli("run", "--summarizer", HOSTILE + ":drops_everything", option, target, "--max-time", "3", *QUICK,
                env={"COMPACTION_TEST_API_KEY": SECRET}, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"SpecError: {option} {target!r}: " in proc.stderr and message in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr


def test_empty_cue_lists_match_nothing_instead_of_crashing():
    from harness import CompactionResult, Fact, FactKind, Polarity, Transcript
    from harness.oracles import DEFAULT_RULES, Case, ProseRules, check

    # Every word list the reading knows emptied (cues, labels, words of force, negators): nothing can be read
    # as binding, so the mention is bare.
    empty = dataclasses.replace(DEFAULT_RULES, **{name: () for name in ProseRules.__dataclass_fields__
                                                  if name.endswith(("_cues", "_labels", "_words"))
                                                  or name in ("negators", "anaphors", "subordinators")})
    source = Transcript((Turn(Role.USER, "Never use s3://a-1/ at most 5 retries."),),
                        (Fact("P", FactKind.PROHIBITION, ("s3://a-1/",), 0, Polarity.FORBID),), (1,))
    verdict = check(Case(source, 1, 2000, CompactionResult((Turn(Role.SYSTEM, "Never use s3://a-1/."),)), rules=empty))
    assert [f.invariant for f in verdict.violations] == ["negation-polarity"]  # no cue known: no prohibition read
    assert verdict.violations[0].evidence == "bare-mention"


@pytest.mark.parametrize("value", ["1e10", "1e308"])
def test_huge_timeouts_are_usage_errors(capsys, value):
    assert main(["run", "--timeout", value, *QUICK]) == 2
    assert f"--timeout expects a number <= 2.592e+06, got {value}" in capsys.readouterr().err


def test_a_file_spec_imports_its_neighbours(tmp_path):
    (tmp_path / "helper.py").write_text("def shorten(messages):\n    return messages[-2:]\n")
    (tmp_path / "summ.py").write_text("import helper\n\ndef summarize(messages, budget):\n"
                                      "    return helper.shorten(messages)\n")
    proc = _cli("run", "--summarizer", f"{tmp_path / 'summ.py'}:summarize", *QUICK)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr


def test_fewer_examples_than_asked_is_not_green(tmp_path, monkeypatch):
    """If generation gives up early (Hypothesis: Unsatisfiable), the run says so and exits 4."""
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    from harness._app.running import _exploration as _runner

    real_find = _runner.find

    def gives_up_after_two(strategy, condition, **kwargs):
        if len(kwargs["settings"].phases) == 1:  # the exploration pass: two examples, then give up
            try:
                real_find(strategy, condition, **{**kwargs, "settings": _runner.settings(kwargs["settings"],
                                                                                          max_examples=2)})
            except NoSuchExample:
                pass
            raise Unsatisfiable("gave up")
        return real_find(strategy, condition, **kwargs)

    monkeypatch.setattr(_runner, "find", gives_up_after_two)
    report = tmp_path / "r.json"
    code = main(["run", "--summarizer", "harness.summarizers.identity:summarize", "--skip", "budget-respected",
                 "--examples", "5", "--max-windows", "2", "--max-turns", "60", "--seed", "0", "--quiet", "--inline",
                 "--report-json", str(report)])  # two windows at most: one stage of exploration
    data = _report(report)
    assert code == 4 and data["examples_run"] == 2
    assert data["incomplete"] == "Hypothesis generated only 2 of 5 examples"


def test_a_warm_cache_still_judges_determinism(tmp_path, capsys):
    report = tmp_path / "r.json"
    common = ["run", "--summarizer", "harness.summarizers.mutants:varies", "--only", "deterministic", "--examples", "3",
              "--max-turns", "60", "--seed", "0", "--cache-dir", str(tmp_path / "cache"), "--report-json", str(report)]
    assert main([*common, "--trials", "0"]) == 0  # nothing asked twice, and the report says so
    assert "deterministic was not judged: --trials 0" in capsys.readouterr().out
    assert main(common) == 1  # the first answers are cached, the second ones are asked now
    assert main(common) == 1  # both answers cached: judged again, and the only new calls are the failure's trials
    data = _report(report)
    assert data["summarizer_calls"] == data["calls"]["asked_again"] == 3


# -- one run path: a stop ends every command the same way (issue 30) -----------------------------------------------

def _saved_entry(summarizer: str = "harness.summarizers.example:summarize"):
    return next(path for path, entry in load_corpus(SEEDED).entries if entry.summarizer == summarizer
                and len(entry.transcript.turns) > 1)


@pytest.mark.parametrize("calls", [1, 2, 3])
def test_shrink_of_a_failing_entry_under_a_spend_cap_is_never_green(calls, capsys):
    """``shrink ENTRY --max-calls 3`` printed "no violation found" and exited 0 without having judged the
    entry: the cap stopped judging and the shrink path did not say so."""
    path = _saved_entry()
    code = main(["shrink", str(path), "--summarizer", "harness.summarizers.example:summarize", "--inline",
                 "--max-calls", str(calls), "--quiet"])
    out = capsys.readouterr().out
    assert code in (ExitCode.VIOLATIONS, ExitCode.INCOMPLETE), out
    if code == ExitCode.INCOMPLETE:
        assert f"! incomplete: --max-calls {calls} reached" in out, out


@pytest.mark.parametrize("argv", [
    ["run", "--summarizer", "harness.summarizers.example:summarize", *QUICK],
    ["compare", "--summarizer", "harness.summarizers.example:summarize",
     "--summarizer", "harness.summarizers.ledgered:summarize", *QUICK],
], ids=["run", "compare"])
def test_no_command_ends_green_after_a_cap_stopped_its_judging(argv, capsys):
    code = main([*argv, "--max-calls", "1", "--inline"])
    out = capsys.readouterr().out
    assert code in (ExitCode.VIOLATIONS, ExitCode.INCOMPLETE), out


@pytest.mark.parametrize("argv", [
    ["oracles"],
    ["corpus", "list", str(SEEDED)],
    ["replay", str(SEEDED), "--summarizer", "harness.summarizers.ledgered:summarize", "--inline", "--quiet"],
    ["run", "--summarizer", "harness.summarizers.ledgered:summarize", "--inline", *QUICK],
    ["run", "--summarizer", "no.such.module:fn", *QUICK],
    ["run", "--examples", "0"],
    ["--version"],
], ids=["oracles", "corpus", "replay", "run", "bad-spec", "usage", "version"])
def test_every_command_ends_in_one_of_the_exit_codes(argv, capsys):
    assert isinstance(main(argv), ExitCode)
    capsys.readouterr()
