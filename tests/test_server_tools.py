"""Server-side tool calls: a call the provider runs itself (an MCP connector's), whose result comes back in the
same response. ``harness.Part`` of kind server_tool marks the call's assistant turn and its result's tool turn.

Anthropic writes them as ``mcp_tool_use`` and ``mcp_tool_result`` blocks in one assistant message and Responses as
one ``mcp_call`` item, and both read them back; chat writes them as ordinary calls; generated sources in the
provider dialects carry them, never cut between a call and its result; and ``provider-valid`` holds an Anthropic
compactor to their pairing: the result in the assistant's own message after its use (``server-result-after-use``),
every use answered there (``server-use-answered``), and never a client ``tool_result`` for a server call."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness import InvalidArgument, Part, PartKind, Role, ToolCall, Transcript, Turn
from harness._base._dialects import read, render
from harness._base._errors import MalformedResult
from harness._base._model import mid_results, server_calls
from harness._base._protocol import CompactionRequest, CompactionResult
from harness.oracles import Case, select
from harness.strategies import with_provider_parts
from tests._cases import without_references
from harness.strategies._internal._parts import SERVER_EVERY

MARK = Part(PartKind.SERVER_TOOL, "docs-search", "", "mcptoolu_1")
CALL = Turn(Role.ASSISTANT, "Looking it up.", (ToolCall("mcptoolu_1", "search", '{"q": "retention"}'),), parts=(MARK,))
RESULT = Turn(Role.TOOL, "Retention is 30 days.", (), "mcptoolu_1", (MARK,))
SOURCE = (Turn(Role.USER, "How long do we keep logs?"), CALL, RESULT, Turn(Role.ASSISTANT, "Thirty days."),
          Turn(Role.USER, "Thanks."))


def _parts(turns) -> list[tuple]:
    return [(t.role, p.kind, p.data, p.id) for t in turns for p in t.parts]


def test_anthropic_writes_the_use_and_its_result_in_one_assistant_message_and_reads_them_back():
    messages = render(SOURCE, "anthropic")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant", "user"]
    blocks = messages[1]["content"]
    assert [b["type"] for b in blocks] == ["text", "mcp_tool_use", "mcp_tool_result"]
    assert blocks[1] == {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "server_name": "docs-search",
                         "input": {"q": "retention"}}
    assert blocks[2] == {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
                         "content": [{"type": "text", "text": "Retention is 30 days."}]}
    back = read(render(SOURCE, "anthropic"), "anthropic")
    assert back == SOURCE and _parts(back) == _parts(SOURCE)


def test_responses_writes_one_mcp_call_item_and_reads_it_back():
    items = render(SOURCE, "openai-responses")
    assert [i["type"] for i in items] == ["message", "message", "mcp_call", "message", "message"]
    assert items[2] == {"type": "mcp_call", "id": "mcptoolu_1", "server_label": "docs-search", "name": "search",
                        "arguments": '{"q": "retention"}', "output": "Retention is 30 days."}
    back = read(items, "openai-responses")
    assert back == SOURCE and _parts(back) == _parts(SOURCE)


def test_an_mcp_call_without_its_output_reads_as_a_call_still_waiting():
    pending = read([{"type": "mcp_call", "id": "mcp_9", "server_label": "wiki", "name": "fetch", "arguments": "{}"}],
                   "openai-responses")
    assert pending == (Turn(Role.ASSISTANT, "", (ToolCall("mcp_9", "fetch", "{}"),)),)
    assert server_calls(pending[0]) == {"mcp_9"}


def test_chat_writes_a_server_call_as_an_ordinary_call():
    messages = render(SOURCE, "chat")
    assert messages[1]["tool_calls"][0]["id"] == "mcptoolu_1" and messages[2]["role"] == "tool"
    assert "docs-search" not in str(messages) and "server" not in str(messages)


@pytest.mark.parametrize("block, where", [
    ({"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "input": {}}, r"content\[0\]\.server_name"),
    ({"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "server_name": 3, "input": {}},
     r"content\[0\]\.server_name"),
])
def test_a_server_call_without_its_server_is_the_compactor_s_malformed_answer_naming_where(block, where):
    with pytest.raises(MalformedResult, match=where):
        read({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [block]}]}, "anthropic")


def test_a_server_mark_belongs_to_a_call_or_its_result():
    with pytest.raises(InvalidArgument, match="role 'user' cannot carry a part of kind 'server_tool'"):
        Turn(Role.USER, "Search it.", parts=(MARK,))


def _rules(result_body: dict, given=SOURCE) -> list[str]:
    (check,) = [o.check for o in select() if o.id == "provider-valid"]
    case = Case(Transcript(turns=tuple(given)), len(given), 400, CompactionResult(read(result_body, "anthropic")),
                request=CompactionRequest(tuple(given), 400, dialect="anthropic"))
    return sorted({f.detail.split(":")[0].split()[-1] for f in check(case)})


def _body_with(assistant_blocks: list[dict], *after: dict) -> dict:
    return {"messages": [{"role": "user", "content": "How long do we keep logs?"},
                         {"role": "assistant", "content": assistant_blocks}, *after,
                         {"role": "user", "content": "Thanks."}]}


USE = render(SOURCE, "anthropic")["messages"][1]["content"][1]
ANSWER = render(SOURCE, "anthropic")["messages"][1]["content"][2]


def test_the_pair_kept_in_one_message_passes():
    assert _rules(render(SOURCE, "anthropic")) == []
    assert _rules({"messages": [{"role": "user", "content": "Earlier: logs are kept 30 days."},
                                {"role": "assistant", "content": "Thirty days."}]}) == []  # dropped whole


def test_a_server_result_moved_into_a_user_tool_result_is_caught():
    moved = _body_with([USE], {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "mcptoolu_1",
                                                             "content": ANSWER["content"]}]})
    assert _rules(moved) == ["result-after-use", "server-use-answered"]


def test_a_server_use_left_without_its_result_is_caught_unless_its_message_is_the_last():
    assert _rules(_body_with([USE], {"role": "assistant", "content": "Thirty days."})) == ["server-use-answered"]
    last = {"messages": [{"role": "user", "content": "How long do we keep logs?"},
                         {"role": "assistant", "content": [USE]}]}
    assert _rules(last, given=SOURCE[:2]) == []


def test_a_server_result_whose_use_was_cut_away_is_caught():
    split = {"messages": [{"role": "user", "content": "(earlier messages dropped)"},
                          {"role": "assistant", "content": [ANSWER, {"type": "text", "text": "Thirty days."}]},
                          {"role": "user", "content": "Thanks."}]}
    assert _rules(split) == ["result-after-use"]


def _long_source(seed: int) -> Transcript:
    turns: list[Turn] = []
    for i in range(30):
        turns += [Turn(Role.USER, f"step {i}"), Turn(Role.ASSISTANT, "", (ToolCall(f"call_{i}", "lookup", "{}"),)),
                  Turn(Role.TOOL, f"result {i}", (), f"call_{i}")]
    return Transcript(turns=tuple(turns), seed=seed, compaction_points=(8,))


def test_generated_sources_make_some_calls_on_a_server_and_never_cut_between_a_call_and_its_result():
    source = with_provider_parts(_long_source(5))
    marked = [i for i, t in enumerate(source.turns) if t.role is Role.ASSISTANT and server_calls(t)]
    assert len(marked) in range(30 // SERVER_EVERY // 3, 30)  # some, not all
    for i in marked:
        (call,) = source.turns[i].tool_calls
        assert server_calls(source.turns[i + 1]) == {call.id} == {source.turns[i + 1].tool_call_id}
        assert i + 1 not in source.compaction_points and i + 1 in mid_results(source.turns)
    uncut = with_provider_parts(dataclasses.replace(_long_source(5), compaction_points=()))
    assert server_calls(uncut.turns[7]) and 7 not in marked  # the point 8 falls right after turn 7's call: a client's
    assert with_provider_parts(_long_source(5)) == source and _parts(with_provider_parts(_long_source(5)).turns) \
        == _parts(source.turns)


def test_the_mark_changes_no_text_and_no_token_count():
    plain, marked = _long_source(5), with_provider_parts(_long_source(5))
    assert without_references(marked.turns) == list(plain.turns)  # only the attachments' references are added


PARTS_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "parts_mutants.py"


@pytest.mark.parametrize("function, rules", [
    ("anthropic_keeps_thinking", set()),
    ("anthropic_moves_server_results", {"result-after-use", "server-use-answered"}),
])
def test_a_compactor_that_moves_server_results_is_caught_with_a_minimal_transcript_and_a_window_passes(function,
                                                                                                       rules):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{PARTS_FIXTURE}:{function}", examples=30, seed=3, quiet=True, isolation="inline",
                              dialect="anthropic", only=("provider-valid",)))
    assert not result.infra_errors
    found = {f.detail.split(":")[0].split()[-1] for f in result.failures}
    assert found and found <= rules if rules else not found, [f.detail for f in result.failures]
    assert all(len(f.transcript.turns) <= 4 for f in result.failures)


BLIND = Path(__file__).resolve().parent / "fixtures" / "provider_item_compactors.py"  # a helper's, from the API shapes only


@pytest.mark.parametrize("function, dialect, rule, most_turns", [
    ("anthropic_window_keeps_mcp_pairs", "anthropic", None, 0),
    ("anthropic_moves_mcp_result_to_user", "anthropic", "server-use-answered", 4),
    ("anthropic_drops_mcp_results", "anthropic", "server-use-answered", 4),
    ("anthropic_window_splits_mcp_pair", "anthropic", "result-after-use", 8),  # its window's floor: a few exchanges
    ("responses_window_keeps_approvals", "openai-responses", None, 0),
    ("responses_summarizes_old_turns", "openai-responses", None, 0),
    ("responses_drops_pending_approvals", "openai-responses", "approval-pending-kept", 4),
    ("responses_keeps_response_without_request", "openai-responses", "approval-after-request", 4),
])
def test_compactors_written_blind_are_judged_by_the_rule_they_break(function, dialect, rule, most_turns):
    from harness._app.running._options import RunConfig
    from harness._app.running._run import run

    result = run(RunConfig.of(f"{BLIND}:{function}", examples=30, seed=3, quiet=True, isolation="inline",
                              dialect=dialect, only=("provider-valid",)))
    assert not result.infra_errors
    assert {f.detail.split(":")[0].split()[-1] for f in result.failures} == ({rule} if rule else set()), \
        [f.detail for f in result.failures]
    assert all(len(f.transcript.turns) <= most_turns for f in result.failures)


def test_the_blind_set_does_what_its_docstrings_say():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(BLIND.with_name("provider_item_compactors_selfcheck.py"))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "selfcheck: OK" in done.stdout
