"""Summarizers outside Python: openai:, http://, cmd: adapters, --jobs, retries, spend caps, flaky summarizers.

Every server here is one the test starts itself on 127.0.0.1 (tests/_stubs.py);
no test reaches any other address.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from harness._app.calling._options import CallOptions
from harness._app.calling._summarizer import Summarizer
from harness._app.cli._main import main
from harness._app.corpus._entries import load_corpus
from harness._app.calling._remote import Endpoint, JsonPoster, retry_after_seconds
from harness._app.calling._redact import Redactor
from harness._app.reports._document import report_dict
from harness._app.running._options import RunConfig
from harness._app.running._run import run
from harness._base._errors import InfraError, SpecError
from harness._base._model import Role, Turn
from harness._base._protocol import CompactionRequest
from harness.summarizers import mutants, prose
from tests._stubs import hanging_stub, malformed_stub, openai_stub, reset_stub, wire_stub

ROOT = Path(__file__).resolve().parent.parent
LINE_SERVER = ROOT / "tests" / "fixtures" / "line_server.py"
CORRECT = "harness.summarizers.prose:summarize"
MUTANT = "harness.summarizers.mutants:rounds_threshold"
SMALL = dict(examples=8, max_turns=80, seed=3, quiet=True, protocol="rich")
# A model answers with text: a call in flight across a compaction can only be named in it, never carried as a
# structured call, so handle-carried holds the team's runtime (which re-attaches pending calls, or not), not the
# prompt; these runs judge what the prompt keeps.
TEXT_ONLY = dict(skip=("handle-carried",))
REQUEST = CompactionRequest((Turn(Role.USER, "Never push to main. Keep retries under 5."),), 200)


def _cmd(spec: str, *flags: str) -> str:
    return f"cmd:{sys.executable} {LINE_SERVER} {spec} {' '.join(flags)}".rstrip()


def _run_through(adapter: str, fn, spec: str, **options):
    """One small run of ``fn`` (named ``spec``) reached through ``adapter``."""
    if adapter == "python":
        return run(RunConfig.of(spec, **SMALL, **options))
    if adapter == "cmd":
        return run(RunConfig.of(_cmd(spec), **SMALL, **options))
    if adapter == "http":
        with wire_stub(fn) as server:
            return run(RunConfig.of(server.url + "/compact", **SMALL, **options))
    with openai_stub(fn) as api:
        return run(RunConfig.of("openai:test-model", base_url=api.url + "/v1", **SMALL, **TEXT_ONLY, **options))


@pytest.mark.parametrize("adapter", ["python", "cmd", "http", "openai"])
def test_the_same_mutant_is_caught_with_the_same_invariant_through_every_adapter(adapter):
    result = _run_through(adapter, mutants.rounds_threshold, MUTANT)
    assert {f.invariant for f in result.failures} == {"threshold-exact"}
    assert not result.infra_errors and result.exit_code == 1


@pytest.mark.parametrize("adapter", ["python", "cmd", "http", "openai"])
def test_the_correct_compactor_passes_through_every_adapter(adapter):
    result = _run_through(adapter, prose.summarize, CORRECT)
    assert result.failures == () and not result.infra_errors and result.exit_code == 0
    assert result.stats.calls > 0


def _comparable(result) -> dict:
    data = report_dict(result)
    for timing in ("latency_p50_s", "latency_p95_s"):
        data["calls"].pop(timing)
    return data


def test_jobs_gives_the_same_report_as_one_job_apart_from_timings():
    with wire_stub(mutants.rounds_threshold, latency=0.005) as server:
        config = RunConfig.of(server.url, examples=10, max_turns=120, seed=5, quiet=True, protocol="rich")
        one = run(config)
        four = run(config.but(jobs=4))
    a, b = _comparable(one), _comparable(four)
    assert one.failures and a == b, _differences(a, b)


def _differences(a, b, at: str = "") -> list[str]:
    """Where two reports differ, by path (a failure names the field rather than two whole reports)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str) for d in _differences(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for n, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{at}[{n}]")]
    return [] if a == b else [f"{at}: {str(a)[:200]!r} != {str(b)[:200]!r}"]


def test_python_summarizers_run_in_several_workers_with_jobs():
    config = RunConfig.of("harness.summarizers.example:summarize", examples=6, max_turns=120, seed=2,
                       quiet=True)
    assert _comparable(run(config)) == _comparable(run(config.but(jobs=3)))


# -- retries and rate limits -------------------------------------------------------------------------


def test_a_models_text_summary_cannot_carry_an_in_flight_call_as_a_handle():
    with openai_stub(prose.summarize) as api:
        result = run(RunConfig.of("openai:test-model", base_url=api.url + "/v1", max_turns=200,
                               seed=3, quiet=True, protocol="rich", only=("handle-carried",), trials=0))
    (failure,) = result.failures
    assert "only in prose" in failure.detail and failure.fact_kind == "in_flight_call"


def test_429_with_retry_after_is_retried_counted_and_reported_apart_from_findings():
    with openai_stub(prose.summarize, fail_first=2, fail_status=429, retry_after=0) as api:
        result = run(RunConfig.of("openai:test-model", base_url=api.url + "/v1", **SMALL, **TEXT_ONLY))
    assert result.stats.retries == 2 and not result.infra_errors and result.exit_code == 0
    assert "2 retries" in _text(result)


def test_5xx_and_reset_connections_are_retried():
    with wire_stub(prose.summarize, fail_first=1, fail_status=503, retry_after=0) as server:
        with Summarizer(CallOptions(server.url, protocol="rich")) as summarizer:
            summarizer(REQUEST)
            assert summarizer.stats.retries == 1
    with reset_stub(times=1, then=wire_stub(prose.summarize)) as server:
        with Summarizer(CallOptions(server.url, protocol="rich")) as summarizer:
            summarizer(REQUEST)
            assert summarizer.stats.retries == 1 and server.calls == 2


def test_retries_spent_become_an_infra_error_not_a_crash():
    with wire_stub(prose.summarize, fail_first=10, fail_status=500, retry_after=0) as server:
        result = run(RunConfig.of(server.url, retries=1, examples=2, max_turns=60, seed=1, quiet=True))
    assert result.exit_code == 3 and result.infra_errors[0].kind == "unavailable"
    assert "after 1 retries" in result.infra_errors[0].message


def test_a_hanging_server_times_out_and_is_reported():
    with hanging_stub() as server:
        with Summarizer(CallOptions(server.url, timeout=0.3, retries=1)) as summarizer:
            with pytest.raises(InfraError) as caught:
                summarizer(REQUEST)
    assert caught.value.kind == "timeout" and summarizer.stats.retries == 1


def test_malformed_json_is_a_malformed_infra_error_and_never_retried():
    with malformed_stub() as server:
        with Summarizer(CallOptions(server.url)) as summarizer:
            with pytest.raises(InfraError) as caught:
                summarizer(REQUEST)
    assert caught.value.kind == "malformed" and server.calls == 1


def test_retry_after_is_honoured_in_seconds_or_as_a_date_and_capped():
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: at once
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    poster = JsonPoster(Endpoint.parse("http://127.0.0.1:9/x", option="t"), retries=3, redactor=Redactor())
    assert poster._delay(0, 7.0) == 7.0 and poster._delay(0, 10_000.0) == 120.0
    waits = [poster._delay(attempt, None) for attempt in range(8)]
    assert all(0 <= w <= min(30.0, 0.5 * 2 ** n) for n, w in enumerate(waits))  # full jitter, capped


# -- spend caps --------------------------------------------------------------------------------------


def test_max_calls_stops_exploration_still_shrinks_and_says_so():
    config = RunConfig.of("harness.summarizers.example:summarize", examples=40, max_turns=200, seed=0,
                       quiet=True, max_calls=150)
    result = run(config)
    assert result.stats.calls <= 150
    assert result.cap_reached == "--max-calls 150 reached" and result.examples_run < 40
    assert result.failures and all(f.shrink_checks > 0 for f in result.failures)
    assert "--max-calls 150 reached" in _text(result)


def test_max_tokens_counts_the_usage_the_model_reports():
    with openai_stub(mutants.rounds_threshold) as api:
        result = run(RunConfig.of("openai:test-model", base_url=api.url + "/v1", examples=30,
                               max_turns=120, seed=4, quiet=True, protocol="rich", max_tokens=20_000))
        largest = max(len(r.body["messages"][0]["content"].split()) for r in api.requests)
    assert result.stats.usage_known and result.stats.prompt_tokens > 0
    assert result.cap_reached == "--max-tokens 20000 reached" and result.examples_run < 30
    # a call starts only while the mean call still fits, so the last one can pass the cap by at most itself
    assert result.stats.tokens <= 20_000 + 2 * largest


# -- non-deterministic summarizers -----------------------------------------------------------------


def test_a_flaky_summarizer_is_named_non_deterministic_and_each_failure_has_its_rate(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    with openai_stub(prose.summarize, drop_share=0.1, seed=7) as api:
        code = main(["run", "--summarizer", "openai:test-model", "--base-url", api.url + "/v1", "--protocol", "rich",
                     "--examples", "12", "--max-turns", "120", "--seed", "1", "--quiet", "--max-calls", "400",
                     "--corpus", str(corpus), "--report-json", str(tmp_path / "r.json")])
        report = json.loads((tmp_path / "r.json").read_text())
        assert code == 1 and report["nondeterministic"]["detected"]
        assert report["summarizer_calls"] <= 400
        assert report["violations"] and all(v["trials"] is not None for v in report["violations"])
        entries = load_corpus(corpus).entries
        assert entries and all(entry.trials is not None for _, entry in entries)
        capsys.readouterr()
        code = main(["replay", str(corpus), "--summarizer", "openai:test-model", "--base-url", api.url + "/v1",
                     "--protocol", "rich", "--quiet"])
    lines = capsys.readouterr().out.splitlines()[:-1]
    flaky = [entry for _, entry in entries if entry.flaky]
    # a flaky entry is re-asked --trials times: "still failing (k/3)" or "not reproduced in 3 trials", never "fixed"
    assert flaky and len(lines) == len(entries)
    assert sum("still failing (" in line or "not reproduced in 3 trials" in line for line in lines) >= len(flaky)
    assert not any(line.startswith("✓ fixed") for line in lines if "saved failing" in line)
    assert code == (1 if any(line.startswith("✗") for line in lines) else 0)


def test_a_deterministic_summarizer_fails_every_trial_and_is_not_called_flaky():
    result = run(RunConfig.of(MUTANT, **SMALL))
    assert result.failures and all(f.trials == (3, 3) for f in result.failures)
    assert not result.nondeterministic and result.stats.reasked > 0


# -- secrets -----------------------------------------------------------------------------------------

KEY = "sk-planted-4f9b2c7e1d8a6f3b5c0e9d2a7f4b1c8e"


def test_the_api_key_is_sent_only_in_the_header_and_written_nowhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "out"
    with openai_stub(mutants.rounds_threshold) as api:
        code = main(["run", "--summarizer", "openai:test-model", "--base-url", api.url + "/v1", "--protocol", "rich",
                     "--examples", "6", "--max-turns", "80", "--seed", "2", "--corpus", str(out / "corpus"),
                     "--cache-dir", str(out / "cache"), "--report-json", str(out / "report.json")])
        received = api.requests
    assert code == 1
    assert received and all(r.headers["Authorization"] == f"Bearer {KEY}" for r in received)
    assert all(KEY not in json.dumps(r.body) for r in received)
    printed = capsys.readouterr()
    assert KEY not in printed.out + printed.err
    written = [p for p in out.rglob("*") if p.is_file()]
    assert len(written) > 3 and not [p for p in written if KEY in p.read_text()]


def test_a_server_echoing_the_key_has_it_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with malformed_stub(body=f"invalid key {KEY}".encode()) as api:
        with Summarizer(CallOptions("openai:test-model", base_url=api.url + "/v1")) as summarizer:
            with pytest.raises(InfraError) as caught:
                summarizer(REQUEST)
    assert KEY not in str(caught.value) and "[REDACTED:OPENAI_API_KEY]" in str(caught.value)


# -- cmd: a long-lived process, restarted after a crash or a hang ------------------------------------


def test_a_crashed_command_is_reported_and_restarted_for_the_next_request():
    with Summarizer(CallOptions(_cmd(CORRECT, "--crash-on", "2"), protocol="rich")) as summarizer:
        summarizer(REQUEST)
        with pytest.raises(InfraError) as caught:
            summarizer(dataclasses.replace(REQUEST, budget=201))
        assert caught.value.kind == "crashed" and "exit code 3" in caught.value.message
        summarizer(dataclasses.replace(REQUEST, budget=202))  # a fresh process answers


def test_a_hanging_command_is_killed_at_the_timeout_and_restarted():
    with Summarizer(CallOptions(_cmd(CORRECT, "--hang-on", "1"), protocol="rich", timeout=0.5)) as summarizer:
        with pytest.raises(InfraError) as caught:
            summarizer(REQUEST)
        assert caught.value.kind == "timeout"
        with pytest.raises(InfraError):  # the restarted process hangs on its first request too
            summarizer(dataclasses.replace(REQUEST, budget=201))


def test_a_command_answering_garbage_is_malformed():
    with Summarizer(CallOptions(_cmd(CORRECT, "--garbage-on", "1"), protocol="rich")) as summarizer:
        with pytest.raises(InfraError) as caught:
            summarizer(REQUEST)
    assert caught.value.kind == "malformed"


def test_the_node_example_runs_over_cmd_and_loses_obligations():
    result = run(RunConfig.of(f"cmd:node {ROOT / 'examples' / 'node' / 'summarize.js'}", examples=6,
                           max_turns=150, seed=1, quiet=True))
    assert not result.infra_errors and result.stats.calls > 0
    assert result.exit_code == 1 and any(f.fact_kind for f in result.failures)


# -- clear errors before any example -----------------------------------------------------------------


def test_specs_that_can_never_work_fail_at_once_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SpecError, match="set OPENAI_API_KEY"):
        Summarizer(CallOptions("openai:gpt-4o-mini"))
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Summarize in {budget} tokens.")
    with pytest.raises(SpecError, match=r"no \{transcript\} placeholder"):
        Summarizer(CallOptions("openai:m", base_url="http://127.0.0.1:9/v1", prompt=str(prompt)))
    with pytest.raises(SpecError, match="cannot connect to 127.0.0.1:9"):
        Summarizer(CallOptions("http://127.0.0.1:9/compact"))
    with pytest.raises(SpecError, match="exited at once"):
        Summarizer(CallOptions(_cmd(CORRECT, "--exit-at-start")))
    with pytest.raises(SpecError, match="no program"):
        Summarizer(CallOptions("cmd:no-such-program-here --x"))


def test_a_team_prompt_is_what_the_model_gets(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("TEAM PROMPT at most {budget} tokens\n<transcript>\n{transcript}\n</transcript>\n"
                      "<obligations>\n{obligations}\n</obligations>\n")
    with openai_stub(prose.summarize) as api:
        with Summarizer(CallOptions("openai:test-model", base_url=api.url + "/v1", prompt=str(prompt))) as summarizer:
            summarizer(REQUEST)
        sent = api.requests[0].body
    assert sent["model"] == "test-model"
    assert sent["messages"][0]["content"].startswith("TEAM PROMPT at most 200 tokens")
    assert "Never push to main" in sent["messages"][0]["content"]


def _text(result) -> str:
    from harness._app.reports._text import render_text
    return render_text(result)
