"""Framework adapters: a team's LangChain or LlamaIndex object called as a messages summarizer.

Against the real langchain-core and llama-index-core, loaded from the fixture files the way the CLI loads
a ``--summarizer`` spec; nothing of either library is mocked.
"""

import json
import re
import string
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import (InfraError, InvalidArgument, MalformedResult, Role, SpecError, ToolCall, Transcript, Turn,
                     compact_once, request_for, to_messages)
from harness._app.calling._frameworks import FRAMEWORKS, framework_summarizer
from harness._app.calling._loading import load_object, team_modules
from harness._base._protocol import resolve_protocol
from harness.strategies import transcripts

FIXTURES = Path(__file__).parent / "fixtures" / "frameworks"
LC = str(FIXTURES / "lc_compactors.py")
LI = str(FIXTURES / "llama_compactors.py")
_FILES = {"langchain:": LC, "llamaindex:": LI}


def wrap(prefix, name):
    """The summarizer ``--summarizer PREFIX<fixture file>:NAME`` names."""
    path = _FILES[prefix]
    return framework_summarizer(prefix, load_object(f"{path}:{name}", option="--summarizer"), f"{prefix}{path}:{name}")


def call(name, arguments):
    return {"id": name + "-id", "type": "function", "function": {"name": name, "arguments": arguments}}


#: What a generic strategy may miss: empty text beside tool calls, several calls in one message, arguments
#: that are not a JSON object between two that are, odd spacing and escapes, empty tool results.
EDGE = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": ""},
    {"role": "assistant", "content": "", "tool_calls": [
        call("read", '{"path":  "a.py" ,"n":1.0}'), call("raw", "[1, 2]"), call("ls", '{"dir": "\\u00e9t\\u00e9"}')]},
    {"role": "tool", "content": "print(1)\n", "tool_call_id": "read-id"},
    {"role": "tool", "content": "", "tool_call_id": "raw-id"},
    {"role": "tool", "content": "été", "tool_call_id": "ls-id"},
    {"role": "assistant", "content": "Checking.", "tool_calls": [
        call("bad", "not json"), call("empty", ""), call("null", "null"), call("edit", '{"x": true}')]},
    {"role": "tool", "content": "ok", "tool_call_id": "edit-id"},
    {"role": "user", "content": "two\nlines"},
    {"role": "assistant", "content": "done"},
]

# -- generated chat histories ---------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)


@st.composite
def _arguments(draw):
    """Arguments text: a JSON object written any way json can write it, another JSON value, or not JSON."""
    kind = draw(st.sampled_from(["object", "object", "value", "text"]))
    if kind == "text":
        return draw(st.text(max_size=12))
    value = draw(st.dictionaries(st.text(max_size=5), _JSON, max_size=4)) if kind == "object" else draw(_JSON)
    return json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0, 2])),
                      separators=draw(st.sampled_from([None, (",", ":"), (" ,", " :  ")])))


@st.composite
def chat_histories(draw):
    ids = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=8)
    messages = []
    for n in range(draw(st.integers(1, 14))):
        role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
        message = {"role": role, "content": draw(st.text(max_size=30))}
        if role == "assistant":
            calls = [{"id": f"{draw(ids)}.{n}.{j}", "type": "function",
                      "function": {"name": draw(ids), "arguments": draw(_arguments())}}
                     for j in range(draw(st.integers(0, 3)))]
            if calls:
                message["tool_calls"] = calls
        if role == "tool":
            message["tool_call_id"] = draw(ids)
        messages.append(message)
    return messages


IDENTITIES = [("langchain:", "keep_all"), ("langchain:", "keep_all_with_budget"), ("langchain:", "PASSTHROUGH"),
              ("langchain:", "copies"), ("llamaindex:", "keep_all"), ("llamaindex:", "roomy_buffer"),
              ("llamaindex:", "roomy_memory")]


@pytest.mark.parametrize("prefix, name", IDENTITIES)
def test_edge_cases_round_trip(prefix, name):
    assert wrap(prefix, name)(EDGE, 1000) == EDGE


@pytest.mark.parametrize("prefix, name", IDENTITIES)
@settings(max_examples=50)
@given(messages=chat_histories())
def test_any_chat_history_round_trips(prefix, name, messages):
    assert wrap(prefix, name)(messages, 1000) == messages


@pytest.mark.parametrize("prefix, name", IDENTITIES)
@settings(max_examples=15)
@given(transcript=transcripts(min_turns=5, max_turns=60))
def test_generated_transcripts_round_trip(prefix, name, transcript):
    messages = to_messages(transcript.turns)
    assert wrap(prefix, name)(messages, 1000) == messages


def test_a_call_id_used_twice_keeps_each_text():
    """Same id, name and value, different text: each message gets its own back when LangChain keeps our objects."""
    messages = [{"role": "assistant", "content": "", "tool_calls": [call("f", "{}")]},
                {"role": "tool", "content": "1", "tool_call_id": "f-id"},
                {"role": "user", "content": "again"},
                {"role": "assistant", "content": "", "tool_calls": [call("f", "{ }")]}]
    assert wrap("langchain:", "PASSTHROUGH")(messages, 10) == messages
    assert wrap("langchain:", "TRIM")(messages, 10) == messages[2:]  # from the last user message on


# -- the frameworks' own compaction ---------------------------------------------------------------------

def _conversation(pairs, words=10):
    messages = []
    for i in range(pairs):
        messages.append({"role": "user", "content": " ".join([f"user{i}"] * words)})
        messages.append({"role": "assistant", "content": " ".join([f"reply{i}"] * words)})
    return messages


def test_a_langchain_trim_messages_configuration_trims():
    messages = [{"role": "system", "content": "be brief"}, *_conversation(8),
                {"role": "user", "content": "look"},
                {"role": "assistant", "content": "", "tool_calls": [call("grep", '{"q" : "x"}'), call("raw", "[]")]},
                {"role": "tool", "content": "hit", "tool_call_id": "grep-id"},
                {"role": "assistant", "content": "found"}]
    # 5 messages, counted by len: the system message and the last four, from the last user message on
    assert wrap("langchain:", "TRIM")(messages, 10_000) == [messages[0], *messages[-4:]]


def test_a_llamaindex_memory_buffer_factory_trims():
    messages = [*_conversation(5),
                {"role": "user", "content": " ".join(["call"] * 10)},
                {"role": "assistant", "content": "calling " * 9 + "now", "tool_calls": [call("ls", '{"d":"."}')]}]
    # 40 words (str.split); the buffer drops from the front and never starts on an assistant message
    assert wrap("llamaindex:", "buffer")(messages, 10_000) == messages[-4:]


def test_a_fresh_memory_each_call():
    summarize = wrap("llamaindex:", "roomy_buffer")
    first = [{"role": "user", "content": "first"}]
    second = [{"role": "user", "content": "second"}]
    assert summarize(first, 10) == first
    assert summarize(second, 10) == second


# -- what comes back from a team's own messages ---------------------------------------------------------

@pytest.mark.parametrize("prefix", ["langchain:", "llamaindex:"])
def test_the_budget_reaches_a_two_argument_function(prefix):
    assert wrap(prefix, "says_budget")(EDGE, 1234) == [{"role": "system", "content": "budget 1234"}]


def test_an_edited_call_is_written_out_and_the_others_keep_their_text():
    out = wrap("langchain:", "edits_arguments")(EDGE, 1000)
    edited = out[2]["tool_calls"][0]["function"]["arguments"]
    assert edited == '{"edited": "é", "n": 1.0, "path": "a.py"}'
    assert out[:2] == EDGE[:2] and out[3:] == EDGE[3:]
    assert out[2]["tool_calls"][1:] == EDGE[2]["tool_calls"][1:]


def test_a_new_langchain_call_and_block_content():
    assert wrap("langchain:", "new_call")(EDGE, 10) == [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "n1", "type": "function", "function": {"name": "grep", "arguments": '{"a": [true, null], "b": 1}'}}]}]
    assert wrap("langchain:", "blocks_content")(EDGE, 10) == [{"role": "assistant", "content": "one\ntwo"}]


def test_llamaindex_dict_arguments_keep_our_text_unless_edited():
    messages = [EDGE[0], {"role": "assistant", "content": "", "tool_calls": [
        call("read", '{"path":  "a.py" ,"n":1.0}'), call("edit", '{"x": true}'), call("ls", '{"dir": "\\u00e9t"}')]}]
    out = wrap("llamaindex:", "dict_arguments")(messages, 10)
    assert [c["function"]["arguments"] for c in out[1]["tool_calls"]] == [
        '{"path":  "a.py" ,"n":1.0}', '{"edited": true, "x": true}', '{"dir": "\\u00e9t"}']


def test_llamaindex_tool_calls_in_additional_kwargs_are_read():
    assert wrap("llamaindex:", "legacy_tool_calls")(EDGE, 10) == [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path":"."}'}}]}]


# -- as the harness sees it -----------------------------------------------------------------------------

_TRANSCRIPT = Transcript((
    Turn(Role.SYSTEM, "agent"), Turn(Role.USER, "fix the bug"),
    Turn(Role.ASSISTANT, "", (ToolCall("c1", "read", '{"path" :"a.py"}'), ToolCall("c2", "ls", "{}"))),
    Turn(Role.TOOL, "x = 1", tool_call_id="c1"), Turn(Role.TOOL, "a.py", tool_call_id="c2"),
    Turn(Role.ASSISTANT, "fixed"), Turn(Role.USER, "thanks")))


@pytest.mark.parametrize("prefix, name", [("langchain:", "keep_all"), ("langchain:", "PASSTHROUGH"),
                                          ("llamaindex:", "keep_all"), ("llamaindex:", "roomy_buffer")])
def test_the_harness_calls_it_as_a_messages_summarizer(prefix, name):
    summarize = wrap(prefix, name)
    assert resolve_protocol(summarize) == "messages"  # (messages, budget), whatever the team's object takes
    result = compact_once(summarize, request_for(_TRANSCRIPT, 6, 500))
    assert result.messages == _TRANSCRIPT.turns[:6]


def test_it_carries_the_teams_names():
    function = load_object(f"{LC}:keep_all", option="--summarizer")
    summarize = framework_summarizer("langchain:", function, f"langchain:{LC}:keep_all")
    assert summarize.compaction_protocol == "messages"
    assert summarize.__wrapped__ is function
    assert (summarize.__module__, summarize.__qualname__, summarize.__name__) == (function.__module__, "keep_all",
                                                                                  "keep_all")
    assert wrap("langchain:", "varies").compaction_may_vary is True
    assert not hasattr(summarize, "compaction_may_vary")


def test_a_runnable_is_fingerprinted_as_the_teams_module():
    """A configured trim_messages is an instance of a langchain-core class: its module is the team's file's."""
    summarize = wrap("langchain:", "TRIM")
    module = sys.modules[summarize.__module__]
    assert Path(module.__file__).resolve() == Path(LC).resolve()
    assert summarize.__name__ == "TRIM"
    assert Path(LC).resolve() in {Path(m.__file__).resolve() for m in team_modules(summarize)}


# -- errors ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("prefix, root, package", [("langchain:", "langchain_core", "langchain-core"),
                                                   ("llamaindex:", "llama_index", "llama-index-core")])
def test_a_missing_library_names_the_extra_to_install(monkeypatch, prefix, root, package):
    for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        monkeypatch.setitem(sys.modules, name, None)  # what import finds when the package is not installed
    monkeypatch.setitem(sys.modules, root, None)
    spec = f"{prefix}team.compactor:fn"
    expected = f"--summarizer {spec!r} needs {package}: pip install 'compaction-harness[{FRAMEWORKS[prefix]}]'"
    with pytest.raises(SpecError, match=re.escape(expected)):
        framework_summarizer(prefix, lambda messages: messages, spec)


def test_an_unknown_prefix_is_named():
    with pytest.raises(SpecError, match=re.escape("unknown framework prefix 'autogen:'; expected one of langchain:")):
        framework_summarizer("autogen:", lambda messages: messages, "autogen:x:y")


@pytest.mark.parametrize("prefix, name, message", [
    ("langchain:", "NOT_A_SUMMARIZER", "expected a LangChain Runnable (anything with .invoke"),
    ("langchain:", "trim_messages", "trim_messages itself needs its settings"),
    ("langchain:", "AIMessage", "got the class AIMessage; name an instance"),
    ("langchain:", "takes_three", "function takes_three(messages, budget, extra) takes neither"),
    ("llamaindex:", "NOT_A_SUMMARIZER", "expected a function taking (messages) or (messages, budget)"),
    ("llamaindex:", "SHARED", "got a ChatMemoryBuffer instance: one memory shared by every call"),
    ("llamaindex:", "not_a_factory", "must be a factory returning a fresh memory (with put_messages and get), "
                                     "but it returned int"),
    ("llamaindex:", "broken_factory", "calling the memory factory raised RuntimeError: no database"),
    ("llamaindex:", "ChatMemoryBuffer", "takes none of these"),
])
def test_an_object_of_the_wrong_kind_is_a_spec_error(prefix, name, message):
    with pytest.raises(SpecError, match=re.escape(message)) as info:
        wrap(prefix, name)
    assert f"{prefix}{_FILES[prefix]}:{name}" in str(info.value)


@pytest.mark.parametrize("prefix, name, message", [
    ("langchain:", "returns_dict", "expected a list of LangChain messages (langchain_core.messages.BaseMessage), "
                                   "got dict"),
    ("langchain:", "returns_dicts", "message [1]: expected a LangChain message (langchain_core.messages.BaseMessage), "
                                    "got dict"),
    ("langchain:", "returns_function_message", "message [0]: a FunctionMessage has no chat-completions equivalent"),
    ("langchain:", "call_without_id", "message [0].tool_calls[0]: a tool call needs a string id and name, got id=None"),
    ("langchain:", "not_json_arguments", "message [0].tool_calls[0]: expected JSON data as arguments"),
    ("llamaindex:", "returns_memory", "got a ChatMemoryBuffer: to have the harness fill a fresh memory each call"),
    ("llamaindex:", "returns_strings", "message [1]: expected a LlamaIndex ChatMessage, got str"),
    ("llamaindex:", "returns_none", "expected a list of LlamaIndex ChatMessage, got NoneType"),
    ("llamaindex:", "tool_without_id", "message [0]: a tool message needs the string id of the call it answers"),
    ("llamaindex:", "function_role", "message [0].role: expected one of system, developer, user"),
])
def test_a_result_that_cannot_be_converted_is_malformed(prefix, name, message):
    summarize = wrap(prefix, name)
    with pytest.raises(MalformedResult, match=re.escape(message)):
        summarize(EDGE, 100)
    with pytest.raises(InfraError, match=re.escape(message)):  # and the harness reports it as the summarizer's
        compact_once(summarize, request_for(_TRANSCRIPT, 6, 500))


@pytest.mark.parametrize("prefix", ["langchain:", "llamaindex:"])
def test_only_chat_messages_are_taken(prefix):
    with pytest.raises(InvalidArgument, match=re.escape("takes chat messages (--dialect chat)")):
        wrap(prefix, "keep_all")({"system": "s", "messages": []}, 100)
