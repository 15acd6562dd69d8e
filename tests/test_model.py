import pytest

from harness import (
    Fact,
    FactKind,
    Fate,
    InvalidArgument,
    Polarity,
    Role,
    Status,
    ToolCall,
    Transcript,
    Turn,
    live_facts,
    to_messages,
)


def _transcript() -> Transcript:
    turns = (
        Turn(Role.USER, "Never use s3://prod-01/."),
        Turn(Role.ASSISTANT, "Starting.", tool_calls=(ToolCall("call_aaaaaaaaaaaa", "run_migration", '{"x": 1}'),)),
        Turn(Role.TOOL, "ok", tool_call_id="call_aaaaaaaaaaaa"),
        Turn(Role.USER, "Scratch the rule about s3://prod-01/."),
    )
    facts = (
        Fact("F0", FactKind.PROHIBITION, ("s3://prod-01/",), 0, Polarity.FORBID,
             Fate(Status.RETRACTED, 3, "F0.retraction")),
        Fact("F1", FactKind.IN_FLIGHT_CALL, ("call_aaaaaaaaaaaa",), 1, None, Fate(Status.RESOLVED, 2)),
        Fact("F0.retraction", FactKind.RETRACTION, ("s3://prod-01/",), 3, details=(("target", "F0"),)),
    )
    return Transcript(turns, facts, (2,), seed=7)


@pytest.mark.parametrize(
    "boundary, live",
    [(0, []), (1, ["F0"]), (2, ["F0", "F1"]), (3, ["F0"]), (4, ["F0.retraction"])],
)
def test_live_facts_follow_fates(boundary, live):
    assert [f.id for f in live_facts(_transcript(), boundary)] == live


def test_live_facts_rejects_out_of_range_boundary():
    with pytest.raises(InvalidArgument, match=r"boundary=5 is outside 0..4"):
        live_facts(_transcript(), 5)


def test_messages_view_uses_chat_shape():
    messages = to_messages(_transcript(), 1, 3)
    assert messages == [
        {
            "role": "assistant",
            "content": "Starting.",
            "tool_calls": [
                {"id": "call_aaaaaaaaaaaa", "type": "function",
                 "function": {"name": "run_migration", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "content": "ok", "tool_call_id": "call_aaaaaaaaaaaa"},
    ]


def test_messages_are_fresh_copies():
    t = _transcript()
    to_messages(t)[1]["tool_calls"].clear()
    assert to_messages(t)[1]["tool_calls"][0]["id"] == "call_aaaaaaaaaaaa"


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Turn(Role.USER, "x", tool_calls=(ToolCall("a", "b"),)), "only assistant turns make tool calls"),
        (lambda: Turn(Role.TOOL, "x"), "a tool turn needs tool_call_id"),
        (lambda: Turn(Role.USER, "x", tool_call_id="a"), "a tool turn needs tool_call_id"),
        (lambda: Fate(Status.OPEN, 3), "an open fate has no turn"),
        (lambda: Fate(Status.RETRACTED), "an ended one needs it"),
        (lambda: Fact("F", FactKind.PROHIBITION, (), 0), "needs at least one non-empty literal"),
        (lambda: Fact("F", FactKind.PROHIBITION, ("x1",), 5, fate=Fate(Status.RETRACTED, 2)),
         "ends at turn 2, before its origin turn 5"),
        (lambda: Fact("F", FactKind.THRESHOLD, ("x1",), 0, details=(("b", "1"), ("a", "2"))), "sorted order"),
        (lambda: Transcript((Turn(Role.USER, "a"),), (Fact("F", FactKind.PROHIBITION, ("x1",), 3),)),
         "origin_turn=3, outside 0..0"),
        (lambda: Transcript((Turn(Role.USER, "a"),), (), (0,)), "strictly increasing within 1..1"),
        (lambda: Transcript((Turn(Role.USER, "a"),), (Fact("F", FactKind.PROHIBITION, ("x1",), 0),) * 2),
         "fact ids must be unique"),
    ],
)
def test_model_rejects_inconsistent_values(build, message):
    with pytest.raises(InvalidArgument, match=message):
        build()


def test_fact_detail_lookup():
    fact = Fact("F", FactKind.THRESHOLD, ("max_retries", "3"), 0, details=(("operator", "<="), ("value", "3")))
    assert fact.detail("operator") == "<="
    assert fact.detail("missing", "none") == "none"
