"""Teams' logs read as their tools write them (``harness._base._logs``): each format recognised by its content,
converted faithfully (calls with their results, parallel calls, a tool's error text), and anything unreadable
named by file, line and field. Small samples of our own here; ``test_log_fixtures`` reads a set another hand
wrote in the tools' native shapes."""

import json

import pytest

from harness._base._errors import SchemaError
from harness._base._logs import LOG_FORMATS, read_log


def _read(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, list) and name.endswith(".jsonl"):
        content = "\n".join(json.dumps(line) for line in content) + "\n"
    elif not isinstance(content, str):
        content = json.dumps(content, indent=2)
    path.write_text(content, encoding="utf-8")
    return path, read_log(path.read_bytes(), source=str(path))


def _shape(log):
    """Each turn as (role, text, call ids, the id it answers)."""
    return [(t.turn.role.value, t.turn.text, [c.id for c in t.turn.tool_calls], t.turn.tool_call_id) for t in log.turns]


def _event(kind, message, **extra):
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "s1",
            "version": "2.1.3", "type": kind, "message": message, "uuid": f"u-{id(message)}",
            "timestamp": "2026-11-30T10:00:00Z", **extra}


def _said(role, *blocks, message_id=None):
    message = {"role": role, "content": list(blocks)}
    if message_id:
        message.update(id=message_id, type="message", model="claude-sonnet-4-5")
    return message


def _text(text):
    return {"type": "text", "text": text}


def _use(call_id, name="Bash", **arguments):
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _result(call_id, content, **extra):
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **extra}


# -- Claude Code --------------------------------------------------------------------------------------

CLAUDE = [
    {"type": "summary", "summary": "Fix the flaky test", "leafUuid": "u-9"},
    _event("user", {"role": "user", "content": "the test_cache suite fails on CI"}),
    _event("assistant", _said("assistant", {"type": "thinking", "thinking": "Check both.", "signature": "EqQBCk"},
                              message_id="msg_01")),
    _event("assistant", _said("assistant", _text("Reading the test and running it."), message_id="msg_01")),
    _event("assistant", _said("assistant", _use("toolu_01", "Read", file_path="/repo/tests/test_cache.py"),
                              message_id="msg_01")),
    _event("assistant", _said("assistant", _use("toolu_02", command="pytest tests/test_cache.py"), message_id="msg_01")),
    _event("user", _said("user", _result("toolu_01", "     1\timport pytest\n     2\t"))),
    _event("user", _said("user", _result("toolu_02", "1 failed, 40 passed", is_error=True))),
    _event("system", None, subtype="turn_duration", durationMs=5120),
    _event("assistant", _said("assistant", _use("toolu_03", "Task", prompt="look"), message_id="msg_side"),
           isSidechain=True),
    _event("assistant", _said("assistant", _text("The fixture leaks a temp dir."), message_id="msg_02")),
    _event("user", _said("user", _text("[Request interrupted by user]"))),
    _event("assistant", _said("assistant", _use("toolu_04", command="git status"), message_id="msg_03")),
]


def test_a_claude_code_session_is_read_an_event_a_line_with_split_messages_joined(tmp_path):
    path, logs = _read(tmp_path, "4f35e220.jsonl", CLAUDE)
    [log] = logs
    assert log.format == "claude-code"
    assert _shape(log) == [
        ("user", "the test_cache suite fails on CI", [], None),
        ("assistant", "Reading the test and running it.", ["toolu_01", "toolu_02"], None),  # one message, four lines
        ("tool", "     1\timport pytest\n     2\t", [], "toolu_01"),
        ("tool", "1 failed, 40 passed", [], "toolu_02"),  # the error's text kept
        ("assistant", "The fixture leaks a temp dir.", [], None),
        ("user", "[Request interrupted by user]", [], None),
        ("assistant", "", ["toolu_04"], None),  # unanswered: the background loader drops the call
    ]
    assert dict(log.left_out) == {"thinking blocks": 1}
    assert log.turns[3].source == f"{path}, line 8" and log.turns[3].tie == "message.content[0].tool_use_id"


def test_a_server_side_tool_in_a_claude_code_message_is_a_call_and_its_result(tmp_path):
    lines = [_event("user", {"role": "user", "content": "what changed in pytest 9?"}),
             _event("assistant", _said("assistant", {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                                     "input": {"query": "pytest 9 changelog"}}, message_id="m1")),
             _event("assistant", _said("assistant", {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                                                     "content": [{"type": "web_search_result", "url": "https://x",
                                                                  "title": "Changelog", "encrypted_content": "e"}]},
                                       message_id="m1")),
             _event("assistant", _said("assistant", _text("It drops Python 3.9."), message_id="m1"))]
    _, [log] = _read(tmp_path, "s.jsonl", lines)
    shape = _shape(log)
    assert [s[0] for s in shape] == ["user", "assistant", "tool"]
    assert shape[1][1:3] == ("It drops Python 3.9.", ["srvtoolu_1"]) and shape[2][3] == "srvtoolu_1"
    assert '"title": "Changelog"' in shape[2][1]


def test_a_foreign_line_in_a_claude_code_log_is_named_by_its_line(tmp_path):
    lines = [*CLAUDE[:3], {"timestamp": "t", "type": "response_item", "payload": {"type": "message"}}]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with pytest.raises(SchemaError, match=rf"{path}, line 4: field 'type': expected a Claude Code event type"):
        read_log(path.read_bytes(), source=str(path))


@pytest.mark.parametrize("line, field", [
    (_event("user", "just text"), "message"),
    (_event("assistant", _said("assistant", {"type": "tool_use", "name": "Bash", "input": {}})), "message.content[0].id"),
    (_event("assistant", _said("assistant", {"type": "hologram"})), "message.content[0].type"),
])
def test_a_broken_claude_code_event_is_named_by_line_and_field(tmp_path, line, field):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(CLAUDE[1]) + "\n\n" + json.dumps(line) + "\n")
    with pytest.raises(SchemaError, match=rf"{path}, line 3: field '{field.replace('[', '.').replace(']', '.')}'"):
        read_log(path.read_bytes(), source=str(path))


# -- Codex ----------------------------------------------------------------------------------------------

def _record(kind, payload):
    return {"timestamp": "2026-11-30T10:00:00.000Z", "type": kind, "payload": payload}


CODEX = [
    _record("session_meta", {"id": "0199", "cwd": "/repo", "cli_version": "0.63.0", "originator": "codex_cli_rs"}),
    _record("response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text",
                                                                                   "text": "<permissions>"}]}),
    _record("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                              "text": "bump the version"}]}),
    _record("event_msg", {"type": "user_message", "message": "bump the version"}),
    _record("turn_context", {"model": "gpt-5-codex", "cwd": "/repo"}),
    _record("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB"}),
    _record("response_item", {"type": "function_call", "name": "shell_command", "call_id": "call_a",
                              "arguments": json.dumps({"command": "grep -n version pyproject.toml"})}),
    _record("response_item", {"type": "function_call", "name": "shell_command", "call_id": "call_b",
                              "arguments": json.dumps({"command": "git tag"})}),
    _record("response_item", {"type": "function_call_output", "call_id": "call_a", "output": "3:version = \"1.4.2\""}),
    _record("response_item", {"type": "function_call_output", "call_id": "call_b", "output": "v1.4.1\nv1.4.2"}),
    _record("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_c",
                              "input": "*** Begin Patch\n*** Update File: pyproject.toml\n*** End Patch"}),
    _record("response_item", {"type": "custom_tool_call_output", "call_id": "call_c", "output": "Success."}),
    _record("compacted", {"message": "The user asked to bump the version; pyproject.toml is at 1.4.2."}),
    _record("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                                   "text": "Bumped to 1.4.3."}]}),
]


def test_a_codex_rollout_is_read_from_its_response_items(tmp_path):
    _, [log] = _read(tmp_path, "rollout-2026-11-30T10-00-00-0199.jsonl", CODEX)
    assert log.format == "codex"
    assert _shape(log) == [
        ("system", "<permissions>", [], None),
        ("user", "bump the version", [], None),
        ("assistant", "", ["call_a", "call_b"], None),  # a parallel step: one turn
        ("tool", '3:version = "1.4.2"', [], "call_a"),
        ("tool", "v1.4.1\nv1.4.2", [], "call_b"),
        ("assistant", "", ["call_c"], None),
        ("tool", "Success.", [], "call_c"),
        ("user", "The user asked to bump the version; pyproject.toml is at 1.4.2.", [], None),
        ("assistant", "Bumped to 1.4.3.", [], None),
    ]
    assert dict(log.left_out) == {"reasoning items": 1}


def test_an_earlier_codex_rollout_of_bare_items_is_read_too(tmp_path):
    lines = [{"id": "0198", "timestamp": "2025-06-01T10:00:00Z", "instructions": None},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
             {"record_type": "state"},
             {"type": "local_shell_call", "call_id": "call_1", "status": "completed",
              "action": {"type": "exec", "command": ["ls"]}},
             {"type": "function_call_output", "call_id": "call_1", "output": {"content": "a.py", "success": True}}]
    _, [log] = _read(tmp_path, "rollout.jsonl", lines)
    assert log.format == "codex"
    assert _shape(log) == [("user", "hi", [], None), ("assistant", "", ["call_1"], None),
                           ("tool", '{"content": "a.py", "success": true}', [], "call_1")]
    assert log.turns[1].turn.tool_calls[0].name == "local_shell"


def test_a_broken_codex_line_is_named_by_line_and_field(tmp_path):
    lines = [*CODEX[:3], _record("response_item", {"type": "function_call_output", "output": "x"})]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with pytest.raises(SchemaError, match=rf"{path}, line 4: field 'payload\.call_id'"):
        read_log(path.read_bytes(), source=str(path))


# -- documents: Anthropic bodies, Responses items, LangChain dumps, chat messages -----------------------

BODY = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": [{"type": "text", "text": "You are a coder."}],
        "tools": [{"name": "run", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "run the tests"},
                     {"role": "assistant", "content": [_text("Running both suites."), _use("t1", "run", suite="unit"),
                                                       _use("t2", "run", suite="e2e")]},
                     {"role": "user", "content": [_result("t1", [_text("212 passed")]),
                                                  _result("t2", "timeout after 600s", is_error=True),
                                                  {"type": "image", "source": {"type": "base64",
                                                                               "media_type": "image/png", "data": "iV"}}]}]}


def test_an_anthropic_body_keeps_every_tool_use_and_result(tmp_path):
    """The issue's case: a body with a tool loop was read as chat and lost every block."""
    _, [log] = _read(tmp_path, "request.json", BODY)
    assert log.format == "anthropic"
    assert _shape(log) == [("system", "You are a coder.", [], None), ("user", "run the tests", [], None),
                           ("assistant", "Running both suites.", ["t1", "t2"], None),
                           ("tool", "212 passed", [], "t1"), ("tool", "timeout after 600s", [], "t2"),
                           ("user", "", [], None)]  # the image the user sent after the results, as its attachment
    assert [(p.kind.value, p.data, p.text) for p in log.turns[-1].turn.parts] == [("image", "iV", "image/png")]
    assert dict(log.left_out) == {"images": 1}  # as filler, the log's attachments are left out


def test_anthropic_messages_without_a_body_are_read_as_anthropic_not_chat(tmp_path):
    _, [log] = _read(tmp_path, "messages.json", BODY["messages"])
    assert log.format == "anthropic" and [t.turn.role.value for t in log.turns][-3:] == ["tool", "tool", "user"]


def test_a_broken_anthropic_result_names_its_block(tmp_path):
    body = json.loads(json.dumps(BODY))
    del body["messages"][2]["content"][1]["tool_use_id"]
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    with pytest.raises(SchemaError, match=rf"{path}: field 'messages\[2\]\.content\[1\]\.tool_use_id'"):
        read_log(path.read_bytes(), source=str(path))


AGENTS_SDK = [{"role": "user", "content": "What's the weather in Oslo?"},
              {"id": "rs_1", "type": "reasoning", "summary": []},
              {"id": "fc_1", "type": "function_call", "call_id": "call_w", "name": "get_weather",
               "arguments": "{\"city\": \"Oslo\"}", "status": "completed"},
              {"type": "function_call_output", "call_id": "call_w", "output": "4°C, rain"},
              {"id": "ws_1", "type": "web_search_call", "status": "completed",
               "action": {"type": "search", "query": "oslo forecast"}},
              {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "4°C and rain.", "annotations": []}]}]


@pytest.mark.parametrize("wrap", [lambda items: items, lambda items: {"input": items, "instructions": "Be brief."},
                                  lambda items: {"items": items}])
def test_agents_sdk_items_are_read_as_a_list_an_input_or_items(tmp_path, wrap):
    _, [log] = _read(tmp_path, "session.json", wrap(AGENTS_SDK))
    assert log.format == "openai-responses"
    shape = [s for s in _shape(log) if s[0] != "system"]
    assert shape[:3] == [("user", "What's the weather in Oslo?", [], None), ("assistant", "", ["call_w"], None),
                         ("tool", "4°C, rain", [], "call_w")]
    assert shape[3][2] == ["ws_1"] and shape[4][3] == "ws_1"  # a server-side search: its call and its result
    assert shape[5] == ("assistant", "4°C and rain.", [], None)


LANGCHAIN = [{"type": "system", "data": {"content": "Use the tools.", "type": "system"}},
             {"type": "human", "data": {"content": "How big is the repo?", "type": "human"}},
             {"type": "ai", "data": {"content": [{"type": "text", "text": "Counting."},
                                                 {"type": "tool_use", "id": "toolu_9", "name": "du", "input": {}}],
                                     "tool_calls": [{"name": "du", "args": {"path": "."}, "id": "toolu_9",
                                                     "type": "tool_call"}], "type": "ai"}},
             {"type": "tool", "data": {"content": "Permission denied", "tool_call_id": "toolu_9", "status": "error",
                                       "type": "tool"}}]


def test_a_langchain_messages_to_dict_dump_is_read(tmp_path):
    _, [log] = _read(tmp_path, "history.json", LANGCHAIN)
    assert log.format == "langchain"
    assert _shape(log) == [("system", "Use the tools.", [], None), ("user", "How big is the repo?", [], None),
                           ("assistant", "Counting.", ["toolu_9"], None),
                           ("tool", "Permission denied", [], "toolu_9")]
    assert log.turns[2].turn.tool_calls[0].arguments == '{"path": "."}'


def test_a_langchain_dumpd_dump_with_legacy_openai_calls_is_read(tmp_path):
    dumped = [{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
               "kwargs": {"content": "hi", "type": "human"}},
              {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
               "kwargs": {"content": "", "additional_kwargs": {"tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}}},
              {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
               "kwargs": {"content": "a.py", "tool_call_id": "call_1"}}]
    _, [log] = _read(tmp_path, "dump.json", {"messages": dumped})
    assert _shape(log) == [("user", "hi", [], None), ("assistant", "", ["call_1"], None), ("tool", "a.py", [], "call_1")]


def test_an_unknown_langchain_message_type_is_named(tmp_path):
    path = tmp_path / "history.json"
    path.write_text(json.dumps([LANGCHAIN[1], {"type": "remove", "data": {"id": "x"}}]))
    with pytest.raises(SchemaError, match=rf"{path}: field '\[1\]\.type': expected a message type LangChain dumps"):
        read_log(path.read_bytes(), source=str(path))


def test_chat_messages_stay_chat_and_a_jsonl_of_them_is_a_session_per_line(tmp_path):
    session = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "c", "content": "ok"}]
    _, [log] = _read(tmp_path, "chat.json", session)
    assert log.format == "chat" and _shape(log)[-1] == ("tool", "ok", [], "c")
    _, logs = _read(tmp_path, "chats.jsonl", [session, {"messages": session[1:2]}])
    assert [len(log.turns) for log in logs] == [4, 1] and {log.format for log in logs} == {"chat"}


# -- recognising, and refusing --------------------------------------------------------------------------

@pytest.mark.parametrize("content, expected", [
    ("", "an empty file"),
    ("{\n  \"messages\": [\n", "valid JSON"),
    ('[{"role": "user", "content": "hi"}]\n{not json\n', "line 2: field '<root>': expected valid JSON"),
    ({"notes": "a config file"}, "expected a session log: Claude Code session JSONL"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "hologram"}]}],
     "field '[1].content[0].type': expected a chat-completions content part"),
])
def test_what_is_no_log_is_refused_naming_where(tmp_path, content, expected):
    name = "log.jsonl" if isinstance(content, str) and "\n{not" in content else "log.json"
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(SchemaError) as info:
        read_log(path.read_bytes(), source=str(path))
    assert str(info.value).startswith(str(path)) and expected in str(info.value)


def test_every_format_is_recognised_whatever_the_file_is_called(tmp_path):
    samples = {"claude-code": CLAUDE, "codex": CODEX, "anthropic": BODY, "openai-responses": AGENTS_SDK,
               "langchain": LANGCHAIN, "chat": [{"role": "user", "content": "hi"}]}
    assert set(samples) == {f.name for f in LOG_FORMATS}
    for name, content in samples.items():
        text = ("\n".join(json.dumps(line) for line in content) if name in ("claude-code", "codex")
                else json.dumps(content))
        path = tmp_path / "export.txt"
        path.write_text(text)
        assert {log.format for log in read_log(path.read_bytes(), source=str(path))} == {name}

