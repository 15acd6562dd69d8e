"""Normalising what a summarizer returns; bad returns get a clear MalformedResult."""

import pytest
from hypothesis import given, settings

from harness import CompactionResult, MalformedResult, Role, compact_once, request_for, result_from_return
from harness import InvalidArgument, Transcript, Turn
from harness.strategies import transcripts


def test_string_becomes_one_system_message():
    assert result_from_return("summary").messages == (Turn(Role.SYSTEM, "summary"),)


def test_messages_become_turns():
    result = result_from_return([
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "c1"},
    ])
    assert result.messages[0].tool_calls[0].id == "c1" and result.messages[1].tool_call_id == "c1"


@pytest.mark.parametrize(
    "value, message",
    [
        (3, "expected a string, a list of message dicts or a CompactionResult, got int"),
        ([3], "message [0]: expected a dict, got int"),
        ([{"role": "robot", "content": ""}], "message [0].role: expected one of system, developer, user, assistant, tool, got 'robot'"),
        ([{"role": "user", "content": 5}], "message [0].content: expected a string or a list of parts, got int"),
        ([{"role": "assistant", "content": "", "tool_calls": [{"id": 1}]}], "message [0].tool_calls[0]: expected"),
        ([{"role": "tool", "content": "x"}], "message [0]: a tool turn needs tool_call_id"),
    ],
)
def test_garbage_is_named(value, message):
    with pytest.raises(MalformedResult) as info:
        result_from_return(value)
    assert str(info.value).startswith(message)


def test_compact_once_checks_the_protocol_name():
    request = request_for(Transcript((Turn(Role.USER, "hi"),)), 1, 10)
    with pytest.raises(InvalidArgument, match="protocol='chat'; expected one of messages, rich"):
        compact_once(lambda r: "x", request, protocol="chat")
    assert isinstance(compact_once(lambda m, b: m, request), CompactionResult)


def test_compact_once_is_the_same_call_as_the_cli_s():
    """A team's own tests see input mutation and exceptions the way a CLI run does."""
    from harness import InfraError

    request = request_for(Transcript((Turn(Role.USER, "hi"),)), 1, 10)

    def mutates(messages, budget):
        messages[0]["content"] = "rewritten"
        return "summary"

    def raises(messages, budget):
        raise ValueError("quota")

    with pytest.raises(InfraError, match="mutated-input: the summarizer modified the messages it was given"):
        compact_once(mutates, request)
    with pytest.raises(InfraError, match="exception: the summarizer raised ValueError: quota") as info:
        compact_once(raises, request)
    assert isinstance(info.value.__cause__, ValueError)  # the team's own traceback is kept


@settings(max_examples=30, deadline=None)
@given(transcripts(max_turns=60))
def test_message_tokens_counts_a_chat_message_as_the_turn_it_is(transcript):
    """A messages summarizer budgets with harness.message_tokens on the dicts it gets: the same count the
    session runner and the budget oracle give the turns."""
    from harness import message_tokens, to_messages

    for turn, message in zip(transcript.turns, to_messages(transcript.turns)):
        assert message_tokens(message) == message_tokens(turn)
