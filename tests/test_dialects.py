"""Provider dialects (issue 34): generated sources valid in each, answers read back strictly, and the
provider-valid oracle tested both ways, by the compactors of tests/fixtures/dialect_compactors.py, which
were written from the API shapes alone without reading the oracles."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from harness._app.cli._main import main
from harness._app.judging._session import SessionConfig, run_session
from harness._base._compact import compact_once
from harness._base._dialects import DIALECTS, read, render
from harness._base._errors import MalformedResult
from harness._base._model import Role, ToolCall, Transcript, Turn, mid_results
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.summarizers import identity
from harness.oracles import Case, check, select
from harness.oracles._provider import RULES, problems
from harness.strategies import transcripts

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "dialect_compactors.py"
_SOURCES = transcripts(min_turns=20, max_turns=400)


# -- every generated source is a history its provider accepts ----------------------------------------

@pytest.mark.slow
@settings(max_examples=2000, database=None, deadline=None, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(transcript=_SOURCES)
def test_every_generated_source_is_valid_in_every_dialect_at_every_compaction_point(transcript):
    ids = [c.id for t in transcript.turns for c in t.tool_calls]
    assert len(ids) == len(set(ids))  # one call id, one call: a provider pairs results by it
    for boundary in (*transcript.compaction_points, len(transcript.turns)):
        for dialect in DIALECTS:
            assert problems(transcript.turns[:boundary], dialect) == [], (dialect, boundary)


@settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(transcript=transcripts(min_turns=20, max_turns=200))
def test_every_request_a_session_makes_is_valid_in_every_dialect(transcript):
    """The budget's trigger fires between model calls, never while a step's tool results are coming in."""
    rounds = run_session(transcript, lambda r: compact_once(identity.summarize, r, protocol="messages"),
                         SessionConfig(budget=300))
    assert rounds
    for rnd in rounds:
        assert rnd.boundary not in mid_results(transcript.turns) or rnd.boundary in transcript.compaction_points
        for dialect in DIALECTS:
            assert problems(rnd.request.turns, dialect) == [], (dialect, rnd.boundary)


def test_a_boundary_inside_a_block_of_results_is_named_and_one_after_the_call_is_not():
    calls = (ToolCall("a", "read", "{}"), ToolCall("b", "read", "{}"))
    turns = (Turn(Role.USER, "go"), Turn(Role.ASSISTANT, "", calls), Turn(Role.TOOL, "A", (), "a"),
             Turn(Role.TOOL, "B", (), "b"), Turn(Role.ASSISTANT, "done"))
    assert mid_results(turns) == frozenset({3})  # after the first result, before the second
    assert problems(turns[:2], "anthropic") == []  # the call in flight as the trailing message
    assert [p.rule for p in problems(turns[:3], "anthropic")] == ["use-answered"]


@settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(transcript=transcripts(min_turns=5, max_turns=120))
def test_a_dialect_reads_back_what_it_writes(transcript):
    for dialect in ("anthropic", "openai-responses"):
        back = read(json.loads(json.dumps(render(transcript.turns, dialect))), dialect)
        assert _flat(back) == _flat(transcript.turns), dialect


def _flat(turns) -> list:
    """What a dialect must keep of each turn: role, text, call ids, names and arguments, the call answered.
    Responses items cannot tell an assistant message followed by a turn of calls alone from one turn holding
    both (the calls are items after the message either way): such a pair is compared as one turn."""
    out: list = []
    for t in turns:
        calls = tuple((c.id, c.name, json.loads(c.arguments)) for c in t.tool_calls)
        last = out[-1] if out else None
        if last and t.role is Role.ASSISTANT and not t.text and calls and last[0] is Role.ASSISTANT:
            out[-1] = (last[0], last[1], last[2] + calls, last[3])
            continue
        out.append((t.role, t.text, calls, t.tool_call_id))
    return out


# -- answers are read strictly: a malformed one is the summarizer's failure ---------------------------

@pytest.mark.parametrize("dialect, answer, where", [
    ("anthropic", {"messages": [{"role": "user", "content": [{"type": "bogus"}]}]}, "messages[0].content[0].type"),
    ("anthropic", {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "x", "input": {}}]}]},
     "messages[0].content[0].id"),
    ("anthropic", {"messages": [], "model": "claude"}, "only 'system' and 'messages'"),
    ("anthropic", [{"role": "user", "content": "hi"}], "a Messages API body"),
    ("openai-responses", [{"type": "function_call_output", "output": "ok"}], "items[0].call_id"),
    ("openai-responses", [{"type": "weather_report"}], "items[0].type"),
    ("openai-responses", [{"type": "web_search_call"}], "items[0].id"),  # a server-side call names itself
    ("openai-responses", [{"type": "custom_tool_call", "call_id": "c1"}], "items[0].name"),
    ("anthropic", {"messages": [{"role": "assistant", "content": [{"type": "web_search_tool_result"}]}]},
     "messages[0].content[0].tool_use_id"),
    ("openai-responses", {"input": []}, "a list of Responses input items"),
])
def test_a_malformed_answer_names_where(dialect, answer, where):
    with pytest.raises(MalformedResult, match=__import__("re").escape(where)):
        read(answer, dialect)


def test_a_malformed_answer_is_the_summarizers_failure_exit_3(tmp_path, capsys):
    module = tmp_path / "garbage.py"
    module.write_text("def summarize(request, budget):\n"
                      "    return {'messages': [{'role': 'user', 'content': [{'type': 'image_url'}]}]}\n")
    code = main(["run", "--summarizer", f"{module}:summarize", "--dialect", "anthropic", "--examples", "3",
                 "--max-turns", "60", "--seed", "1", "--inline", "--quiet"])
    assert code == 3
    assert "messages[0].content[0].type" in capsys.readouterr().out


# -- provider-valid, both ways ------------------------------------------------------------------------

def _case(given: tuple[Turn, ...], returned: tuple[Turn, ...], dialect: str) -> list:
    request = CompactionRequest(given, 2000, (), dialect=dialect)
    transcript = Transcript(given, (), (len(given),))
    case = Case(transcript, len(given), 2000, CompactionResult(returned), request=request)
    return [f for f in check(case, select(only=["provider-valid"])).findings]


_CALL = Turn(Role.ASSISTANT, "reading", (ToolCall("call_1", "read_file", '{"path": "a.py"}'),))
_RESULT = Turn(Role.TOOL, "print('a')", (), "call_1")
_GIVEN = (Turn(Role.USER, "fix a.py"), _CALL, _RESULT, Turn(Role.ASSISTANT, "fixed"), Turn(Role.USER, "thanks"))


@pytest.mark.parametrize("dialect, returned, rule, index", [
    ("chat", (_RESULT, Turn(Role.ASSISTANT, "fixed")), "result-after-call", 0),
    ("chat", (_CALL, Turn(Role.USER, "thanks")), "call-answered", 0),
    ("anthropic", (Turn(Role.ASSISTANT, "fixed"), Turn(Role.USER, "thanks")), "first-from-user", 0),
    ("anthropic", (Turn(Role.USER, "fix a.py"), _CALL, Turn(Role.USER, "thanks")), "use-answered", 1),
    ("anthropic", (Turn(Role.USER, "summary"), _RESULT, Turn(Role.ASSISTANT, "fixed")), "result-after-use", 0),
    ("openai-responses", (Turn(Role.USER, "summary"), _RESULT, Turn(Role.ASSISTANT, "fixed")),
     "output-after-call", 1),
    ("openai-responses", (Turn(Role.USER, "summary"), _CALL, Turn(Role.USER, "thanks")), "call-answered", 2),
])
def test_provider_valid_names_the_rule_and_the_index(dialect, returned, rule, index):
    (finding,) = _case(_GIVEN, returned, dialect)
    assert finding.detail.startswith(f"{dialect} rule {rule}:")
    assert finding.found == f"{dialect} message [{index}]"
    assert finding.expected == RULES[dialect][rule]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_provider_valid_passes_what_the_provider_accepts(dialect):
    for returned in (_GIVEN, (Turn(Role.USER, "summary of the fix"), Turn(Role.USER, "thanks")),
                     (Turn(Role.USER, "summary"), _CALL)):  # a call in flight as the trailing message
        assert _case(_GIVEN, returned, dialect) == [], returned


def test_a_defect_already_in_what_the_compactor_was_given_is_the_sources():
    given = (Turn(Role.USER, "look"), _RESULT, Turn(Role.ASSISTANT, "ok"))  # an orphan result in the request
    assert _case(given, given, "chat") == []


# -- end to end: identity passes in each dialect, the blind trimmers that cut pairs are caught ----------

def _run(tmp_path, spec: str, dialect: str, *extra: str) -> tuple[int, dict]:
    report = tmp_path / f"{dialect}.json"
    code = main(["run", "--summarizer", spec, "--dialect", dialect, "--examples", "30", "--seed", "5", "--inline",
                 "--quiet", "--report-json", str(report), *extra])
    return code, json.loads(report.read_text())


@pytest.mark.parametrize("spec, dialect", [
    ("harness.summarizers.identity:summarize", "chat"),
    (f"{FIXTURES}:anthropic_identity", "anthropic"),
    (f"{FIXTURES}:responses_identity", "openai-responses"),
])
def test_an_identity_compactor_passes_in_each_dialect(tmp_path, spec, dialect, capsys):
    code, report = _run(tmp_path, spec, dialect, "--skip", "budget-respected")  # it keeps everything, by design
    assert (code, report["findings"]) == (0, [])
    assert ("(messages)" if dialect == "chat" else f"(messages, {dialect})") in capsys.readouterr().out


@pytest.mark.parametrize("spec, dialect", [
    (f"{FIXTURES}:anthropic_count_trimmer", "anthropic"),
    (f"{FIXTURES}:responses_drop_old_calls", "openai-responses"),
])
def test_a_trimmer_that_cuts_pairs_in_its_dialect_is_reported_with_a_minimal_transcript(tmp_path, spec, dialect):
    code, report = _run(tmp_path, spec, dialect)
    assert code == 1
    # The cut is named by tool-pairing where both see it (provider-valid restates it in the dialect's terms).
    shape = [f for f in report["findings"] if {"provider-valid", "tool-pairing"} & {*f["invariants"], *f["also_seen"]}]
    assert shape and all(f["minimal_turns"] <= 10 for f in shape)
    assert all(report["violations"][f["violation"]]["detail"].startswith(f"{dialect} rule ") for f in shape
               if report["violations"][f["violation"]]["invariant"] == "provider-valid")


@pytest.mark.parametrize("spec, dialect", [
    (f"{FIXTURES}:anthropic_pair_safe_trimmer", "anthropic"),
    (f"{FIXTURES}:responses_pair_safe_trimmer", "openai-responses"),
])
def test_a_pair_safe_trimmer_keeps_its_requests_valid(tmp_path, spec, dialect):
    code, report = _run(tmp_path, spec, dialect, "--only", "provider-valid,tool-pairing")
    if dialect == "openai-responses":  # written before compaction items: it trims the one it is given as old
        details = {v["detail"].split(":")[0] for v in report["violations"]}
        assert details == {"openai-responses rule compaction-kept"}, details
        return
    assert (code, report["findings"]) == (0, [])


def test_a_process_speaks_its_dialect_over_json_lines(tmp_path):
    """cmd: carries the Anthropic body as the request's own keys and reads the answer's."""
    script = tmp_path / "echo_body.py"
    script.write_text("import json, sys\n"
                      "for line in sys.stdin:\n"
                      "    request = json.loads(line)\n"
                      "    assert request['dialect'] == 'anthropic' and 'messages' in request\n"
                      "    body = {k: request[k] for k in ('system', 'messages') if k in request}\n"
                      "    print(json.dumps(body), flush=True)\n")
    code, report = _run(tmp_path, f"cmd:{sys.executable} {script}", "anthropic", "--skip", "budget-respected")
    assert (code, report["findings"], report["infra_errors"]) == (0, [], [])


def test_a_chat_summarizer_failing_on_every_provider_body_is_told_what_a_messages_summarizer_gets_there():
    from harness._app.reports._text import render_text
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    def told(spec: str, dialect: str) -> bool:
        result = run(RunConfig.of(spec, examples=4, seed=2, quiet=True, isolation="inline", dialect=dialect))
        assert result.infra_errors
        return f"in the {dialect} dialect a messages summarizer is given" in render_text(result)

    chat_only = "harness.summarizers.example:summarize"  # reads message["content"] of chat messages
    assert told(chat_only, "anthropic") and told(chat_only, "openai-responses")
    raises = f"{Path(__file__).resolve().parent / 'fixtures' / 'faulty.py'}:raises"
    assert not told(raises, "chat")  # chat is what it was written for: its own failure, nothing to add
